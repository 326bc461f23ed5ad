"""The shop's own facts, kept by the owner in one file (docs/shop.md): its name and time zone, its stores
(address, hours, phone, a map link), the pickup and payment terms, whether reservations are on, promotions
with an end date, and free notes. Read and validated whole (`read_facts`): a bad file is refused with a
Russian message naming each bad field, and nothing of it is kept.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sommelier.domain.shop_hours import HoursError, Week, parse_hours
from sommelier.language.vocabulary import data

DEFAULT_TIMEZONE = "Europe/Moscow"
MAX_TEXT = 1000
_STORE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
_PHONE = re.compile(r"^\+?[0-9][0-9 ()\-‒–]{5,24}$")


class ShopFactsError(ValueError):
    """A shop file that cannot be taken: every problem, each naming its field, in Russian."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("Файл магазина не принят:\n" + "\n".join(f"• {p}" for p in problems))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Store(_Strict):
    id: str
    name: str = Field(min_length=1, max_length=200)
    address: str = Field(min_length=1, max_length=MAX_TEXT)
    hours: str = Field(min_length=1, max_length=MAX_TEXT)
    phone: str | None = Field(default=None, max_length=40)
    map_url: str | None = Field(default=None, max_length=500)
    how_to_get: str | None = Field(default=None, max_length=MAX_TEXT)
    chat_id: int | None = None  # the store's own staff chat (reservations), else the admin chat

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _STORE_ID.match(value):
            raise ValueError("латинские строчные буквы, цифры, «-» или «_», до 32 знаков (например «lenina»)")
        return value

    @field_validator("hours")
    @classmethod
    def _hours(cls, value: str) -> str:
        try:
            parse_hours(value)
        except HoursError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("phone")
    @classmethod
    def _phone(cls, value: str | None) -> str | None:
        if value is not None and not _PHONE.match(value):
            raise ValueError(f"«{value}» не похож на номер телефона (пишите как «+7 343 200-00-00»)")
        return value

    @field_validator("map_url")
    @classmethod
    def _map(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("https://"):
            raise ValueError("ссылка на карту должна начинаться с https://")
        return value

    def week(self) -> Week:
        return parse_hours(self.hours)


class Promotion(_Strict):
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    until: date  # the last day it holds, in the shop's time zone

    @field_validator("until", mode="before")
    @classmethod
    def _until(cls, value: Any) -> Any:
        if isinstance(value, str) and not re.match(r"^\d{4}-\d{2}-\d{2}$", value.strip()):
            raise ValueError(f"дата «{value}» не в виде ГГГГ-ММ-ДД (например «2025-12-31»)")
        return value


class ShopFacts(_Strict):
    name: str = Field(min_length=1, max_length=200)
    timezone: str = DEFAULT_TIMEZONE
    stores: list[Store] = Field(default_factory=list, max_length=200)
    pickup: str | None = Field(default=None, max_length=MAX_TEXT)
    payment: str | None = Field(default=None, max_length=MAX_TEXT)
    reservations: bool = False
    promotions: list[Promotion] = Field(default_factory=list, max_length=50)
    notes: list[str] = Field(default_factory=list, max_length=50)

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"нет такого часового пояса «{value}» (например «Asia/Yekaterinburg»)") from None
        return value

    @field_validator("notes", mode="before")
    @classmethod
    def _notes(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _unique_stores(self) -> ShopFacts:
        ids = [s.id for s in self.stores]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"магазины с одинаковым id: {', '.join(twice)}")
        return self

    def now(self) -> datetime:
        return datetime.now(ZoneInfo(self.timezone))

    def current_promotions(self, today: date) -> list[Promotion]:
        """The promotions that still hold on ``today`` (the shop's date): one past its end is never said."""
        return [p for p in self.promotions if p.until >= today]

    def store(self, store_id: str) -> Store | None:
        return next((s for s in self.stores if s.id == store_id), None)


# What each kind of pydantic error says to the owner, in Russian (data: the words of the shop file's errors).
_TYPES: dict[str, str] = data("shop_words.json")["file_errors"]


def _where(location: tuple[int | str, ...]) -> str:
    out = ""
    for part in location:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "файл"


def read_facts(value: object) -> ShopFacts:
    """The shop's facts from a parsed file (JSON or YAML); raises ShopFactsError naming every bad field."""
    if not isinstance(value, dict):
        raise ShopFactsError(["файл: ожидается объект {…} с полями name, stores, pickup…"])
    try:
        return ShopFacts.model_validate(value)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            if error["type"] in ("value_error", "assertion_error"):
                message = str(error.get("ctx", {}).get("error", error["msg"]))
            else:
                message = _TYPES.get(error["type"], error["msg"])
            problems.append(f"{_where(tuple(error['loc']))}: {message}")
        raise ShopFactsError(problems) from None


def facts_json(facts: ShopFacts) -> dict[str, Any]:
    """The facts as the owner's file has them (an export reads back as the same facts)."""
    return facts.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
