"""Build the compiled core: every ``pyx/caribsim/**/*.pyx`` becomes the module of its path
(``pyx/caribsim/games/cuba/_core.pyx`` is ``caribsim.games.cuba._core``).

Set ``CARIBSIM_DEBUG=1`` for a debug build: bounds and wraparound checks on,
no optimisation, C asserts kept. During development ``CARIBSIM_EXTENSIONS=_mcts,cuba._core``
rebuilds only the named modules (the end of the dotted name) (``python setup.py build_ext --inplace``).
"""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
DEBUG = os.environ.get("CARIBSIM_DEBUG", "") not in ("", "0")
ONLY = {n for n in os.environ.get("CARIBSIM_EXTENSIONS", "").split(",") if n}

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "cdivision": True,
    "initializedcheck": DEBUG,
    "embedsignature": True,
}
# -g0: Python's own CFLAGS ask for debug information, which took 40% of the compile time and
# 85% of the objects' size; the debug build keeps it
cflags = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
macros = [] if DEBUG else [("NDEBUG", "1")]
macros.append(("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"))


def module_name(pyx: Path) -> str:
    return ".".join(pyx.relative_to(HERE / "pyx").with_suffix("").parts)


def wanted(name: str) -> bool:
    return not ONLY or any(name == f"caribsim.{n}" or name.endswith("." + n) for n in ONLY)


# the memoryview code Cython writes into every module that uses one (about 25k lines each),
# compiled once into a module of its own that those modules import
SHARED = "caribsim._cyutility"

extensions = [
    Extension(
        module_name(pyx),
        [str(pyx.relative_to(HERE))],
        include_dirs=[numpy.get_include(), "pyx/caribsim"],
        extra_compile_args=cflags,
        define_macros=macros,
    )
    for pyx in sorted((HERE / "pyx" / "caribsim").rglob("*.pyx"))
    if wanted(module_name(pyx))
]
if wanted(SHARED):
    extensions.append(
        Extension(
            SHARED,
            ["pyx/caribsim/_cyutility.c"],
            extra_compile_args=cflags,
            define_macros=macros,
        )
    )


class ParallelBuildExt(build_ext):
    """Compiles the extension modules in parallel (one per CPU) unless --parallel says otherwise."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1


setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=cythonize(
        extensions,
        include_path=["pyx"],
        compiler_directives=directives,
        annotate=False,
        nthreads=os.cpu_count() or 1,  # the modules are translated in parallel
        shared_utility_qualified_name=SHARED,
    ),
)
