"""The webhook's work: check the secret, parse the Update, drop duplicates, enqueue, answer at once.

`Ingress` holds the state of one webhook process (the duplicate filter, the idempotent enqueue, the
bot's username) and turns (headers, body) into (status, JSON body). The HTTP edge around it is
`sommelier.edge.app` (Starlette: Mangum in Lambda, uvicorn for `sommelier serve`).

This module must stay light: it never imports the LLM stack (openai, the agent) or the Bot API client
(an import contract in pyproject.toml). Local runs without a queue process the turn inline, with the
`process` the entry point hands over (`InlineSink`).
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from sommelier.settings import MissingSetting, Settings
from sommelier.telegram.state import MessageLedger, ledger_from_settings
from sommelier.telegram.updates import BotUsername, Routed, UpdateError, needs_bot_username, parse_update, route

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

    from sommelier.domain.wire import JSONObject

logger = logging.getLogger(__name__)

SECRET_HEADER = "x-telegram-bot-api-secret-token"  # nosec B105 - the header's name, not a secret
MAX_BODY_BYTES = 1_000_000
IDEMPOTENCY_SECONDS = 24 * 3600

Answer = tuple[int, dict[str, Any]]


class TurnSink(Protocol):
    def enqueue(self, update: JSONObject, chat_id: int) -> None: ...


class SqsSink:
    """SQS FIFO: one message group per chat keeps each chat in order; dedup id = update_id."""

    def __init__(self, queue_url: str, client: SQSClient | None = None):
        self.queue_url = queue_url
        self._client = client
        self._lock = threading.Lock()

    def _sqs(self) -> SQSClient:
        with self._lock:  # made on the first update: a health check needs no AWS client
            if self._client is None:
                import boto3

                self._client = boto3.client("sqs")
            return self._client

    def enqueue(self, update: JSONObject, chat_id: int) -> None:
        self._sqs().send_message(
            QueueUrl=self.queue_url,
            MessageBody=json.dumps(update, ensure_ascii=False),
            MessageGroupId=str(chat_id),
            MessageDeduplicationId=str(update["update_id"]),
        )


class InlineSink:
    """No queue (local runs): process the turn right here with ``process(update, attempt)``, which the
    entry point builds on the first update (``build_process``: the LLM stack, imported only then)."""

    def __init__(self, build_process: Callable[[], Callable[[dict[str, Any], int], None]]):
        self._build_process = build_process
        self._process: Callable[[dict[str, Any], int], None] | None = None
        self._lock = threading.Lock()

    def enqueue(self, update: JSONObject, chat_id: int) -> None:
        with self._lock:
            if self._process is None:
                self._process = self._build_process()
        self._process(update, 1)


class RecentUpdates:
    """Duplicate filter for runs without DynamoDB (one per Ingress)."""

    def __init__(self, size: int = 10_000):
        self._seen: OrderedDict[int, None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def first_time(self, update_id: int) -> bool:
        with self._lock:
            if update_id in self._seen:
                return False
            self._seen[update_id] = None
            if len(self._seen) > self._size:
                self._seen.popitem(last=False)
            return True

    def forget(self, update_id: int) -> None:
        with self._lock:
            self._seen.pop(update_id, None)


class IdempotentEnqueue:
    """Powertools idempotency on DynamoDB: an update_id is enqueued once per IDEMPOTENCY_SECONDS."""

    def __init__(self, table: str):
        from aws_lambda_powertools.utilities.idempotency import (
            DynamoDBPersistenceLayer,
            IdempotencyConfig,
            idempotent_function,
        )

        self.table = table
        self.config = IdempotencyConfig(event_key_jmespath="update_id", expires_after_seconds=IDEMPOTENCY_SECONDS)
        persistence = DynamoDBPersistenceLayer(table_name=table, key_attr="id", expiry_attr="expiration")

        def enqueue(update: dict[str, Any], chat_id: int, sink: TurnSink) -> dict[str, Any]:
            sink.enqueue(update, chat_id)
            return {"enqueued": update["update_id"]}

        # Called, not applied as a decorator: Powertools types what it returns as Any.
        self._enqueue: Callable[..., dict[str, Any]] = idempotent_function(
            enqueue, data_keyword_argument="update", config=self.config, persistence_store=persistence
        )

    def __call__(self, update: dict[str, Any], chat_id: int, sink: TurnSink, context: Any) -> bool:
        from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError

        if context is not None and hasattr(context, "get_remaining_time_in_millis"):
            self.config.register_lambda_context(context)
        try:
            self._enqueue(update=update, chat_id=chat_id, sink=sink)
        except IdempotencyAlreadyInProgressError:
            return False  # the same update is being enqueued by a concurrent delivery
        return True  # Powertools replays the stored result for a duplicate without calling enqueue


class Ingress:
    """One webhook process: its sink, duplicate filter, idempotency store and bot username."""

    def __init__(
        self,
        settings: Settings,
        sink: TurnSink,
        *,
        bot_username: BotUsername | None = None,
        recent: RecentUpdates | None = None,
        ledger: MessageLedger | None = None,
        correlate: Callable[[Any], None] | None = None,
    ):
        self.settings = settings
        self.sink = sink
        # Without a lookup: TELEGRAM_BOT_USERNAME, else loose matching (the deployed webhook has no token).
        self.bot_username = bot_username or BotUsername(settings.telegram)
        self.recent = recent or RecentUpdates()
        self._ledger = ledger
        self._correlate = correlate
        self._idempotent: IdempotentEnqueue | None = None
        self._lock = threading.Lock()

    @property
    def ledger(self) -> MessageLedger:
        if self._ledger is None:
            self._ledger = ledger_from_settings(self.settings)
        return self._ledger

    def _record_edit(self, data: dict[str, Any], routed: Routed) -> None:
        """An edited text: remembered, so a still-waiting original is answered as edited (telegram.state.MessageLedger)."""
        if not (routed.edited and routed.kind in ("text", "command") and routed.message_id is not None):
            return
        try:
            self.ledger.record_edit(routed.chat, routed.message_id, data["edited_message"])
        except Exception:  # the edit still goes to the queue; at worst the original is answered unedited
            logger.exception("could not record an edited message")

    def _idempotent_enqueue(self, table: str) -> IdempotentEnqueue:
        with self._lock:
            if self._idempotent is None or self._idempotent.table != table:
                self._idempotent = IdempotentEnqueue(table)
            return self._idempotent

    def _enqueue_once(self, update: dict[str, Any], chat_id: int, context: Any) -> bool:
        """Enqueue unless this update_id was seen. Returns False for a duplicate."""
        table = self.settings.aws.idempotency_table
        if table:
            return self._idempotent_enqueue(table)(update, chat_id, self.sink, context)
        if not self.recent.first_time(update["update_id"]):
            return False
        try:
            self.sink.enqueue(update, chat_id)
        except Exception:
            self.recent.forget(update["update_id"])  # let Telegram's redelivery try again
            raise
        return True

    def authorized(self, headers: Mapping[str, str]) -> bool:
        """Constant-time check of Telegram's secret token header (none configured: refuse everything)."""
        expected = self.settings.telegram.webhook_secret
        if not expected:
            logger.error("TELEGRAM_WEBHOOK_SECRET is not configured: refusing every update")
            return False
        given = headers.get(SECRET_HEADER) or ""
        if not hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8")):
            logger.warning("webhook call with a missing or wrong secret token")
            return False
        return True

    def handle(self, body: bytes, context: Any = None) -> Answer:
        """An authorized webhook POST's body -> (status, JSON body). Bad input is a 4xx, never a crash."""
        if not body:
            return 400, {"ok": False, "error": "empty body"}
        if len(body) > MAX_BODY_BYTES:
            return 413, {"ok": False, "error": "body too large"}
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            return 400, {"ok": False, "error": "the body is not JSON"}
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("update_id"), int)
            or isinstance(data.get("update_id"), bool)
        ):
            return 400, {"ok": False, "error": "not a Telegram update"}

        if self._correlate is not None:
            self._correlate(data["update_id"])
        try:
            update = parse_update(data)
            routed = route(update, self.bot_username.get() if needs_bot_username(update) else None)
        except UpdateError as exc:
            # Telegram would redeliver a non-2xx forever; an update we can't read is logged and dropped.
            logger.warning("unreadable update dropped", extra={"reason": str(exc)[:200]})
            return 200, {"ok": True, "ignored": "unreadable update"}
        if routed.kind == "ignored" or routed.chat_id is None:
            return 200, {"ok": True, "ignored": routed.kind}
        self._record_edit(data, routed)
        try:
            fresh = self._enqueue_once(data, routed.chat_id, context)
        except MissingSetting as exc:  # local runs without a queue answer inline, which needs the token
            logger.error("could not process the update: %s; set it to answer (Telegram will redeliver)", exc)
            return 503, {"ok": False, "error": "try again"}
        except Exception:
            logger.exception("could not enqueue the update; Telegram will redeliver it")
            return 503, {"ok": False, "error": "try again"}
        return 200, ({"ok": True} if fresh else {"ok": True, "duplicate": True})
