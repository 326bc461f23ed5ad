"""The message ledger (answer once, one reply per album, edits of waiting messages) in memory and in DynamoDB (moto)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws
from sommelier.telegram.state import DynamoLedger, InMemoryLedger, album_key, answer_key

TABLE = "sommelier-idempotency"


@pytest.fixture(params=["memory", "dynamo"])
def ledger(request, monkeypatch):
    if request.param == "memory":
        yield InMemoryLedger()
        return
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield DynamoLedger(TABLE, client, clock=lambda: 1_763_800_000)


def test_a_message_is_claimed_once_and_its_owner_keeps_it(ledger):
    key = answer_key(-100123, 77)
    assert ledger.claim(key, "update-1")
    assert ledger.claim(key, "update-1")  # the same update, retried, still owns it
    assert not ledger.claim(key, "update-2")  # an edit of the answered message
    assert ledger.claim(answer_key(-100123, 78), "update-2")  # another message is free


def test_an_album_is_claimed_by_its_first_photo(ledger):
    key = album_key(5551001, "13612345678901234")
    assert [ledger.claim(key, owner) for owner in ("10", "11", "12", "10")] == [True, False, False, True]


def test_the_latest_edit_wins(ledger):
    assert ledger.latest_edit(1, 5) is None
    ledger.record_edit(1, 5, {"message_id": 5, "text": "первая правка"})
    ledger.record_edit(1, 5, {"message_id": 5, "text": "вторая правка 🍷"})
    assert ledger.latest_edit(1, 5) == {"message_id": 5, "text": "вторая правка 🍷"}
    assert ledger.latest_edit(2, 5) is None


def test_dynamo_items_expire(monkeypatch):
    calls = []

    class Recorder:
        def put_item(self, **kwargs):
            calls.append(kwargs)

    DynamoLedger(TABLE, Recorder(), clock=lambda: 1000).claim("answer#1#2", "u")
    assert calls[0]["Item"]["expiration"] == {"N": str(1000 + 24 * 3600)}
    assert calls[0]["Item"]["id"] == {"S": "claim#answer#1#2"}
