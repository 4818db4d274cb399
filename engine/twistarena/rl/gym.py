"""Each game as a Gymnasium environment: one seat against house bots.

``gymnasium.make("twistarena/Twisted-v0", num_players=3, opponents="heuristic")``
gives the learner seat ``seat`` (default 0) of a match whose other seats are
house bots of the named rung (``twistarena.bots.LADDER``; a comma-separated
list is cycled over the other seats). Observations, actions and rewards are the
AEC environment's (``aec``): a dict of the tensor and the legal-action mask,
an index of the game's action space, and the final reward when the match ends.
An illegal action ends the episode at once with reward ``illegal_reward``
(a learner should sample from the mask; random exploration may not).

Gymnasium up to 0.29 finds the ids through the package's ``gymnasium.envs``
entry point; Gymnasium 1.x dropped entry-point plugins, so importing
``twistarena.rl`` registers them too (or name the module in the id:
``gymnasium.make("twistarena.rl:twistarena/Twisted-v0")``).
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from twistarena import bots, engine

from .actions import action_space
from .aec import observation_space
from .live import FollowsLiveTensors
from .tensors import encoder
from .turns import Turns, check_reward, final_rewards

#: Gymnasium id -> game id
ENV_IDS = {"twistarena/TrickyTwist-v0": "tricky_twist", "twistarena/Twisted-v0": "twisted",
           "twistarena/Twhist-v0": "twhist"}

ObsDict = dict[str, Any]


class TwistArenaEnv(FollowsLiveTensors, gymnasium.Env[ObsDict, np.int64]):
    """One seat of ``game_id`` against house bots; a match per episode."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, game_id: str, num_players: int | None = None,
                 opponents: str = "random", seat: int = 0, reward: str = "place",
                 illegal_reward: float = -1.0, render_mode: str | None = None,
                 **options: Any) -> None:
        info = engine.game(game_id)
        num_players = num_players or info.min_players
        check_reward(reward)
        rungs = [r.strip() for r in opponents.split(",") if r.strip()]
        unknown = [r for r in rungs if r not in bots.STRATEGIES]
        if unknown or not rungs:
            raise ValueError(f"opponents must be house bots among {', '.join(bots.STRATEGIES)}")
        if not 0 <= seat < num_players:
            raise ValueError(f"seat must be within 0..{num_players - 1}")
        engine.make(game_id, num_players, 0, options)  # refuses bad options now
        self.game_id, self.num_players, self.seat = game_id, num_players, seat
        self.options, self.reward, self.illegal_reward = options, reward, illegal_reward
        self.rungs = rungs
        self.render_mode = render_mode
        self.encoder = encoder(game_id, num_players, options)
        self.space = action_space(game_id)
        self.observation_space = observation_space(self.encoder, self.space)
        self.action_space = spaces.Discrete(self.space.size)
        self._new_match(engine.make(game_id, num_players, 0, options))
        self.house: dict[int, bots.Bot] = {}

    def _new_match(self, state: engine.State) -> None:
        self.turns = Turns(state)
        self.follow(state)  # the learner's tensor, written from the state

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[ObsDict, dict[str, Any]]:
        """A new match, its deal and the house bots' seeds drawn from ``self.np_random``."""
        super().reset(seed=seed)
        match_seed = int(self.np_random.integers(2**63 - 1))
        self._new_match(engine.make(self.game_id, self.num_players, match_seed, self.options))
        seeds = random.Random(match_seed)
        others = [s for s in range(self.num_players) if s != self.seat]
        self.house = {s: bots.make_bot(self.rungs[i % len(self.rungs)], self.game_id,
                                       seeds.getrandbits(32), self.options)
                      for i, s in enumerate(others)}
        self._house_moves()
        return self._observe(), {}

    def step(self, action: Any) -> tuple[ObsDict, float, bool, bool, dict[str, Any]]:
        state = self.turns.state
        index = int(action)
        legal = state.legal_action_ids(self.seat)
        chosen = self.space.ids[index] if 0 <= index < self.space.size else -1
        if chosen not in legal:
            return self._observe(), float(self.illegal_reward), True, False, {"illegal": True}
        self.turns.play(self.seat, chosen)
        self._house_moves()
        if state.is_terminal():
            final = final_rewards(state, self.reward)[self.seat]
            return self._observe(), final, True, False, {"scores": state.scores()}
        return self._observe(), 0.0, False, False, {}

    def _house_moves(self) -> None:
        """The house bots play until the learner's seat is to choose or the match ends."""
        turns = self.turns
        seat = turns.current()
        while seat >= 0 and seat != self.seat:
            seat = turns.play(seat, bots.decide(self.house[seat], turns.state, seat))

    def _observe(self) -> ObsDict:
        state = self.turns.state
        legal = state.legal_action_ids(self.seat) if self.turns.current() == self.seat else ()
        return self._observation(self.seat, legal)

    def render(self) -> str | None:
        """The public view as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        return str(self.turns.state.public_view())


def register_envs() -> None:
    """Register the three ids (the ``gymnasium.envs`` entry point; idempotent)."""
    for env_id, game_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point="twistarena.rl.gym:TwistArenaEnv",
                               kwargs={"game_id": game_id})
