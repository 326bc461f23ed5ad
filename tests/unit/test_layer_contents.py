"""The layer ships only what a deployed function can run: every module of the deployed package is reached
from a handler in functions/ by its imports (lazy ones inside functions included: the tool function's SQL
and the wire's answer types load on demand)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "sommelier"
PACKAGE = LAYER / "sommelier"


def _module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(LAYER).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


@cache
def _imported(path: Path) -> frozenset[str]:
    """Every sommelier module a file names in an import statement, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sommelier":
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "sommelier")
    return frozenset(found)


def _reached(handlers: list[Path] | None = None) -> set[str]:
    """The modules reached from these handler files (every handler in functions/ by default)."""
    modules = _module_names()

    def known(name: str) -> set[str]:  # "pkg.mod.Name" → pkg.mod, and its packages
        while name and name not in modules:
            name = name.rpartition(".")[0]
        parts = name.split(".") if name else []
        return {".".join(parts[: i + 1]) for i in range(len(parts))}

    handlers = handlers if handlers is not None else list((ROOT / "functions").rglob("*.py"))
    pending = [name for handler in handlers for name in _imported(handler)]
    reached: set[str] = set()
    while pending:
        for module in known(pending.pop()) - reached:
            reached.add(module)
            pending.extend(_imported(modules[module]))
    return reached


def test_every_module_of_the_layer_is_reached_from_a_handler():
    unreached = sorted(set(_module_names()) - _reached())
    assert not unreached, f"shipped in the layer but no deployed function can run them: {unreached}"


def test_the_walk_follows_lazy_imports_and_named_operations():
    reached = _reached()
    assert "sommelier.deploy.catalog_seed" in reached  # imported inside the drop handler's functions
    assert "sommelier.toolfn.shop_sql" in reached  # imported when the tool function first runs a shop operation
    assert "sommelier.domain.shop" in reached  # imported when an answer is first read as its type


def _third_party_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
    return names


def test_a_package_one_function_ships_itself_is_imported_only_by_that_function():
    """openpyxl is not in the layer: a function whose code can reach an import of it lists it in its own
    requirements.txt, or Lambda would raise ImportError there on the first Excel file."""
    layer_requirements = [line for line in (LAYER / "requirements.txt").read_text().splitlines() if line[:1].isalpha()]
    assert not [line for line in layer_requirements if line.startswith("openpyxl")]
    importers = {name for name, path in _module_names().items() if "openpyxl" in _third_party_imports(path)}
    assert importers == {"sommelier.catalog.reader"}
    folders = sorted(path for path in (ROOT / "functions").iterdir() if (path / "requirements.txt").is_file())
    shipping = {folder.name for folder in folders if "openpyxl==" in (folder / "requirements.txt").read_text()}
    reaching = {folder.name for folder in folders if importers & _reached(list(folder.glob("*.py")))}
    assert reaching == {"catalog_drop"}
    assert shipping == reaching
