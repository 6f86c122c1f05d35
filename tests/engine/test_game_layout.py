"""Every game package has the one skeleton of docs/architecture.md "Game packages".

Module names, the face, absolute imports, the one-way in-game import order and the
``XInfoSet(game, observation)`` constructor are read from the source (no import needed).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from engine import registry
from engine.core import InfoSet

GAMES_DIR = Path(__file__).resolve().parents[2] / "engine" / "games"
PACKAGES = sorted(p.name for p in GAMES_DIR.iterdir() if (p / "__init__.py").is_file())
REQUIRED = ("__init__", "actions", "state", "infoset", "game")
#: rank in the in-game import order; every other module is an extra (rank 1)
RANK = {"actions": 0, "state": 2, "rollout": 3, "infoset": 4, "game": 5, "__init__": 6}


def _tree(pkg: str, mod: str) -> ast.Module:
    return ast.parse((GAMES_DIR / pkg / f"{mod}.py").read_text(encoding="utf-8"))


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` (also inside functions) except those under ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _sibling_imports(pkg: str, tree: ast.Module) -> set[str]:
    """The modules of ``pkg`` imported at run time anywhere in ``tree`` (also inside functions)."""
    prefix = f"engine.games.{pkg}"
    out: set[str] = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == prefix:
                out.update(a.name for a in node.names)
            elif node.module.startswith(prefix + "."):
                out.add(node.module[len(prefix) + 1:].split(".")[0])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(prefix + "."):
                    out.add(a.name[len(prefix) + 1:].split(".")[0])
    return out


def test_every_registered_game_is_named_by_its_face() -> None:
    for name, target in registry.GAMES.items():
        if target.startswith("tests."):  # the arena tests' toy game, registered for the session
            continue
        assert target.startswith(f"engine.games.{name}:"), target


@pytest.mark.parametrize("pkg", PACKAGES)
def test_package_has_the_skeleton_modules(pkg: str) -> None:
    mods = {p.stem for p in (GAMES_DIR / pkg).glob("*.py")}
    assert set(REQUIRED) <= mods, f"{pkg}: missing {sorted(set(REQUIRED) - mods)}"
    assert not {"tables", "cards"} & mods, f"{pkg}: card tables belong in actions.py"


@pytest.mark.parametrize("pkg", PACKAGES)
def test_face_only_reexports_the_game(pkg: str) -> None:
    tree = _tree(pkg, "__init__")
    assert ast.get_docstring(tree), f"{pkg}/__init__.py has no docstring"
    body = tree.body[1:]
    assert len(body) == 2, f"{pkg}/__init__.py holds more than the import and __all__"
    imp, names = body
    assert isinstance(imp, ast.ImportFrom) and imp.module == f"engine.games.{pkg}.game"
    assert isinstance(names, ast.Assign) and isinstance(names.value, ast.List)
    exported = [e.value for e in names.value.elts if isinstance(e, ast.Constant)]
    assert exported == [a.name for a in imp.names] and len(exported) == 1
    assert registry.GAMES[pkg] == f"engine.games.{pkg}:{exported[0]}"


@pytest.mark.parametrize("pkg", PACKAGES)
def test_imports_are_absolute_and_run_one_way(pkg: str) -> None:
    graph: dict[str, set[str]] = {}
    for path in sorted((GAMES_DIR / pkg).glob("*.py")):
        mod = path.stem
        tree = _tree(pkg, mod)
        rel = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
        assert not rel, f"{pkg}/{mod}.py: relative imports on lines {rel}"
        graph[mod] = _sibling_imports(pkg, tree) - {mod}
        for dep in graph[mod]:
            assert RANK.get(dep, 1) <= RANK.get(mod, 1), f"{pkg}: {mod} imports the higher module {dep}"
            assert not (dep in RANK and RANK[dep] == RANK.get(mod, 1)), f"{pkg}: {mod} imports {dep}"
    # no loop among the extras either
    state: dict[str, int] = {}

    def visit(m: str, path: tuple[str, ...]) -> None:
        assert state.get(m) != 1, f"{pkg}: import loop {' -> '.join(path + (m,))}"
        if state.get(m) == 2:
            return
        state[m] = 1
        for d in graph.get(m, ()):
            visit(d, path + (m,))
        state[m] = 2

    for m in graph:
        visit(m, ())


@pytest.mark.parametrize("name", sorted(n for n in registry.names() if n in PACKAGES))
def test_infoset_takes_game_then_observation(name: str) -> None:
    game = registry.get_game(name)
    module = importlib.import_module(f"engine.games.{name}.infoset")
    infoset_cls = next(c for c in vars(module).values()
                       if isinstance(c, type) and issubclass(c, InfoSet) and c.__module__ == module.__name__)
    params = list(inspect.signature(infoset_cls.__init__).parameters)[1:3]
    assert params == ["game", "observation"], (name, params)
    state = game.new_match(game.configs[0][0], 7, **game.configs[0][1])
    obs = state.observation(state.current_player())
    inf = game.infoset(obs)
    assert isinstance(inf, infoset_cls) and inf.game is game and inf.observation is obs
