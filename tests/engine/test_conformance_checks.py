"""The conformance checker itself: its fast path accepts nothing the contract refuses."""

from __future__ import annotations

import pytest

from .conformance import check_wire_friendly


@pytest.mark.parametrize("value", [
    None, 1.5, {"a": None}, {1: "x"}, {"a": [[1]]}, {"a": [(1, 2)]}, [{"b": 2.0}],
    {"a": {"b": [1, None]}}, (1, 2),
])
def test_what_protobuf_cannot_mirror_is_refused(value: object) -> None:
    with pytest.raises(AssertionError):
        check_wire_friendly(value, "view")


def test_what_protobuf_can_mirror_is_accepted() -> None:
    check_wire_friendly({"a": [1, "x", True, {"b": {"c": [2]}}], "d": "", "e": 0}, "view")


def test_a_refusal_names_the_place() -> None:
    with pytest.raises(AssertionError, match=r"view\.players\[1\]\.hand"):
        check_wire_friendly({"players": [{"hand": [1]}, {"hand": None}]}, "view")
