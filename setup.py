"""Builds the compiled stud core (envs._stud_core) from src/; everything else about the package is
in pyproject.toml. `pip install -e .` runs this, so `make test` builds the core on a fresh machine
with the system C++ compiler and pybind11 from PyPI (a build requirement).

src/bindings.cpp is the one translation unit: it includes every header of the core (src/*.h and
its folders), so the compiler inlines across them as it did when they were one file. The headers
are listed as dependencies, so a changed header rebuilds the core too."""

from pathlib import Path

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

HEADERS = sorted(str(p) for p in Path("src").rglob("*.h"))

setup(
    ext_modules=[
        Pybind11Extension(
            "envs._stud_core",
            ["src/bindings.cpp"],
            include_dirs=["src"],
            depends=HEADERS,
            cxx_std=17,
            # -ffp-contract=off: no fused multiply-add anywhere, the AVX-512 clones of the
            # network's loops (src/arena/lbr.h) included, which -std=c++17 alone does not cover.
            extra_compile_args=["-O3", "-pthread", "-ffp-contract=off"],
            extra_link_args=["-pthread"],  # Batch.step may split the hands over threads
        )
    ],
    cmdclass={"build_ext": build_ext},
)
