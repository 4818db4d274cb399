"""A trained policy as a bot: the bridge from training to the arena.

A policy is a callable ``(tensor, mask) -> index``: the seat's observation
tensor (``tensors``) and the legal-action mask (``actions``) in, the chosen
index of the game's action space out, exactly what a learner gets and answers
in the environments here. ``policy_bot`` turns it into a bot of
``twistarena.bots`` (``(observation, legal_actions) -> action id``), so it plays
wherever a bot does: in-process (``twistarena evaluate``), as a network agent
(``twistarena bot --policy``, the SDK's ``policy_agent``) and, once hosted
agents exist, as one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from twistarena.bots import Bot
from twistarena.engine import Action

from .actions import action_space
from .tensors import Encoder, Tensor, encoder_for

Mask = npt.NDArray[np.int8]
Policy = Callable[[Tensor, Mask], int]


class PolicyBot:
    """A bot that asks ``policy``; the encoder is built from the first observation
    (its game, player count and, for Twhist, rules)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._encoder: Encoder | None = None

    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        if self._encoder is None:
            self._encoder = encoder_for(observation)
        space = action_space(self._encoder.game_id)
        legal = [a.id for a in legal_actions]
        index = int(self.policy(self._encoder.encode(observation), space.mask(legal)))
        chosen = space.engine_id(index)
        if chosen not in legal:
            raise ValueError(f"the policy chose index {index} (action {chosen}), which is not"
                             f" legal now; legal indices: {space.indices(legal)}")
        return chosen


def policy_bot(policy: Policy) -> Bot:
    """``policy`` as a bot of ``twistarena.bots``."""
    return PolicyBot(policy)
