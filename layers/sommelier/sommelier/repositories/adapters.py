"""The two adapters of the data ports.

Both speak the tool function's operations (domain/wire.py: each name with the object it answers); they
differ in how one runs:
- in process: `run_operation` on a psycopg pool (local runs, tests, the CLI with DATABASE_URL), which
  answers the domain object itself;
- Lambda invoke: one synchronous invocation of the tool function per operation (in AWS), whose JSON is
  read back into the same object.
The typed methods live once, in the three `_Over*` mixins below.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from sommelier.domain import wire
from sommelier.domain.errors import NotFound, PortError, Unavailable, error_from_payload
from sommelier.domain.wire import Arguments, Operation
from sommelier.observability.telemetry import subsegment
from sommelier.repositories.ports import CatalogRepository, ChatRepository, InvocationCounter, ShopRepository

if TYPE_CHECKING:
    from sommelier.db.pool import Database
    from sommelier.domain.catalog import CatalogStats, ExportedWine
    from sommelier.domain.catalog_writes import EmbeddingText, ImportSummary, WineEmbedding
    from sommelier.domain.conversation import (
        ChatMessage,
        ChatState,
        FeedbackResult,
        PhotoId,
        TurnEnd,
        TurnOpening,
        TurnRecord,
        TurnStart,
        UserInfo,
        UserUpsert,
    )
    from sommelier.domain.records import ImportRow
    from sommelier.domain.search import SearchFilters, SearchResult, SemanticRequest, ToolRequest, WineList
    from sommelier.domain.shop import AdminStats, ForgetResult, FoundWines, ReportData, WineCard
    from sommelier.domain.shop_facts import ShopFacts
    from sommelier.domain.taste import TasteProfile
    from sommelier.domain.wine import Wine, WineListing
    from sommelier.settings import Settings

logger = logging.getLogger(__name__)

T = TypeVar("T")
P = ParamSpec("P")


class _Runner:
    counter: InvocationCounter

    def _run(self, operation: Operation[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run an operation on the arguments its ``arguments`` function takes (domain/wire.py)."""
        return self._call(operation, operation.arguments(*args, **kwargs))

    def _call(self, operation: Operation[..., T], arguments: Arguments) -> T:
        raise NotImplementedError


class _OverCatalog(_Runner):
    def search_wines(self, filters: SearchFilters) -> SearchResult:
        return self._run(wire.SEARCH_WINES, filters)

    def semantic_search(self, request: SemanticRequest) -> SearchResult:
        return self._run(wire.SEMANTIC_SEARCH, request)

    def get_wines(self, ids: Sequence[str]) -> WineList:
        return self._run(wire.GET_WINES, ids)

    def fallback_list(self, *, limit: int, exclude_ids: Sequence[str] = ()) -> list[Wine]:
        return self._run(wire.GET_LIST, limit=limit, exclude_ids=exclude_ids).wines_with_photos()

    def stats(self) -> CatalogStats:
        return self._run(wire.CATALOG_STATS)

    def export_wines(self, *, include_unavailable: bool = False) -> list[ExportedWine]:
        return self._run(wire.EXPORT_WINES, include_unavailable=include_unavailable).wines

    def list_wines(self, *, include_unavailable: bool = False, limit: int = 1000) -> list[WineListing]:
        return self._run(wire.LIST_WINES, include_unavailable=include_unavailable, limit=limit).wines

    def import_wines(
        self, rows: Sequence[ImportRow], *, replace: bool = False, replace_since: str | None = None
    ) -> ImportSummary:
        return self._run(wire.IMPORT_WINES, rows, replace=replace, replace_since=replace_since)

    def embedding_texts(self) -> list[EmbeddingText]:
        return self._run(wire.EMBEDDING_TEXTS).items

    def update_embeddings(self, model: str, items: Sequence[WineEmbedding]) -> int:
        return self._run(wire.UPDATE_EMBEDDINGS, model, items).updated


class _OverChat(_Runner):
    def begin_turn(self, chat_id: int, *, user: UserInfo | None, history_limit: int) -> TurnStart:
        return self._run(wire.BEGIN_TURN, chat_id, user=user, history_limit=history_limit)

    def open_turn(
        self, chat_id: int, *, user: UserInfo | None, history_limit: int, searches: Sequence[ToolRequest]
    ) -> TurnOpening:
        opened = self._run(wire.OPEN_TURN, chat_id, user=user, history_limit=history_limit, searches=searches)
        answers = opened.results or []
        if len(answers) != len(searches):
            raise PortError("the tool function answered open_turn with a result per search missing")
        return opened._replace(results=[_search_answer(answer) for answer in answers])

    def end_turn(self, record: TurnRecord | None, *, wine_ids: Sequence[str]) -> TurnEnd:
        return self._run(wire.END_TURN, record, wine_ids=wine_ids, photos=self._pending_photos())

    def history(self, chat_id: int, limit: int = 10) -> list[ChatMessage]:
        return self._run(wire.LOAD_HISTORY, chat_id, limit).messages

    def upsert_user(self, user: UserInfo) -> UserUpsert:
        return self._run(wire.UPSERT_USER, user)

    def reset_history(self, chat_id: int) -> int:
        return self._run(wire.RESET_HISTORY, chat_id).archived

    def move_chat(self, from_chat_id: int, to_chat_id: int) -> int:
        return self._run(wire.MOVE_CHAT, from_chat_id, to_chat_id).updated

    def set_active(self, chat_id: int, active: bool, *, user_id: int | None = None) -> int:
        return self._run(wire.SET_USER_ACTIVE, chat_id, active, user_id=user_id).updated

    def chat_state(self, user_id: int) -> list[ChatState]:
        return self._run(wire.CHAT_STATE, user_id).chats

    def save_feedback(
        self, *, chat_id: int, user_id: int, rating: int, message_id: int | None, wine_id: str | None = None
    ) -> FeedbackResult:
        return self._run(
            wire.SAVE_FEEDBACK, chat_id=chat_id, user_id=user_id, rating=rating, message_id=message_id, wine_id=wine_id
        )

    def taste_profile(self, user_id: int) -> TasteProfile:
        return self._run(wire.TASTE_PROFILE, user_id)

    def _pending_photos(self) -> list[PhotoId]:
        return []


def _search_answer(answer: Any) -> SearchResult | PortError:
    """One search's answer inside open_turn's: the result itself (in process), its JSON, or its error."""
    if isinstance(answer, dict):
        if "error" in answer:
            return error_from_payload(answer)
        return _read(wire.SEARCH_WINES, answer)
    return answer  # type: ignore[no-any-return]


class _OverShop(_Runner):
    def get_age_answer(self, user_id: int) -> bool | None:
        return self._run(wire.GET_AGE_ANSWER, user_id).is_adult

    def save_age_answer(self, user_id: int, is_adult: bool) -> None:
        self._run(wire.SAVE_AGE_ANSWER, user_id, is_adult)

    def shop_facts(self) -> ShopFacts | None:
        return self._run(wire.GET_SHOP_FACTS).facts

    def put_shop_facts(self, facts: ShopFacts | None) -> ShopFacts | None:
        return self._run(wire.PUT_SHOP_FACTS, facts).facts

    def forget_user(self, user_id: int) -> ForgetResult:
        return self._run(wire.FORGET_USER, user_id)

    def purge_old_messages(self, days: int) -> int:
        return self._run(wire.PURGE_OLD_MESSAGES, days).deleted

    def find_wines(self, refs: Sequence[str]) -> FoundWines:
        return self._run(wire.FIND_WINES, refs)

    def wine_card(self, ref: str) -> WineCard:
        return self._run(wire.WINE_CARD, ref)

    def report_data(self, since: str, until: str) -> ReportData:
        return self._run(wire.REPORT_DATA, since, until)

    def admin_stats(self) -> AdminStats:
        return self._run(wire.ADMIN_STATS)


# ---------------------------------------------------------------------------- in process


class _InProcessRunner(_Runner):
    def __init__(self, database: Database, counter: InvocationCounter):
        self.database = database
        self.counter = counter

    def _call(self, operation: Operation[..., T], arguments: Arguments) -> T:
        self.counter.count += 1
        return self._operation(operation, arguments)

    def _operation(self, operation: Operation[..., T], arguments: Arguments) -> T:
        from sommelier.toolfn.handler import run_operation

        try:
            answer: T = run_operation(self.database, operation, dict(arguments))
        except PortError:
            raise
        except Exception as exc:  # a bug in an operation: the same failure the tool function would answer
            logger.exception("operation %s failed", operation.name)
            raise PortError(f"{operation.name} failed because of an internal error") from exc
        return answer


class InProcessCatalog(_InProcessRunner, _OverCatalog):
    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[SearchResult | PortError]:
        self.counter.count += 1  # the Lambda adapter sends the whole batch in one invocation
        results: list[SearchResult | PortError] = []
        for call in calls:
            try:
                results.append(self._operation(wire.LLM_TOOLS[call.tool], call.arguments))
            except PortError as exc:
                results.append(exc)
        return results


class InProcessShop(_InProcessRunner, _OverShop):
    pass


class InProcessChat(_InProcessRunner, _OverChat):
    def remember_photo(self, wine_id: str, file_id: str) -> None:
        # In process a write costs no round trip: store it now (not counted as an invocation).
        try:
            self._operation(wire.CACHE_PHOTO, wire.CACHE_PHOTO.arguments(wine_id, file_id))
        except PortError as exc:
            logger.warning("photo id not cached: %s", exc)


# ---------------------------------------------------------------------------- Lambda invoke


class LambdaInvoker:
    """Synchronous invocations of the tool function; its JSON errors come back as port errors."""

    def __init__(self, function_name: str, client: Any = None):
        self.function_name = function_name
        if client is None:
            import boto3
            from botocore.config import Config

            # The tool function may wait up to 50 s for Aurora to resume from 0 ACU (its timeout is 60 s).
            # Bound the wait just above that and retry once, so a stuck call can't eat the whole turn
            # (botocore's default is 60 s x 5).
            config = Config(connect_timeout=5, read_timeout=65, retries={"mode": "standard", "max_attempts": 2})
            client = boto3.client("lambda", config=config)
        self._client = client

    def invoke(self, name: str, arguments: Arguments) -> dict[str, Any]:
        payload = json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False).encode("utf-8")
        try:
            with subsegment("tool", tool=name):
                response = self._client.invoke(FunctionName=self.function_name, Payload=payload)
                body = response["Payload"].read()
        except Exception as exc:  # botocore raises many types; all mean "not reached"
            raise Unavailable(f"the tool function could not be reached: {type(exc).__name__}") from exc
        if response.get("FunctionError"):
            raise Unavailable("the tool function failed")
        try:
            result = json.loads(body)
        except ValueError as exc:
            raise PortError("the tool function answered something that is not JSON") from exc
        if not isinstance(result, dict):
            raise PortError("the tool function answered a non-object")
        if "error" in result:
            raise error_from_payload(result)
        return result


class _LambdaRunner(_Runner):
    def __init__(self, invoker: LambdaInvoker, counter: InvocationCounter):
        self.invoker = invoker
        self.counter = counter

    def _call(self, operation: Operation[..., T], arguments: Arguments) -> T:
        self.counter.count += 1
        return _read(operation, self.invoker.invoke(operation.name, arguments))


def _read(operation: Operation[..., T], answer: dict[str, Any]) -> T:
    """The tool function's JSON as the operation's domain object; an answer of another shape is a port error."""
    from pydantic import ValidationError

    try:
        return wire.from_wire(operation.answers, answer)
    except ValidationError as exc:
        raise PortError(f"the tool function answered {operation.name} in an unexpected shape") from exc


class LambdaCatalog(_LambdaRunner, _OverCatalog):
    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[SearchResult | PortError]:
        if not calls:
            return []
        if len(calls) == 1:  # the plain {"tool", "arguments"} contract
            try:
                return [self._call(wire.LLM_TOOLS[calls[0].tool], calls[0].arguments)]
            except PortError as exc:
                return [exc]
        batch = [{"tool": call.tool, "arguments": call.arguments} for call in calls]
        try:
            self.counter.count += 1
            answers = self.invoker.invoke(wire.RUN_TOOLS, {"calls": batch})["results"]
        except PortError as exc:
            return [exc for _ in calls]
        results: list[SearchResult | PortError] = []
        for call, answer in zip(calls, answers, strict=False):
            try:
                results.append(
                    error_from_payload(answer) if "error" in answer else _read(wire.LLM_TOOLS[call.tool], answer)
                )
            except PortError as exc:
                results.append(exc)
        return results


class LambdaShop(_LambdaRunner, _OverShop):
    pass


class LambdaChat(_LambdaRunner, _OverChat):
    def __init__(self, invoker: LambdaInvoker, counter: InvocationCounter):
        super().__init__(invoker, counter)
        self._photos: dict[str, str] = {}

    def open_turn(
        self, chat_id: int, *, user: UserInfo | None, history_limit: int, searches: Sequence[ToolRequest]
    ) -> TurnOpening:
        try:
            return super().open_turn(chat_id, user=user, history_limit=history_limit, searches=searches)
        except NotFound:  # a tool function that predates open_turn (during a deploy): begin the turn only
            from sommelier.domain.conversation import TurnOpening

            start = self.begin_turn(chat_id, user=user, history_limit=history_limit)
            return TurnOpening.of(start, None)

    def remember_photo(self, wine_id: str, file_id: str) -> None:
        # Written by the next end_turn: a photo id is a cache, not worth a blocking round trip.
        self._photos[wine_id] = file_id

    def _pending_photos(self) -> list[PhotoId]:
        from sommelier.domain.conversation import PhotoId  # the chat's types load with a chat, not a catalogue drop

        photos = [PhotoId(wine_id=w, file_id=f) for w, f in self._photos.items()]
        self._photos.clear()
        return photos


# ---------------------------------------------------------------------------- the pair


@dataclass(eq=False)
class Repositories:
    """The ports one process uses, sharing one invocation counter."""

    catalog: CatalogRepository
    chat: ChatRepository
    shop: ShopRepository
    counter: InvocationCounter


def in_process_repositories(database: Database) -> Repositories:
    counter = InvocationCounter()
    return Repositories(
        InProcessCatalog(database, counter),
        InProcessChat(database, counter),
        InProcessShop(database, counter),
        counter,
    )


def lambda_repositories(function_name: str, client: Any = None) -> Repositories:
    counter = InvocationCounter()
    invoker = LambdaInvoker(function_name, client)
    return Repositories(
        LambdaCatalog(invoker, counter), LambdaChat(invoker, counter), LambdaShop(invoker, counter), counter
    )


def repositories_from_settings(settings: Settings, database: Database | None = None) -> Repositories:
    """The tool function when TOOL_FUNCTION_NAME is set (in AWS), else in process on ``database`` (built
    from the settings when not given: DATABASE_URL or the embedded server)."""
    if settings.aws.tool_function_name:
        return lambda_repositories(settings.aws.tool_function_name)
    if database is None:
        from sommelier.db.pool import Database

        database = Database.from_settings(settings)
    return in_process_repositories(database)
