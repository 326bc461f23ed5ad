"""The language layer is cut by job (sommelier/language/*.py) behind one name space: `sommelier.language`
offers each name from the module of its job, loads that module on first use only, and tells the type
checker the same homes it uses at run time."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from sommelier import language

FACADE = Path(language.__file__)
HOMES: dict[str, str] = language._HOMES


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_name_is_its_modules_own(name):
    home = importlib.import_module(f"sommelier.language.{HOMES[name]}")
    assert getattr(language, name) is getattr(home, name)


def test_the_type_checker_is_told_the_same_homes():
    told: dict[str, str] = {}
    for node in ast.walk(ast.parse(FACADE.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sommelier.language."):
            for alias in node.names:
                assert alias.asname == alias.name, f"{alias.name}: re-exported as itself"
                told[alias.name] = node.module.removeprefix("sommelier.language.")
    assert told == HOMES


def test_no_module_of_the_layer_is_named_like_one_of_its_names():
    """Importing `sommelier.language.x` sets the attribute `x` of the package: a name `x` would be replaced."""
    modules = {path.stem for path in FACADE.parent.glob("*.py")}
    assert not modules & set(HOMES), modules & set(HOMES)


def test_a_name_the_layer_does_not_offer_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'stems'"):
        language.stems  # noqa: B018 - the attribute access is the test


def test_importing_the_layer_loads_none_of_its_modules():
    """A cold start pays for the modules a handler uses, not for the whole layer."""
    probe = (
        "import sys, sommelier.language; print(sorted(m for m in sys.modules if m.startswith('sommelier.language.')))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
    probe = "import sys; from sommelier.language import normalize; print(sorted(m for m in sys.modules if m.startswith('sommelier.language.')))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "['sommelier.language.text']"
