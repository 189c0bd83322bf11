"""The layout holds: rooms import only the rooms below them, components never import each other,
no import circle anywhere, no module past 500 lines, and docs/architecture.md names what exists."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "webmem"
MAX_MODULE_LINES = 500

CORE = "core"
STORE = "store"
COMPONENTS = ("runs", "knowledge", "selectors", "trajectories", "lessons", "episodes", "working")
FACADE = ("memory", "run", "run_learning", "context", "forgetting", "outcomes", "site_changes", "scripts", "skills", "step_writes")
INTEROP = "interop"
SURFACES = ("agent", "bench", "cli", "demo", "server", "mcp", "integrations", "service")
TOP = ("__init__", "__main__")

# Each layer may import itself and the layers listed for it (components: only their own room).
LAYER_ORDER = ["core", "store", "component", "facade", "interop", "surface", "top"]


def layer_of(room: str) -> str:
    if room == CORE:
        return "core"
    if room == STORE:
        return "store"
    if room in COMPONENTS:
        return "component"
    if room in FACADE:
        return "facade"
    if room == INTEROP:
        return "interop"
    if room in SURFACES:
        return "surface"
    if room in TOP:
        return "top"
    raise AssertionError(f"webmem.{room} belongs to no room: add it to a layer in tests/test_architecture.py")


def module_name(path: Path, package_dir: Path) -> str:
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _under_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that run (at module level or inside functions); ``if TYPE_CHECKING:`` blocks never do."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _under_type_checking(node):
            yield from (child for stmt in node.orelse for child in _runtime_imports_in(stmt))
            continue
        yield from _runtime_imports_in(node)


def _runtime_imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    elif isinstance(node, ast.If) and _under_type_checking(node):
        return
    else:
        yield from _runtime_imports(node)


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports at run time (parent packages' own imports excluded)."""
    name = package_dir.name
    modules = {module_name(path, package_dir): path for path in package_dir.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        here = module if is_package else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                bases = [alias.name for alias in node.names]
                subnames: list[str] = []
            elif node.level:
                anchor = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                bases = [".".join(anchor + ([node.module] if node.module else []))]
                subnames = [alias.name for alias in node.names]
            else:
                bases = [node.module or ""]
                subnames = [alias.name for alias in node.names]
            for base in bases:
                if base != name and not base.startswith(name + "."):
                    continue
                submodules = [f"{base}.{sub}" for sub in subnames if f"{base}.{sub}" in modules]
                targets.update(submodules or ([base] if base in modules else []))
        targets.discard(module)
        graph[module] = targets
    return graph


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def forbidden_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports that run against the layers, as 'a -> b (why)'."""
    problems = []
    for module, targets in sorted(graph.items()):
        room = room_of(module)
        layer = layer_of(room)
        for target in sorted(targets):
            target_room = room_of(target)
            target_layer = layer_of(target_room)
            if target_room == room:
                continue
            if layer == "component" and target_layer == "component":
                problems.append(f"{module} -> {target} (a component imports another component)")
            elif LAYER_ORDER.index(target_layer) > LAYER_ORDER.index(layer):
                problems.append(f"{module} -> {target} ({layer} imports {target_layer}, a layer above it)")
    return problems


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each once, found by depth-first search."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                if frozenset(cycle) not in seen:
                    seen.add(frozenset(cycle))
                    found.append(cycle)
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return found


def test_no_import_circles() -> None:
    assert circles(import_graph(PACKAGE)) == []


def test_layers_import_only_downwards_and_components_stay_apart() -> None:
    assert forbidden_imports(import_graph(PACKAGE)) == []


def test_every_room_is_a_known_one() -> None:
    for path in PACKAGE.iterdir():
        if path.name == "__pycache__" or path.name.endswith(".typed"):
            continue
        layer_of(path.stem if path.is_file() else path.name)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / "webmem" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "webmem"


def test_the_checks_catch_a_circle_and_a_component_importing_a_component(tmp_path: Path) -> None:
    package = write_tree(tmp_path, {
        "__init__.py": "from .memory import Memory\n",
        "core/__init__.py": "",
        "core/errors.py": "class WebmemError(Exception): ...\n",
        "lessons/__init__.py": "from .store import LessonStore\n",
        "lessons/store.py": "from ..core.errors import WebmemError\nfrom ..trajectories.store import T\n",
        "trajectories/__init__.py": "",
        "trajectories/store.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..memory import Memory\nT = 1\n",
        "memory.py": "from .run import Run\nclass Memory: ...\n",
        "run.py": "def late():\n    from .memory import Memory\n    return Memory\nclass Run: ...\n",
        "knowledge.py": "from .memory import Memory\n",
    })
    graph = import_graph(package)
    assert graph["webmem.trajectories.store"] == set()  # annotations only: never imported at run time
    assert circles(graph) == [["webmem.memory", "webmem.run", "webmem.memory"]]
    assert forbidden_imports(graph) == [
        "webmem.knowledge -> webmem.memory (component imports facade, a layer above it)",
        "webmem.lessons.store -> webmem.trajectories.store (a component imports another component)",
    ]


def test_no_module_is_past_500_lines() -> None:
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_every_package_has_a_docstring_naming_what_it_offers() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc, f"{init.relative_to(PACKAGE)} has no docstring"


def test_architecture_page_names_only_what_exists() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:[a-z_]+/)+|[a-z_]+\.py)`", page))
    planned_line = re.search(r"\(to come: ([^)]*)\)", page)
    planned = set(planned_line.group(1).split()) if planned_line else set()
    assert len(named) > 15
    for name in named - planned:
        assert (PACKAGE / name).exists(), f"docs/architecture.md names {name}, which is not in src/webmem"
    for name in planned:
        assert not (PACKAGE / name).exists(), f"{name} exists: docs/architecture.md still lists it as to come"
    rooms = {path.name + ("/" if path.is_dir() else "") for path in PACKAGE.iterdir()
             if path.name != "__pycache__" and path.suffix in ("", ".py") and path.name not in ("__init__.py", "__main__.py")}
    assert rooms <= named, f"docs/architecture.md does not mention {sorted(rooms - named)}"


@pytest.mark.parametrize("module", ["webmem.memory", "webmem.run", "webmem.context", "webmem.forgetting"])
def test_the_facade_never_imports_interop_or_surfaces(module: str) -> None:
    graph = import_graph(PACKAGE)
    assert {layer_of(room_of(target)) for target in graph[module]} <= {"core", "store", "component", "facade"}
