"""Policies for the tests: ``(tensor, mask) -> index``, as a trained one would be."""

from __future__ import annotations

from typing import Any

import numpy as np


def first_legal(tensor: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> int:
    """The lowest legal index."""
    return int(np.flatnonzero(mask)[0])


def illegal(tensor: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> int:
    """An index that is never legal now."""
    return int(np.flatnonzero(mask == 0)[0])


NOT_CALLABLE = 3


def broken(tensor: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> int:
    """A policy whose weights are missing: it raises on every decision."""
    raise FileNotFoundError("weights.npz")
