"""A wine as the ports carry it, and the catalogue's enums with their Russian words.

Plain dataclasses and constants: the tool function builds and serialises these without pydantic (its cold
start stays small); the wire form is `sommelier.domain.wire`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from sommelier.domain.wire import LOCAL, OMIT_NONE
from sommelier.language.sound import bears_name

WINE_TYPES: tuple[str, ...] = ("red", "white", "rose", "sparkling")
SWEETNESS_LEVELS: tuple[str, ...] = ("dry", "semi_dry", "semi_sweet", "sweet")

WINE_TYPE_RU = {"red": "красное", "white": "белое", "rose": "розовое", "sparkling": "игристое"}
SWEETNESS_RU = {"dry": "сухое", "semi_dry": "полусухое", "semi_sweet": "полусладкое", "sweet": "сладкое"}
SWEETNESS_PLURAL_RU = {"dry": "сухие", "semi_dry": "полусухие", "semi_sweet": "полусладкие", "sweet": "сладкие"}


@dataclass(frozen=True)
class Wine:
    """A wine of the catalogue. The search tools answer the first fields (what the model reads); reading a
    wine by id adds where it comes from exactly, its photo keys and whether it is for sale."""

    id: str
    name: str
    producer: str
    region: str  # as a customer reads it in a caption: «Тоскана, Италия»
    vintage_year: int | None
    grape_varieties: list[str]
    wine_type: str
    sweetness: str
    body: int | None
    tannins: int | None
    acidity: int | None
    price_rub: int | float
    description: str
    tasting_notes: str
    food_pairings: list[str]
    similarity_score: float | None = field(default=None, metadata=OMIT_NONE)  # semantic search only
    country: str | None = field(default=None, metadata=OMIT_NONE)
    region_name: str | None = field(default=None, metadata=OMIT_NONE)
    appellation: str | None = field(default=None, metadata=OMIT_NONE)
    image_key: str | None = field(default=None, metadata=OMIT_NONE)
    telegram_file_id: str | None = field(default=None, metadata=OMIT_NONE)
    available: bool | None = field(default=None, metadata=OMIT_NONE)
    found_by: str | None = field(default=None, metadata=LOCAL)  # the tool that found it this turn

    @property
    def photo(self) -> WinePhoto | None:
        if self.image_key or self.telegram_file_id:
            return WinePhoto(self.image_key, self.telegram_file_id)
        return None


class WinePhoto(NamedTuple):
    """Where a wine's photo is: the bucket key, and Telegram's file id once a photo was sent."""

    image_key: str | None = None
    telegram_file_id: str | None = None


class WineListing(NamedTuple):
    """One line of `sommelier catalog list`."""

    id: str
    sku: str | None
    name: str
    producer: str
    vintage_year: int | None
    wine_type: str
    sweetness: str
    country: str
    price_rub: int | float
    available: bool


def wine_bears_name(wine: Wine, name: str) -> bool:
    """Whether the wine's name, producer, places or grapes hold every word of a name a customer asked for
    («паддл крик» is Paddle Creek; «Cloudy Bay» is not Cloudy Ridge): «есть» is said only of such a wine."""
    return bears_name(
        name, wine.name, wine.producer, wine.appellation or "", wine.region_name or wine.region, *wine.grape_varieties
    )
