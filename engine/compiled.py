"""The compiled core: which engine modules Cython compiles, and the switch back to pure Python.

One source of truth: the modules below are ordinary ``.py`` files (Cython's pure-Python
mode). ``setup.py`` compiles them into extension modules beside the sources when a C
compiler is present (``pip install -e ".[dev]"`` or ``python setup.py build_ext --inplace``);
Python then imports the extension instead of the ``.py``. Without a compiler, or when the
build fails, the install still succeeds and the sources run interpreted.

At ``import engine`` (:func:`activate`) a finder is put in front of the import system that
makes a listed module load from its ``.py`` when

* the environment variable ``CARDARENA_PURE_PYTHON`` is ``1`` (forced pure Python, e.g. to
  compare both modes or to debug with tracebacks into the source), or
* its compiled extension is older than the ``.py`` (a stale build must never run old code).

One warning (:class:`CompiledCoreWarning`) is issued per process when the last build
recorded a failure (``engine/_build_status.txt``, written by ``setup.py``) or when an
extension is stale; a source checkout that was never built runs pure Python silently.
This module imports nothing from the engine (``setup.py`` reads it before anything is built).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from types import ModuleType

#: Environment variable that forces pure Python at import time when set to ``1``.
PURE_ENV = "CARDARENA_PURE_PYTHON"

#: Environment variable for a partial (developer) build: comma-separated dotted names or
#: prefixes (``engine.games.agram,engine.sampling``); ``setup.py`` compiles only the listed
#: modules and kernels that match one of them (a full build takes minutes on 2 cores).
ONLY_ENV = "CARDARENA_COMPILE_ONLY"

#: The file ``setup.py`` writes beside this module: ``built`` or ``failed: <reason>``.
STATUS_FILE = "_build_status.txt"

_GAMES = ("agram", "argute", "cuckoo", "cuttle", "gargon", "guinote", "sedma", "whiskey_poker")
_GAME_MODULES = ("state", "rollout", "rules", "legal", "infoset", "worlds")

ENGINE_DIR = os.path.dirname(os.path.abspath(__file__))


def _game_modules() -> list[str]:
    out = []
    for g in _GAMES:
        for m in _GAME_MODULES:
            if os.path.exists(os.path.join(ENGINE_DIR, "games", g, m + ".py")):
                out.append(f"engine.games.{g}.{m}")
    return out


#: Dotted names of the modules compiled by ``setup.py`` (the hot paths: sampler, search, games).
COMPILED_MODULES: list[str] = [
    "engine.cards", "engine.tricks", "engine.sampling",
    "engine.search.ismcts", "engine.search.rollout",
    *_game_modules(),
]


#: Typed Cython kernels (``.pyx``, no ``.py``) beside a Python reference that is used when the
#: kernel is not built or pure Python is forced (:func:`kernel`).
KERNELS: list[str] = ["engine.games.agram._kernel", "engine._shuffle"]


def selected(names: list[str]) -> list[str]:
    """The ``names`` a build compiles: all, or those matching ``CARDARENA_COMPILE_ONLY``'s prefixes."""
    only = [p.strip() for p in os.environ.get(ONLY_ENV, "").split(",") if p.strip()]
    if not only:
        return list(names)
    return [n for n in names if any(n == p or n.startswith(p + ".") for p in only)]


class CompiledCoreWarning(UserWarning):
    """The compiled core is not in use although it was meant to be (failed or stale build)."""


def source_path(name: str) -> str:
    """The ``.py`` file of dotted module ``name`` (``engine.x.y`` -> ``<engine>/x/y.py``)."""
    parts = name.split(".")[1:]
    return os.path.join(ENGINE_DIR, *parts) + ".py"


def kernel_source(name: str) -> str:
    """The ``.pyx`` file of kernel ``name`` (``engine.x._k`` -> ``<engine>/x/_k.pyx``)."""
    return source_path(name)[:-3] + ".pyx"


def extension_path(name: str) -> str | None:
    """The compiled extension file of ``name`` (module or kernel) beside its source, or ``None`` if not built."""
    base = source_path(name)[:-3]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.exists(base + suffix):
            return base + suffix
    return None


def forced_pure() -> bool:
    """True when ``CARDARENA_PURE_PYTHON=1`` forces the interpreted sources."""
    return os.environ.get(PURE_ENV, "") == "1"


def _stale(name: str) -> bool:
    """Whether ``name``'s extension is older than its source or the ``.pxd`` that types it."""
    ext = extension_path(name)
    src = kernel_source(name) if name in KERNELS else source_path(name)
    if ext is None:
        return False
    sources = [src, os.path.splitext(src)[0] + ".pxd"]
    return any(os.path.exists(p) and os.path.getmtime(ext) < os.path.getmtime(p) for p in sources)


def kernel(name: str) -> ModuleType | None:
    """The compiled kernel module ``name`` (one of :data:`KERNELS`), or ``None`` when pure
    Python is forced, it was not built, or its build is older than its ``.pyx``.

    Callers fall back to their Python reference on ``None``.
    """
    if forced_pure() or extension_path(name) is None or _stale(name):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:  # built for another Python, or a broken build: the reference runs
        return None


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Loads listed modules from their ``.py`` (forced pure Python, or a stale extension)."""

    def __init__(self, force: bool) -> None:
        self.force = force
        self.names = set(COMPILED_MODULES)

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The ``.py`` source's spec for a listed module when pure Python is forced or its build is
        stale; ``None`` otherwise (the normal import finds the extension)."""
        if fullname not in self.names or not (self.force or _stale(fullname)):
            return None
        return importlib.util.spec_from_file_location(fullname, source_path(fullname))


def build_status() -> str:
    """The last ``setup.py`` build's record (``"built"``, ``"failed: ..."``) or ``"not built"``."""
    try:
        with open(os.path.join(ENGINE_DIR, STATUS_FILE), encoding="utf-8") as fh:
            return fh.read().strip() or "not built"
    except OSError:
        return "not built"


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` was loaded from a compiled extension."""
    origin = getattr(module, "__file__", "") or ""
    return not origin.endswith(".py")


def status() -> dict[str, str]:
    """Per listed module, where it is (or would be) loaded from: ``compiled``, ``pure`` or ``stale``."""
    force = forced_pure()
    out = {}
    for name in COMPILED_MODULES + KERNELS:
        if force or extension_path(name) is None:
            out[name] = "pure"
        else:
            out[name] = "stale" if _stale(name) else "compiled"
    return out


def mode() -> str:
    """``"compiled"`` if every listed module loads compiled, ``"pure"`` if none, else ``"mixed"``."""
    kinds = set(status().values())
    if kinds == {"compiled"}:
        return "compiled"
    return "pure" if kinds == {"pure"} else "mixed"


_active = False


def activate() -> None:
    """Install the source finder (once per process) and issue the one warning if due."""
    global _active
    if _active:
        return
    _active = True
    force = forced_pure()
    sys.meta_path.insert(0, _SourceFinder(force))
    if force:
        return
    stale = [n for n in COMPILED_MODULES + KERNELS if _stale(n)]
    record = build_status()
    if record.startswith("failed"):
        warnings.warn(
            f"cardarena: the compiled engine core could not be built ({record[7:].strip()}); running "
            "pure Python, searches are several times slower. Install a C compiler (gcc) and rerun "
            "pip install -e \".[dev]\".", CompiledCoreWarning, stacklevel=2)
    elif stale:
        warnings.warn(
            f"cardarena: {len(stale)} compiled engine module(s) are older than their sources "
            f"(e.g. {stale[0]}); those run as pure Python. Rebuild with "
            "python setup.py build_ext --inplace (or pip install -e \".[dev]\").",
            CompiledCoreWarning, stacklevel=2)
