"""Hosted-version rules, pure and shared by the node and the runner: what a
version's archive may hold (``archives``), how its entry command reads
(``entries``) and how a version is identified (``versions``)."""
