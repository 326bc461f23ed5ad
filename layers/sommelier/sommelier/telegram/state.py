"""Per-update and per-chat state of the Telegram consumer, in DynamoDB (the idempotency table) or memory.

- Turn plans: the rendered reply of an update, saved before sending, so a retried SQS message
  resends the rest of the *same* answer instead of asking the LLM again.
- Rate limit: messages per chat per minute; the first refused message gets one notice.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from sommelier.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from sommelier.domain.wire import JSONObject

if TYPE_CHECKING:  # the webhook imports this module for the ledger: it must not load the renderer (pydantic)
    from sommelier.telegram.render import Outgoing

STATE_TTL_SECONDS = 24 * 3600


class TurnPlans(Protocol):
    def load(self, key: str) -> list[Outgoing] | None: ...
    def save(self, key: str, parts: list[Outgoing]) -> None: ...


def _encode(parts: list[Outgoing]) -> str:
    return json.dumps([dataclasses.asdict(p) for p in parts], ensure_ascii=False)


def _decode(raw: str) -> list[Outgoing]:
    from sommelier.telegram.render import Outgoing

    return [Outgoing(**item) for item in json.loads(raw)]


class InMemoryTurnPlans:
    def __init__(self) -> None:
        self._plans: dict[str, str] = {}
        self._lock = threading.Lock()

    def load(self, key: str) -> list[Outgoing] | None:
        with self._lock:
            raw = self._plans.get(key)
        return _decode(raw) if raw else None

    def save(self, key: str, parts: list[Outgoing]) -> None:
        with self._lock:
            self._plans[key] = _encode(parts)


class DynamoTurnPlans:
    def __init__(self, table_name: str, client: DynamoDBClient | None = None, clock: Callable[[], float] = time.time):
        import boto3

        self.table = table_name
        self._client = client or boto3.client("dynamodb")
        self._clock = clock

    def load(self, key: str) -> list[Outgoing] | None:
        item = self._client.get_item(TableName=self.table, Key={"id": {"S": f"plan#{key}"}}, ConsistentRead=True).get(
            "Item"
        )
        return _decode(item["parts"]["S"]) if item and "parts" in item else None

    def save(self, key: str, parts: list[Outgoing]) -> None:
        self._client.put_item(
            TableName=self.table,
            Item={
                "id": {"S": f"plan#{key}"},
                "parts": {"S": _encode(parts)},
                "expiration": {"N": str(int(self._clock()) + STATE_TTL_SECONDS)},
            },
        )


class RateDecision(NamedTuple):
    allowed: bool
    notify: bool = False  # the first refused message of a window gets a notice; later ones are silent


class RateLimiter(Protocol):
    def check(self, chat_id: int) -> RateDecision: ...


class InMemoryRateLimiter:
    """A sliding window per chat."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.per_minute = per_minute
        self._clock = clock
        self._hits: dict[int, deque[float]] = defaultdict(deque)
        self._notified: dict[int, float] = {}
        self._lock = threading.Lock()

    def check(self, chat_id: int) -> RateDecision:
        now = self._clock()
        with self._lock:
            hits = self._hits[chat_id]
            while hits and now - hits[0] >= 60:
                hits.popleft()
            if len(hits) < self.per_minute:
                hits.append(now)
                return RateDecision(True)
            last_notice = self._notified.get(chat_id)
            notify = last_notice is None or now - last_notice >= 60
            if notify:
                self._notified[chat_id] = now
            return RateDecision(False, notify)


class DynamoRateLimiter:
    """A fixed one-minute window per chat: an atomic counter item with a TTL."""

    def __init__(
        self,
        table_name: str,
        per_minute: int,
        client: DynamoDBClient | None = None,
        clock: Callable[[], float] = time.time,
    ):
        import boto3

        self.table = table_name
        self.per_minute = per_minute
        self._client = client or boto3.client("dynamodb")
        self._clock = clock

    def check(self, chat_id: int) -> RateDecision:
        now = self._clock()
        window = int(now // 60)
        answer = self._client.update_item(
            TableName=self.table,
            Key={"id": {"S": f"rate#{chat_id}#{window}"}},
            UpdateExpression="ADD #n :one SET #e = :exp",
            ExpressionAttributeNames={"#n": "count", "#e": "expiration"},
            ExpressionAttributeValues={":one": {"N": "1"}, ":exp": {"N": str(int(now) + 300)}},
            ReturnValues="UPDATED_NEW",
        )
        count = int(answer["Attributes"]["count"]["N"])
        if count <= self.per_minute:
            return RateDecision(True)
        return RateDecision(False, notify=count == self.per_minute + 1)


# ---------------------------------------------------------------------------
# Which message got the reply: edits of waiting messages, albums, and edits of answered ones.
#
# Rules (docs/telegram.md):
#
# * The webhook records every edit of a text message (``record_edit``). When the consumer gets to the
#   original message, it answers the latest edit instead: an edit "replaces it in the queue".
# * A message is answered once: the first update for it (the original, or an edit when the original was
#   never a turn) claims ``(chat, message_id)``; any later update for the same message gets no turn. So an
#   edit of an answered message is not answered again.
# * An album (``media_group_id``) is claimed once: one reply per album, not one per photo.
#
# A claim belongs to the update that made it, so a retried update (the SQS message back after a failure)
# still owns its claim and finishes its turn.
#
# In DynamoDB (the idempotency table, items ``claim#…`` and ``edit#…`` with a day's TTL) when
# IDEMPOTENCY_TABLE is set; otherwise in this process's memory (``serve``, ``poll``, tests).
# ---------------------------------------------------------------------------

LEDGER_TTL_SECONDS = 24 * 3600


class MessageLedger(Protocol):
    def claim(self, key: str, owner: str) -> bool:
        """True when ``key`` was free (now owned by ``owner``) or is owned by ``owner`` already."""
        ...

    def record_edit(self, chat_id: int, message_id: int, message: JSONObject) -> None: ...

    def latest_edit(self, chat_id: int, message_id: int) -> JSONObject | None: ...


def answer_key(chat_id: int, message_id: int) -> str:
    return f"answer#{chat_id}#{message_id}"


def album_key(chat_id: int, media_group_id: str) -> str:
    return f"album#{chat_id}#{media_group_id}"


class InMemoryLedger:
    def __init__(self, size: int = 50_000):
        self._claims: OrderedDict[str, str] = OrderedDict()
        self._edits: OrderedDict[tuple[int, int], dict[str, Any]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def claim(self, key: str, owner: str) -> bool:
        with self._lock:
            current = self._claims.setdefault(key, owner)
            if len(self._claims) > self._size:
                self._claims.popitem(last=False)
            return current == owner

    def record_edit(self, chat_id: int, message_id: int, message: JSONObject) -> None:
        with self._lock:
            self._edits[(chat_id, message_id)] = dict(message)
            if len(self._edits) > self._size:
                self._edits.popitem(last=False)

    def latest_edit(self, chat_id: int, message_id: int) -> JSONObject | None:
        with self._lock:
            found = self._edits.get((chat_id, message_id))
        return dict(found) if found is not None else None


class DynamoLedger:
    def __init__(self, table_name: str, client: DynamoDBClient | None = None, clock: Callable[[], float] = time.time):
        import boto3

        self.table = table_name
        self._client = client or boto3.client("dynamodb")
        self._clock = clock

    def _expiration(self) -> dict[str, str]:
        return {"N": str(int(self._clock()) + LEDGER_TTL_SECONDS)}

    def claim(self, key: str, owner: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._client.put_item(
                TableName=self.table,
                Item={"id": {"S": f"claim#{key}"}, "owner": {"S": owner}, "expiration": self._expiration()},
                ConditionExpression="attribute_not_exists(id) OR #o = :owner",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={":owner": {"S": owner}},
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def record_edit(self, chat_id: int, message_id: int, message: JSONObject) -> None:
        self._client.put_item(
            TableName=self.table,
            Item={
                "id": {"S": f"edit#{chat_id}#{message_id}"},
                "message": {"S": json.dumps(message, ensure_ascii=False)},
                "expiration": self._expiration(),
            },
        )

    def latest_edit(self, chat_id: int, message_id: int) -> JSONObject | None:
        item = self._client.get_item(
            TableName=self.table, Key={"id": {"S": f"edit#{chat_id}#{message_id}"}}, ConsistentRead=True
        ).get("Item")
        return json.loads(item["message"]["S"]) if item and "message" in item else None


def ledger_from_settings(settings: Settings) -> MessageLedger:
    """DynamoDB when IDEMPOTENCY_TABLE is set; else a new in-memory ledger (the entry point gives the one
    ledger of its process to both the webhook and the worker)."""
    table = settings.aws.idempotency_table
    return DynamoLedger(table) if table else InMemoryLedger()


# ---------------------------------------------------------------------------
# Flood waits: one memory per chat that every send path honours.
#
# A 429 with ``retry_after`` from any call (a streamed card, the final delivery, an apology) closes the
# chat until then; every later send to that chat, by any path of this process, waits or hands the update
# back instead of calling Telegram inside the wait (Telegram extends flood waits that are not honoured).
# ---------------------------------------------------------------------------


class FloodGate:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._until: dict[int, float] = {}
        self._lock = threading.Lock()

    def hold(self, chat_id: int, seconds: float) -> float:
        """Telegram asked this chat to wait ``seconds`` from now (a longer wait already known stays).
        Returns the moment the chat opens again, for ``served``."""
        until = self._clock() + max(float(seconds), 0.0)
        with self._lock:
            until = max(until, self._until.get(chat_id, float("-inf")))
            self._until[chat_id] = until
            return until

    def served(self, chat_id: int, until: float) -> None:
        """The caller slept through the wait that ends at ``until``: the chat is open (unless a later 429
        set a new wait meanwhile)."""
        with self._lock:
            if self._until.get(chat_id) == until:
                del self._until[chat_id]

    def remaining(self, chat_id: int) -> float:
        """Seconds until the chat may be written to again (0: now)."""
        with self._lock:
            until = self._until.get(chat_id)
            if until is None:
                return 0.0
            left = until - self._clock()
            if left <= 0:
                del self._until[chat_id]
                return 0.0
            return left
