"""Guard rails in `make test`: lint, formatting, types, the import contracts and the complexity gate, run
as the tools run them from a shell.

A missing dev dependency fails the suite (a plain import, never a skip): `pip install -e .[dev]`.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import importlinter  # noqa: F401 - the dev extra must be installed; these imports fail loudly otherwise
import mypy  # noqa: F401
import pytest
import ruff  # noqa: F401
from radon.complexity import cc_visit

pytestmark = pytest.mark.gate  # ruff, mypy, import-linter and the size gates over the whole tree

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    result = run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_tree_is_formatted():
    result = run("ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, "run `ruff format`:\n" + result.stdout + result.stderr


def test_mypy_passes_on_the_packages_and_the_functions():
    # Incremental (mypy's own cache, .mypy_cache/): the first run checks everything, later ones only what changed.
    result = run("mypy")  # files and options: [tool.mypy] in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_strict_on_everything_that_ships():
    """The gate above checks what pyproject names: strict mode, on the layer, every handler and the dev package."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]
    assert config["strict"] is True
    assert {"layers/sommelier/sommelier", "functions", "dev/sommelier_dev"} <= set(config["files"])
    assert config["explicit_package_bases"] is True  # six app.py files are six modules (functions.<folder>.app)


# ---------------------------------------------------------------- import contracts

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_the_import_contracts_hold():
    result = lint_imports()  # the contracts: [tool.importlinter] in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_broken_contract_is_reported(tmp_path):
    """The same tool on a contract the code breaks (the composition root imports the agent, lazily too)."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        "[tool.importlinter]\nroot_packages = ['sommelier']\n\n"
        "[[tool.importlinter.contracts]]\nname = 'no agent'\ntype = 'forbidden'\n"
        "source_modules = ['sommelier.app']\nforbidden_modules = ['sommelier.agent']\n"
    )
    result = lint_imports("--config", str(config))
    assert result.returncode == 1 and "1 broken" in result.stdout, result.stdout + result.stderr


# ---------------------------------------------------------------- complexity

MAX_COMPLEXITY = 20
# The code that runs or ships, and the dev tools beside it (tests may be as long as their scenario).
MEASURED = ["layers/sommelier/sommelier", "dev/sommelier_dev", "functions", "scripts", "bench", "reliability"]


def complexities(source: str) -> list[tuple[str, int, int]]:
    """(name, line, cyclomatic complexity) of every function and method, nested ones too, as radon counts."""
    found = []
    for block in cc_visit(source):
        found.append((block.fullname, block.lineno, block.complexity))
        for inner in getattr(block, "closures", []):
            found.append((f"{block.fullname}.{inner.name}", inner.lineno, inner.complexity))
    return found


def test_no_function_is_above_the_complexity_limit():
    files = [path for folder in MEASURED for path in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 100 and ROOT / "layers/sommelier/sommelier/agent/loop.py" in files, "the whole tree"
    over = [
        f"{path.relative_to(ROOT)}:{line} {name} (CC {cc})"
        for path in files
        for name, line, cc in complexities(path.read_text("utf-8"))
        if cc > MAX_COMPLEXITY
    ]
    assert over == [], f"split these (where the split reads better) to CC <= {MAX_COMPLEXITY}:\n" + "\n".join(over)


def test_the_gate_counts_branches():
    branches = "\n".join(f"    if x == {n}:\n        return {n}" for n in range(MAX_COMPLEXITY))
    [(name, _, cc)] = complexities(f"def many(x):\n{branches}\n    return -1\n")
    assert (name, cc) == ("many", MAX_COMPLEXITY + 1)


MAX_MODULE_LINES = 600  # a module past this is doing more than one job (docs/architecture.md, "The map")


def _long_modules(root: Path, base: Path = ROOT) -> list[str]:
    return sorted(
        f"{path.relative_to(base)}: {count} lines"
        for path in root.rglob("*.py")
        if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    )


def test_no_module_of_the_package_or_the_functions_is_over_the_size_limit():
    long = [*_long_modules(ROOT / "layers" / "sommelier" / "sommelier"), *_long_modules(ROOT / "functions")]
    assert not long, f"split these by job: {long}"


def test_the_size_gate_sees_a_long_module(tmp_path):
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "small.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    assert _long_modules(tmp_path, tmp_path) == [f"big.py: {MAX_MODULE_LINES + 1} lines"]
