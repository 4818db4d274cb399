"""Legal actions as encoded ``legal_actions`` entries of a DecisionRequest, each encoded once.

A decision's legal actions are spliced from kept bytes: an action's label and
payload recur across decisions and across matches of the same game.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from twistarena.v1 import play_pb2 as ppb

from .fields import LEN, field_key, field_number, length_delimited
from .messages import LegalActionLike, struct

#: The key of one ``legal_actions`` entry of a DecisionRequest.
LEGAL_ACTIONS_KEY = field_key(field_number(ppb.DecisionRequest, "legal_actions"), LEN)


class ActionCache:
    """LegalAction messages by (id, label), reused while their payload is unchanged.

    ``encoded`` gives the same action as the bytes of one ``legal_actions``
    entry of a DecisionRequest (field key and length included)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, str], tuple[Mapping[str, Any], ppb.LegalAction, bytes]] = {}

    def _entry(self, action: LegalActionLike) -> tuple[Mapping[str, Any], ppb.LegalAction, bytes]:
        key = (action.id, action.label)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == action.payload:
            return hit
        msg = ppb.LegalAction(id=action.id, label=action.label, payload=struct(action.payload))
        if len(self._cache) > 4096:
            self._cache.clear()
        entry = (action.payload, msg, length_delimited(LEGAL_ACTIONS_KEY,
                                                      msg.SerializeToString()))
        self._cache[key] = entry
        return entry

    def get(self, action: LegalActionLike) -> ppb.LegalAction:
        return self._entry(action)[1]

    def encoded(self, action: LegalActionLike) -> bytes:
        return self._entry(action)[2]


_ACTION_CACHES: dict[str, ActionCache] = {}


def action_cache(game_id: str) -> ActionCache:
    """The ActionCache shared by every match of ``game_id`` in this process (an
    action's label and payload recur across matches; each entry is still checked
    against the payload the engine gives)."""
    cache = _ACTION_CACHES.get(game_id)
    if cache is None:
        cache = _ACTION_CACHES[game_id] = ActionCache()
    return cache


class ActionVocabulary:
    """Actions as encoded ``legal_actions`` entries, each encoded once.

    An entry is kept per (vocabulary version, action id): the engine's
    ``State.vocabulary_version`` says when labels change, so a decision's legal
    actions are spliced from kept bytes without describing them again. A
    missing entry comes from the game's process-wide ``ActionCache``. Matches of
    the same game, player count and options share one (``match_vocabulary``):
    a short match would otherwise describe most of its actions afresh."""

    #: Entries kept at most (a match meets a few hundred); past it all go.
    LIMIT = 4096

    def __init__(self, game_id: str) -> None:
        #: vocabulary version -> action id -> its encoded entry
        self._tables: dict[Hashable, dict[int, bytes]] = {}
        self._kept = 0
        self._shared = action_cache(game_id)

    def encoded(self, version: Hashable, ids: Iterable[int],
                describe: Callable[[int, int], LegalActionLike], seat: int) -> list[bytes]:
        """The ``legal_actions`` entries of ``ids``; ``describe(seat, id)`` makes a
        missing one (the engine's ``State.describe``; nothing is made per call
        when every entry is kept)."""
        if version is None:
            return [self._shared.encoded(describe(seat, action_id)) for action_id in ids]
        table = self._tables.get(version)
        if table is None:
            if self._kept >= self.LIMIT:
                self._tables.clear()
                self._kept = 0
            table = self._tables[version] = {}
        try:
            return [table[action_id] for action_id in ids]  # the usual case: all kept
        except KeyError:
            pass
        out = []
        for action_id in ids:
            entry = table.get(action_id)
            if entry is None:
                entry = table[action_id] = self._shared.encoded(describe(seat, action_id))
                self._kept += 1
            out.append(entry)
        return out


#: How many vocabularies (distinct game, player count and options) are kept.
VOCABULARIES_KEPT = 32
_VOCABULARIES: OrderedDict[tuple[str, int, str], ActionVocabulary] = OrderedDict()


def match_vocabulary(game_id: str, num_players: int,
                     options: Mapping[str, Any]) -> ActionVocabulary:
    """The vocabulary shared by the matches of ``game_id`` with this player count
    and these (merged) options in this process: the engine labels an action alike
    in two such matches whenever their vocabulary versions are equal (see
    ``State.vocabulary_version``). The least recently used goes first."""
    key = (game_id, num_players, json.dumps(options, sort_keys=True, default=str))
    vocabulary = _VOCABULARIES.get(key)
    if vocabulary is None:
        if len(_VOCABULARIES) >= VOCABULARIES_KEPT:
            _VOCABULARIES.popitem(last=False)
        vocabulary = _VOCABULARIES[key] = ActionVocabulary(game_id)
    else:
        _VOCABULARIES.move_to_end(key)
    return vocabulary

