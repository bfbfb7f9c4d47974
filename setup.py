"""Builds the compiled stud core (envs._stud_core) from src/stud_core.cpp; everything else about
the package is in pyproject.toml. `pip install -e .` runs this, so `make test` builds the core on
a fresh machine with the system C++ compiler and pybind11 from PyPI (a build requirement)."""

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

setup(
    ext_modules=[
        Pybind11Extension(
            "envs._stud_core",
            ["src/stud_core.cpp"],
            cxx_std=17,
            extra_compile_args=["-O3", "-pthread"],
            extra_link_args=["-pthread"],  # Batch.step may split the hands over threads
        )
    ],
    cmdclass={"build_ext": build_ext},
)
