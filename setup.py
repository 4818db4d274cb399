"""The compiled part of the package: the training environments' tensor writers.

Everything else about the package is in pyproject.toml. The extension is
optional: without a C compiler the install goes on, and twistarena.rl uses its
Python paths instead (``twistarena.rl.native.available()`` tells which).
"""

from glob import glob

import numpy
from setuptools import Extension, setup

CSRC = "engine/twistarena/rl/csrc"

setup(ext_modules=[Extension(
    "twistarena.rl._native",
    sources=sorted(glob(f"{CSRC}/*.c")),
    depends=[f"{CSRC}/native.h"],
    include_dirs=[CSRC, numpy.get_include()],
    extra_compile_args=["-O2"],
    optional=True,
)])
