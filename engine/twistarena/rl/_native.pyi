"""Types of the compiled writers (csrc/); ``native`` is their Python side."""

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

#: game -> {"fields": names, "segments": ((name, length or 0), ...), "seat_segments":
#: (the same, each relative seat's block), "tables": names}: what each writer reads
WRITERS: dict[str, dict[str, tuple[Any, ...]]]

class SeatTensors:
    """A match's seats' tensors, each written anew from the state by ``tensor``."""

    def __init__(self, game: str, state: Any, fields: Callable[[Any], tuple[Any, ...]],
                 size: int, layout: tuple[int, ...], tables: tuple[Any, ...]) -> None: ...
    def tensor(self, seat: int, /) -> npt.NDArray[np.float32]: ...
    def tensor_into(self, seat: int, out: npt.NDArray[np.float32], /) -> None: ...
    def observation(self, index: tuple[int, ...], size: int, seat: int,
                    legal_ids: Iterable[int], /) -> dict[str, Any]: ...

def mask(legal_ids: Iterable[int], index: tuple[int, ...], size: int, /
         ) -> npt.NDArray[np.int8]: ...
