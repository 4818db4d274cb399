"""Each game as a PettingZoo AEC environment (``aec_env``).

Agents are ``player_0`` .. ``player_{n-1}`` (agent i plays seat i). An agent's
observation is ``{"observation": tensor, "action_mask": mask}`` (``tensors``,
``actions``); its action is an index of the game's action space. Rewards are
0 until the match ends, then every agent gets its ``final_rewards`` at once.
Simultaneous choices are asked one seat at a time and applied together
(``turns.Turns``), so no seat sees another's choice of the same step.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from twistarena import engine

from .actions import MASK_DTYPE, ActionSpace, action_space
from .live import FollowsLiveTensors
from .tensors import Encoder, encoder
from .turns import Turns, check_reward, final_rewards

ObsDict = dict[str, Any]


def agent_name(seat: int) -> str:
    return f"player_{seat}"


def observation_space(encoder: Encoder, space: ActionSpace) -> spaces.Dict:
    """What a seat observes: ``{"observation": tensor, "action_mask": mask}``."""
    low, high = encoder.bounds()
    return spaces.Dict({
        "observation": spaces.Box(low, high, dtype=np.float32),
        "action_mask": spaces.Box(0, 1, (space.size,), dtype=np.int8),
    })


class TwistArenaAEC(FollowsLiveTensors, AECEnv):  # type: ignore[misc]
    """One match of ``game_id`` per episode; ``reset(seed=...)`` makes it reproducible."""

    metadata = {"render_modes": ["ansi"], "name": "twistarena_v0", "is_parallelizable": False}

    def __init__(self, game_id: str, num_players: int, reward: str = "place",
                 render_mode: str | None = None, **options: Any) -> None:
        super().__init__()
        check_reward(reward)
        engine.make(game_id, num_players, 0, options)  # refuses bad options now, not at reset
        self.game_id = game_id
        self.num_players = num_players
        self.options = options
        self.reward = reward
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"twistarena_{game_id}_v0"}
        self.encoder = encoder(game_id, num_players, options)
        self.space = action_space(game_id)
        self.possible_agents = [agent_name(s) for s in range(num_players)]
        self._current = -1  # the seat to choose next (Turns.current), kept per step
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        obs_space = observation_space(self.encoder, self.space)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(self.space.size) for a in self.possible_agents}
        self._seeds = random.Random()
        self._new_match(engine.make(game_id, num_players, 0, options))

    def _new_match(self, state: engine.State) -> None:
        self.turns = Turns(state)
        self.follow(state)  # every seat's tensor, written from the state

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match; ``seed`` fixes it and every match after it. Reset ``options``
        are not game options (those are given to ``aec_env``) and are ignored."""
        if seed is not None:
            self._seeds = random.Random(seed)
        self._new_match(engine.make(self.game_id, self.num_players,
                                    self._seeds.getrandbits(63), self.options))
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._current = self.turns.current()
        self.agent_selection = self.possible_agents[self._current]

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        """The agent to act, until every agent is done or ``max_iter`` steps (as
        ``AECEnv.agent_iter``, as a generator: one step of it costs less)."""
        while self.agents and max_iter > 0:
            max_iter -= 1
            yield self.agent_selection

    def last(self, observe: bool = True) -> tuple[ObsDict | None, float, bool, bool,
                                                   dict[str, Any]]:
        """``AECEnv.last``: the observation, accumulated reward, termination,
        truncation and info of the agent to act (here without its assertion)."""
        agent = self.agent_selection
        observation = None
        if observe:  # ``observe`` inlined: a learner's loop calls this every step
            seat = self._seat[agent]
            observation = self._observation(seat, self.turns.state.legal_action_ids(seat)
                                            if seat == self._current else ())
        return (observation, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def observe(self, agent: str) -> ObsDict:
        seat = self._seat[agent]
        legal = self.turns.state.legal_action_ids(seat) if seat == self._current else ()
        return self._observation(seat, legal)

    def action_mask(self, agent: str) -> np.ndarray[Any, np.dtype[np.int8]]:
        """The agent's legal-action mask alone (all 0 when it is not to choose)."""
        seat = self._seat[agent]
        if seat != self._current:
            return np.zeros(self.space.size, MASK_DTYPE)
        return self.space.mask(self.turns.state.legal_action_ids(seat))

    def step(self, action: int | None) -> None:
        seat = self._current
        if seat < 0:  # the match is over: every agent is done, and leaves with None
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{self.agent_selection} is to act: None is only for agents"
                             " that are done")
        ids = self.space.ids
        if type(action) is int and 0 <= action < len(ids):  # the usual case, checked inline
            action_id = ids[action]
        else:
            action_id = self.space.engine_id(int(action))
        self._current = seat = self.turns.play(seat, action_id)
        if seat >= 0:  # rewards stay 0 (and so do the accumulated ones) until the end
            self.agent_selection = self.possible_agents[seat]
            return
        final = final_rewards(self.turns.state, self.reward)
        for a in self.agents:
            self.rewards[a] = final[self._seat[a]]
            self.terminations[a] = True
        self.agent_selection = self.agents[0]
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The public view as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        return str(self.turns.state.public_view())

    def close(self) -> None:
        """Nothing to release: the match lives in memory."""


def aec_env(game_id: str, num_players: int, reward: str = "place",
            render_mode: str | None = None, **options: Any) -> TwistArenaAEC:
    """A PettingZoo AEC environment of ``game_id`` for ``num_players`` seats; ``reward``
    is ``place``, ``score`` or ``win`` (``turns.final_rewards``); ``options`` are the
    game's match options (e.g. ``rounds=1`` for a short Twisted)."""
    return TwistArenaAEC(game_id, num_players, reward, render_mode, **options)
