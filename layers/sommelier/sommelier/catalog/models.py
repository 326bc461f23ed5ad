"""The catalogue row as a shop operator writes it (JSON or CSV), validated with Pydantic."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

WineType = Literal["red", "white", "rose", "sparkling"]
Sweetness = Literal["dry", "semi_dry", "semi_sweet", "sweet"]

MAX_TEXT = 2000
MAX_NAME = 200


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

    name: str = Field(min_length=1, max_length=MAX_NAME)
    producer: str = Field(min_length=1, max_length=MAX_NAME)
    country: str = Field(min_length=1, max_length=100)
    region: str = Field(default="", max_length=MAX_NAME)
    appellation: str | None = Field(default=None, max_length=MAX_NAME)
    vintage_year: int | None = Field(default=None, description="null for non-vintage (NV)")
    grape_varieties: list[str] = Field(min_length=1, max_length=20)
    wine_type: WineType
    sweetness: Sweetness
    body: int = Field(ge=1, le=5)
    tannins: int = Field(ge=1, le=5)
    acidity: int = Field(ge=1, le=5)
    price_rub: Decimal = Field(gt=0, le=10_000_000, max_digits=12, decimal_places=2)
    description: str = Field(min_length=1, max_length=MAX_TEXT)
    tasting_notes: str = Field(default="", max_length=MAX_TEXT)
    food_pairings: list[str] = Field(default_factory=list, max_length=30)
    image: str | None = Field(
        default=None,
        max_length=500,
        description="photo file, relative to the catalogue file (uploaded to the bucket on import)",
    )
    image_key: str | None = Field(default=None, max_length=500, description="an object already in the bucket")

    @field_validator("vintage_year")
    @classmethod
    def _vintage_in_range(cls, value: int | None) -> int | None:
        if value is None:
            return None
        latest = dt.date.today().year + 1
        if not 1900 <= value <= latest:
            raise ValueError(f"vintage_year must be between 1900 and {latest}, or empty for NV")
        return value

    @field_validator("grape_varieties", "food_pairings")
    @classmethod
    def _strip_items(cls, values: list[str]) -> list[str]:
        return _clean_list(values)

    @field_validator("appellation", "image", "image_key")
    @classmethod
    def _empty_is_none(cls, value: str | None) -> str | None:
        return value or None

    @model_validator(mode="after")
    def _grapes_present(self) -> WineRecord:
        if not self.grape_varieties:
            raise ValueError("grape_varieties needs at least one grape")
        return self

    def natural_key(self) -> tuple[str, str, int | None]:
        return (self.name, self.producer, self.vintage_year)

    def embedding_text(self) -> str:
        """The text that an embedding of this wine is computed from."""
        from sommelier.catalog.labels import SWEETNESS_RU, WINE_TYPE_RU

        parts = [
            f"{WINE_TYPE_RU[self.wine_type]} {SWEETNESS_RU[self.sweetness]} вино",
            self.name,
            self.producer,
            f"{self.country}, {self.region}".strip(", "),
            ", ".join(self.grape_varieties),
            self.description,
            self.tasting_notes,
            "к блюдам: " + ", ".join(self.food_pairings) if self.food_pairings else "",
        ]
        return "\n".join(p for p in parts if p)
