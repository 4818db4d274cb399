"""Twhist's data table: every [decided] figure of docs/rules/twhist.md, overridable per match."""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    # TH-1.3 [decided]: the colours of the 32 number cards ...
    "colours": ["red", "yellow", "green", "blue"],
    # ... and the values of each colour (colours x values must make 32 cards).
    "values": [-1, 0, 1, 2, 2, 3, 4, 5],
    # TH-1.1 / TH-5.3: the FLIP card values; sums are clamped into this range.
    "flip_min": -1,
    "flip_max": 8,
    # TH-1.4 [decided]: stars on the star side, index = FLIP value - flip_min.
    "stars": [4, 3, 2, 1, 1, 1, 2, 2, 3, 4],
    # TH-4.1 [decided]: of equal lead-colour values, "earlier" or "later" card wins.
    "equal_values": "earlier",
    # TH-2.2: Twhist cards lie open in front of their owners (True) or hidden in hand.
    "twhist_visible": True,
    # TH-4.2 applied to Pass: only the first Pass of a trick has power, so a later
    # Pass player flips the remainder like everyone else (False). True: every Pass
    # player sits out.
    "every_pass_sits_out": False,
}


#: Bounds of every option that holds numbers (options.check_ranges).
OPTION_RANGES: dict[str, tuple[int, int]] = {
    "values": (-10, 20),
    "flip_min": (-20, 20),
    "flip_max": (-20, 40),
    "stars": (0, 100),
}
