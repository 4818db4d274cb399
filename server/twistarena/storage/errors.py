"""The few errors the storage layer raises; nothing else of the driver leaks out.

Callers tell apart: a write refused because this node lost the right to make
it (``FencedError``), an action log that is not as long as the writer thought
(``LogConflict``), a store that cannot take the call for a moment
(``TransientStoreError``: unreachable, loading, busy, reconfiguring; the
outcome of a write is unknown and retrying within the lease may help), a write
that was made but not confirmed durable in time (``NotDurableError``), and
anything else the store refused (``StoreError``). ``translate`` is the one
place that decides which is which.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError


class StoreError(Exception):
    """The store refused an operation."""


class FencedError(StoreError):
    """This node no longer holds the lease (another node claimed it, or it expired)."""


class EndStored(FencedError):
    """The match's end is already stored (another end than this writer's): a stored
    end is final, so whoever still runs the match here stops."""

    def __init__(self, match_id: str, status: int) -> None:
        super().__init__(f"match {match_id}: its end is already stored (status {status})")
        self.status = status


class LogConflict(StoreError):
    """The log does not have the expected length."""

    def __init__(self, actual: int) -> None:
        super().__init__(f"log length is {actual}")
        self.actual = actual


class TransientStoreError(StoreError):
    """The store cannot take the call for a moment (unreachable, loading its AOF, a
    busy script, a cluster reconfiguring, a replica without its primary): retry."""


class NotDurableError(TransientStoreError):
    """The store accepted a write but could not confirm it durable in time (its
    AOF fsync, or the replicas asked for): it is not acknowledged (retried)."""


#: Error replies that mean "not now" rather than "no".
TRANSIENT_PREFIXES = ("LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN")


def translate(exc: BaseException) -> StoreError:
    """The domain error for an exception of the driver, the socket, or an error
    reply to one command of a pipeline."""
    if isinstance(exc, StoreError):
        return exc
    text = str(exc) or repr(exc)
    if isinstance(exc, RedisConnectionError | RedisTimeoutError | OSError) or \
            text.startswith(TRANSIENT_PREFIXES):
        return TransientStoreError(text)
    return StoreError(text)


def raised_in_driver(exc: BaseException) -> bool:
    """Whether ``exc`` went through the driver's own code. A connection that broke
    under a call can surface from there as other than a ``RedisError``
    (``RuntimeError`` on a transport already closed, ``AttributeError`` on a
    writer already dropped): a store failure all the same, not a bug of ours."""
    tb = exc.__traceback__
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith("redis."):
            return True
        tb = tb.tb_next
    return False


@contextlib.contextmanager
def driver_errors() -> Iterator[None]:
    """Raise driver and socket errors of the block as ``StoreError``s (a broken
    connection whatever it raised: transient, so callers retry or answer
    UNAVAILABLE)."""
    try:
        yield
    except (RedisError, OSError) as exc:
        raise translate(exc) from exc
    except Exception as exc:
        if not raised_in_driver(exc):
            raise
        raise TransientStoreError(f"{type(exc).__name__}: {exc}") from exc
