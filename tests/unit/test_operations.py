"""Each operation is named once (domain/wire.py): its name on the wire leads to the operation, the operation to
its answer type and its implementation, and each implementation back to its operation and name. Nothing in
the package names an operation, an answer type or an implementation by a string."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from sommelier.domain import wire
from sommelier.toolfn import handler

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers" / "sommelier" / "sommelier"


def _implementations() -> dict[wire.Operation[..., object], object]:
    return {operation: found for table in handler.SQL_MODULES for operation, found in table().items()}


@pytest.mark.parametrize("name", sorted(wire.OPERATIONS))
def test_a_name_leads_to_its_operation_its_answer_type_and_its_implementation(name):
    operation = wire.OPERATIONS[name]
    assert operation.name == name
    assert isinstance(operation.answers, type)
    implementation = handler.implementation(operation)
    assert implementation.__module__.startswith("sommelier.toolfn.")
    assert typing.get_type_hints(implementation)["return"] is operation.answers


def test_each_implementation_leads_back_to_one_operation_and_its_name():
    implementations = _implementations()
    by_function = {found: operation for operation, found in implementations.items()}
    assert len(by_function) == len(implementations), "one function implements two operations"
    assert sum(len(table()) for table in handler.SQL_MODULES) == len(implementations), "an operation served twice"
    for found, operation in by_function.items():
        assert wire.OPERATIONS[operation.name] is operation
        assert handler.implementation(operation) is found
    assert set(implementations) == set(wire.OPERATIONS.values())


def test_the_llm_tools_and_the_batch_are_named_on_the_wire_too():
    assert all(wire.OPERATIONS[name] is operation for name, operation in wire.LLM_TOOLS.items())
    assert wire.RUN_TOOLS not in wire.OPERATIONS
    assert handler.KNOWN == sorted([*wire.OPERATIONS, wire.RUN_TOOLS])


def test_an_unknown_operation_has_no_implementation():
    stranger = wire.Operation("drop_everything", lambda: {}, lambda: wire.Updated)
    with pytest.raises(KeyError):
        handler.implementation(stranger)


def test_an_operation_sends_what_its_arguments_function_builds():
    assert wire.SET_USER_ACTIVE.arguments(5, False, user_id=None) == {"chat_id": 5, "active": False}
    assert wire.SET_USER_ACTIVE.arguments(5, True, user_id=7) == {"chat_id": 5, "active": True, "telegram_user_id": 7}
    assert wire.GET_WINES.arguments(("a", "b")) == {"ids": ["a", "b"]}
    assert wire.CATALOG_STATS.arguments() == {}


_NAMED = re.compile(r"^(sommelier(\.\w+)*|\w+_sql|search|handler):\w+$")  # "module:function", "module:Class"


def _homes() -> set[str]:
    """The modules that hold an operation's answer type or implementation, by their dotted names."""
    found = {operation.answers.__module__ for operation in wire.OPERATIONS.values()}
    return found | {implementation.__module__ for implementation in _implementations().values()}


def _strings_naming_code(path: Path, homes: set[str]) -> list[str]:
    return [
        f"{node.value!r} at line {node.lineno}"
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (_NAMED.match(node.value) or node.value in homes)
    ]


@pytest.mark.gate
def test_nothing_in_the_package_names_an_answer_type_or_an_implementation_by_a_string():
    homes = _homes()
    named = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := _strings_naming_code(path, homes))
    }
    assert named == {}


def test_the_check_sees_a_name_by_string(tmp_path):
    assert _NAMED.match("chat_sql:begin_turn") and _NAMED.match("sommelier.domain.shop:Listing")
    assert not _NAMED.match("fb:1:abc") and not _NAMED.match("search_wines")
    table = tmp_path / "table.py"
    table.write_text('HOMES = {"begin_turn": "sommelier.toolfn.chat_sql", "listing": "shop_sql:list_wines"}\n')
    assert len(_strings_naming_code(table, _homes())) == 2


# Each SQL module's table, by the first operation in it: finding that operation loads the modules that
# importing its own module loads, and no other.
FIRST_OF_EACH = {
    "search": wire.SEARCH_WINES,
    "catalog_sql": wire.GET_WINES,
    "chat_sql": wire.BEGIN_TURN,
    "shop_sql": wire.GET_AGE_ANSWER,
}


def _sql_modules_loaded_by(statement: str) -> list[str]:
    code = (
        "import json, sys; import sommelier.toolfn.handler as handler; from sommelier.domain import wire; "
        f"{statement}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('sommelier.toolfn.', 'sommelier.domain.')))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.gate
@pytest.mark.parametrize("module", sorted(FIRST_OF_EACH))
def test_finding_an_operation_loads_only_what_its_module_needs(module):
    found = _sql_modules_loaded_by(f"handler.implementation(wire.{FIRST_OF_EACH[module].name.upper()})")
    imported = _sql_modules_loaded_by(f"import sommelier.toolfn.{module}")
    assert found == imported
