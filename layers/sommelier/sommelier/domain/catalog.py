"""What the catalogue store answers about the whole catalogue: its figures and an export (what an import
writes answers with `domain.catalog_writes`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sommelier.domain.wire import OMIT_EMPTY, OMIT_NONE, to_wire


class PriceRange(NamedTuple):
    min: int | float
    median: int | float
    max: int | float


class FieldCoverage(NamedTuple):
    """Of the available wines: how many have the field from the shop, how many inferred it at import, and
    how many have nothing (the three add up to the available wines)."""

    given: int
    inferred: int
    unknown: int


@dataclass(frozen=True)
class CatalogStats:
    wines: int
    available: int
    unavailable: int
    with_photo: int
    unknown_country: int
    by_type: dict[str, int]
    by_country: dict[str, int]
    price_rub: PriceRange | None
    embedding_models: dict[str, int]
    coverage: dict[str, FieldCoverage] = field(default_factory=dict)  # per catalogue field


@dataclass(frozen=True)
class ExportedWine:
    """A wine as `sommelier catalog export` writes it: an import row with its id and sku, so export → edit →
    import round-trips. ``extra``: the file's own fields, written back at the top level."""

    id: str
    sku: str | None
    name: str
    producer: str
    country: str
    region: str
    appellation: str | None
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
    image_key: str | None
    image_url: str | None = field(default=None, metadata=OMIT_NONE)
    available: bool | None = field(default=None, metadata=OMIT_NONE)
    inferred: list[str] = field(default_factory=list, metadata=OMIT_EMPTY)  # filled from the names at import
    extra: dict[str, object] = field(default_factory=dict)

    def as_file_row(self) -> dict[str, object]:
        """The row of a catalogue file: every field, then the file's extra fields at the top level."""
        row: dict[str, Any] = to_wire(self)
        extra: dict[str, object] = row.pop("extra", {})
        for key, value in extra.items():
            row.setdefault(key, value)
        return row


class ExportedWines(NamedTuple):
    wines: list[ExportedWine]
