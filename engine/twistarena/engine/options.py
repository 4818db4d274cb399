"""Match options: a game's data table of defaults, overridden per match.

Every [decided] figure of docs/rules/ lives in its game's ``DEFAULTS`` table; a
match may override any entry. Overrides merge recursively into nested tables
and must keep each entry's type, so a typo is an error instead of a silent
default. Every number must also lie in the option's range (the game's
``OPTION_RANGES``), and lists and texts are short: an option can make a
match neither endless nor huge.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .core import JSON, InvalidOptions

#: The inclusive bounds of an integer option, or of every integer in a list or table option.
Range = tuple[int, int]
#: The most entries a list option may hold, and the longest text option.
MAX_LIST = 64
MAX_TEXT = 64


def check_ranges(options: Mapping[str, Any], ranges: Mapping[str, Range]) -> None:
    """Raise ``InvalidOptions`` naming the first number out of its option's range,
    or a list or text longer than ``MAX_LIST``/``MAX_TEXT``."""
    for key, value in options.items():
        _check_range(key, value, ranges.get(key))


def _check_range(where: str, value: Any, bounds: Range | None) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            raise InvalidOptions(
                f"option {where!r} must be within {bounds[0]}..{bounds[1]}, got {value!r}")
    elif isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise InvalidOptions(f"option {where!r} is longer than {MAX_TEXT} characters")
    elif isinstance(value, list):
        if len(value) > MAX_LIST:
            raise InvalidOptions(f"option {where!r} has more than {MAX_LIST} entries")
        for i, item in enumerate(value):
            _check_range(f"{where}[{i}]", item, bounds)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_range(f"{where}.{key}", item, bounds)


def merge_options(defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None,
                  path: str = "") -> JSON:
    """Defaults with ``overrides`` applied; raises ``InvalidOptions`` on unknown keys or types."""
    merged: JSON = {key: _copied(value) for key, value in defaults.items()}
    for key, value in (overrides or {}).items():
        where = f"{path}{key}"
        if key not in merged:
            known = ", ".join(sorted(merged))
            raise InvalidOptions(f"unknown option {where!r}; known options: {known}")
        base = merged[key]
        if isinstance(base, Mapping):
            if not isinstance(value, Mapping):
                raise InvalidOptions(f"option {where!r} must be a table")
            merged[key] = merge_options(base, value, f"{where}.")
        else:
            merged[key] = _check_type(where, base, value)
    return merged


def _copied(value: Any) -> Any:
    """A copy of an option table's value that shares nothing mutable with it:
    ``copy.deepcopy`` for what is not plain JSON, a few times faster for what
    is (every match and every environment reset merges its options)."""
    kind = type(value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list:
        return [_copied(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_IMMUTABLE = frozenset({int, float, str, bool, type(None)})


def _check_type(where: str, base: Any, value: Any) -> Any:
    if isinstance(base, bool):
        if not isinstance(value, bool):
            raise InvalidOptions(f"option {where!r} must be true or false, got {value!r}")
        return value
    if isinstance(base, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidOptions(f"option {where!r} must be an integer, got {value!r}")
        return value
    if isinstance(base, list):
        if not isinstance(value, list | tuple) or not value:
            raise InvalidOptions(f"option {where!r} must be a non-empty list, got {value!r}")
        if base and all(isinstance(x, int) for x in base) and not all(
            isinstance(x, int) and not isinstance(x, bool) for x in value
        ):
            raise InvalidOptions(f"option {where!r} must be a list of integers, got {value!r}")
        return list(value)
    if isinstance(base, str):
        if not isinstance(value, str):
            raise InvalidOptions(f"option {where!r} must be a string, got {value!r}")
        return value
    return copy.deepcopy(value)
