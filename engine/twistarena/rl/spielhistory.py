"""The history OpenSpiel keeps in C++, copied between our OpenSpiel states.

OpenSpiel clones a Python game's state by making a new initial state through
Python and deep-copying each attribute with ``copy.deepcopy``: 2 to 3 µs before
anything of ours is copied, several times a C++ game's whole clone. Our states
clone themselves instead (``TwistArenaState.clone``): a new state and the
match's copy. What Python cannot copy is the history and move number OpenSpiel
keeps in its C++ ``State`` (``history()``, ``move_number()``, ``serialize()``
and every C++ algorithm read them); the compiled ``_spielhistory`` copies them.

It finds them through OpenSpiel itself (the exported ``State::FullHistory``
accessor gives the field's place in the object), and it is used only after a
probe agreed: a state of the game, a few moves in, read through that layout,
must give the history, players, move number and action and player counts that
OpenSpiel's own calls give, and a clone made with it must too. Where the
extension was not built, or the probe disagrees (another OpenSpiel build or
layout), ``enabled()`` is false and states clone through OpenSpiel's path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyspiel

try:
    from . import _spielhistory
except ImportError:  # built without a C++ compiler: OpenSpiel's own clone serves
    _spielhistory = None  # type: ignore[assignment]

#: ``copy(destination, source)`` once the probe agreed (None: OpenSpiel's clone)
copy: Callable[[Any, Any], None] | None = None
#: what the probe found (None: not probed yet); kept for ``use(True)``
_probed: bool | None = None


def enabled() -> bool:
    """Whether our states clone through the history copy."""
    return copy is not None


def use(on: bool) -> None:
    """Switch the history copy off (OpenSpiel's clone) or back on, where the probe
    agreed: benchmarks and tests compare the two paths."""
    global copy
    copy = _spielhistory.copy if on and _probed and _spielhistory is not None else None


def probe(make_state: Callable[[], Any], state_type: type) -> bool:
    """Once per process: check the copy on ``make_state()`` (a state a few moves
    in, of type ``state_type``) and enable it for ``state_type``'s instances when
    everything read agrees."""
    global _probed
    if _probed is not None:
        return _probed
    _probed = _agrees(make_state(), state_type)
    use(_probed)
    return _probed


def _agrees(state: Any, state_type: type) -> bool:
    """The layout read matches what OpenSpiel answers, and a copy made with it too."""
    if _spielhistory is None:
        return False
    return any(_agrees_through(state, state_type, indirect) for indirect in (False, True))


def _agrees_through(state: Any, state_type: type, indirect: bool) -> bool:
    """``_agrees`` for one of pybind's two ways of holding the C++ object."""
    try:
        offset, distinct, players, move_number, who, actions = _spielhistory.probe(
            pyspiel.__file__, state, indirect)
    except LookupError:
        return False
    expected = [(h.player, h.action) for h in state.full_history()]
    game = state.get_game()
    if (distinct, players, move_number) != (game.num_distinct_actions(), game.num_players(),
                                           state.move_number()) \
            or list(zip(who, actions, strict=True)) != expected or len(expected) < 2:
        return False
    _spielhistory.enable(offset, indirect, state_type)
    twin = pyspiel.State.clone(state)  # OpenSpiel's own clone, then ours over it
    fresh = state_type(game)
    _spielhistory.copy(fresh, twin)
    if [(h.player, h.action) for h in fresh.full_history()] != expected \
            or fresh.move_number() != move_number:
        _spielhistory.enable(0, indirect, state_type)
        return False
    return True
