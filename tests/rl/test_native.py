"""The compiled writers (twistarena.rl.native) under bad input, and the masks.

Their tensors are held to the dict path in test_live.py. Here: they are C code
reading Python objects and writing into memory, so a wrong layout, a wrong seat
or a state of the wrong shape must raise a Python error and never write outside
the tensor; and the compiled action mask equals the Python one.
"""

from __future__ import annotations

import gc
import random
import weakref
from typing import Any

import numpy as np
import pytest
from twistarena import engine
from twistarena.rl import aec_env, encoder, native
from twistarena.rl.actions import action_space
from twistarena.rl.live import LiveTensors
from twistarena.rl.native import _native, native_tensors
from twistarena.rl.tensors import per_seat

from tests.rl.test_live import compiled_tensors


def _twisted_layout() -> tuple[Any, tuple[int, ...], tuple[object, ...], int]:
    """What ``native`` gives the Twisted writer for 3 players: fields getter,
    layout, tables, size."""
    enc = encoder("twisted", 3)
    state = engine.make("twisted", 3, 1)
    compiled_tensors(enc, state)  # this build has the writers
    fields, layout, tables = native.writer_arguments(enc, state)
    return fields, layout, tables, enc.size


def test_a_layout_beyond_the_tensor_raises_instead_of_writing_past_it() -> None:
    fields, layout, tables, size = _twisted_layout()
    state = engine.make("twisted", 3, 1)
    for bad in (size, size + 10_000, -10_000):
        wrong = (bad, *layout[1:])  # the hand's zone out of the tensor
        tensors = _native.SeatTensors("twisted", state, fields, size, wrong, tables)
        with pytest.raises(IndexError, match="out of"):
            tensors.tensor(0)
    small = _native.SeatTensors("twisted", state, fields, 10, layout, tables)  # too short
    with pytest.raises(IndexError):
        small.tensor(0)


def test_a_seat_outside_the_match_or_an_unknown_game_is_refused() -> None:
    tensors = native_tensors(encoder("twisted", 3), engine.make("twisted", 3, 1))
    assert tensors is not None
    for seat in (-1, 3, 99):
        with pytest.raises(ValueError, match="no seat"):
            tensors.tensor(seat)
    with pytest.raises(TypeError):
        tensors.tensor("0")  # type: ignore[arg-type]
    fields, layout, tables, size = _twisted_layout()
    with pytest.raises(ValueError, match="no compiled encoder"):
        _native.SeatTensors("chess", engine.make("twisted", 3, 1), fields, size, layout, tables)
    with pytest.raises(TypeError, match="callable"):
        _native.SeatTensors("twisted", engine.make("twisted", 3, 1), None, size, layout, tables)


def test_a_state_or_fields_of_the_wrong_shape_raise() -> None:
    """A Twhist state given to the Twisted writer, fields of the wrong count or
    kind: a Python error, not a crash."""
    fields, layout, tables, size = _twisted_layout()
    twhist = engine.make("twhist", 3, 1)
    tensors = _native.SeatTensors("twisted", twhist, fields, size, layout, tables)
    with pytest.raises(AttributeError):
        tensors.tensor(0)
    twisted = engine.make("twisted", 3, 1)
    for getter, error in ((lambda st: fields(st)[:-1], "reads 11 fields"),
                          (lambda st: list(fields(st)), "must return a tuple"),
                          (lambda st: (7, *fields(st)[1:]), "expected a list or tuple")):
        bad = _native.SeatTensors("twisted", twisted, getter, size, layout, tables)
        with pytest.raises(TypeError, match=error):
            bad.tensor(0)


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_a_tensor_written_into_a_kept_buffer_is_the_new_tensor_and_nothing_of_the_last(
        game_id: str) -> None:
    players = engine.game(game_id).min_players
    enc = encoder(game_id, players)
    state = engine.make(game_id, players, 5)
    compiled = compiled_tensors(enc, state)
    python = LiveTensors(enc, state)
    rng = random.Random(game_id)
    kept, python_kept = np.full(enc.size, 7.0, np.float32), np.full(enc.size, 7.0, np.float32)
    for _ in range(40):  # the buffer keeps the last seat's and step's tensor: overwritten
        if not state.to_act():
            break
        for seat in range(players):
            compiled.tensor_into(seat, kept)
            python.tensor_into(seat, python_kept)
            assert np.array_equal(kept, compiled.tensor(seat))
            assert np.array_equal(python_kept, kept)
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    for bad in (np.zeros(enc.size, np.float64), np.zeros(enc.size + 1, np.float32),
                np.zeros((enc.size, 2), np.float32)[:, 0], [0.0] * enc.size):
        with pytest.raises((TypeError, ValueError)):
            compiled.tensor_into(0, bad)  # type: ignore[arg-type]
    frozen = np.zeros(enc.size, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        compiled.tensor_into(0, frozen)
    with pytest.raises(ValueError, match="no seat"):
        compiled.tensor_into(players, kept)


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_the_compiled_mask_equals_the_python_mask(game_id: str) -> None:
    space = action_space(game_id)
    rng = random.Random(game_id)
    players = engine.game(game_id).min_players
    state = engine.make(game_id, players, 3)
    legal = [list(state.legal_action_ids(s)) for s in state.to_act()]
    for ids in [*legal, [], list(space.ids), *(rng.sample(space.ids, 7) for _ in range(50))]:
        compiled = space.mask(ids)
        assert compiled.dtype == np.int8 and compiled.shape == (space.size,)
        assert np.array_equal(compiled, space.python_mask(ids))
    for bad in (-1, max(space.ids) + 1, 10**6):
        for mask in (space.mask, space.python_mask):
            with pytest.raises(IndexError):
                mask([space.ids[0], bad])


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_without_the_extension_the_environment_observes_the_same(game_id: str) -> None:
    """Where the extension was not built, or is turned off, the Python paths serve:
    the same observations, step by step, as an environment with the compiled
    writers."""
    players = engine.game(game_id).max_players
    compiled = aec_env(game_id, players)
    compiled.reset(seed=11)
    assert native.use_compiled(False) is True
    try:
        assert not native.in_use() and native.compiled_mask is None
        python = aec_env(game_id, players)
        python.reset(seed=11)
    finally:
        native.use_compiled(True)
    assert native.in_use()
    assert isinstance(python.live, LiveTensors) and not isinstance(compiled.live, LiveTensors)
    rng = random.Random(game_id)
    steps = 0
    for agent in compiled.agent_iter():
        assert agent == python.agent_selection
        mine, theirs = compiled.last()[0], python.last()[0]
        assert mine is not None and theirs is not None
        assert np.array_equal(mine["observation"], theirs["observation"])
        assert np.array_equal(mine["action_mask"], theirs["action_mask"])
        assert mine["action_mask"].dtype == theirs["action_mask"].dtype == np.int8
        action = None if compiled.terminations[agent] else int(
            rng.choice(np.flatnonzero(mine["action_mask"])))
        compiled.step(action)
        python.step(action)
        steps += 1
    assert steps > 30 and not python.agents


class _Names:
    """Any attribute is its own name: a fields getter given this lists what it reads."""

    def __getattr__(self, name: str) -> str:
        return name


def _arguments(game_id: str, players: int) -> tuple[Any, tuple[int, ...], tuple[Any, ...], int,
                                                    engine.State]:
    enc = encoder(game_id, players)
    state = engine.make(game_id, players, 1)
    compiled_tensors(enc, state)  # this build has the writers
    fields, layout, tables = native.writer_arguments(enc, state)
    return fields, layout, tables, enc.size, state


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_each_writer_reads_the_encoders_segments_and_the_getters_fields_by_name(
        game_id: str) -> None:
    """The encoder's layout (tensors.py) is the one description of a tensor: the
    compiled writer names every segment of it, in its order, with the lengths it
    assumes, and the Python getter of the state's fields lists the writer's."""
    described = _native.WRITERS[game_id]
    info = engine.game(game_id)
    for players in range(info.min_players, info.max_players + 1):
        enc = encoder(game_id, players)
        names = [name for name, _ in described["segments"]]
        names += [per_seat(name, r) for r in range(players) for name, _ in
                  described["seat_segments"]]
        assert [s.name for s in enc.segments] == names
        assumed = dict(described["segments"])
        assumed.update((per_seat(name, r), length) for r in range(players)
                       for name, length in described["seat_segments"])
        for segment in enc.segments:
            assert assumed[segment.name] in (0, segment.length), segment.name
        state = engine.make(game_id, players, 1)
        fields, layout, _ = native.writer_arguments(enc, state)
        assert fields(_Names()) == described["fields"]
        assert layout == tuple(s.start for s in enc.segments)


def test_a_segment_the_encoder_lacks_or_a_table_missing_is_refused_by_name() -> None:
    enc = encoder("twisted", 3)
    described = dict(_native.WRITERS["twisted"])
    described["segments"] = (*described["segments"], ("no_such_zone", 0))
    with pytest.raises(ValueError, match="no_such_zone"):
        native.writer_layout(enc, described)
    described = dict(_native.WRITERS["twisted"])
    described["seat_segments"] = (("plus_pile", 7), *described["seat_segments"][1:])
    with pytest.raises(ValueError, match="plus_pile_0' of 7"):
        native.writer_layout(enc, described)
    tables = native._twisted_tables(enc, engine.make("twisted", 3, 1))
    for wrong in ({k: v for k, v in tables.items() if k != "rounds"}, {**tables, "extra": 1}):
        with pytest.raises(ValueError, match="reads the tables"):
            native.writer_tables(wrong, _native.WRITERS["twisted"])


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_a_short_layout_or_short_tables_or_wrong_kinds_raise_when_made(game_id: str) -> None:
    """A writer indexes its layout and tables by its own enums: a layout or tables
    that are shorter (or longer) than it reads, or of the wrong kind, are refused
    with a clear error when the SeatTensors is made, never read out of bounds."""
    fields, layout, tables, size, state = _arguments(game_id, 3)

    def make(layout: tuple[Any, ...], tables: tuple[Any, ...]) -> Any:
        return _native.SeatTensors(game_id, state, fields, size, layout, tables)

    for short in (layout[:-1], layout[:1], (), (*layout, 0)):
        with pytest.raises(ValueError, match="segment starts for 3 players"):
            make(short, tables)
    for short in (tables[:-1], (), (*tables, 0)):
        with pytest.raises(ValueError, match="tables, got"):
            make(layout, short)
    with pytest.raises(TypeError, match="expected an int, got str"):
        make(("0", *layout[1:]), tables)
    names = _native.WRITERS[game_id]["tables"]
    for i, table in enumerate(tables):
        wrong: object = "a string"
        if isinstance(table, tuple) and table and isinstance(table[0], int):
            wrong = tuple(str(v) for v in table)  # a tuple, but not of ints
        elif isinstance(table, bool | str):
            continue  # read as anything
        with pytest.raises(TypeError, match=f"table {names[i]} must be"):
            make(layout, (*tables[:i], wrong, *tables[i + 1:]))
    make(layout, tables).tensor(0)


def test_a_seat_tensors_not_made_or_made_twice_refuses() -> None:
    fields, layout, tables, size, state = _arguments("twisted", 3)
    bare = _native.SeatTensors.__new__(_native.SeatTensors)
    with pytest.raises(TypeError, match="not made"):
        bare.tensor(0)
    made = _native.SeatTensors("twisted", state, fields, size, layout, tables)
    with pytest.raises(TypeError, match="made once"):
        made.__init__("twisted", state, fields, size, layout, tables)  # type: ignore[misc]
    assert made.tensor(0).shape == (size,)


def test_only_ints_are_read_so_no_python_code_runs_under_a_writer() -> None:
    """An item that is not an int (one with ``__index__``, which could change the
    list being read) is refused; a float where an int is read too."""
    fields, layout, tables, size, state = _arguments("twisted", 3)

    class Grows:
        def __index__(self) -> int:
            hand.extend(range(10_000))  # would move the list's items under a reader
            return 0

    hand: list[Any] = [Grows()]
    hands = (hand, *fields(state)[0][1:])
    for getter in (lambda st: (hands, *fields(st)[1:]),
                   lambda st: (*fields(st)[:4], 1.5, *fields(st)[5:])):
        tensors = _native.SeatTensors("twisted", state, getter, size, layout, tables)
        with pytest.raises(TypeError, match="expected an int"):
            tensors.tensor(0)
    assert len(hand) == 1
    real = native_tensors(encoder("twisted", 3), state)
    assert real is not None
    assert np.array_equal(real.tensor(np.int64(1)), real.tensor(1))  # a caller's seat: __index__


def test_a_seat_tensors_in_a_reference_cycle_is_collected() -> None:
    """The state, the getter and the tables may lead back to the SeatTensors (an
    environment that keeps both): the garbage collector must see through it."""
    fields, layout, tables, size, state = _arguments("twisted", 3)

    class Getter:
        tensors: Any = None

        def __call__(self, st: Any) -> tuple[Any, ...]:
            return fields(st)

    getter = Getter()
    getter.tensors = _native.SeatTensors("twisted", state, getter, size, layout, tables)
    getter.tensors.tensor(0)
    gone = weakref.ref(getter)
    del getter
    gc.collect()
    assert gone() is None


def test_a_legal_id_whose_index_changes_the_list_is_read_safely() -> None:
    """Ids are a caller's: one that is not an int runs its ``__index__``, which may
    empty the list being read; the mask reads what is left, never freed items."""
    space = action_space("twisted")
    first, second = space.ids[0], space.ids[1]

    class Empties:
        def __index__(self) -> int:
            ids.clear()
            ids.extend(range(10_000))  # moves the list's items elsewhere
            ids.clear()
            return second

    ids: list[Any] = [first, Empties(), first]
    mask = space.mask(ids)
    assert np.flatnonzero(mask).tolist() == sorted({space.index_list[first],
                                                     space.index_list[second]})
