"""Types of the history copy (spielcsrc/history.cpp); ``openspiel`` is its Python side."""

from typing import Any

def probe(pyspiel_path: str, state: Any, indirect: bool, /
          ) -> tuple[int, int, int, int, list[int], list[int]]:
    """(offset, num_distinct_actions, num_players, move_number, players, actions) of
    ``state`` as read through the layout OpenSpiel's ``State::FullHistory`` gives,
    the C++ object found in pybind's simple layout or (``indirect``) its other."""

def enable(offset: int, indirect: bool, state_type: type, /) -> None:
    """Allow ``copy`` between instances of ``state_type``, through that layout."""

def copy(destination: Any, source: Any, /) -> None:
    """The source's OpenSpiel history and move number into the destination."""
