"""The golden set: Russian queries with the behaviour we expect from the sommelier.

File format (`eval/golden_set.json`)::

    {"version": 1,
     "categories": {"<name>": "<what it covers>", ...},
     "cases": [{
        "id": "price-01", "category": "filter_price",
        "history": ["earlier user turn", ...],          # optional: played first, in the same chat
        "query": "Красное вино до 1500 рублей",
        "expect": {
            "response_type": "recommendation",           # or a list of acceptable types
            "guard_type": null,                          # null: no guard may fire
            "tool": "search_wines",                      # optional; a list = any of them; null = no search tool
            "filters": {"wine_type": "red", "price_max": 1500},   # optional; expected ⊆ sent
            "constraints": {"wine_type": "red", "price_max": 1500},  # on every recommended wine
            "relevant": [{"name": "...", "producer": "..."}]      # mood queries: for recall@5
        },
        "note": "why the expectation is what it is"}]}

Filter values may be a list (any of them is right) and prices may be `[low, high]` (the sent
value must fall inside). Constraint keys: wine_type, sweetness, price_min, price_max, country,
region, grape, food (a list of stems, any pairing containing any of them), not_previous,
cheaper_than_previous, pricier_than_previous.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sommelier.settings import project_root

GOLDEN_SET_PATH = Path("eval") / "golden_set.json"

RESPONSE_TYPES = ("recommendation", "informational", "off_topic")
GUARD_TYPES = ("off_topic", "prompt_injection", "social_engineering")
SEARCH_TOOLS = ("search_wines", "semantic_search")
FILTER_KEYS = ("wine_type", "sweetness", "grape_variety", "price_min", "price_max", "country", "region", "food_pairing")
CONSTRAINT_KEYS = (
    "wine_type",
    "sweetness",
    "price_min",
    "price_max",
    "country",
    "region",
    "grape",
    "food",
    "not_previous",
    "cheaper_than_previous",
    "pricier_than_previous",
)
WINE_TYPES = ("red", "white", "rose", "sparkling")
SWEETNESS = ("dry", "semi_dry", "semi_sweet", "sweet")
MAX_RELEVANT = 8


class GoldenSetError(ValueError):
    """The golden set file is malformed; the message names the case and the field."""


@dataclass(frozen=True)
class Expectation:
    response_types: tuple[str, ...]
    guard_type: str | None = None
    tool_scored: bool = False
    tools: tuple[str, ...] = ()  # acceptable search tools; empty with tool_scored = no search tool at all
    filters: dict[str, Any] | None = None
    constraints: dict[str, Any] = field(default_factory=dict)
    relevant: tuple[tuple[str, str], ...] = ()  # (name, producer)


@dataclass(frozen=True)
class GoldenCase:
    id: str
    category: str
    query: str
    expect: Expectation
    history: tuple[str, ...] = ()
    note: str = ""

    @property
    def is_guard_case(self) -> bool:
        """Cases where a guard must fire (off-topic, injection, social engineering)."""
        return self.expect.guard_type is not None


@dataclass(frozen=True)
class GoldenSet:
    cases: list[GoldenCase]
    categories: dict[str, str]
    path: Path | None = None
    version: int = 1

    def select(self, ids: list[str] | None = None, categories: list[str] | None = None) -> list[GoldenCase]:
        """The cases named by id or belonging to one of the categories (all cases when neither is given)."""
        if not ids and not categories:
            return list(self.cases)
        wanted_ids, wanted_categories = set(ids or []), set(categories or [])
        return [c for c in self.cases if c.id in wanted_ids or c.category in wanted_categories]


def default_golden_path() -> Path:
    return project_root() / GOLDEN_SET_PATH


def load_golden_set(path: str | Path | None = None) -> GoldenSet:
    path = Path(path) if path else default_golden_path()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise GoldenSetError(f"golden set not found: {path}") from exc
    except ValueError as exc:
        raise GoldenSetError(f"golden set is not valid JSON: {path}: {exc}") from exc
    return parse_golden_set(data, path=path)


def parse_golden_set(data: Any, *, path: Path | None = None) -> GoldenSet:
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise GoldenSetError('the golden set must be an object with a "cases" list')
    categories = data.get("categories") or {}
    if not isinstance(categories, dict):
        raise GoldenSetError('"categories" must be an object {name: description}')
    cases: list[GoldenCase] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["cases"]):
        case = _parse_case(raw, index, categories)
        if case.id in seen:
            raise GoldenSetError(f"duplicate case id {case.id!r}")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise GoldenSetError("the golden set has no cases")
    return GoldenSet(cases=cases, categories=dict(categories), path=path, version=int(data.get("version", 1)))


def _fail(where: str, message: str) -> GoldenSetError:
    return GoldenSetError(f"{where}: {message}")


def _parse_case(raw: Any, index: int, categories: dict[str, str]) -> GoldenCase:
    where = f"case #{index + 1}"
    if not isinstance(raw, dict):
        raise _fail(where, "must be an object")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise _fail(where, "id must be a non-empty string")
    where = f"case {case_id!r}"
    unknown = set(raw) - {"id", "category", "query", "history", "expect", "note"}
    if unknown:
        raise _fail(where, f"unknown keys {sorted(unknown)}")
    category = raw.get("category")
    if not isinstance(category, str) or not category:
        raise _fail(where, "category must be a non-empty string")
    if categories and category not in categories:
        raise _fail(where, f'category {category!r} is not declared in "categories"')
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _fail(where, "query must be a non-empty string")
    history = raw.get("history") or []
    if not isinstance(history, list) or not all(isinstance(h, str) and h.strip() for h in history):
        raise _fail(where, "history must be a list of non-empty strings (the preceding user turns)")
    note = raw.get("note") or ""
    if not isinstance(note, str):
        raise _fail(where, "note must be a string")
    expect = _parse_expect(raw.get("expect"), where)
    return GoldenCase(id=case_id, category=category, query=query, expect=expect, history=tuple(history), note=note)


def _parse_expect(raw: Any, where: str) -> Expectation:
    """A case's `expect` object, part by part; the first malformed part fails the golden set."""
    if not isinstance(raw, dict):
        raise _fail(where, "expect must be an object")
    unknown = set(raw) - {"response_type", "guard_type", "tool", "filters", "constraints", "relevant"}
    if unknown:
        raise _fail(where, f"unknown expect keys {sorted(unknown)}")
    response_types = _parse_response_types(raw.get("response_type"), where)
    guard_type = _parse_guard_type(raw.get("guard_type"), response_types, where)
    tool_scored = "tool" in raw
    tools = _parse_tools(raw["tool"], where) if tool_scored else ()
    filters = _parse_filters(raw.get("filters"), tools, where)
    constraints = _parse_constraints(raw.get("constraints") or {}, where)
    relevant = _parse_relevant(raw.get("relevant") or [], where)
    return Expectation(
        response_types=tuple(response_types),
        guard_type=guard_type,
        tool_scored=tool_scored,
        tools=tools,
        filters=dict(filters) if filters else None,
        constraints=dict(constraints),
        relevant=tuple(relevant),
    )


def _parse_response_types(value: Any, where: str) -> list[str]:
    """expect.response_type: one acceptable type or a list of them."""
    response_types = [value] if isinstance(value, str) else value
    if (
        not isinstance(response_types, list)
        or not response_types
        or any(t not in RESPONSE_TYPES for t in response_types)
    ):
        raise _fail(where, f"expect.response_type must be one of {RESPONSE_TYPES} or a list of them")
    return response_types


def _parse_guard_type(guard_type: Any, response_types: list[str], where: str) -> str | None:
    """expect.guard_type: null (no guard may fire) or the guard that must, which goes with an off_topic answer."""
    if guard_type is not None and guard_type not in GUARD_TYPES:
        raise _fail(where, f"expect.guard_type must be null or one of {GUARD_TYPES}")
    if guard_type is not None and response_types != ["off_topic"]:
        raise _fail(where, "a guard case must expect response_type off_topic")
    if guard_type is None and "off_topic" in response_types:
        raise _fail(where, "an off_topic answer always carries a guard_type")
    checked: str | None = guard_type  # one of GUARD_TYPES, or null
    return checked


def _parse_tools(value: Any, where: str) -> tuple[str, ...]:
    """expect.tool (when present): the acceptable search tools; empty for null (no search tool at all)."""
    if value is None:
        return ()
    tools = tuple(value) if isinstance(value, list) else (value,)
    if not tools or any(t not in SEARCH_TOOLS for t in tools):
        raise _fail(where, f"expect.tool must be null, one of {SEARCH_TOOLS}, or a list of them")
    return tools


def _parse_filters(filters: Any, tools: tuple[str, ...], where: str) -> dict[str, Any] | None:
    """expect.filters: the filters some search call must send; they need expect.tool to name the search tools."""
    if filters is None:
        return None
    if not isinstance(filters, dict) or not filters:
        raise _fail(where, "expect.filters must be a non-empty object")
    bad = set(filters) - set(FILTER_KEYS)
    if bad:
        raise _fail(where, f"unknown filter keys {sorted(bad)}")
    for key in ("price_min", "price_max"):
        if key in filters:
            _check_price_spec(filters[key], f"{where}: expect.filters.{key}")
    if not tools:
        raise _fail(where, "expect.filters needs expect.tool (the tool the filters go to)")
    return filters


def _one_of(allowed: tuple[str, ...]) -> Callable[[Any], bool]:
    """A value check: one of `allowed`, or a non-empty list of them."""

    def ok(value: Any) -> bool:
        values = value if isinstance(value, list) else [value]
        return bool(values) and all(v in allowed for v in values)

    return ok


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_stem_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(s, str) and s for s in value)


def _is_flag(value: Any) -> bool:
    return isinstance(value, bool)


# The constraint values that are checked, in the order they are checked: (check, what the value must be).
_CONSTRAINT_VALUES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "wine_type": (_one_of(WINE_TYPES), f"must be one of {WINE_TYPES} or a list of them"),
    "sweetness": (_one_of(SWEETNESS), f"must be one of {SWEETNESS} or a list of them"),
    "price_min": (_is_number, "must be a number"),
    "price_max": (_is_number, "must be a number"),
    "food": (_is_stem_list, "must be a non-empty list of stems"),
    "not_previous": (_is_flag, "must be true or false"),
    "cheaper_than_previous": (_is_flag, "must be true or false"),
    "pricier_than_previous": (_is_flag, "must be true or false"),
}


def _parse_constraints(constraints: Any, where: str) -> dict[str, Any]:
    """expect.constraints: the hard constraints every recommended wine must meet."""
    if not isinstance(constraints, dict):
        raise _fail(where, "expect.constraints must be an object")
    bad = set(constraints) - set(CONSTRAINT_KEYS)
    if bad:
        raise _fail(where, f"unknown constraint keys {sorted(bad)}")
    for key, (ok, requirement) in _CONSTRAINT_VALUES.items():
        if key in constraints and not ok(constraints[key]):
            raise _fail(where, f"constraints.{key} {requirement}")
    return constraints


def _parse_relevant(relevant_raw: Any, where: str) -> list[tuple[str, str]]:
    """expect.relevant: the (name, producer) labels of a mood case, at most MAX_RELEVANT, none twice."""
    if not isinstance(relevant_raw, list) or len(relevant_raw) > MAX_RELEVANT:
        raise _fail(where, f"expect.relevant must be a list of at most {MAX_RELEVANT} wines")
    relevant: list[tuple[str, str]] = []
    for item in relevant_raw:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("producer"), str)
        ):
            raise _fail(where, 'each relevant wine is {"name": ..., "producer": ...}')
        relevant.append((item["name"], item["producer"]))
    if len(set(relevant)) != len(relevant):
        raise _fail(where, "a relevant wine is listed twice")
    return relevant


def _check_price_spec(value: Any, where: str) -> None:
    if isinstance(value, bool):
        raise GoldenSetError(f"{where} must be a number or [low, high]")
    if isinstance(value, (int, float)):
        return
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        and value[0] <= value[1]
    ):
        return
    raise GoldenSetError(f"{where} must be a number or [low, high]")
