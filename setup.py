"""Optional compiled core: Cython compiles the engine's hot modules (``engine/compiled.py``).

Everything else is in ``pyproject.toml``. With Cython and a C compiler the listed ``.py``
modules are compiled in place (pure-Python mode: the same sources); without a compiler or
on any build failure the install still succeeds, pure Python is used and the reason is
recorded in ``engine/_build_status.txt`` so ``import engine`` warns once.
Force pure Python at run time with ``CARDARENA_PURE_PYTHON=1``; compile only some modules
with ``CARDARENA_COMPILE_ONLY=engine.games.agram,engine.sampling`` (prefixes; a developer
build), and compile C in parallel with ``python setup.py build_ext --inplace -j2``.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_cardarena_compiled", os.path.join(HERE, "engine", "compiled.py"))
assert _spec is not None and _spec.loader is not None
compiled = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compiled)
STATUS = os.path.join(HERE, "engine", compiled.STATUS_FILE)
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True,
              "embedsignature": True, "always_allow_keywords": True}


def record(text: str) -> None:
    """Write the build record read by ``engine.compiled.build_status``."""
    with open(STATUS, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")


class OptionalBuildExt(build_ext):
    """``build_ext`` that falls back to pure Python (with a record) instead of failing the install."""

    def finalize_options(self) -> None:
        """Compile with up to two C compilers at once unless ``-j`` says otherwise (``pip install`` passes none)."""
        super().finalize_options()
        if not self.parallel:
            self.parallel = max(1, min(2, os.cpu_count() or 1))

    def run(self) -> None:
        if not self.extensions:  # nothing to build: keep ext_modules()'s record (e.g. a cythonize failure)
            return
        try:
            super().run()
        except Exception as exc:  # no compiler, compiler error: install stays usable
            self._failed(exc)
            return
        record("built")

    def _failed(self, exc: BaseException) -> None:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        record(f"failed: {reason}")
        print(f"WARNING: cardarena compiled core not built ({reason}); pure Python will be used.",
              file=sys.stderr)


def ext_modules() -> list:
    """The Cython extensions, or ``[]`` (recorded) when Cython is missing."""
    if os.environ.get(compiled.PURE_ENV) == "1":
        record("failed: built with CARDARENA_PURE_PYTHON=1 (compilation skipped)")
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        record("failed: Cython is not installed")
        return []
    from setuptools import Extension
    exts = [Extension(name, [os.path.relpath(compiled.source_path(name), HERE)])
            for name in compiled.selected(compiled.COMPILED_MODULES)]
    kernels = [Extension(name, [os.path.relpath(compiled.kernel_source(name), HERE)])
               for name in compiled.selected(compiled.KERNELS)]
    jobs = max(1, min(2, os.cpu_count() or 1))
    try:
        return (cythonize(exts, compiler_directives=DIRECTIVES, build_dir="build/cython", quiet=True,
                          nthreads=jobs)
                + cythonize(kernels, compiler_directives={"language_level": 3}, build_dir="build/cython",
                            quiet=True, nthreads=jobs))
    except Exception as exc:
        record(f"failed: cythonize: {exc}")
        return []


setup(ext_modules=ext_modules(), cmdclass={"build_ext": OptionalBuildExt})
