"""What the catalogue and the shop's duties answer besides wines: stats, imports, cards, the report."""

from __future__ import annotations

from dataclasses import dataclass, field

from sommelier.domain.wine import OMIT_EMPTY, OMIT_NONE, Wine, WineListing


@dataclass(frozen=True)
class PriceRange:
    min: int | float
    median: int | float
    max: int | float


@dataclass(frozen=True)
class FieldCoverage:
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
        from sommelier.domain.wire import to_wire

        row = to_wire(self)
        extra = row.pop("extra", {})
        for key, value in extra.items():
            row.setdefault(key, value)
        return row


@dataclass(frozen=True)
class ImportSummary:
    inserted: int
    updated: int
    total: int
    retired: int
    ids: list[str]
    started_at: str


@dataclass(frozen=True)
class WineEmbedding:
    """A new vector for an existing wine."""

    id: str
    embedding: list[float]


@dataclass(frozen=True)
class EmbeddingText:
    """The text a wine is embedded from (re-embedding after a change of model)."""

    id: str
    text: str


@dataclass(frozen=True)
class ShelfWine:
    """A wine found by the shop's sku or id, with the ref it was asked by (shelf labels)."""

    ref: str
    wine: Wine


@dataclass(frozen=True)
class FoundWines:
    wines: list[ShelfWine]
    missing: list[str]


@dataclass(frozen=True)
class WineCard:
    """A wine's card for a shelf code: the wine and similar ones, or, for an unknown or sold-out wine,
    alternatives (``unavailable``: the sold-out wine)."""

    wine: Wine | None
    similar: list[Wine] = field(default_factory=list)
    alternatives: list[Wine] = field(default_factory=list)
    unavailable: Wine | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class ModeFigures:
    mode: str
    turns: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class WineVotes:
    wine_id: str
    name: str
    producer: str
    vintage_year: int | None
    up: int
    down: int


@dataclass(frozen=True)
class AskedQuery:
    text: str
    wines_shown: int
    response_type: str | None


@dataclass(frozen=True)
class ReportData:
    """The raw figures of a period for the shop's report."""

    since: str
    until: str
    modes: list[ModeFigures]
    customers: int
    votes: list[WineVotes]
    queries: list[AskedQuery]


@dataclass(frozen=True)
class AdminStats:
    customers: int
    turns_today: int
    turns_7d: int
    likes_7d: int
    dislikes_7d: int
    wines: int
    prompt_tokens_7d: int = 0
    completion_tokens_7d: int = 0


@dataclass(frozen=True)
class ForgetResult:
    """How many rows of each table were deleted for a customer."""

    deleted: dict[str, int]


# What the catalogue and the shop's records answer in one JSON object (the tool function always answers one).
@dataclass(frozen=True)
class ExportedWines:
    wines: list[ExportedWine]


@dataclass(frozen=True)
class Listing:
    wines: list[WineListing]


@dataclass(frozen=True)
class EmbeddingTexts:
    items: list[EmbeddingText]


@dataclass(frozen=True)
class AgeAnswer:
    is_adult: bool | None


@dataclass(frozen=True)
class Saved:
    saved: bool


@dataclass(frozen=True)
class Deleted:
    deleted: int
    days: int
