"""Build the compiled core: every ``pyx/caribsim/**/*.pyx`` becomes the module of its path
(``pyx/caribsim/cuba/_core.pyx`` is ``caribsim.cuba._core``).

Set ``CARIBSIM_DEBUG=1`` for a debug build: bounds and wraparound checks on,
no optimisation, C asserts kept. During development ``CARIBSIM_EXTENSIONS=_mcts,cuba._core``
rebuilds only the named modules (the end of the dotted name) (``python setup.py build_ext --inplace``).

A build in place (``pip install -e``, ``build_ext --inplace``) writes beside each module a
``.buildkey``: a hash of everything the modules are made from (the ``.pyx``, ``.pxd`` and ``.h``
files, this file, the build's flags, Python, NumPy and Cython). When every module in place
carries the key of the sources as they are, the next build in place translates and compiles
nothing: a second ``pip install -e`` of one checkout into another environment takes seconds.
"""

import hashlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path

import Cython
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


def source_key() -> str:
    """A hash of everything the compiled modules are made from."""
    h = hashlib.sha256()
    for part in (
        sys.version,
        sysconfig.get_platform(),
        numpy.__version__,
        Cython.__version__,
        os.environ.get("CC", ""),
        os.environ.get("CFLAGS", ""),
        repr((cflags, macros, sorted(directives.items()))),
    ):
        h.update(part.encode() + b"\0")
    for path in sorted((HERE / "pyx").rglob("*")):
        if path.suffix in (".pyx", ".pxd", ".pxi", ".h"):
            h.update(str(path.relative_to(HERE)).encode() + b"\0" + path.read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def in_place(name: str) -> Path:
    return HERE / "src" / (name.replace(".", "/") + sysconfig.get_config_var("EXT_SUFFIX"))


def stamp_of(name: str) -> Path:
    return in_place(name).with_name(in_place(name).name + ".buildkey")


KEY = source_key()
# every module in place was built from these very sources (and each C file is there):
# nothing to translate or compile for a build in place
BUILT = not ONLY and all(
    in_place(ext.name).exists()
    and stamp_of(ext.name).exists()
    and stamp_of(ext.name).read_text() == KEY
    and Path(ext.sources[0]).with_suffix(".c").exists()
    for ext in extensions
)


class ParallelBuildExt(build_ext):
    """Compiles the extension modules in parallel (one per CPU) unless --parallel says
    otherwise; a build in place of modules already built from these sources copies them."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self):
        self._in_place = self.inplace or self.editable_mode
        super().run()
        if self._in_place and not ONLY:
            for ext in self.extensions:
                stamp_of(ext.name).write_text(KEY)

    def build_extension(self, ext):
        if BUILT and self._in_place and not self.force:
            built = Path(self.get_ext_fullpath(ext.name))
            built.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(in_place(ext.name), built)
            return
        super().build_extension(ext)

    def copy_extensions_to_source(self):
        # the modules in place are these very ones: rewriting a loaded module's file would pull
        # it from under a process that has it open
        if not (BUILT and self._in_place and not self.force):
            super().copy_extensions_to_source()


if BUILT:
    for ext in extensions:
        ext.sources = [str(Path(src).with_suffix(".c")) for src in ext.sources]
    ext_modules = extensions
else:
    ext_modules = cythonize(
        extensions,
        include_path=["pyx"],
        compiler_directives=directives,
        annotate=False,
        nthreads=os.cpu_count() or 1,  # the modules are translated in parallel
        shared_utility_qualified_name=SHARED,
    )

setup(cmdclass={"build_ext": ParallelBuildExt}, ext_modules=ext_modules)
