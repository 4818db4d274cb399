"""A trained policy as a network agent: ``load_policy`` and ``policy_agent``.

A policy is ``(tensor, mask) -> index`` (``twistarena.rl``: the seat's
observation tensor and legal-action mask in, an index of the game's action
space out), named ``module:callable`` where the module is an importable name
(``mybots.policies:greedy``) or a Python file (``examples/twisted_reinforce.py:policy``).

    from twistarena.clients.sdk import load_policy, policy_agent

    agent = policy_agent(load_policy("examples/twisted_reinforce.py:policy"),
                         server="localhost:50051", match_id=..., token=...)
    result = await agent.run()

Needs the ``rl`` extra (numpy) for the tensors.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import pathlib
import sys
from typing import Any

from twistarena.bots import Bot

from .agent import Agent

#: a bot kind of ``twistarena evaluate``: ``policy:MODULE:CALLABLE``
POLICY_KIND = "policy:"


def load_policy(spec: str) -> Any:
    """The callable ``spec`` names (``module:callable`` or ``path/to/file.py:callable``);
    ``ValueError`` with the reason when it cannot be found."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise ValueError(f"a policy is MODULE:CALLABLE or FILE.py:CALLABLE, got {spec!r}")
    if where.endswith(".py"):
        path = pathlib.Path(where).resolve()
        if not path.is_file():
            raise ValueError(f"policy file {where} does not exist")
        module_name = f"twistarena_policy_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
        module = sys.modules.get(module_name)
        if module is None:
            loader = importlib.util.spec_from_file_location(module_name, path)
            if loader is None or loader.loader is None:
                raise ValueError(f"cannot load {where} as a Python module")
            module = importlib.util.module_from_spec(loader)
            sys.modules[module_name] = module
            loader.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as error:
            raise ValueError(f"cannot import policy module {where!r}: {error}") from None
    policy = getattr(module, name, None)
    if not callable(policy):
        raise ValueError(f"{where} has no callable {name!r}")
    return policy


def policy_bot_of(spec: str) -> Bot:
    """The bot that plays the policy ``spec`` names (``twistarena.rl.policy_bot``)."""
    from twistarena.rl.policy import policy_bot

    return policy_bot(load_policy(spec))


def policy_agent(policy: Any, **agent_options: Any) -> Agent:
    """An ``Agent`` whose answers the policy chooses; ``agent_options`` as for ``Agent``
    (``server``, ``match_id``, ``token``, ...)."""
    from twistarena.rl.policy import policy_bot

    return Agent(policy_bot(policy), **agent_options)
