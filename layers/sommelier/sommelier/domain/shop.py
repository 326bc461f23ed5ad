"""What the shop's duties answer: shelf cards, the report, the admin's figures, privacy and the age gate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from sommelier.domain.shop_facts import ShopFacts
from sommelier.domain.wine import Wine, WineListing
from sommelier.domain.wire import OMIT_NONE


class ShelfWine(NamedTuple):
    """A wine found by the shop's sku or id, with the ref it was asked by (shelf labels)."""

    ref: str
    wine: Wine


class FoundWines(NamedTuple):
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


class ModeFigures(NamedTuple):
    mode: str
    turns: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int


class WineVotes(NamedTuple):
    wine_id: str
    name: str
    producer: str
    vintage_year: int | None
    up: int
    down: int


class AskedQuery(NamedTuple):
    text: str
    wines_shown: int
    response_type: str | None


class ReportData(NamedTuple):
    """The raw figures of a period for the shop's report."""

    since: str
    until: str
    modes: list[ModeFigures]
    customers: int
    votes: list[WineVotes]
    queries: list[AskedQuery]


class AdminStats(NamedTuple):
    customers: int
    turns_today: int
    turns_7d: int
    likes_7d: int
    dislikes_7d: int
    wines: int
    prompt_tokens_7d: int = 0
    completion_tokens_7d: int = 0


class ForgetResult(NamedTuple):
    """How many rows of each table were deleted for a customer."""

    deleted: dict[str, int]


class Listing(NamedTuple):
    wines: list[WineListing]


class AgeAnswer(NamedTuple):
    is_adult: bool | None


class Saved(NamedTuple):
    saved: bool


class Deleted(NamedTuple):
    deleted: int
    days: int


class StoredFacts(NamedTuple):
    """The shop's facts as kept (None: the owner set none)."""

    facts: ShopFacts | None
