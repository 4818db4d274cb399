"""One fixed action space per game: every engine action id has one index in it.

The engine's ids are sparse (Twisted plays card ``c`` as id ``c``, twists with it
as ``100 + c``, takes the row as ``200``), and a learner wants one mask of fixed
length per game. ``ActionSpace`` lists every id the rules can ever give, sorted,
so the index of an id is its rank in that list (OpenSpiel's
``num_distinct_actions`` is the length). The list depends on the game only:
no match option widens the engine's id ranges.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import numpy.typing as npt
from twistarena.engine import GAME_IDS, InvalidOptions
from twistarena.engine.tricky_twist import cards as tt_cards
from twistarena.engine.tricky_twist import state as tt
from twistarena.engine.twhist import cards as th
from twistarena.engine.twisted import cards as tw_cards
from twistarena.engine.twisted import state as tw

from . import native

#: the masks' dtype, as a dtype object (not a type to convert): masks are made per decision
MASK_DTYPE = np.dtype(np.int8)


@dataclass(frozen=True)
class ActionSpace:
    """The engine ids of one game in index order, and the way back."""

    game_id: str
    ids: tuple[int, ...]
    #: index of each engine id (-1: not an action of this game); length max id + 1
    index_of: npt.NDArray[np.int64]
    #: ``index_of`` as a Python list: masks are built per decision, and a list's
    #: items are read faster than an array's
    index_list: list[int] = field(init=False, repr=False, compare=False)
    #: ``index_of`` as a tuple, for the compiled mask writer
    index_tuple: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index_list", self.index_of.tolist())
        object.__setattr__(self, "index_tuple", tuple(self.index_list))

    @property
    def size(self) -> int:
        """The mask's length: OpenSpiel's ``num_distinct_actions``."""
        return len(self.ids)

    def mask(self, legal_ids: Iterable[int]) -> npt.NDArray[np.int8]:
        """1 at the index of every legal id, 0 elsewhere (PettingZoo's ``action_mask``);
        ``IndexError`` for an id that is not in the space."""
        compiled = native.compiled_mask
        if compiled is not None:
            return compiled(legal_ids, self.index_tuple, len(self.ids))
        return self.python_mask(legal_ids)

    def python_mask(self, legal_ids: Iterable[int]) -> npt.NDArray[np.int8]:
        """``mask`` in Python (where the compiled writers were not built or are off)."""
        out = bytearray(len(self.ids))
        index = self.index_list
        for a in legal_ids:
            at = index[a] if a >= 0 else -1
            if at < 0:
                raise IndexError(f"{a} is not an action id of {self.game_id}")
            out[at] = 1
        return np.frombuffer(out, MASK_DTYPE)

    def indices(self, legal_ids: Sequence[int]) -> list[int]:
        """The indices of ``legal_ids``, in their order."""
        index = self.index_list  # a list's items are read faster than an array's
        return [index[a] for a in legal_ids]

    def engine_id(self, index: int) -> int:
        """The engine's id of mask index ``index`` (``ValueError`` out of range)."""
        if not 0 <= index < len(self.ids):
            raise ValueError(f"action index {index} is outside 0..{len(self.ids) - 1}"
                             f" ({self.game_id})")
        return self.ids[index]


def _ids(game_id: str) -> tuple[int, ...]:
    """Every id the game's rules use, from the engine's own id constants."""
    if game_id == "twisted":
        cards = tw_cards.DECK
        twists = (tw.TWIST_BASE + c for c in cards if c not in tw_cards.TOADS)
        return (*cards, *twists, tw.TAKE)
    if game_id == "tricky_twist":
        deck = range(tt_cards.DECK_SIZE)
        return (
            *(tt.PLAY_BASE + c for c in deck),
            *(tt.RESERVE_BASE + c for c in deck),
            tt.TAKE_RESERVE, tt.DECLINE,
            *(tt.PICK_BASE + b for b in range(tt_cards.NUM_BONUS)),
            *(tt.TAKE_BACK_BASE + c for c in deck),
            *range(tt.FLIP_TRICK_BASE, tt.FLIP_FALSE_BASE),  # a trick's index, < 50
            *(tt.FLIP_FALSE_BASE + c for c in deck),
            *(tt.FLIP_TOP_BASE + c for c in deck),
            tt.BLANK_TRICK, tt.BLANK_FALSE,
            *(tt.SYMBOL_BASE + f for f in range(len(tt_cards.FAMILIES))),
            *(tt.VALUE_BASE + v for v in range(1, tt_cards.NUM_VALUES + 1)),
            *range(tt.MOD_TARGET_BASE, tt.MOD_MINUS),  # a false trick's index, < 50
            tt.MOD_MINUS, tt.MOD_PLUS,
        )
    if game_id == "twhist":
        return tuple(range(th.STOP + 1))  # cards, Twhist cards, picks, stop: dense already
    raise InvalidOptions(f"unknown game {game_id!r}; games: {', '.join(GAME_IDS)}")


@cache
def action_space(game_id: str) -> ActionSpace:
    """The fixed action space of ``game_id`` (the same for every option and player count)."""
    ids = tuple(sorted(_ids(game_id)))
    assert len(set(ids)) == len(ids), f"{game_id}: an engine id is listed twice"
    index_of = np.full(ids[-1] + 1, -1, np.int64)
    index_of[list(ids)] = np.arange(len(ids))
    return ActionSpace(game_id, ids, index_of)


def num_distinct_actions(game_id: str) -> int:
    """The length of ``game_id``'s action mask (OpenSpiel's ``num_distinct_actions``)."""
    return action_space(game_id).size
