"""The two adapters of the data ports.

Both speak the tool function's operations by name; they differ in how one runs:
- in process: `run_operation` on a psycopg pool (local runs, tests, the CLI with DATABASE_URL);
- Lambda invoke: one synchronous invocation of the tool function per operation (in AWS).
The typed methods live once, in the two `_Over*` mixins below.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sommelier.domain.errors import PortError, Unavailable, error_from_payload
from sommelier.observability.tracing import subsegment
from sommelier.store.ports import (
    CatalogRepository,
    ChatRepository,
    InvocationCounter,
    Message,
    ShopRepository,
    ToolRequest,
    TurnEnd,
    TurnRecord,
    TurnStart,
    UserInfo,
    Wine,
    wines_with_photos,
)

if TYPE_CHECKING:
    from sommelier.db.pool import Database
    from sommelier.settings import Settings

logger = logging.getLogger(__name__)


class _Runner:
    counter: InvocationCounter

    def _run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


class _OverCatalog(_Runner):
    def search_wines(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self._run("search_wines", arguments)

    def semantic_search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self._run("semantic_search", arguments)

    def get_wines(self, ids: Sequence[str]) -> dict[str, Any]:
        return self._run("get_wines", {"ids": list(ids)})

    def fallback_list(self, *, limit: int, exclude_ids: Sequence[str] = ()) -> list[Wine]:
        return wines_with_photos(self._run("get_list", {"limit": limit, "exclude_ids": list(exclude_ids)}))

    def stats(self) -> dict[str, Any]:
        return self._run("catalog_stats", {})

    def export_wines(self, *, include_unavailable: bool = False) -> list[dict[str, Any]]:
        return self._run("export_wines", {"include_unavailable": include_unavailable})["wines"]

    def list_wines(self, *, include_unavailable: bool = False, limit: int = 1000) -> list[dict[str, Any]]:
        return self._run("list_wines", {"include_unavailable": include_unavailable, "limit": limit})["wines"]

    def import_wines(
        self, rows: list[dict[str, Any]], *, replace: bool = False, replace_since: str | None = None
    ) -> dict[str, Any]:
        arguments: dict[str, Any] = {"wines": rows}
        if replace:
            arguments["replace"] = True
            if replace_since:
                arguments["replace_since"] = replace_since
        return self._run("import_wines", arguments)

    def embedding_texts(self) -> list[dict[str, Any]]:
        return self._run("embedding_texts", {})["items"]

    def update_embeddings(self, model: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        return self._run("update_embeddings", {"embedding_model": model, "items": items})


class _OverChat(_Runner):
    def begin_turn(self, chat_id: int, *, user: UserInfo | None, history_limit: int) -> TurnStart:
        arguments = {
            "chat_id": chat_id,
            "history_limit": history_limit,
            "user": user.as_arguments() if user else None,
        }
        result = self._run("begin_turn", arguments)
        return TurnStart(user=result.get("user"), history=result["messages"])

    def end_turn(self, record: TurnRecord | None, *, wine_ids: Sequence[str]) -> TurnEnd:
        arguments = {
            "turn": record.as_arguments() if record else None,
            "wine_ids": list(wine_ids),
            "photos": self._pending_photos(),
        }
        result = self._run("end_turn", arguments)
        return TurnEnd(saved=result.get("saved"), wines=result["wines"], missing=result["missing"])

    def history(self, chat_id: int, limit: int = 10) -> list[Message]:
        return self._run("load_history", {"chat_id": chat_id, "limit": limit})["messages"]

    def upsert_user(self, user: UserInfo) -> dict[str, Any]:
        return self._run("upsert_user", user.as_arguments())

    def reset_history(self, chat_id: int) -> int:
        return self._run("reset_history", {"chat_id": chat_id})["archived"]

    def set_active(self, chat_id: int, active: bool, *, user_id: int | None = None) -> int:
        arguments: dict[str, Any] = {"chat_id": chat_id, "active": active}
        if user_id is not None:
            arguments["telegram_user_id"] = user_id
        return self._run("set_user_active", arguments)["updated"]

    def chat_state(self, user_id: int) -> list[dict[str, Any]]:
        return self._run("chat_state", {"telegram_user_id": user_id})["chats"]

    def save_feedback(
        self, *, chat_id: int, user_id: int, rating: int, message_id: int | None, wine_id: str | None = None
    ) -> dict[str, Any]:
        arguments: dict[str, Any] = {"chat_id": chat_id, "user_id": user_id, "message_id": message_id, "rating": rating}
        if wine_id is not None:
            arguments["wine_id"] = wine_id
        return self._run("save_feedback", arguments)

    def _pending_photos(self) -> list[dict[str, str]]:
        return []


class _OverShop(_Runner):
    def get_age_answer(self, user_id: int) -> bool | None:
        return self._run("get_age_answer", {"telegram_user_id": user_id}).get("is_adult")

    def save_age_answer(self, user_id: int, is_adult: bool) -> None:
        self._run("save_age_answer", {"telegram_user_id": user_id, "is_adult": is_adult})

    def forget_user(self, user_id: int) -> dict[str, Any]:
        return self._run("forget_user", {"telegram_user_id": user_id})

    def purge_old_messages(self, days: int) -> int:
        return self._run("purge_old_messages", {"days": days})["deleted"]

    def find_wines(self, refs: Sequence[str]) -> dict[str, Any]:
        return self._run("find_wines", {"refs": list(refs)})

    def wine_card(self, ref: str) -> dict[str, Any]:
        return self._run("wine_card", {"ref": ref})

    def report_data(self, since: str, until: str) -> dict[str, Any]:
        return self._run("report_data", {"since": since, "until": until})

    def admin_stats(self) -> dict[str, Any]:
        return self._run("admin_stats", {})


# ---------------------------------------------------------------------------- in process


class _InProcessRunner(_Runner):
    def __init__(self, database: Database | None, counter: InvocationCounter):
        self.database = database
        self.counter = counter

    def _run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.counter.count += 1
        return self._operation(name, arguments)

    def _operation(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from sommelier.toolfn.operations import run_operation

        try:
            return run_operation(self.database, name, arguments)
        except PortError:
            raise
        except Exception as exc:  # a bug in an operation: the same failure the tool function would answer
            logger.exception("operation %s failed", name)
            raise PortError(f"{name} failed because of an internal error") from exc


class InProcessCatalog(_InProcessRunner, _OverCatalog):
    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[dict[str, Any] | Exception]:
        self.counter.count += 1  # the Lambda adapter sends the whole batch in one invocation
        results: list[dict[str, Any] | Exception] = []
        for call in calls:
            try:
                results.append(self._operation(call.tool, call.arguments))
            except PortError as exc:
                results.append(exc)
        return results


class InProcessShop(_InProcessRunner, _OverShop):
    pass


class InProcessChat(_InProcessRunner, _OverChat):
    def remember_photo(self, wine_id: str, file_id: str) -> None:
        # In process a write costs no round trip: store it now (not counted as an invocation).
        try:
            self._operation("cache_photo", {"wine_id": wine_id, "file_id": file_id})
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

    def invoke_raw(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool function's answer as it is, errors in-band (for `sommelier tool`)."""
        try:
            return self.invoke(name, arguments)
        except PortError as exc:
            return exc.as_payload()

    def invoke(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
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

    def _run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.counter.count += 1
        return self.invoker.invoke(name, arguments)


class LambdaCatalog(_LambdaRunner, _OverCatalog):
    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[dict[str, Any] | Exception]:
        if not calls:
            return []
        if len(calls) == 1:  # the plain {"tool", "arguments"} contract
            try:
                return [self._run(calls[0].tool, calls[0].arguments)]
            except PortError as exc:
                return [exc]
        batch = [{"tool": call.tool, "arguments": call.arguments} for call in calls]
        try:
            answers = self._run("run_tools", {"calls": batch})["results"]
        except PortError as exc:
            return [exc for _ in calls]
        return [error_from_payload(a) if "error" in a else a for a in answers]


class LambdaShop(_LambdaRunner, _OverShop):
    pass


class LambdaChat(_LambdaRunner, _OverChat):
    def __init__(self, invoker: LambdaInvoker, counter: InvocationCounter):
        super().__init__(invoker, counter)
        self._photos: dict[str, str] = {}

    def remember_photo(self, wine_id: str, file_id: str) -> None:
        # Written by the next end_turn: a photo id is a cache, not worth a blocking round trip.
        self._photos[wine_id] = file_id

    def _pending_photos(self) -> list[dict[str, str]]:
        photos = [{"wine_id": w, "file_id": f} for w, f in self._photos.items()]
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


def in_process_repositories(database: Database | None = None) -> Repositories:
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


def repositories_from_settings(settings: Settings) -> Repositories:
    if settings.tool_function_name:
        return lambda_repositories(settings.tool_function_name)
    return in_process_repositories()
