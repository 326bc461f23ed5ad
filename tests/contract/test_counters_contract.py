"""The spending limits' counters (telegram/counters.py): the in-memory adapter and DynamoDB (moto) held to
one contract."""

from __future__ import annotations

import pytest
from sommelier.telegram.counters import DynamoCounters, InMemoryCounters


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "dynamodb"])
def counters(request, monkeypatch):
    clock = Clock()
    if request.param == "memory":
        yield InMemoryCounters(clock), clock
        return
    import boto3
    from moto import mock_aws

    with mock_aws():
        monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
        client = boto3.client("dynamodb", region_name="eu-central-1")
        client.create_table(
            TableName="idem",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield DynamoCounters("idem", client, clock), clock


def test_an_add_answers_the_total_it_made(counters):
    store, _ = counters
    assert store.value("turns#1") == 0
    assert store.add("turns#1", 1, 3600) == 1
    assert store.add("turns#1", 1, 3600) == 2
    assert store.add("usd#day", 0.05, 3600) == pytest.approx(0.05)
    assert store.add("usd#day", -0.03, 3600) == pytest.approx(0.02)
    assert store.value("usd#day") == pytest.approx(0.02)
    assert store.value("turns#1") == 2 and store.value("turns#2") == 0


def test_whole_and_decimal_amounts_add_up(counters):
    store, _ = counters
    assert store.add("usd", 12.5, 3600) == pytest.approx(12.5)
    assert store.add("usd", 20_000, 3600) == pytest.approx(20_012.5)
    assert store.add("usd", -20_012.5, 3600) == pytest.approx(0)


def test_first_is_true_once_per_key_until_it_is_forgotten(counters):
    store, clock = counters
    assert store.first("told#user_turns#1#day", 60)
    assert not store.first("told#user_turns#1#day", 60)
    assert store.first("told#user_turns#2#day", 60)
    clock.now += 61
    assert store.first("told#user_turns#1#day", 60)


def test_a_counter_is_forgotten_after_its_time(counters):
    store, clock = counters
    store.add("turns#1", 5, 60)
    clock.now += 30
    store.add("turns#1", 1, 60)  # an add does not extend the counter's life
    clock.now += 31
    assert store.value("turns#1") == 0
