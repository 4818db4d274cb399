"""Every game and player count the rl tests cover, with options that keep a match short."""

from __future__ import annotations

from typing import Any

#: (game, players, options): each game at each player count; short matches where
#: the options allow (one Twisted round, small Tricky Twist hands; Twhist has none).
CASES: list[tuple[str, int, dict[str, Any]]] = [
    ("tricky_twist", 3, {"hand_size_3p": 4, "reserve_size": 1}),
    ("tricky_twist", 4, {"hand_size_4p": 3, "reserve_size": 1}),
    ("twisted", 2, {"rounds": 1}),
    ("twisted", 3, {"rounds": 1}),
    ("twisted", 4, {"rounds": 1, "expert": True}),
    ("twhist", 3, {}),
    ("twhist", 4, {}),
    ("twhist", 5, {}),
]

IDS = [f"{g}-{n}" for g, n, _ in CASES]
