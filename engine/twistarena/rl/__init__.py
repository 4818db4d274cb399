"""twistarena.rl: the games as training environments (PettingZoo, Gymnasium,
OpenSpiel), their tensors and action spaces, and trained policies as bots.

In-process and pure like the layers it builds on (``engine``, ``bots``): no I/O,
no network. Needs the ``rl`` extra (numpy, pettingzoo, gymnasium);
``register_openspiel`` needs the ``openspiel`` extra. docs/rl.md is the guide.
"""

from __future__ import annotations

from .actions import ActionSpace, action_space, num_distinct_actions
from .aec import TwistArenaAEC, aec_env
from .gym import ENV_IDS, TwistArenaEnv, register_envs
from .policy import Policy, PolicyBot, policy_bot
from .tensors import Encoder, Segment, encoder, encoder_for
from .turns import REWARDS, Turns, final_rewards


def register_openspiel() -> list[str]:
    """Register every game with pyspiel (``twistarena_<game>``); their short names."""
    from .openspiel import register

    return register()


register_envs()

__all__ = [
    "ENV_IDS",
    "REWARDS",
    "ActionSpace",
    "Encoder",
    "Policy",
    "PolicyBot",
    "Segment",
    "Turns",
    "TwistArenaAEC",
    "TwistArenaEnv",
    "action_space",
    "aec_env",
    "encoder",
    "encoder_for",
    "final_rewards",
    "num_distinct_actions",
    "policy_bot",
    "register_envs",
    "register_openspiel",
]
