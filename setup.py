"""The compiled part of the package: the rules engine's hot modules
(twistarena.engine, compiled by mypyc from the same Python source), the
training environments' tensor writers (twistarena.rl._native), the copy of
OpenSpiel's C++ history between our OpenSpiel states (twistarena.rl._spielhistory)
and the wire's message encoder (twistarena.wire._encode).

Everything else about the package is in pyproject.toml. Every extension is
optional: without a C (or C++) compiler the install goes on, and the Python (or
OpenSpiel's) paths serve instead (``twistarena.engine.compiled()``,
``twistarena.rl.native.available()``, ``twistarena.rl.spielhistory.enabled()``,
``twistarena.wire.compiled()``). ``TWISTARENA_COMPILE_ENGINE=0`` leaves the engine
interpreted on purpose (the rules are the .py files either way).
"""

import os
from glob import glob

import numpy
from setuptools import Extension, setup

CSRC = "engine/twistarena/rl/csrc"
WIRE_CSRC = "proto/twistarena/wire/csrc"
ENGINE = "engine/twistarena/engine"
#: The modules a decision runs through (legal ids, apply, clone, observations);
#: the rest of the engine (registry, options, samplers, narration) stays
#: interpreted, which keeps the compile to well under a minute on two cores.
#: twistarena.engine.COMPILED_MODULES names the same set.
ENGINE_HOT = ["core", "dealing", "tricky_twist/actions", "tricky_twist/cards",
              "tricky_twist/faces", "tricky_twist/hidden", "tricky_twist/scoring",
              "tricky_twist/state", "tricky_twist/views",
              "twhist/cards", "twhist/state", "twisted/cards", "twisted/state"]


def engine_extensions() -> list[Extension]:
    """The engine's hot modules as one mypyc group (none when switched off or when
    mypyc is missing: the interpreted source serves)."""
    if os.environ.get("TWISTARENA_COMPILE_ENGINE", "1") == "0":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return []
    extensions = mypycify(
        ["--config-file", "pyproject.toml", *(f"{ENGINE}/{m}.py" for m in ENGINE_HOT)],
        group_name="twistarena.engine._rules", opt_level="2",
    )
    for extension in extensions:
        extension.optional = True
    return extensions


setup(ext_modules=[
    *engine_extensions(),
    Extension(
        "twistarena.rl._native",
        sources=sorted(glob(f"{CSRC}/*.c")),
        depends=[f"{CSRC}/native.h"],
        include_dirs=[CSRC, numpy.get_include()],
        extra_compile_args=["-O2"],
        optional=True,
    ),
    Extension(
        "twistarena.rl._spielhistory",
        sources=["engine/twistarena/rl/spielcsrc/history.cpp"],
        language="c++",
        extra_compile_args=["-O2", "-std=c++17"],
        optional=True,
    ),
    Extension(
        "twistarena.wire._encode",
        sources=[f"{WIRE_CSRC}/encode.c"],
        extra_compile_args=["-O2"],
        optional=True,
    ),
])
