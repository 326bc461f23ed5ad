"""A conversation as the conversation store keeps it: who wrote, the messages, a turn to save, votes; and a
turn's deadline.

The deadline is one budget per conversation turn, from which every LLM call takes its time. In the agent
function it is the invocation's remaining time minus what delivery to Telegram needs
(`telegram.consumer.lambda_turn_deadline`); locally it is ``LLM_TURN_BUDGET_S``. The caller hands it down
with the turn. The LLM may use the budget up to a reserve kept for the fallback (the offline answer), so the
customer always gets an answer before the budget ends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from sommelier.domain.shop_facts import ShopFacts
from sommelier.domain.taste import TasteNote, TasteProfile
from sommelier.domain.wine import Wine

Role = Literal["user", "assistant"]


class UserInfo(NamedTuple):
    """Who wrote: enough to keep the users table current."""

    telegram_user_id: int
    chat_id: int
    username: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    language_code: str | None = None


class StoredUser(NamedTuple):
    """A customer as the store knows them (``profile``: what they told the bot about their taste)."""

    telegram_user_id: int
    chat_id: int
    username: str | None
    first_name: str | None
    profile: dict[str, object]  # JSON values, as the customer's answers were kept
    is_active: bool


class UserUpsert(NamedTuple):
    user: StoredUser
    created: bool


class ChatMessage(NamedTuple):
    """One message of a chat's history, as the customer saw it."""

    id: int
    role: Role
    content: str
    wine_ids: list[str]
    response_type: str | None
    created_at: str


class TurnStats(NamedTuple):
    """A turn's mode and LLM use, kept without any id for the shop's report."""

    mode: str
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class TurnRecord:
    """A successful turn to store: the user's text and the rendered answer."""

    chat_id: int
    user_text: str
    answer_text: str
    user_id: int | None = None
    update_id: int | None = None
    wine_ids: list[str] = field(default_factory=list)
    response_type: str | None = None
    stats: TurnStats | None = None
    taste: TasteNote | None = None  # what the customer's message said of their taste (learnt with the turn)


class SavedTurn(NamedTuple):
    saved: bool
    user_message_id: int | None = None
    assistant_message_id: int | None = None


class PhotoId(NamedTuple):
    """A Telegram file id learned while delivering a wine's photo."""

    wine_id: str
    file_id: str


class TurnStart(NamedTuple):
    user: StoredUser | None
    history: list[ChatMessage]
    created: bool = False
    shop: ShopFacts | None = None  # the shop's own facts (docs/shop.md), None: the owner set none
    taste: TasteProfile | None = None  # the customer's remembered taste (domain/taste.py), None: none kept


class TurnOpening(NamedTuple):
    """open_turn's answer: begin_turn's, and the answers of the prefetch's searches run in the same invocation,
    in their order (each a search's result, or its error: a port error in the caller's hands, the JSON
    {"error": …} on the wire). ``results`` None: the searches were not run (a tool function that predates
    open_turn answered begin_turn instead)."""

    user: StoredUser | None
    history: list[ChatMessage]
    created: bool = False
    results: list[Any] | None = None
    shop: ShopFacts | None = None  # as TurnStart's
    taste: TasteProfile | None = None  # as TurnStart's

    @classmethod
    def of(cls, start: TurnStart, results: list[Any] | None) -> TurnOpening:
        """begin_turn's answer with the searches' answers (every field of the start carried over)."""
        return cls(**start._asdict(), results=results)


class TurnEnd(NamedTuple):
    saved: SavedTurn | None
    wines: list[Wine]
    missing: list[str]
    photos_cached: int = 0


class FeedbackResult(NamedTuple):
    """The vote stored, and whether it replaced a different one."""

    saved: bool
    rating: int
    previous_rating: int | None
    changed: bool


class ChatState(NamedTuple):
    chat_id: int
    is_active: bool


# Time kept for the offline answer after the LLM gives up (tool calls and rendering, no network model).
FALLBACK_RESERVE_FRACTION = 0.05
MAX_FALLBACK_RESERVE_S = 2.0


@dataclass(frozen=True)
class Deadline:
    """An absolute end (time.monotonic) for one turn, and the share of it the LLM may use."""

    ends_at: float
    budget_s: float
    fallback_reserve_s: float = 0.0
    started_at: float = field(default_factory=time.monotonic)

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        seconds = max(0.0, seconds)
        reserve = min(MAX_FALLBACK_RESERVE_S, seconds * FALLBACK_RESERVE_FRACTION)
        now = time.monotonic()
        return cls(ends_at=now + seconds, budget_s=seconds, fallback_reserve_s=reserve, started_at=now)

    def remaining(self) -> float:
        """Seconds until the whole turn must be over."""
        return max(0.0, self.ends_at - time.monotonic())

    def remaining_for_llm(self) -> float:
        """Seconds the LLM may still use; the rest is kept for the fallback answer."""
        return max(0.0, self.ends_at - self.fallback_reserve_s - time.monotonic())

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    @property
    def expired(self) -> bool:
        return self.remaining_for_llm() <= 0.0


# What the conversation store answers in one JSON object (the tool function always answers one).
class History(NamedTuple):
    messages: list[ChatMessage]


class ChatStates(NamedTuple):
    chats: list[ChatState]


class Archived(NamedTuple):
    archived: int
