"""Shared counters of the spending limits (telegram.limits), where the rate limiter keeps its own: DynamoDB
(the idempotency table, items ``limit#…`` with a TTL) in AWS, this process's memory locally.

Every change is one atomic add that answers the new total, so two agent processes that add at once both
see a total that counts the other's: a limit is checked on the total an add returned, never on a value
read before it (docs/architecture.md §8).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol

from sommelier.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class Counters(Protocol):
    def add(self, key: str, amount: float, ttl_s: int) -> float:
        """Add ``amount`` (negative to take it back) to the counter, created at 0; the new total. A new counter
        is forgotten ``ttl_s`` seconds after it was created."""
        ...

    def value(self, key: str) -> float:
        """The counter's total now (0: never added to, or forgotten)."""
        ...

    def first(self, key: str, ttl_s: int) -> bool:
        """True for the first caller of this key only (within ``ttl_s``): a notice given once."""
        ...


class InMemoryCounters:
    def __init__(self, clock: Callable[[], float] = time.time):
        self._clock = clock
        self._values: dict[str, tuple[float, float]] = {}  # key -> (total, forgotten at)
        self._lock = threading.Lock()

    def _live(self, key: str, now: float) -> tuple[float, float] | None:
        found = self._values.get(key)
        if found is not None and found[1] <= now:
            del self._values[key]
            return None
        return found

    def add(self, key: str, amount: float, ttl_s: int) -> float:
        now = self._clock()
        with self._lock:
            found = self._live(key, now)
            total, until = found if found is not None else (0.0, now + ttl_s)
            total += amount
            self._values[key] = (total, until)
            return total

    def value(self, key: str) -> float:
        with self._lock:
            found = self._live(key, self._clock())
        return found[0] if found is not None else 0.0

    def first(self, key: str, ttl_s: int) -> bool:
        now = self._clock()
        with self._lock:
            if self._live(key, now) is not None:
                return False
            self._values[key] = (1.0, now + ttl_s)
            return True


def _number(amount: float) -> str:
    """A DynamoDB number: plain decimal digits (nine places are a billionth of a dollar)."""
    return format(Decimal(repr(float(amount))).quantize(Decimal("0.000000001")).normalize(), "f")


class DynamoCounters:
    """One item per counter: ``ADD`` is atomic, and ``ALL_NEW`` answers the total it made (``UPDATED_NEW``
    may leave out an attribute it judges unchanged)."""

    def __init__(self, table_name: str, client: DynamoDBClient | None = None, clock: Callable[[], float] = time.time):
        import boto3

        self.table = table_name
        self._client = client or boto3.client("dynamodb")
        self._clock = clock

    def add(self, key: str, amount: float, ttl_s: int) -> float:
        answer = self._client.update_item(
            TableName=self.table,
            Key={"id": {"S": f"limit#{key}"}},
            UpdateExpression="ADD #n :amount SET #e = if_not_exists(#e, :exp)",
            ExpressionAttributeNames={"#n": "total", "#e": "expiration"},
            ExpressionAttributeValues={
                ":amount": {"N": _number(amount)},
                ":exp": {"N": str(int(self._clock()) + ttl_s)},
            },
            ReturnValues="ALL_NEW",
        )
        return float(answer["Attributes"]["total"]["N"])

    def value(self, key: str) -> float:
        item = self._client.get_item(TableName=self.table, Key={"id": {"S": f"limit#{key}"}}, ConsistentRead=True).get(
            "Item"
        )
        if not item or "total" not in item:
            return 0.0
        expires = item.get("expiration", {}).get("N")
        if expires is not None and float(expires) <= self._clock():  # TTL deletes late: past it, it is gone
            return 0.0
        return float(item["total"]["N"])

    def first(self, key: str, ttl_s: int) -> bool:
        from botocore.exceptions import ClientError

        now = int(self._clock())
        try:
            self._client.put_item(
                TableName=self.table,
                Item={"id": {"S": f"limit#{key}"}, "expiration": {"N": str(now + ttl_s)}},
                ConditionExpression="attribute_not_exists(id) OR #e <= :now",
                ExpressionAttributeNames={"#e": "expiration"},
                ExpressionAttributeValues={":now": {"N": str(now)}},
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True


def counters_from_settings(settings: Settings) -> Counters:
    """DynamoDB when IDEMPOTENCY_TABLE is set, else a new in-memory set (one per process)."""
    table = settings.aws.idempotency_table
    return DynamoCounters(table) if table else InMemoryCounters()
