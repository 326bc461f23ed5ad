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
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sommelier.bot.render import Outgoing

STATE_TTL_SECONDS = 24 * 3600


class TurnPlans(Protocol):
    def load(self, key: str) -> list[Outgoing] | None: ...
    def save(self, key: str, parts: list[Outgoing]) -> None: ...


def _encode(parts: list[Outgoing]) -> str:
    return json.dumps([dataclasses.asdict(p) for p in parts], ensure_ascii=False)


def _decode(raw: str) -> list[Outgoing]:
    return [Outgoing(**item) for item in json.loads(raw)]


class InMemoryTurnPlans:
    def __init__(self):
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
    def __init__(self, table_name: str, client=None, clock: Callable[[], float] = time.time):
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


@dataclass(frozen=True)
class RateDecision:
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

    def __init__(self, table_name: str, per_minute: int, client=None, clock: Callable[[], float] = time.time):
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


def state_from_environment(per_minute: int) -> tuple[Any, TurnPlans, RateLimiter]:
    """(delivery log, turn plans, rate limiter): DynamoDB when IDEMPOTENCY_TABLE is set, else memory."""
    from sommelier.config import env
    from sommelier.telegram.delivery import DynamoDeliveryLog, InMemoryDeliveryLog

    table = env("IDEMPOTENCY_TABLE")
    if table:
        return DynamoDeliveryLog(table), DynamoTurnPlans(table), DynamoRateLimiter(table, per_minute)
    return InMemoryDeliveryLog(), InMemoryTurnPlans(), InMemoryRateLimiter(per_minute)


__all__ = [
    "DynamoRateLimiter",
    "DynamoTurnPlans",
    "InMemoryRateLimiter",
    "InMemoryTurnPlans",
    "RateDecision",
    "RateLimiter",
    "TurnPlans",
    "state_from_environment",
]
