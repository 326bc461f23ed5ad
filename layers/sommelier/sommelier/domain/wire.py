"""The tool function's wire: every operation by name with what it takes and what it answers, and the JSON of
the domain objects (docs/architecture.md §2, §5).

Each operation is an `Operation` below, named once: the adapters call it with the arguments its
``arguments`` function takes, the tool function looks its implementation up by it (toolfn/handler.py), and
the Lambda adapter reads its answer as its ``answers`` type.

The tool function answers `to_wire(result)`; the Lambda adapter reads it back with `from_wire(type, json)`;
the in-process adapter gets the same objects without the JSON. Field metadata decides what a field looks like
on the wire (OMIT_NONE, OMIT_EMPTY, LOCAL below). `to_wire` is the standard library only (the tool
function's cold start); `from_wire` validates with pydantic, which only the callers load.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, ParamSpec, TypeAlias, TypeVar, cast

from sommelier.domain.errors import ArgumentError

# A JSON document as Python holds it: what a port takes or gives where the shape is someone else's (a
# Telegram update forwarded as it came, a provider's JSON schema) rather than one of our domain objects.
JSONValue: TypeAlias = "str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = "dict[str, JSONValue]"
# An operation's arguments as the callers send them: a JSON object of JSON-ready values.
Arguments: TypeAlias = "Mapping[str, object]"

if TYPE_CHECKING:  # the answer types load with the first answer read (the handlers' cold start)
    from sommelier.domain.catalog import CatalogStats, ExportedWines
    from sommelier.domain.catalog_writes import EmbeddingTexts, ImportSummary, WineEmbedding
    from sommelier.domain.conversation import (
        Archived,
        ChatStates,
        FeedbackResult,
        History,
        PhotoId,
        SavedTurn,
        TurnEnd,
        TurnOpening,
        TurnRecord,
        TurnStart,
        UserInfo,
        UserUpsert,
    )
    from sommelier.domain.records import ImportRow
    from sommelier.domain.search import SearchFilters, SearchResult, SemanticRequest, ToolRequest, WineList
    from sommelier.domain.shop import (
        AdminStats,
        AgeAnswer,
        Deleted,
        ForgetResult,
        FoundWines,
        Listing,
        ReportData,
        Saved,
        StoredFacts,
        WineCard,
    )
    from sommelier.domain.shop_facts import ShopFacts
    from sommelier.domain.taste import TasteProfile

T = TypeVar("T")
P = ParamSpec("P")

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
    if callable(getattr(value, "model_dump", None)):  # a pydantic model (the shop's facts): its JSON
        return value.model_dump(mode="json", exclude_none=True)
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


class Updated(NamedTuple):
    """How many rows an operation changed (both stores answer it)."""

    updated: int


class Operation(Generic[P, T]):
    """One operation of the tool function: its name on the wire, what it takes and what it answers.

    ``arguments`` builds the JSON object the operation takes from the caller's domain objects (its signature
    is the operation's: mypy checks every caller's arguments against it). ``answers`` is the type it answers,
    loaded when first asked for (a cold start loads only the types it meets: `_answer` functions below).
    """

    __slots__ = ("name", "arguments", "_answers", "_type")

    def __init__(self, name: str, arguments: Callable[P, Arguments], answers: Callable[[], type[T]]) -> None:
        self.name = name
        self.arguments = arguments
        self._answers = answers
        self._type: type[T] | None = None

    @property
    def answers(self) -> type[T]:
        if self._type is None:
            self._type = self._answers()
        return self._type

    def __repr__(self) -> str:
        return f"Operation({self.name!r})"


# ---------------------------------------------------------------------------- what the operations answer
# Each type is imported by the first answer read as it (the Lambda adapter): the tool function, which only
# writes answers, never loads them for the wire, and a handler loads only the types of its own duty.


def _search_result() -> type[SearchResult]:
    from sommelier.domain.search import SearchResult

    return SearchResult


def _wine_list() -> type[WineList]:
    from sommelier.domain.search import WineList

    return WineList


def _catalog_stats() -> type[CatalogStats]:
    from sommelier.domain.catalog import CatalogStats

    return CatalogStats


def _exported_wines() -> type[ExportedWines]:
    from sommelier.domain.catalog import ExportedWines

    return ExportedWines


def _import_summary() -> type[ImportSummary]:
    from sommelier.domain.catalog_writes import ImportSummary

    return ImportSummary


def _embedding_texts() -> type[EmbeddingTexts]:
    from sommelier.domain.catalog_writes import EmbeddingTexts

    return EmbeddingTexts


def _updated() -> type[Updated]:
    return Updated


def _turn_start() -> type[TurnStart]:
    from sommelier.domain.conversation import TurnStart

    return TurnStart


def _turn_opened() -> type[TurnOpening]:
    from sommelier.domain.conversation import TurnOpening

    return TurnOpening


def _saved_turn() -> type[SavedTurn]:
    from sommelier.domain.conversation import SavedTurn

    return SavedTurn


def _turn_end() -> type[TurnEnd]:
    from sommelier.domain.conversation import TurnEnd

    return TurnEnd


def _history() -> type[History]:
    from sommelier.domain.conversation import History

    return History


def _user_upsert() -> type[UserUpsert]:
    from sommelier.domain.conversation import UserUpsert

    return UserUpsert


def _archived() -> type[Archived]:
    from sommelier.domain.conversation import Archived

    return Archived


def _chat_states() -> type[ChatStates]:
    from sommelier.domain.conversation import ChatStates

    return ChatStates


def _feedback_result() -> type[FeedbackResult]:
    from sommelier.domain.conversation import FeedbackResult

    return FeedbackResult


def _taste_profile() -> type[TasteProfile]:
    from sommelier.domain.taste import TasteProfile

    return TasteProfile


def _listing() -> type[Listing]:
    from sommelier.domain.shop import Listing

    return Listing


def _age_answer() -> type[AgeAnswer]:
    from sommelier.domain.shop import AgeAnswer

    return AgeAnswer


def _stored_facts() -> type[StoredFacts]:
    from sommelier.domain.shop import StoredFacts

    return StoredFacts


def _facts(facts: ShopFacts | None) -> Arguments:
    return {"facts": None if facts is None else facts.model_dump(mode="json", exclude_none=True)}


def _saved() -> type[Saved]:
    from sommelier.domain.shop import Saved

    return Saved


def _forget_result() -> type[ForgetResult]:
    from sommelier.domain.shop import ForgetResult

    return ForgetResult


def _deleted() -> type[Deleted]:
    from sommelier.domain.shop import Deleted

    return Deleted


def _found_wines() -> type[FoundWines]:
    from sommelier.domain.shop import FoundWines

    return FoundWines


def _wine_card() -> type[WineCard]:
    from sommelier.domain.shop import WineCard

    return WineCard


def _report_data() -> type[ReportData]:
    from sommelier.domain.shop import ReportData

    return ReportData


def _admin_stats() -> type[AdminStats]:
    from sommelier.domain.shop import AdminStats

    return AdminStats


# ---------------------------------------------------------------------------- what the operations take
# The JSON object each operation reads (toolfn/ validates it), built from the callers' domain objects.


def _nothing() -> Arguments:
    return {}


def _filters(filters: SearchFilters) -> Arguments:
    arguments: Arguments = to_wire(filters)
    return arguments


def _semantic(request: SemanticRequest) -> Arguments:
    return request.as_arguments()


def _ids(ids: Sequence[str]) -> Arguments:
    return {"ids": list(ids)}


def _fallback(*, limit: int, exclude_ids: Sequence[str] = ()) -> Arguments:
    return {"limit": limit, "exclude_ids": list(exclude_ids)}


def _export(*, include_unavailable: bool) -> Arguments:
    return {"include_unavailable": include_unavailable}


def _listing_of(*, include_unavailable: bool, limit: int) -> Arguments:
    return {"include_unavailable": include_unavailable, "limit": limit}


def _rows(rows: Sequence[ImportRow], *, replace: bool, replace_since: str | None) -> Arguments:
    arguments: dict[str, object] = {"wines": [row.as_arguments() for row in rows]}
    if replace:
        arguments["replace"] = True
        if replace_since:
            arguments["replace_since"] = replace_since
    return arguments


def _embeddings(model: str, items: Sequence[WineEmbedding]) -> Arguments:
    return {"embedding_model": model, "items": to_wire(list(items))}


def _turn_opening(chat_id: int, *, user: UserInfo | None, history_limit: int) -> Arguments:
    return {"chat_id": chat_id, "history_limit": history_limit, "user": to_wire(user)}


def _turn_opening_searching(
    chat_id: int, *, user: UserInfo | None, history_limit: int, searches: Sequence[ToolRequest]
) -> Arguments:
    """begin_turn's arguments and the prefetch's searches, as run_tools takes them."""
    calls = [{"tool": search.tool, "arguments": search.arguments} for search in searches]
    return {**_turn_opening(chat_id, user=user, history_limit=history_limit), "calls": calls}


def _turn(record: TurnRecord) -> Arguments:
    arguments: Arguments = to_wire(record)
    return arguments


def _turn_closing(record: TurnRecord | None, *, wine_ids: Sequence[str], photos: Sequence[PhotoId]) -> Arguments:
    return {"turn": to_wire(record), "wine_ids": list(wine_ids), "photos": to_wire(list(photos))}


def _chat_history(chat_id: int, limit: int) -> Arguments:
    return {"chat_id": chat_id, "limit": limit}


def _user(user: UserInfo) -> Arguments:
    arguments: Arguments = to_wire(user)
    return arguments


def _chat(chat_id: int) -> Arguments:
    return {"chat_id": chat_id}


def _move(from_chat_id: int, to_chat_id: int) -> Arguments:
    return {"from_chat_id": from_chat_id, "to_chat_id": to_chat_id}


def _reachable(chat_id: int, active: bool, *, user_id: int | None) -> Arguments:
    arguments: dict[str, object] = {"chat_id": chat_id, "active": active}
    if user_id is not None:
        arguments["telegram_user_id"] = user_id
    return arguments


def _telegram_user(user_id: int) -> Arguments:
    return {"telegram_user_id": user_id}


def _photo(wine_id: str, file_id: str) -> Arguments:
    return {"wine_id": wine_id, "file_id": file_id}


def _vote(*, chat_id: int, user_id: int, rating: int, message_id: int | None, wine_id: str | None) -> Arguments:
    arguments: dict[str, object] = {"chat_id": chat_id, "user_id": user_id, "message_id": message_id, "rating": rating}
    if wine_id is not None:
        arguments["wine_id"] = wine_id
    return arguments


def _age(user_id: int, is_adult: bool) -> Arguments:
    return {"telegram_user_id": user_id, "is_adult": is_adult}


def _days(days: int) -> Arguments:
    return {"days": days}


def _refs(refs: Sequence[str]) -> Arguments:
    return {"refs": list(refs)}


def _ref(ref: str) -> Arguments:
    return {"ref": ref}


def _period(since: str, until: str) -> Arguments:
    return {"since": since, "until": until}


# ---------------------------------------------------------------------------- the operations

SEARCH_WINES = Operation("search_wines", _filters, _search_result)
SEMANTIC_SEARCH = Operation("semantic_search", _semantic, _search_result)
GET_WINES = Operation("get_wines", _ids, _wine_list)
GET_LIST = Operation("get_list", _fallback, _search_result)
CATALOG_STATS = Operation("catalog_stats", _nothing, _catalog_stats)
EXPORT_WINES = Operation("export_wines", _export, _exported_wines)
LIST_WINES = Operation("list_wines", _listing_of, _listing)
IMPORT_WINES = Operation("import_wines", _rows, _import_summary)
EMBEDDING_TEXTS = Operation("embedding_texts", _nothing, _embedding_texts)
UPDATE_EMBEDDINGS = Operation("update_embeddings", _embeddings, _updated)

BEGIN_TURN = Operation("begin_turn", _turn_opening, _turn_start)
# begin_turn and the prefetch's searches in one invocation (a turn's first); begin_turn stays for older agents.
OPEN_TURN = Operation("open_turn", _turn_opening_searching, _turn_opened)
SAVE_TURN = Operation("save_turn", _turn, _saved_turn)
END_TURN = Operation("end_turn", _turn_closing, _turn_end)
LOAD_HISTORY = Operation("load_history", _chat_history, _history)
UPSERT_USER = Operation("upsert_user", _user, _user_upsert)
RESET_HISTORY = Operation("reset_history", _chat, _archived)
MOVE_CHAT = Operation("move_chat", _move, _updated)
SET_USER_ACTIVE = Operation("set_user_active", _reachable, _updated)
CHAT_STATE = Operation("chat_state", _telegram_user, _chat_states)
CACHE_PHOTO = Operation("cache_photo", _photo, _updated)
SAVE_FEEDBACK = Operation("save_feedback", _vote, _feedback_result)
TASTE_PROFILE = Operation("taste_profile", _telegram_user, _taste_profile)  # /profile (migration 0013)

GET_AGE_ANSWER = Operation("get_age_answer", _telegram_user, _age_answer)
SAVE_AGE_ANSWER = Operation("save_age_answer", _age, _saved)
FORGET_USER = Operation("forget_user", _telegram_user, _forget_result)
PURGE_OLD_MESSAGES = Operation("purge_old_messages", _days, _deleted)
FIND_WINES = Operation("find_wines", _refs, _found_wines)
WINE_CARD = Operation("wine_card", _ref, _wine_card)
REPORT_DATA = Operation("report_data", _period, _report_data)
ADMIN_STATS = Operation("admin_stats", _nothing, _admin_stats)
GET_SHOP_FACTS = Operation("get_shop_facts", _nothing, _stored_facts)
PUT_SHOP_FACTS = Operation("put_shop_facts", _facts, _stored_facts)

# Several LLM tool calls in one invocation: {"calls": [{"tool", "arguments"}, ...]} -> {"results": [...]}.
RUN_TOOLS = "run_tools"

# Every operation by its name on the wire (the tool function's event names one).
OPERATIONS: dict[str, Operation[..., Any]] = {
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
        OPEN_TURN,
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
        TASTE_PROFILE,
        GET_AGE_ANSWER,
        SAVE_AGE_ANSWER,
        FORGET_USER,
        PURGE_OLD_MESSAGES,
        FIND_WINES,
        WINE_CARD,
        REPORT_DATA,
        ADMIN_STATS,
        GET_SHOP_FACTS,
        PUT_SHOP_FACTS,
    )
}
# The LLM's tools: the operations `run_tools` runs, with the arguments as the model wrote them.
LLM_TOOLS: dict[str, Operation[..., SearchResult]] = {op.name: op for op in (SEARCH_WINES, SEMANTIC_SEARCH)}
