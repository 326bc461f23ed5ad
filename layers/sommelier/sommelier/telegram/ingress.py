"""The webhook: check the secret, parse the Update, drop duplicates, enqueue, answer 200 at once.

This module must stay light: it never imports the LLM stack (openai, the agent). Local runs
without a queue process the turn inline, importing the consumer only then.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import threading
from collections import OrderedDict
from typing import Any, Protocol

from aws_lambda_powertools import Logger

from sommelier.config import MissingSetting, env
from sommelier.secrets import secret
from sommelier.telegram.identity import BotUsername
from sommelier.telegram.updates import UpdateError, parse_update, route

logger = Logger(service="sommelier-webhook")

SECRET_HEADER = "x-telegram-bot-api-secret-token"  # nosec B105 - the header's name, not a secret
MAX_BODY_BYTES = 1_000_000
IDEMPOTENCY_SECONDS = 24 * 3600


class TurnSink(Protocol):
    def enqueue(self, update: dict[str, Any], chat_id: int) -> None: ...


class SqsSink:
    """SQS FIFO: one message group per chat keeps each chat in order; dedup id = update_id."""

    def __init__(self, queue_url: str, client=None):
        import boto3

        self.queue_url = queue_url
        self._client = client or boto3.client("sqs")

    def enqueue(self, update: dict[str, Any], chat_id: int) -> None:
        self._client.send_message(
            QueueUrl=self.queue_url,
            MessageBody=json.dumps(update, ensure_ascii=False),
            MessageGroupId=str(chat_id),
            MessageDeduplicationId=str(update["update_id"]),
        )


class InlineSink:
    """No queue (local runs): process the turn right here."""

    def enqueue(self, update: dict[str, Any], chat_id: int) -> None:
        from sommelier.telegram.consumer import process_update  # the LLM stack, only when needed

        process_update(update, attempt=1)


class _RecentUpdates:
    """Duplicate filter for local runs without DynamoDB."""

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


_recent = _RecentUpdates()
_bot_username = BotUsername()  # the consumer's rules for "addressed to the bot" need it here too
_idempotent_enqueue = None


def _response(status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def default_sink() -> TurnSink:
    queue_url = env("QUEUE_URL")
    return SqsSink(queue_url) if queue_url else InlineSink()


def _enqueue_once(update: dict[str, Any], chat_id: int, sink: TurnSink, context: Any) -> bool:
    """Enqueue unless this update_id was seen. Returns False for a duplicate."""
    table = env("IDEMPOTENCY_TABLE")
    if not table:
        if not _recent.first_time(update["update_id"]):
            return False
        try:
            sink.enqueue(update, chat_id)
        except Exception:
            _recent.forget(update["update_id"])  # let Telegram's redelivery try again
            raise
        return True
    global _idempotent_enqueue
    if _idempotent_enqueue is None:
        from aws_lambda_powertools.utilities.idempotency import (
            DynamoDBPersistenceLayer,
            IdempotencyConfig,
            idempotent_function,
        )

        config = IdempotencyConfig(event_key_jmespath="update_id", expires_after_seconds=IDEMPOTENCY_SECONDS)
        persistence = DynamoDBPersistenceLayer(table_name=table, key_attr="id", expiry_attr="expiration")

        @idempotent_function(data_keyword_argument="update", config=config, persistence_store=persistence)
        def enqueue(update: dict[str, Any], chat_id: int, sink: TurnSink) -> dict[str, Any]:
            sink.enqueue(update, chat_id)
            return {"enqueued": update["update_id"]}

        _idempotent_enqueue = (enqueue, config)
    enqueue, config = _idempotent_enqueue
    if context is not None and hasattr(context, "get_remaining_time_in_millis"):
        config.register_lambda_context(context)
    from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError

    try:
        enqueue(update=update, chat_id=chat_id, sink=sink)
    except IdempotencyAlreadyInProgressError:
        return False  # the same update is being enqueued by a concurrent delivery
    return True  # Powertools replays the stored result for a duplicate without calling enqueue


def handle_http(event: Any, context: Any = None, *, sink: TurnSink | None = None) -> dict[str, Any]:
    """API Gateway HTTP API (payload v2.0) → an HTTP response. Bad input is a 4xx, never a crash."""
    if not isinstance(event, dict):
        return _response(400, {"ok": False, "error": "bad request"})
    raw_headers = event.get("headers") if isinstance(event.get("headers"), dict) else {}
    headers = {str(k).lower(): v for k, v in raw_headers.items() if isinstance(v, str)}
    expected = secret("TELEGRAM_WEBHOOK_SECRET")
    given = headers.get(SECRET_HEADER, "")
    if not expected:
        logger.error("TELEGRAM_WEBHOOK_SECRET is not configured: refusing every update")
        return _response(401, {"ok": False, "error": "unauthorized"})
    if not hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8")):
        logger.warning("webhook call with a missing or wrong secret token")
        return _response(401, {"ok": False, "error": "unauthorized"})

    body = event.get("body")
    if not isinstance(body, str) or not body:
        return _response(400, {"ok": False, "error": "empty body"})
    if len(body) > MAX_BODY_BYTES * 2:
        return _response(413, {"ok": False, "error": "body too large"})
    raw = body.encode("utf-8", errors="surrogatepass")
    if event.get("isBase64Encoded"):
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            return _response(400, {"ok": False, "error": "invalid base64 body"})
    if len(raw) > MAX_BODY_BYTES:
        return _response(413, {"ok": False, "error": "body too large"})
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return _response(400, {"ok": False, "error": "the body is not JSON"})
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("update_id"), int)
        or isinstance(data.get("update_id"), bool)
    ):
        return _response(400, {"ok": False, "error": "not a Telegram update"})

    logger.append_keys(update_id=data["update_id"])
    try:
        routed = route(parse_update(data), _bot_username.get())
    except UpdateError as exc:
        # Telegram would redeliver a non-2xx forever; an update we can't read is logged and dropped.
        logger.warning("unreadable update dropped", extra={"reason": str(exc)[:200]})
        return _response(200, {"ok": True, "ignored": "unreadable update"})
    if routed.kind == "ignored" or routed.chat_id is None:
        return _response(200, {"ok": True, "ignored": routed.kind})
    try:
        fresh = _enqueue_once(data, routed.chat_id, sink or default_sink(), context)
    except MissingSetting as exc:  # local runs without a queue answer inline, which needs the token
        logger.error("could not process the update: %s; set it to answer (Telegram will redeliver)", exc)
        return _response(503, {"ok": False, "error": "try again"})
    except Exception:
        logger.exception("could not enqueue the update; Telegram will redeliver it")
        return _response(503, {"ok": False, "error": "try again"})
    return _response(200, {"ok": True, "duplicate": not fresh} if not fresh else {"ok": True})
