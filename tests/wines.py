"""Wines for tests: a `Wine` (sommelier.domain.wine) from the few fields a test cares about."""

from __future__ import annotations

import uuid
from dataclasses import fields
from typing import Any

from sommelier.domain.conversation import ChatMessage
from sommelier.domain.wine import Wine

DEFAULTS: dict[str, Any] = {
    "name": "Тестовое вино",
    "producer": "Тестовая винодельня",
    "region": "",
    "vintage_year": None,
    "grape_varieties": [],
    "wine_type": "red",
    "sweetness": "dry",
    "body": None,
    "tannins": None,
    "acidity": None,
    "price_rub": 1000,
    "description": "",
    "tasting_notes": "",
    "food_pairings": [],
}
_FIELDS = {f.name for f in fields(Wine)}


def as_wine(row: dict[str, Any] | None = None, **values: Any) -> Wine:
    """A Wine from a row as a test writes it (unknown keys are dropped; a missing id is made up)."""
    given = {**(row or {}), **values}
    data = {**DEFAULTS, "id": str(uuid.uuid4()), **{k: v for k, v in given.items() if k in _FIELDS}}
    return Wine(**data)


def by_id(*rows: dict[str, Any] | Wine) -> dict[str, Wine]:
    wines = [row if isinstance(row, Wine) else as_wine(row) for row in rows]
    return {w.id: w for w in wines}


def message(role: str, content: str, wine_ids: list[str] | None = None, *, id: int = 0) -> ChatMessage:  # noqa: A002
    """A history message as the conversation store answers it."""
    return ChatMessage(
        id=id, role=role, content=content, wine_ids=list(wine_ids or []), response_type=None, created_at=""
    )  # type: ignore[arg-type]


def rows(wines: Any) -> Any:
    """Wines as plain rows for a test's checks (``source_tool``: the tool that found each); a mapping of id →
    wine stays a mapping."""
    from dataclasses import asdict

    def row(wine: Wine) -> dict[str, Any]:
        return {**asdict(wine), "source_tool": wine.found_by}

    if isinstance(wines, dict):
        return {key: row(wine) for key, wine in wines.items()}
    return [row(wine) for wine in wines]
