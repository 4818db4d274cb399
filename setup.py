"""The compiled part of the package: the training environments' tensor writers
(twistarena.rl._native) and the wire's message encoder (twistarena.wire._encode).

Everything else about the package is in pyproject.toml. Both extensions are
optional: without a C compiler the install goes on, and the Python paths serve
instead (``twistarena.rl.native.available()``, ``twistarena.wire.compiled()``).
"""

from glob import glob

import numpy
from setuptools import Extension, setup

CSRC = "engine/twistarena/rl/csrc"
WIRE_CSRC = "proto/twistarena/wire/csrc"

setup(ext_modules=[
    Extension(
        "twistarena.rl._native",
        sources=sorted(glob(f"{CSRC}/*.c")),
        depends=[f"{CSRC}/native.h"],
        include_dirs=[CSRC, numpy.get_include()],
        extra_compile_args=["-O2"],
        optional=True,
    ),
    Extension(
        "twistarena.wire._encode",
        sources=[f"{WIRE_CSRC}/encode.c"],
        extra_compile_args=["-O2"],
        optional=True,
    ),
])
