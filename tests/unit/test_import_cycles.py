"""No package-level import cycle between the packages issue 13 untangled: a module's top-level imports
(outside `if TYPE_CHECKING:` and function bodies, i.e. what runs at import) may go one way only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "sommelier" / "sommelier"

# (a, b): a may import b, or b may import a, never both. agent.offline is inside agent, so only the
# agent's other modules count on that side: the offline responder loads when it answers.
PAIRS = [
    ("sommelier.bot", "sommelier.telegram"),
    ("sommelier.agent", "sommelier.offline"),
    ("sommelier.settings", "sommelier.embeddings"),
    ("sommelier.catalog", "sommelier.tools"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_time_targets(tree: ast.Module) -> set[str]:
    """Every module a file's top level imports (names imported from a package count as submodules)."""
    targets: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test):
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
    return targets


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def graph() -> dict[str, set[str]]:
    return {module_name(path): import_time_targets(ast.parse(path.read_text())) for path in PACKAGE.rglob("*.py")}


def edges(modules: dict[str, set[str]], source, target) -> list[str]:
    """`module imports name` lines for modules that `source` accepts importing names that `target` accepts."""
    return sorted(
        f"{module} imports {name}"
        for module, names in modules.items()
        if source(module)
        for name in names
        if target(name)
    )


def member(package: str, nested: str | None = None):
    """In ``package`` and, given ``nested`` (a subpackage of it), not in ``nested``."""
    return lambda module: inside(module, package) and not (nested and inside(module, nested))


def test_the_graph_sees_real_imports():
    modules = graph()
    assert "sommelier.telegram.dialog" in modules["sommelier.telegram.consumer"]
    assert "sommelier.telegram.render" in modules["sommelier.telegram.dialog"]
    assert edges(modules, member("sommelier.offline"), member("sommelier.agent", "sommelier.offline"))


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}<->{b}" for a, b in PAIRS])
def test_no_package_level_cycle(first, second):
    modules = graph()
    nested = second if inside(second, first) else None  # agent.offline inside agent
    forward = edges(modules, member(first, nested), member(second))
    backward = edges(modules, member(second), member(first, nested))
    assert not (forward and backward), {"forward": forward, "backward": backward}
