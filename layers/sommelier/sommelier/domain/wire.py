"""The tool function's wire: every operation by name with the type it answers, and the JSON of the domain
objects (docs/architecture.md §2).

The tool function answers `to_wire(result)`; the Lambda adapter reads it back with `from_wire(type, json)`;
the in-process adapter gets the same objects without the JSON. Field metadata decides what a field looks like
on the wire (`domain.wine`: OMIT_NONE, OMIT_EMPTY, LOCAL). `to_wire` is the standard library only (the tool
function's cold start); `from_wire` validates with pydantic, which only the callers load.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any, Generic, TypeVar, cast

from sommelier.domain.conversation import (
    ChatMessage,
    ChatState,
    FeedbackResult,
    SavedTurn,
    TurnEnd,
    TurnStart,
    UserUpsert,
)
from sommelier.domain.search import SearchResult, WineList
from sommelier.domain.shop import (
    AdminStats,
    CatalogStats,
    EmbeddingText,
    ExportedWine,
    ForgetResult,
    FoundWines,
    ImportSummary,
    ReportData,
    WineCard,
)
from sommelier.domain.wine import WineListing

T = TypeVar("T")


def to_wire(value: Any) -> Any:
    """A domain object (dataclass, list, dict, scalar) as JSON-ready values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for item in dataclasses.fields(value):
            rule = item.metadata.get("wire")
            field_value = getattr(value, item.name)
            if rule == "local" or (rule == "omit_none" and field_value is None):
                continue
            if rule == "omit_empty" and not field_value:
                continue
            out[item.name] = to_wire(field_value)
        return out
    if isinstance(value, dict):
        return {str(key): to_wire(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    if isinstance(value, Decimal):
        number = float(value)
        return int(number) if number.is_integer() else number
    return value


@cache
def _adapter(kind: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


def from_wire(kind: type[T], data: Any) -> T:
    """The JSON an operation answered, as the domain object ``kind``. Raises pydantic's ValidationError."""
    value: T = _adapter(cast(Hashable, kind)).validate_python(data)
    return value


@dataclass(frozen=True)
class Operation(Generic[T]):
    """One operation of the tool function: its name on the wire and the object it answers."""

    name: str
    answers: type[T]


# Envelopes: the tool function always answers one JSON object, so a list or a count travels inside one.
@dataclass(frozen=True)
class History:
    messages: list[ChatMessage]


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
class ChatStates:
    chats: list[ChatState]


@dataclass(frozen=True)
class Updated:
    updated: int


@dataclass(frozen=True)
class Archived:
    archived: int


@dataclass(frozen=True)
class Deleted:
    deleted: int
    days: int


@dataclass(frozen=True)
class AgeAnswer:
    is_adult: bool | None


@dataclass(frozen=True)
class Saved:
    saved: bool


SEARCH_WINES = Operation("search_wines", SearchResult)
SEMANTIC_SEARCH = Operation("semantic_search", SearchResult)
GET_WINES = Operation("get_wines", WineList)
GET_LIST = Operation("get_list", SearchResult)
CATALOG_STATS = Operation("catalog_stats", CatalogStats)
EXPORT_WINES = Operation("export_wines", ExportedWines)
LIST_WINES = Operation("list_wines", Listing)
IMPORT_WINES = Operation("import_wines", ImportSummary)
EMBEDDING_TEXTS = Operation("embedding_texts", EmbeddingTexts)
UPDATE_EMBEDDINGS = Operation("update_embeddings", Updated)

BEGIN_TURN = Operation("begin_turn", TurnStart)
SAVE_TURN = Operation("save_turn", SavedTurn)
END_TURN = Operation("end_turn", TurnEnd)
LOAD_HISTORY = Operation("load_history", History)
UPSERT_USER = Operation("upsert_user", UserUpsert)
RESET_HISTORY = Operation("reset_history", Archived)
SET_USER_ACTIVE = Operation("set_user_active", Updated)
CHAT_STATE = Operation("chat_state", ChatStates)
CACHE_PHOTO = Operation("cache_photo", Updated)
SAVE_FEEDBACK = Operation("save_feedback", FeedbackResult)

GET_AGE_ANSWER = Operation("get_age_answer", AgeAnswer)
SAVE_AGE_ANSWER = Operation("save_age_answer", Saved)
FORGET_USER = Operation("forget_user", ForgetResult)
PURGE_OLD_MESSAGES = Operation("purge_old_messages", Deleted)
FIND_WINES = Operation("find_wines", FoundWines)
WINE_CARD = Operation("wine_card", WineCard)
REPORT_DATA = Operation("report_data", ReportData)
ADMIN_STATS = Operation("admin_stats", AdminStats)

# Several LLM tool calls in one invocation: {"calls": [{"tool", "arguments"}, ...]} -> {"results": [...]}.
RUN_TOOLS = "run_tools"

OPERATIONS: dict[str, Operation[Any]] = {
    op.name: op
    for op in (
        SEARCH_WINES,
        SEMANTIC_SEARCH,
        GET_WINES,
        GET_LIST,
        CATALOG_STATS,
        EXPORT_WINES,
        LIST_WINES,
        IMPORT_WINES,
        EMBEDDING_TEXTS,
        UPDATE_EMBEDDINGS,
        BEGIN_TURN,
        SAVE_TURN,
        END_TURN,
        LOAD_HISTORY,
        UPSERT_USER,
        RESET_HISTORY,
        SET_USER_ACTIVE,
        CHAT_STATE,
        CACHE_PHOTO,
        SAVE_FEEDBACK,
        GET_AGE_ANSWER,
        SAVE_AGE_ANSWER,
        FORGET_USER,
        PURGE_OLD_MESSAGES,
        FIND_WINES,
        WINE_CARD,
        REPORT_DATA,
        ADMIN_STATS,
    )
}
LLM_TOOLS = (SEARCH_WINES.name, SEMANTIC_SEARCH.name)
