"""Each game as an OpenSpiel Python game: ``register()`` adds ``twistarena_<game>``.

    import pyspiel
    from twistarena.rl import register_openspiel
    register_openspiel()
    game = pyspiel.load_game("twistarena_twisted", {"players": 3})

Parameters: ``players``, ``reward`` (``place``, ``score`` or ``win``, as in
``turns.final_rewards``) and ``options``: match options as ``key:value`` pairs
joined by ``;``, a dot into a table, each value JSON (``"rounds:1;expert:true"``,
``"hand_size.2:5"``); OpenSpiel's game strings allow no commas, so list options
cannot be given this way.

Chance: sampled dealing. The engine deals, and deals every later round, from
one seeded generator, so the game opens with four chance nodes of 256 equally
likely outcomes each that draw its 32-bit seed, byte by byte; after them there
are no chance nodes (``DealtBy.SEED_BYTES``). The seed is hidden from every
player: no observation or information state depends on it other than through
what the rules show.

Moves are sequential; the simultaneous reserve choice of Tricky Twist is taken
one seat at a time and applied when every seat has chosen (``turns.Turns``).
The observation tensor is ``tensors``' encoding of the player's observation,
written by the compiled writer where the build has it (``native``) and by the
Python encoder otherwise; the information state tensor is the same vector, while
the information state string is the player's whole view of the event log
(perfect recall). Why the observation is enough for the tensor, per game
(``tensors`` lists each segment): Twisted's observation holds every seat's plus
and minus piles, the row and the counts of the draw pile and face-down cards, so
every card that left a hand is placed; Twhist's holds every trick of the hand so
far and each seat's picks and twhist cards; Tricky Twist's holds the tricks won,
the false tricks, the voids each seat showed, the known reserve cards and the
bonuses held. What the history adds beyond these is the order of past moves,
which no rule of the three games scores or constrains.

``resample_from_infostate(player, sampler)`` is the engine's ``determinize``: a
state that ``player`` cannot tell from this one (its information state string
is the same), everything hidden from it dealt again at random from what it has
seen, so OpenSpiel's ``ISMCTSBot`` plays the games. Such a state has no history
to replay, so it is for search, not for ``serialize``.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
from twistarena import engine
from twistarena.engine.options import merge_options

from . import native, spielhistory
from .actions import ActionSpace, action_space
from .tensors import NUMBER_BOUND, Encoder, encoder
from .turns import Turns, check_reward, final_rewards

#: chance nodes before the deal, and the outcomes of each (one byte of the seed)
SEED_BYTES = 4
BYTE_OUTCOMES = 256

#: the OpenSpiel short name of each game
SHORT_NAMES = {g: f"twistarena_{g}" for g in engine.GAME_IDS}

#: utility bounds per reward ("score": a bound, not a tight one)
_UTILITY = {"place": (-1.0, 1.0), "win": (0.0, 1.0), "score": (-NUMBER_BOUND, NUMBER_BOUND)}


@dataclass(frozen=True)
class Config:
    """What every state of one loaded game shares; copying it gives itself."""

    game_id: str
    num_players: int
    options: dict[str, Any]
    reward: str
    encoder: Encoder
    space: ActionSpace

    def __deepcopy__(self, memo: dict[int, object]) -> Config:
        return self


def parse_options(text: str) -> dict[str, Any]:
    """``"rounds:1;hand_size.2:5"`` -> ``{"rounds": 1, "hand_size": {"2": 5}}``."""
    out: dict[str, Any] = {}
    for pair in filter(None, (p.strip() for p in text.split(";"))):
        key, sep, value = pair.partition(":")
        if not sep:
            raise ValueError(f"option {pair!r} is not key:value")
        *tables, name = key.strip().split(".")
        where = out
        for table in tables:
            where = where.setdefault(table, {})
        where[name] = json.loads(value)
    return out


def _max_length(game_id: str, n: int, options: dict[str, Any]) -> int:
    """A bound on the moves of a match (chance nodes included), from the rules."""
    merged = merge_options(engine.game(game_id).defaults, options)
    if game_id == "twisted":  # a card is played, twisted or taken at most once a round
        rounds: int = merged["rounds"]
        return SEED_BYTES + rounds * 3 * engine.game(game_id).deck_size
    if game_id == "tricky_twist":  # n rounds: reserve, windows, tricks, picks, end bonuses
        return SEED_BYTES + n * 400
    return SEED_BYTES + (32 // n + 4) * (n + 2)  # twhist: every trick, then its picks


def _game_type(game_id: str) -> Any:
    info = engine.game(game_id)
    return pyspiel.GameType(
        short_name=SHORT_NAMES[game_id],
        long_name=f"twistarena {info.name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=info.max_players,
        min_num_players=info.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": info.min_players, "reward": "place",
                                 "options": ""},
    )


class TwistArenaGame(pyspiel.Game):  # type: ignore[misc]
    """One of the games, for one player count, reward and set of options."""

    def __init__(self, game_id: str, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        info = engine.game(game_id)
        n = int(params.get("players", info.min_players))
        reward = str(params.get("reward", "place"))
        options = parse_options(str(params.get("options", "")))
        check_reward(reward)
        engine.make(game_id, n, 0, options)  # refuses bad players or options now
        space = action_space(game_id)
        low, high = _UTILITY[reward]
        game_info = pyspiel.GameInfo(
            num_distinct_actions=space.size,
            max_chance_outcomes=BYTE_OUTCOMES,
            num_players=n,
            min_utility=low,
            max_utility=high,
            max_game_length=_max_length(game_id, n, options),
        )
        super().__init__(_game_type(game_id), game_info, params)
        self.config = Config(game_id, n, options, reward, encoder(game_id, n, options), space)
        #: this game's states: their class holds the initial ``Match`` (never changed
        #: in place), which a state's own replaces at its first move, so that making
        #: a state, as OpenSpiel does at every clone, runs no Python of ours
        self.state_class: type[TwistArenaState] = type(
            f"{type(self).__name__}State", (TwistArenaState,),
            {"match": Match(self.config)})
        #: a new state of this game, as ``clone`` makes one (a class attribute, not
        #: a method: called as ``state._new()`` without binding)
        self.state_class._new = functools.partial(self.state_class, self)
        spielhistory.probe(functools.partial(_probe_state, self), TwistArenaState)

    def new_initial_state(self) -> TwistArenaState:
        return self.state_class(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
        return Observer(self.config, iig_obs_type or pyspiel.IIGObservationType(
            perfect_recall=False), params)


#: OpenSpiel's player ids of a chance node and of the end
CHANCE = int(pyspiel.PlayerId.CHANCE)
TERMINAL = int(pyspiel.PlayerId.TERMINAL)

#: the outcomes of a seed byte's chance node, made once: every match asks four times
_BYTE_CHANCES = tuple((b, 1.0 / BYTE_OUTCOMES) for b in range(BYTE_OUTCOMES))
#: the actions of a seed byte's chance node (``legal_actions`` there)
_BYTE_ACTIONS = tuple(range(BYTE_OUTCOMES))


def _probe_state(game: TwistArenaGame) -> TwistArenaState:
    """A state with players and chance in its history, for ``spielhistory.probe``."""
    state = game.new_initial_state()
    for _ in range(SEED_BYTES):
        state.apply_action(7)
    for _ in range(2):
        if not state.is_terminal():
            state.apply_action(state.legal_actions()[-1])
    return state


def _player(seat: int) -> int:
    """``Turns``' next seat as OpenSpiel's current player (-1: the match is over)."""
    return seat if seat >= 0 else TERMINAL


class Match(Turns):
    """What a state holds, as one object: OpenSpiel clones a Python game's state by
    making a new initial state and deep-copying each of its attributes in turn, so
    the state has one attribute, whose copy is the engine's ``clone`` and a few
    fields. Before the deal it is never changed in place (each seed byte makes a
    new one), so every initial state shares its game's, and copies share it too;
    from the deal on it is the match taken one seat at a time (``Turns``)."""

    __slots__ = ("config", "dealt", "player", "seed_bytes")

    def __init__(self, config: Config, seed_bytes: bytes = b"") -> None:
        """Before the deal: ``seed_bytes`` drawn so far (bytes: copies share them)."""
        self.config = config
        self.seed_bytes = seed_bytes
        self.dealt = False
        #: OpenSpiel's current player, kept up to date by every move: OpenSpiel
        #: asks for it several times a decision, each time a call into Python
        self.player = CHANCE

    def with_byte(self, byte: int) -> Match:
        """The match after one more seed byte: dealt once there are ``SEED_BYTES``."""
        new = Match(self.config, self.seed_bytes + bytes((byte,)))
        if len(new.seed_bytes) == SEED_BYTES:
            c = new.config
            new.deal(engine.make(c.game_id, c.num_players,
                                 int.from_bytes(new.seed_bytes, "big"), c.options))
        return new

    def deal(self, state: engine.State) -> None:
        """Take ``state`` one seat at a time from now on."""
        Turns.__init__(self, state)
        self.dealt = True
        self.player = _player(self.current())

    def __deepcopy__(self, memo: dict[int, object]) -> Match:
        return self.copy()

    def copy(self) -> Match:
        """A match that shares nothing that either will change."""
        if not self.dealt:
            return self  # never changed in place: shared
        new = Match.__new__(Match)  # each slot set once, not first to its initial value
        new.config = self.config
        new.seed_bytes = self.seed_bytes
        new.dealt = True
        new.player = self.player
        new.state = self.state.clone()
        new.pending = dict(self.pending) if self.pending else {}
        return new

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as what rebuilds it: the seed bytes drawn, the moves to replay
        (OpenSpiel serializes a state as its pickled attributes)."""
        if not self.dealt:
            return (Match, (self.config, self.seed_bytes))
        return (_replayed_match, (self.config, self.seed_bytes, list(self.state.history),
                                  dict(self.pending)))


def _replayed_match(config: Config, seed_bytes: bytes, history: list[tuple[int, int]],
                    pending: dict[int, int]) -> Match:
    """``Match.__reduce__``'s way back."""
    match = Match(config, seed_bytes)
    match.deal(engine.replay(config.game_id, config.num_players,
                             int.from_bytes(seed_bytes, "big"), config.options, history))
    match.pending = pending
    match.player = _player(match.current())
    return match


class TwistArenaState(pyspiel.State):  # type: ignore[misc]
    """Four seed bytes of chance, then the engine's match taken one seat at a time.

    ``legal_actions`` and ``is_chance_node`` are answered here as well as by
    OpenSpiel's C++ (which asks ``current_player``, ``is_terminal`` and
    ``_legal_actions`` for them, one call into Python each): the same answers,
    for Python callers (learners, OpenSpiel's Python bots) without the round trips."""

    #: the match (the game's ``state_class`` holds the initial one)
    match: Match
    #: a new state of the same game (the game's ``state_class`` holds it)
    _new: Callable[[], TwistArenaState]

    def clone(self) -> TwistArenaState:
        """A state that shares nothing that either will change: a new state, the
        match's copy and OpenSpiel's history copied in C++ (``spielhistory``), in
        a fraction of OpenSpiel's own clone for a Python game, which is used where
        that copy is not enabled (and by OpenSpiel's C++, which calls its own)."""
        new = self._history_copy()
        if new is None:
            return pyspiel.State.clone(self)  # type: ignore[no-any-return]
        m = self.match
        if m.dealt:
            new.match = m.copy()
        elif m.seed_bytes:  # never changed in place: shared, as OpenSpiel's copy does
            new.match = m
        # else the initial state's, its class's: as OpenSpiel's, the clone has none
        return new

    def _history_copy(self) -> TwistArenaState | None:
        """A new state with this one's OpenSpiel history and move number and the
        initial match, for a caller that sets the match itself; None where the
        C++ copy is not enabled."""
        copy_history = spielhistory.copy
        if copy_history is None:
            return None
        new = self._new()
        copy_history(new, self)
        return new

    @property
    def config(self) -> Config:
        return self.match.config

    @property
    def seed_bytes(self) -> bytes:
        return self.match.seed_bytes

    @property
    def turns(self) -> Turns | None:
        m = self.match
        return m if m.dealt else None

    def current_player(self) -> int:
        return self.match.player

    def is_chance_node(self) -> bool:
        return self.match.player == CHANCE

    def legal_actions(self, player: int | None = None) -> list[int]:
        """As OpenSpiel's ``State::LegalActions``: none at the end, the chance
        outcomes at a chance node (whoever asks), the player's own when it is to
        act, none for another player, ``SpielError`` for a pseudo-player."""
        m = self.match
        to_act = m.player
        if to_act == TERMINAL:
            return []
        if to_act == CHANCE:
            return list(_BYTE_ACTIONS)
        if player is None or player == to_act:
            return m.config.space.indices(m.state.legal_action_ids(to_act))
        if player < 0:
            raise pyspiel.SpielError(f"Called LegalActions for pseudo-player {player}")
        return []

    def _legal_actions(self, player: int) -> list[int]:
        m = self.match
        return m.config.space.indices(m.state.legal_action_ids(player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(_BYTE_CHANCES)  # a copy: the caller may change its list

    def _apply_action(self, action: int) -> None:
        m = self.match
        if m.player == CHANCE:
            self.match = m.with_byte(int(action))
            return
        seat = m.play(m.player, m.config.space.ids[action])
        m.player = seat if seat >= 0 else TERMINAL  # ``_player``, inlined: every decision

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"seed byte {action}"
        engine_id = self.config.space.ids[action]
        if self.turns is None:
            return f"action {engine_id}"
        return f"{self.turns.state.describe(player, engine_id).label} ({engine_id})"

    def is_terminal(self) -> bool:
        return self.match.player == TERMINAL

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.config.num_players
        assert self.turns is not None
        return final_rewards(self.turns.state, self.config.reward)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any
                                ) -> TwistArenaState:
        """A state ``player_id`` cannot tell from this one: the hidden cards dealt
        again (``State.determinize``), the seed and the other seats' held-back
        choices of a simultaneous step drawn again. ``probability_sampler()`` (a
        float in [0, 1), as OpenSpiel's samplers give) seeds the draw."""
        rng = random.Random(int(probability_sampler() * 2**53))
        # Its match is replaced below: not copied first when the history can be.
        new = self._history_copy()
        if new is None:
            new = self.clone()
        m = self.match
        if not m.dealt:  # the seed bytes drawn so far are hidden from everyone
            new.match = Match(m.config, bytes(rng.randrange(BYTE_OUTCOMES) for _ in m.seed_bytes))
            return new
        real = m.state
        world = real.determinize(player_id, rng)
        # its events as the player saw them (its information state string is their
        # log): the other seats' private parts, which would tell the true deal, left out
        world.events = [e._replace(private={player_id: e.private[player_id]}
                                   if player_id in e.private else {}) for e in real.events]
        resampled = Match(m.config, m.seed_bytes)
        resampled.deal(world)
        for seat, action_id in sorted(m.pending.items()):
            resampled.pending[seat] = action_id if seat == player_id else rng.choice(
                world.legal_action_ids(seat))
        resampled.player = _player(resampled.current())
        new.match = resampled
        return new

    def __str__(self) -> str:
        if self.turns is None:
            return f"dealing ({len(self.seed_bytes)} of {SEED_BYTES} seed bytes drawn)"
        return json.dumps(self.turns.state.public_view(), sort_keys=True)


class Observer:
    """OpenSpiel's PyObserver: a player's tensor and strings (the player's own view
    only: private information of one player, plus everything public)."""

    def __init__(self, config: Config, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or \
                not iig_obs_type.public_info:
            raise ValueError("only a player's own view is offered (private info of a single"
                             " player and the public information)")
        self.config = config
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.tensor = np.zeros(config.encoder.size, np.float32)
        self.dict = {"observation": self.tensor}
        #: the compiled writer of the last engine state asked about (None: the dict path)
        self._written: tuple[engine.State, native.SeatTensors | None] | None = None

    def set_from(self, state: TwistArenaState, player: int) -> None:
        m = state.match
        if not m.dealt:
            self.tensor.fill(0.0)  # before the deal nobody knows anything
            return
        game = m.state
        if self._written is None or self._written[0] is not game:
            self._written = (game, native.native_tensors(self.config.encoder, game))
        writer = self._written[1]
        if writer is None:
            self.config.encoder.encode_into(self.tensor, game.observation(player))
        else:
            writer.tensor_into(player, self.tensor)  # straight into the kept buffer

    def string_from(self, state: TwistArenaState, player: int) -> str:
        if state.turns is None:
            return f"player {player}: dealing"
        game = state.turns.state
        if self.perfect_recall:
            return json.dumps(game.event_log(player), sort_keys=True)
        return json.dumps(game.observation(player), sort_keys=True)


class TrickyTwistGame(TwistArenaGame):
    """``twistarena_tricky_twist``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__("tricky_twist", params)


class TwistedGame(TwistArenaGame):
    """``twistarena_twisted``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__("twisted", params)


class TwhistGame(TwistArenaGame):
    """``twistarena_twhist``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__("twhist", params)


#: The class pyspiel builds each game with. Module-level classes, as in OpenSpiel's
#: own Python games: pyspiel keeps them until the interpreter exits, and a
#: factory that only pyspiel holds would be freed after Python has shut down.
GAME_CLASSES: dict[str, type[TwistArenaGame]] = {
    "tricky_twist": TrickyTwistGame, "twisted": TwistedGame, "twhist": TwhistGame}


def register() -> list[str]:
    """Register every game with pyspiel (again: a no-op); their short names."""
    registered = set(pyspiel.registered_names())
    for game_id, name in SHORT_NAMES.items():
        if name not in registered:
            pyspiel.register_game(_game_type(game_id), GAME_CLASSES[game_id])
    return list(SHORT_NAMES.values())
