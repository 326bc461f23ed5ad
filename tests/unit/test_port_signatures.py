"""Every port is typed: no method of a Protocol in the deployed package takes or gives `Any`, a bare `dict`,
`list` or `Mapping`, or `dict[str, Any]`. Read from the source (ast), not from the classes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.gate  # walks every port of the package

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "sommelier" / "sommelier"
UNTYPED_CONTAINERS = {"dict", "list", "Mapping", "Sequence", "MutableMapping"}


def _protocols() -> list[tuple[str, ast.ClassDef]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith("Protocol") for base in node.bases):
                found.append((str(path.relative_to(PACKAGE)), node))
    return found


def _untyped(annotation: ast.expr) -> list[str]:
    """The parts of an annotation that say nothing of the shape: Any, or a container without its types."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    subscripted = {id(node.value) for node in ast.walk(annotation) if isinstance(node, ast.Subscript)}
    problems = []
    for node in ast.walk(annotation):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name == "Any":
            problems.append("Any")
        elif name in UNTYPED_CONTAINERS and id(node) not in subscripted:
            problems.append(f"bare {name}")
    return problems


def test_the_walk_finds_the_ports():
    names = {cls.name for _, cls in _protocols()}
    assert {"ChatLLM", "TurnSink", "MessageLedger", "DeliveryLog", "CatalogRepository"} <= names


def test_the_check_sees_what_it_forbids():
    for text in ("dict[str, Any]", "dict", "list[dict] | None", "Mapping", "typing.Any"):
        assert _untyped(ast.parse(text, mode="eval").body), text
    for text in ("list[LLMMessage]", "JSONObject | None", "dict[int, PartRecord]", "Sequence[str]"):
        assert not _untyped(ast.parse(text, mode="eval").body), text


def test_no_port_method_takes_or_gives_an_untyped_value():
    offenders = []
    for where, cls in _protocols():
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef):
                continue
            arguments = method.args.posonlyargs + method.args.args + method.args.kwonlyargs
            annotated = [(a.arg, a.annotation) for a in arguments if a.annotation is not None]
            annotated += [("return", method.returns)] if method.returns is not None else []
            for name, annotation in annotated:
                for problem in _untyped(annotation):
                    offenders.append(f"{where} {cls.name}.{method.name} {name}: {problem}")
    assert not offenders, "\n".join(offenders)
