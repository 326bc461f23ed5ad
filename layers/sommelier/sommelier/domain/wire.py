"""The tool function's wire: every operation by name with the type it answers, and the JSON of the domain
objects (docs/architecture.md §2).

The tool function answers `to_wire(result)`; the Lambda adapter reads it back with `from_wire(type, json)`;
the in-process adapter gets the same objects without the JSON. Field metadata decides what a field looks like
on the wire (OMIT_NONE, OMIT_EMPTY, LOCAL below). `to_wire` is the standard library only (the tool
function's cold start); `from_wire` validates with pydantic, which only the callers load.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Hashable
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeAlias, TypeVar, cast

from sommelier.domain.errors import ArgumentError

# A JSON document as Python holds it: what a port takes or gives where the shape is someone else's (a
# Telegram update forwarded as it came, a provider's JSON schema) rather than one of our domain objects.
JSONValue: TypeAlias = "str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = "dict[str, JSONValue]"

if TYPE_CHECKING:  # the answer types load with the operation that answers them (the handlers' cold start)
    from sommelier.domain.catalog import CatalogStats, ExportedWines
    from sommelier.domain.catalog_writes import EmbeddingTexts, ImportSummary
    from sommelier.domain.conversation import (
        Archived,
        ChatStates,
        FeedbackResult,
        History,
        SavedTurn,
        TurnEnd,
        TurnStart,
        UserUpsert,
    )
    from sommelier.domain.search import SearchResult, WineList
    from sommelier.domain.shop import (
        AdminStats,
        AgeAnswer,
        Deleted,
        ForgetResult,
        FoundWines,
        Listing,
        ReportData,
        Saved,
        WineCard,
    )

T = TypeVar("T")

# Field metadata read by `to_wire`: a field left out of the JSON when it is None (the wider views of a
# wine), or never sent at all (what the agent notes about a wine during a turn).
OMIT_NONE = {"wire": "omit_none"}
OMIT_EMPTY = {"wire": "omit_empty"}  # left out when None, False, 0 or empty
LOCAL = {"wire": "local"}


def require_object(arguments: Any) -> dict[str, Any]:
    """An operation's arguments on the wire: a JSON object (None: no arguments)."""
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise ArgumentError("arguments must be a JSON object")
    return arguments


def to_wire(value: Any) -> Any:
    """A domain object (dataclass, named tuple, list, dict, scalar) as JSON-ready values."""
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
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple record: its fields by name
        return {name: to_wire(getattr(value, name)) for name in value._fields}
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
    from pydantic import ConfigDict, TypeAdapter

    # Fields this version does not know are ignored, at every depth (a newer tool function during a deploy).
    # pydantic takes a config only for a type that has none of its own, so the type goes in a 1-tuple.
    return TypeAdapter(tuple[kind], config=ConfigDict(extra="ignore"))


def from_wire(kind: type[T], data: Any) -> T:
    """The JSON an operation answered, as the domain object ``kind``. Raises pydantic's ValidationError."""
    (value,) = _adapter(cast(Hashable, kind)).validate_python((data,))
    return cast(T, value)


class Operation(Generic[T]):
    """One operation of the tool function: its name on the wire and the object it answers, named as
    "module:Class" and imported when first asked for (a cold start loads only the types it meets)."""

    def __init__(self, name: str, answers: str):
        self.name = name
        self._answers = answers
        self._type: type[T] | None = None

    @property
    def answers(self) -> type[T]:
        if self._type is None:
            module, _, name = self._answers.partition(":")
            self._type = getattr(importlib.import_module(module), name)
        return self._type

    def __repr__(self) -> str:
        return f"Operation({self.name!r}, {self._answers!r})"


class Updated(NamedTuple):
    """How many rows an operation changed (both stores answer it)."""

    updated: int


SEARCH_WINES: Operation[SearchResult] = Operation("search_wines", "sommelier.domain.search:SearchResult")
SEMANTIC_SEARCH: Operation[SearchResult] = Operation("semantic_search", "sommelier.domain.search:SearchResult")
GET_WINES: Operation[WineList] = Operation("get_wines", "sommelier.domain.search:WineList")
GET_LIST: Operation[SearchResult] = Operation("get_list", "sommelier.domain.search:SearchResult")
CATALOG_STATS: Operation[CatalogStats] = Operation("catalog_stats", "sommelier.domain.catalog:CatalogStats")
EXPORT_WINES: Operation[ExportedWines] = Operation("export_wines", "sommelier.domain.catalog:ExportedWines")
LIST_WINES: Operation[Listing] = Operation("list_wines", "sommelier.domain.shop:Listing")
IMPORT_WINES: Operation[ImportSummary] = Operation("import_wines", "sommelier.domain.catalog_writes:ImportSummary")
EMBEDDING_TEXTS: Operation[EmbeddingTexts] = Operation(
    "embedding_texts", "sommelier.domain.catalog_writes:EmbeddingTexts"
)
UPDATE_EMBEDDINGS: Operation[Updated] = Operation("update_embeddings", "sommelier.domain.wire:Updated")

BEGIN_TURN: Operation[TurnStart] = Operation("begin_turn", "sommelier.domain.conversation:TurnStart")
SAVE_TURN: Operation[SavedTurn] = Operation("save_turn", "sommelier.domain.conversation:SavedTurn")
END_TURN: Operation[TurnEnd] = Operation("end_turn", "sommelier.domain.conversation:TurnEnd")
LOAD_HISTORY: Operation[History] = Operation("load_history", "sommelier.domain.conversation:History")
UPSERT_USER: Operation[UserUpsert] = Operation("upsert_user", "sommelier.domain.conversation:UserUpsert")
RESET_HISTORY: Operation[Archived] = Operation("reset_history", "sommelier.domain.conversation:Archived")
MOVE_CHAT: Operation[Updated] = Operation("move_chat", "sommelier.domain.wire:Updated")
SET_USER_ACTIVE: Operation[Updated] = Operation("set_user_active", "sommelier.domain.wire:Updated")
CHAT_STATE: Operation[ChatStates] = Operation("chat_state", "sommelier.domain.conversation:ChatStates")
CACHE_PHOTO: Operation[Updated] = Operation("cache_photo", "sommelier.domain.wire:Updated")
SAVE_FEEDBACK: Operation[FeedbackResult] = Operation("save_feedback", "sommelier.domain.conversation:FeedbackResult")

GET_AGE_ANSWER: Operation[AgeAnswer] = Operation("get_age_answer", "sommelier.domain.shop:AgeAnswer")
SAVE_AGE_ANSWER: Operation[Saved] = Operation("save_age_answer", "sommelier.domain.shop:Saved")
FORGET_USER: Operation[ForgetResult] = Operation("forget_user", "sommelier.domain.shop:ForgetResult")
PURGE_OLD_MESSAGES: Operation[Deleted] = Operation("purge_old_messages", "sommelier.domain.shop:Deleted")
FIND_WINES: Operation[FoundWines] = Operation("find_wines", "sommelier.domain.shop:FoundWines")
WINE_CARD: Operation[WineCard] = Operation("wine_card", "sommelier.domain.shop:WineCard")
REPORT_DATA: Operation[ReportData] = Operation("report_data", "sommelier.domain.shop:ReportData")
ADMIN_STATS: Operation[AdminStats] = Operation("admin_stats", "sommelier.domain.shop:AdminStats")

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
        MOVE_CHAT,
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
