"""The tables of the in-memory store: the rows the migrations define (db/migrations), kept in Python.

One `MemoryStore` holds a catalogue, a conversation store and the shop's records, as one PostgreSQL database
does; the three in-memory ports share it. A row keeps the columns the SQL reads, and the words PostgreSQL
would compute from them (the generated columns of migrations 0007, 0010 and 0011) are computed once per write.
"""

from __future__ import annotations

import copy
import threading
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import cached_property
from math import sqrt
from typing import TYPE_CHECKING, Any

from sommelier_dev.memory import sound, text_search

if TYPE_CHECKING:
    from sommelier.domain.shop_facts import ShopFacts


class Clock:
    """PostgreSQL's now(), for one store: real time, never the same instant twice, and movable by a test
    (``advance``) where the SQL tests would rewrite a timestamp."""

    def __init__(self) -> None:
        self._offset = timedelta()
        self._last = datetime.min.replace(tzinfo=UTC)

    def now(self) -> datetime:
        moment = datetime.now(UTC) + self._offset
        if moment <= self._last:
            moment = self._last + timedelta(microseconds=1)
        self._last = moment
        return moment

    def advance(self, delta: timedelta) -> None:
        self._offset += delta


@dataclass(eq=False)
class WineRow:
    """A row of `wines` (migrations 0001, 0004, 0008, 0009)."""

    id: str
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
    price_rub: Decimal
    description: str
    tasting_notes: str
    food_pairings: list[str]
    created_at: datetime
    updated_at: datetime
    sku: str | None = None
    grape_shares: list[Decimal | None] = field(default_factory=list)
    grape_keys: list[str] = field(default_factory=list)
    food_categories: list[str] = field(default_factory=list)
    country_code: str | None = None
    lexicon_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    image_url: str | None = None
    available: bool = True
    inferred: list[str] = field(default_factory=list)
    image_key: str | None = None
    telegram_file_id: str | None = None
    embedding: array[float] | None = None  # float4, as pgvector keeps it
    embedding_model: str | None = None

    def columns(self) -> dict[str, Any]:
        """The row as toolfn/search.py's WINE_COLUMNS reads it (for its wine_for_tool and full_wine)."""
        return {
            "id": self.id,
            "name": self.name,
            "producer": self.producer,
            "country": self.country,
            "region": self.region,
            "appellation": self.appellation,
            "vintage_year": self.vintage_year,
            "grape_varieties": list(self.grape_varieties),
            "wine_type": self.wine_type,
            "sweetness": self.sweetness,
            "body": self.body,
            "tannins": self.tannins,
            "acidity": self.acidity,
            "price_rub": self.price_rub,
            "description": self.description,
            "tasting_notes": self.tasting_notes,
            "food_pairings": list(self.food_pairings),
            "image_key": self.image_key,
            "telegram_file_id": self.telegram_file_id,
            "available": self.available,
            "grape_keys": list(self.grape_keys),
        }

    def copy(self) -> WineRow:
        """The same row for another store: its lists its own (the vector is never changed in place), and the
        words already computed from it kept."""
        twin = replace(
            self,
            grape_varieties=list(self.grape_varieties),
            grape_shares=list(self.grape_shares),
            grape_keys=list(self.grape_keys),
            food_pairings=list(self.food_pairings),
            food_categories=list(self.food_categories),
            extra=dict(self.extra),
            inferred=list(self.inferred),
        )
        twin.__dict__.update({key: value for key, value in self.__dict__.items() if key in _DERIVED})
        return twin

    # The generated columns: computed when first read after a write (`replace` makes a new row).

    @cached_property
    def place_words(self) -> text_search.Lexemes:
        """PLACE_WORDS of toolfn/search.py: the russian words of the normalised region and appellation."""
        return text_search.russian(sql_norm(f"{self.region} {self.appellation or ''}"))

    @cached_property
    def name_sound(self) -> tuple[str, ...]:
        """NAME_SOUND: how the name, producer, appellation and region sound (migration 0011)."""
        return sound.sound_sequence(f"{self.name} {self.producer} {self.appellation or ''} {self.region}")

    @cached_property
    def name_sound_words(self) -> frozenset[str]:
        return frozenset(self.name_sound)

    @cached_property
    def name_words(self) -> frozenset[str]:
        """SEARCH_WORDS weight A: the name and producer in both configurations."""
        text = f"{self.name} {self.producer}"
        return text_search.lexeme_set(text_search.simple(text), text_search.russian(text))

    @cached_property
    def place_and_grape_words(self) -> frozenset[str]:
        """SEARCH_WORDS weight B: the appellation, region and grapes."""
        joined = text_search.joined(self.grape_varieties)
        return text_search.lexeme_set(text_search.russian(f"{self.appellation or ''} {self.region} {joined}"))

    @cached_property
    def pairing_words(self) -> frozenset[str]:
        """The russian words of the pairings (the search's fallback for a dish the vocabulary does not know)."""
        return text_search.lexeme_set(text_search.russian(text_search.joined(self.food_pairings)))

    @cached_property
    def norm(self) -> float:
        return sqrt(sum(x * x for x in self.embedding)) if self.embedding is not None else 0.0


_DERIVED = frozenset(
    ("place_words", "name_sound", "name_sound_words", "name_words", "place_and_grape_words", "pairing_words", "norm")
)
_SQL_NORM = str.maketrans("Ёё-", "Ее ")


def sql_norm(text: str) -> str:
    """toolfn/search.py's _NORM: lower(translate(col, 'Ёё-', 'Ее '))."""
    return text.translate(_SQL_NORM).lower()


@dataclass(eq=False)
class MessageRow:
    id: int
    chat_id: int
    user_id: int | None
    role: str
    content: str
    wine_ids: list[str]
    response_type: str | None
    update_id: int | None
    created_at: datetime
    archived: bool = False


@dataclass(eq=False)
class UserRow:
    telegram_user_id: int
    chat_id: int
    username: str | None
    first_name: str | None
    last_name: str | None
    language_code: str | None
    profile: dict[str, object]
    is_active: bool
    created_at: datetime
    last_seen_at: datetime


@dataclass(eq=False)
class UserChatRow:
    telegram_user_id: int
    chat_id: int
    is_active: bool
    changed_at: datetime


@dataclass(eq=False)
class FeedbackRow:
    id: int
    chat_id: int
    user_id: int
    message_id: int | None
    wine_id: str | None
    rating: int
    created_at: datetime
    previous_rating: int | None = None
    changed_at: datetime | None = None
    presses: int = 1


@dataclass(eq=False)
class AgeAnswerRow:
    telegram_user_id: int
    is_adult: bool
    answered_at: datetime


@dataclass(eq=False)
class TurnStatsRow:
    id: int
    mode: str
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    wines_shown: int
    created_at: datetime


class Serial:
    """A bigserial: the next id, never reused."""

    def __init__(self, last: int = 0) -> None:
        self.last = last

    def next(self) -> int:
        self.last += 1
        return self.last


class MemoryStore:
    """One database's tables. Each operation of the in-memory ports runs under the store's lock (``serve``
    and the hardening tests run turns in threads), as a transaction of its own."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self.wines: dict[str, WineRow] = {}
        self.messages: dict[int, MessageRow] = {}
        self.users: dict[int, UserRow] = {}
        self.user_chats: dict[tuple[int, int], UserChatRow] = {}
        self.feedback: dict[int, FeedbackRow] = {}
        self.age_answers: dict[int, AgeAnswerRow] = {}
        self.shop_facts: ShopFacts | None = None  # table shop_facts: its one row (immutable facts)
        self.turn_stats: dict[int, TurnStatsRow] = {}
        self.taste_profiles: dict[int, dict[str, object]] = {}  # table taste_profiles: user id → the JSON
        self.message_ids = Serial()
        self.feedback_ids = Serial()
        self.turn_stats_ids = Serial()
        self._lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[MemoryStore]:
        with self._lock:
            yield self

    def copy(self) -> MemoryStore:
        """A private copy (a test's database cloned from a template): the same rows, its own clock."""
        with self._lock:
            other = MemoryStore()
            other.wines = {key: row.copy() for key, row in self.wines.items()}
            other.messages = {key: replace(row, wine_ids=list(row.wine_ids)) for key, row in self.messages.items()}
            other.users = {key: replace(row, profile=dict(row.profile)) for key, row in self.users.items()}
            other.user_chats = {key: replace(row) for key, row in self.user_chats.items()}
            other.feedback = {key: replace(row) for key, row in self.feedback.items()}
            other.age_answers = {key: replace(row) for key, row in self.age_answers.items()}
            other.shop_facts = self.shop_facts
            other.turn_stats = {key: replace(row) for key, row in self.turn_stats.items()}
            other.taste_profiles = {key: copy.deepcopy(row) for key, row in self.taste_profiles.items()}
            other.message_ids = Serial(self.message_ids.last)
            other.feedback_ids = Serial(self.feedback_ids.last)
            other.turn_stats_ids = Serial(self.turn_stats_ids.last)
            return other
