"""The catalogue row as a shop operator writes it (JSON or CSV), validated with Pydantic."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

WineType = Literal["red", "white", "rose", "sparkling"]
Sweetness = Literal["dry", "semi_dry", "semi_sweet", "sweet"]

MAX_DESCRIPTION = 20000  # stored in full; captions and tool results use a shortened form
MAX_NOTES = 5000
MAX_NAME = 200
MAX_SKU = 100
EMBEDDED_DESCRIPTION_CHARS = 3000  # an embedding input stays well inside a model's token limit
_GRAPE_SEPARATOR = re.compile(r"[;/+&]|,(?!\d)")
_YEAR_AS_WRITTEN = re.compile(r"(\d{4})\s*(?:г\.?|год)", re.IGNORECASE)
_NEVER_INFERRED = frozenset({"id", "sku", "name", "price_rub", "extra", "inferred", "available"})


def _clean_list(values: list[str]) -> list[str]:
    seen: list[str] = []
    for value in values:
        item = " ".join(str(value).split())
        if item and item not in seen:
            seen.append(item)
    return seen


class WineRecord(BaseModel):
    """One wine of a shop's catalogue. Unique by (name, producer, vintage_year)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    id: str | None = Field(default=None, description="the wine's id, as `catalog export` writes it")
    sku: str | None = Field(default=None, max_length=MAX_SKU, description="the shop's own stable key")
    name: str = Field(min_length=1, max_length=MAX_NAME)
    # A thin shop export (a 1C stock list) has no producer, country, grapes or description: each is optional,
    # and what the name says is inferred at import (catalog/enrich.py, listed in `inferred`).
    producer: str = Field(default="", max_length=MAX_NAME)
    country: str = Field(default="", max_length=100)
    region: str = Field(default="", max_length=MAX_NAME)
    appellation: str | None = Field(default=None, max_length=MAX_NAME)
    vintage_year: int | None = Field(default=None, description="null for non-vintage (NV)")
    grape_varieties: list[str] = Field(default_factory=list, max_length=20)
    wine_type: WineType
    sweetness: Sweetness
    # 1–5 grades; many shops don't grade them, so empty means "not graded" (never guessed).
    body: int | None = Field(default=None, ge=1, le=5)
    tannins: int | None = Field(default=None, ge=1, le=5)
    acidity: int | None = Field(default=None, ge=1, le=5)
    price_rub: Decimal = Field(gt=0, le=10_000_000, max_digits=12, decimal_places=2)
    description: str = Field(default="", max_length=MAX_DESCRIPTION)
    tasting_notes: str = Field(default="", max_length=MAX_NOTES)
    food_pairings: list[str] = Field(default_factory=list, max_length=30)
    image: str | None = Field(
        default=None,
        max_length=500,
        description="photo file, relative to the catalogue file (uploaded to the bucket on import)",
    )
    image_key: str | None = Field(default=None, max_length=500, description="an object already in the bucket")
    image_url: str | None = Field(
        default=None, max_length=2000, description="a photo on the web, downloaded at import (http or https)"
    )
    available: bool = Field(default=True, description="false: not for sale (out of stock), never recommended")
    inferred: list[str] = Field(
        default_factory=list, max_length=20, description="the fields the import inferred from the wine's names"
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="the file's fields the catalogue does not model")

    @model_validator(mode="before")
    @classmethod
    def _style_as_the_shop_writes_it(cls, values: Any) -> Any:
        # A shop's own words for the enums, read by the language layer: «Красное», «брют», one «Цвет» cell
        # holding both («Игристое белое брют») when there is no sweetness column, and a «Сахар» cell of
        # «брют» or «экстра брют», which only a sparkling wine is.
        if not isinstance(values, dict):
            return values
        from sommelier.language import style_in_words

        out = dict(values)
        type_cell, sugar_cell = values.get("wine_type"), values.get("sweetness")
        if isinstance(type_cell, str):
            wine_type, sweetness = style_in_words(type_cell)
            out["wine_type"] = wine_type or type_cell
            if sweetness and not sugar_cell:
                out["sweetness"] = sweetness
        if isinstance(sugar_cell, str) and sugar_cell.strip():
            sparkling, sweetness = style_in_words(sugar_cell)
            out["sweetness"] = sweetness or sugar_cell
            if sparkling == "sparkling" and isinstance(type_cell, str):
                out["wine_type"] = sparkling
        return out

    @field_validator("vintage_year")
    @classmethod
    def _vintage_in_range(cls, value: int | None) -> int | None:
        if value is None:
            return None
        latest = dt.date.today().year + 1
        if not 1900 <= value <= latest:
            raise ValueError(f"vintage_year must be between 1900 and {latest}, or empty for NV")
        return value

    @field_validator("grape_varieties", mode="before")
    @classmethod
    def _grapes_from_text(cls, value: Any) -> Any:
        # Shops export grapes as one cell, «Мерло 83%; Каберне Совиньон 17%», «Темпранильо 85%, Гарнача 15%»
        # or «Каберне/Мерло», «Каберне + Мерло»:
        # no grape name holds a comma, but a share may («83,5%»), so a comma before a digit is not a separator.
        if isinstance(value, str):
            return _GRAPE_SEPARATOR.split(value)
        if isinstance(value, list):
            return [
                part for item in value for part in (_GRAPE_SEPARATOR.split(item) if isinstance(item, str) else [item])
            ]
        return value

    @field_validator("food_pairings", mode="before")
    @classmethod
    def _pairings_from_text(cls, value: Any) -> Any:
        # A pairing such as «Закуски, салаты и антипасто» holds commas, so only ";" separates items.
        if isinstance(value, str):
            return value.split(";")
        return value

    @field_validator("grape_varieties", "food_pairings")
    @classmethod
    def _strip_items(cls, values: list[str]) -> list[str]:
        return _clean_list(values)

    @field_validator("vintage_year", mode="before")
    @classmethod
    def _non_vintage(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().upper() in {"", "NV", "N/V", "Б/Г", "БЕЗ ГОДА"}:
            return None
        if isinstance(value, str) and (year := _YEAR_AS_WRITTEN.fullmatch(value.strip())):
            return year.group(1)  # «2019 г.», «2019г», «2019 год»
        return value

    @field_validator("price_rub", mode="before")
    @classmethod
    def _price_as_written(cls, value: Any) -> Any:
        # «4 990 ₽», «4990 руб.», «1890р», «1290,50»: how prices look in Russian exports.
        if isinstance(value, str):
            from sommelier.language import without_currency

            return without_currency(value).replace(",", ".")
        return value

    @field_validator("appellation", "image", "image_key", "image_url", "sku", "id")
    @classmethod
    def _empty_is_none(cls, value: str | None) -> str | None:
        return value or None

    @field_validator("id")
    @classmethod
    def _uuid(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(uuid.UUID(value))
        except ValueError:
            raise ValueError("id must be a wine id as `catalog export` writes it (a UUID)") from None

    @field_validator("image_url")
    @classmethod
    def _web_address(cls, value: str | None) -> str | None:
        if value is not None and not value.lower().startswith(("http://", "https://")):
            raise ValueError("image_url must start with http:// or https://")
        return value

    @field_validator("inferred")
    @classmethod
    def _inferred_fields(cls, values: list[str]) -> list[str]:
        unknown = [v for v in values if v not in cls.model_fields or v in _NEVER_INFERRED]
        if unknown:
            raise ValueError(f"inferred lists fields of the catalogue, not {', '.join(map(repr, unknown))}")
        return list(dict.fromkeys(values))

    def natural_key(self) -> tuple[str, str, int | None]:
        return (self.name, self.producer, self.vintage_year)

    def embedding_text(self) -> str:
        """The text that an embedding of this wine is computed from: its style, what its structure says in
        the words customers use for moods (language/data/structure.json), then its names and prose."""
        from sommelier.domain.wine import SWEETNESS_RU, WINE_TYPE_RU
        from sommelier.language import parse_grape
        from sommelier.language.structure import structure_words

        parts = [
            f"{WINE_TYPE_RU[self.wine_type]} {SWEETNESS_RU[self.sweetness]} вино",
            ", ".join(structure_words(self.model_dump())),
            self.name,
            self.producer,
            f"{self.country}, {self.region}".strip(", "),
            ", ".join(parse_grape(g)[0] for g in self.grape_varieties),
            self.description[:EMBEDDED_DESCRIPTION_CHARS],
            self.tasting_notes,
            "к блюдам: " + ", ".join(self.food_pairings) if self.food_pairings else "",
        ]
        return "\n".join(p for p in parts if p)


class ImportRow(NamedTuple):
    """One wine to write: the validated row and its embedding (None: keep the stored one)."""

    record: WineRecord
    embedding: list[float] | None = None
    embedding_model: str | None = None

    def as_arguments(self) -> dict[str, Any]:
        """The row as import_wines reads it (the photo file is already in the bucket under image_key)."""
        row = self.record.model_dump(mode="json", exclude={"image"})
        if self.embedding is not None:
            row["embedding"] = self.embedding
            row["embedding_model"] = self.embedding_model
        return row
