"""The one engine API every game implements (OpenSpiel's Game/State split).

A ``State`` is a whole match in progress. The public methods here do the
bookkeeping every game shares (who may act, validation, history, the event
log, ranking); a game fills in the ``_``-prefixed hooks. Action ids are small
ints so that a search bot can play millions of them; labels and payloads are
built only when someone asks for ``legal_actions``.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from types import MappingProxyType
from typing import Any, ClassVar, Final, NamedTuple

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # the rules copied without mypy's helpers (a bot's own folder)
    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        """Without the compiler's helpers the class needs no mark: a no-op."""
        return lambda cls: cls

JSON = dict[str, Any]


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class IllegalAction(EngineError):
    """An action that the rules do not allow now. The state is unchanged.

    ``reason`` is machine-readable (one of the ``REASON_*`` constants);
    ``str(error)`` is a sentence a person can act on.
    """

    GAME_OVER: ClassVar[str] = "game_over"
    NOT_TO_ACT: ClassVar[str] = "not_to_act"
    ILLEGAL: ClassVar[str] = "illegal_action"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class InvalidOptions(EngineError, ValueError):
    """Unknown game, player count out of range, or a bad match option."""


class InvalidObservation(EngineError, ValueError):
    """An observation that no state of the game (with these options) can show."""


@dataclass(frozen=True, slots=True)
class Action:
    """One legal choice: ``id`` is what an agent sends back."""

    id: int
    label: str
    payload: Mapping[str, Any]

    def to_json(self) -> JSON:
        return {"id": self.id, "label": self.label, "payload": dict(self.payload)}


_NOTHING_PRIVATE: Final[Mapping[int, Mapping[str, Any]]] = MappingProxyType({})
#: a tuple's own constructor, which makes an ``Event`` without running the Python
#: ``__new__`` a named tuple is given (a frame per event: one or two per decision)
_new_tuple: Final = tuple.__new__


class Event(NamedTuple):
    """Something that happened, as each seat is allowed to see it.

    ``public`` is what everyone sees; ``private`` adds, per seat, what only
    that seat learns (its dealt hand, the card it drew, its hidden choice).
    A named tuple because the engine logs one per decision: it must be cheap.
    """

    kind: str
    public: Mapping[str, Any]
    private: Mapping[int, Mapping[str, Any]] = _NOTHING_PRIVATE

    def view(self, seat: int | None) -> JSON:
        """The event as ``seat`` sees it (``None``: a spectator)."""
        out: JSON = {"kind": self.kind, **self.public}
        if seat is not None:
            extra = self.private.get(seat)
            if extra:
                out.update(extra)
        return out


@lru_cache(maxsize=1 << 12)
def set_bits(mask: int) -> tuple[int, ...]:
    """The indices of the bits set in ``mask``, lowest first.

    Views list small bitmasks (voids, FLIP cards, Twhist cards) as names at
    every decision; kept, a mask's bits are looked up instead of tested one by one."""
    return tuple(b for b in range(mask.bit_length()) if mask >> b & 1)


#: One slice of an observation (see ``State.observation_parts``): ``(slot, version,
#: build)``. ``slot`` names the slice (the same slot in every observation of a
#: match); ``version`` is equal whenever the slice's content is (None: not known,
#: so never reuse it); ``build`` makes the slice's dict when it is needed.
#: A plain tuple: games make one per player at every decision, and a named
#: tuple costs several times as much to make.
ObservationPart = tuple[Hashable, Hashable, Callable[[], JSON]]
#: An observation part's ``(slot, version)`` (see ``State.observation_slots``).
ObservationSlot = tuple[Hashable, Hashable]


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What ``twistarena.engine.games()`` lists about one game."""

    id: str
    name: str
    min_players: int
    max_players: int
    defaults: Mapping[str, Any]
    deck_size: int
    new_state: Callable[[int, int, JSON], State]
    #: One line of text for an event as ``Event.view`` gives it (None: not worth saying).
    narrate: Callable[[Mapping[str, Any]], str | None]
    #: (observation, merged options, rng) -> a state that shows the seat exactly that
    #: observation, everything hidden from it dealt at random (see ``sample_state``).
    sample_state: Callable[[Mapping[str, Any], JSON, random.Random], State]
    #: Option name -> inclusive bounds of every integer in it (see ``options.check_ranges``).
    option_ranges: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "name": self.name,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "defaults": copy.deepcopy(dict(self.defaults)),
        }


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class State:
    """A match of one game. Subclasses implement the ``_`` hooks below.

    Invariants every game keeps (checked by tests/engine/conformance.py):
    legal ids are sorted, unique and non-empty for every seat in ``to_act()``
    while the match runs; ``apply`` either succeeds or raises
    ``IllegalAction`` leaving everything unchanged; the same options, seed and
    actions give the same events and scores.
    """

    game_id: ClassVar[str] = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> State:
        """Only allocates (``__init__`` sets the fields). Compiled, a class with its
        own ``__new__`` is built by Python's two steps, which copies need: a copy is
        allocated, then handed its fields, without dealing a match first."""
        return super().__new__(cls)

    def __init__(self, num_players: int, seed: int, options: JSON) -> None:
        self.num_players = num_players
        self.seed = seed
        self.options = options
        self._rng = random.Random(seed)
        #: True while another state may hold ``_rng`` too (see ``rng``)
        self._rng_shared = False
        self.history: list[tuple[int, int]] = []
        self.events: list[Event] = []

    @property
    def rng(self) -> random.Random:
        """The match's random stream (every deal and shuffle draws from it).

        Copied on first use after a clone, not at the clone: copying a generator's
        state costs more than the rest of a clone, and a search bot's clones seldom
        reach the next deal. Until one of them draws, the original and its clones
        share one generator that nobody draws from, so each draws the same numbers
        as it would have from its own copy."""
        if self._rng_shared:
            own = random.Random.__new__(random.Random)  # not seeded: the state is set next
            own.setstate(self._rng.getstate())
            self._rng = own
            self._rng_shared = False
        return self._rng

    @rng.setter
    def rng(self, rng: random.Random) -> None:
        self._rng = rng
        self._rng_shared = False

    # -- the API -----------------------------------------------------------

    def is_terminal(self) -> bool:
        return not self._to_act()

    def to_act(self) -> tuple[int, ...]:
        """Seats that must decide now (several where choices are simultaneous)."""
        return self._to_act()

    def legal_action_ids(self, seat: int) -> Sequence[int]:
        """Sorted, unique legal ids for ``seat``; empty if it is not to act.

        Read-only: games may hand out their cached list to keep playouts fast."""
        if seat not in self._to_act():
            return ()
        return self._legal_ids(seat)

    def legal_actions(self, seat: int) -> list[Action]:
        """Legal actions of ``seat`` with their labels and payloads."""
        return [self._describe(seat, a) for a in self.legal_action_ids(seat)]

    def describe(self, seat: int, action_id: int) -> Action:
        """Label and payload of one action id of ``seat`` (legal now or not)."""
        return self._describe(seat, action_id)

    def vocabulary_version(self) -> Hashable:
        """Equal whenever ``describe`` gives the same label and payload for every
        seat and action id, within one match and across matches of the same game,
        player count and options (None: not known). Lets a caller keep each
        action's encoded form instead of describing it per decision."""
        return self._vocabulary_version()

    def check(self, seat: int, action_id: int) -> IllegalAction | None:
        """Why ``seat`` may not play ``action_id`` now, or None if it may.

        Changes nothing (the question ``apply`` asks first; pokerkit's
        verify/can/do): callers that only want to judge an action ask this
        instead of trying it on the live state."""
        acting = self._to_act()
        if seat not in acting:
            if not acting:
                return IllegalAction(IllegalAction.GAME_OVER, "the match is over")
            who = ", ".join(str(s) for s in acting)
            return IllegalAction(
                IllegalAction.NOT_TO_ACT, f"seat {seat} is not to act; waiting for seat(s) {who}"
            )
        if action_id not in self._legal_ids(seat):
            return IllegalAction(IllegalAction.ILLEGAL, self._why_illegal(seat, action_id))
        return None

    def apply(self, seat: int, action_id: int) -> None:
        """Play ``action_id`` for ``seat`` or raise ``IllegalAction`` (no change)."""
        error = self.check(seat, action_id)
        if error is not None:
            raise error
        self.history.append((seat, action_id))
        self._apply(seat, action_id)

    def observation(self, seat: int) -> JSON:
        """Everything ``seat`` may know now, and nothing more (JSON-ready)."""
        return self._observation(seat)

    def observation_parts(self, seat: int) -> list[ObservationPart]:
        """``observation(seat)`` as disjoint parts, for callers that keep built parts.

        Merging the parts' dicts in order (a key found in several parts holds a
        list: the lists are joined) gives ``observation(seat)``. A caller may reuse
        what it built from a slot while that slot's version is unchanged: most of
        an observation is history that changes far less often than every decision,
        so only what changed needs building (and encoding) again."""
        return [(slot, version, partial(self._observation_part, seat, slot))
                for slot, version in self._observation_slots(seat)]

    def observation_slots(self, seat: int) -> list[ObservationSlot]:
        """``observation_parts(seat)`` without their builds: ``(slot, version)`` in
        the same order, each built by ``observation_part(seat, slot)`` when needed.
        Nothing is made for a part that is kept, where a build is one more object
        per part at every decision."""
        return self._observation_slots(seat)

    def observation_part(self, seat: int, slot: Hashable) -> JSON:
        """The part of ``observation(seat)`` in ``slot`` (one of ``observation_slots``)."""
        return self._observation_part(seat, slot)

    def public_view(self) -> JSON:
        """What a spectator may see (JSON-ready)."""
        return self._public_view()

    def scores(self) -> list[int]:
        """Running totals per seat; final when the match is over."""
        return self._scores()

    def places(self) -> list[int]:
        """Place per seat (1 = won); equal rank keys share a place (competition ranking)."""
        keys = [self._rank_key(s) for s in range(self.num_players)]
        return [1 + sum(1 for other in keys if other > mine) for mine in keys]

    def winners(self) -> list[int]:
        places = self.places()
        return [s for s in range(self.num_players) if places[s] == 1]

    def clone(self) -> State:
        """An independent copy; cheap enough for search bots to call per simulation.

        Field by field (a generic copy costs several times as much compiled): the
        fields of ``State`` here, each game's in ``_copy_plain_into`` (values never
        changed in place) and ``_copy_mutable_into`` (its own copies)."""
        new: State = type(self).__new__(type(self))
        if type(self).__dictoffset__:
            # interpreted, or a subclass defined in Python over the compiled engine:
            # the fields in a __dict__, which the copies below would leave out
            new.__dict__.update(self.__dict__)
        new.num_players = self.num_players
        new.seed = self.seed
        new.options = self.options
        new._rng = self._rng
        new._rng_shared = self._rng_shared = True  # copied by whichever draws first
        new.history = list(self.history)
        new.events = list(self.events)  # events are immutable once logged
        self._copy_plain_into(new)
        self._copy_mutable_into(new)
        return new

    def event_log(self, seat: int | None = None) -> list[JSON]:
        """The match's events as ``seat`` sees them (``None``: spectator)."""
        return [e.view(seat) for e in self.events]

    def determinize(self, seat: int, rng: random.Random) -> State:
        """A clone in which everything hidden from ``seat`` is re-dealt at random,
        consistently with what ``seat`` has seen. Used by search bots, and by the
        hidden-information tests: ``seat``'s observation must not change.

        The result depends only on what ``seat`` knows and on ``rng``: games re-deal
        from the sorted set of unseen cards, and the history, event log and seed
        (which would reveal the true deal) are not carried over."""
        new = self.clone()
        new._redeal_hidden(seat, rng)
        new.forget_the_deal(rng)  # future shuffles are hidden too
        return new

    def forget_the_deal(self, rng: random.Random) -> None:
        """Drop what would reveal how this state was dealt (seed, history, event
        log) and draw future shuffles from ``rng``: for states built by a sampler."""
        self.seed = -1
        self.history = []
        self.events = []
        self.rng = random.Random(rng.getrandbits(64))

    def card_zones(self) -> dict[str, list[int]]:
        """Every physical card of the game by zone (for conservation checks)."""
        return self._card_zones()

    # -- helpers for games --------------------------------------------------

    def log(self, kind: str, private: Mapping[int, Mapping[str, Any]] | None = None,
            **public: Any) -> None:
        self.events.append(_new_tuple(Event, (kind, public, private or _NOTHING_PRIVATE)))

    # -- hooks --------------------------------------------------------------

    def _to_act(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _legal_ids(self, seat: int) -> Sequence[int]:
        raise NotImplementedError

    def _apply(self, seat: int, action_id: int) -> None:
        raise NotImplementedError

    def _describe(self, seat: int, action_id: int) -> Action:
        raise NotImplementedError

    def _vocabulary_version(self) -> Hashable:
        return None

    def _why_illegal(self, seat: int, action_id: int) -> str:
        legal = self._legal_ids(seat)
        return f"action {action_id} is not legal now; legal ids: {list(legal)}"

    def _observation(self, seat: int) -> JSON:
        raise NotImplementedError

    def _observation_slots(self, seat: int) -> list[ObservationSlot]:
        """Games whose observation has slow-changing slices override this and
        ``_observation_part``."""
        return [("observation", None)]

    def _observation_part(self, seat: int, slot: Hashable) -> JSON:
        return self._observation(seat)

    def _public_view(self) -> JSON:
        raise NotImplementedError

    def _scores(self) -> list[int]:
        raise NotImplementedError

    def _rank_key(self, seat: int) -> tuple[int, ...]:
        """Higher is better; equal keys share a place. Games add tie-breakers."""
        return (self._scores()[seat],)

    def _copy_plain_into(self, new: State) -> None:
        """Give ``new`` this game's fields that are never changed in place (numbers,
        strings, tuples, lists only ever replaced whole): shared, not copied. Every
        field of a game is copied here or in ``_copy_mutable_into``."""

    def _copy_mutable_into(self, new: State) -> None:
        """Give ``new`` its own copies of this game's mutable fields."""
        raise NotImplementedError

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        raise NotImplementedError

    def _card_zones(self) -> dict[str, list[int]]:
        raise NotImplementedError

