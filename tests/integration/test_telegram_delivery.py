"""Sender: idempotent delivery of a turn against the fake Bot API (loopback HTTP), S3 and DynamoDB in moto."""

from __future__ import annotations

import logging
import socket
import time
import uuid

import boto3
import pytest
from moto import mock_aws
from sommelier.domain.answer import SommelierResponse, WineRecommendation
from sommelier.domain.wine import Wine
from sommelier.photos.store import S3PhotoStore
from sommelier.telegram.client import Forbidden, NetworkError, RetryAfter, ServerError, TelegramClient
from sommelier.telegram.delivery import DynamoDeliveryLog, InMemoryDeliveryLog, Sender
from sommelier.telegram.render import Outgoing, render_answer, render_text

from tests.wines import as_wine

CHAT = 4242
BUCKET = "sommelier-photos"
TABLE = "sommelier-idempotency"
REF = "ref123"
PNG = b"\x89PNG\r\n\x1a\n" + b"wine-photo" * 50
PARSE_ERROR = 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0'


class Store(S3PhotoStore):
    """The S3 store; keys in ``no_url`` behave like a store without URLs (upload only)."""

    def __init__(self, bucket: str, no_url: set[str] = frozenset()):
        super().__init__(bucket)
        self.no_url = set(no_url)
        self.asked: list[tuple[str, str]] = []

    def presigned_url(self, key: str) -> str | None:
        self.asked.append(("url", key))
        return None if key in self.no_url else super().presigned_url(key)

    def get(self, key: str) -> bytes | None:
        self.asked.append(("get", key))
        return super().get(key)


# --------------------------------------------------------------------------- #
# Fixtures
# --------------------------------------------------------------------------- #
@pytest.fixture
def aws(monkeypatch):
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        ddb = boto3.client("dynamodb")
        ddb.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield {"s3": s3, "dynamodb": ddb}


@pytest.fixture(params=["memory", "dynamo"])
def log(request, aws):
    if request.param == "memory":
        return InMemoryDeliveryLog()
    return DynamoDeliveryLog(TABLE, aws["dynamodb"])


@pytest.fixture
def store(aws):
    s = Store(BUCKET, no_url={"wines/upload-only.png"})
    for key in ("wines/url.png", "wines/upload-only.png", "wines/missing-in-url.png"):
        s.put(key, PNG)
    return s


class Recorder:
    def __init__(self):
        self.sleeps: list[float] = []
        self.file_ids: list[tuple[str, str]] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def on_file_id(self, wine_id: str, file_id: str) -> None:
        self.file_ids.append((wine_id, file_id))


@pytest.fixture
def rec():
    return Recorder()


def make_sender(client, store, log, rec, **kw) -> Sender:
    return Sender(client, store, log, on_file_id=rec.on_file_id, sleep=rec.sleep, **kw)


def known_file_id(client) -> str:
    """A file_id the fake knows (uploaded to another chat)."""
    return client.send_photo(1, PNG).largest_file_id


def wine(name: str, **extra) -> Wine:
    data = {
        "id": str(uuid.uuid4()),
        "name": name,
        "producer": "Домен",
        "vintage_year": 2020,
        "region": "Бордо, Франция",
        "price_rub": 1799,
        "image_key": None,
        "telegram_file_id": None,
    }
    data.update(extra)
    return as_wine(data)


def turn(client) -> tuple[list[Outgoing], dict[str, dict]]:
    """intro, three photos (file_id / URL / upload), closing with the keyboard."""
    wines = [
        wine("Cached", telegram_file_id=known_file_id(client), image_key="wines/url.png"),
        wine("ByUrl", image_key="wines/url.png"),
        wine("ByUpload", image_key="wines/upload-only.png"),
    ]
    resp = SommelierResponse(
        response_type="recommendation",
        intro="Вот три вина <для> вас & ваших гостей:",
        wines=[WineRecommendation(wine_name=w.name, wine_id=w.id, description=f"Описание {w.name}.") for w in wines],
        closing="Что-нибудь ещё?",
    )
    return render_answer(resp, {w.id: w for w in wines}, REF), {w.name: w for w in wines}


def chat_log(fake, chat=CHAT) -> list[tuple[str, str]]:
    """(method, visible text) of every message delivered to the chat, in order."""
    out = []
    for c in fake.sent_messages(chat):
        r = c.result
        out.append((c.method, r.get("text") if c.method == "sendMessage" else r.get("caption")))
    return out


def expected_log(parts: list[Outgoing]) -> list[tuple[str, str]]:
    return [("sendPhoto" if p.kind == "photo" else "sendMessage", p.plain) for p in parts]


# --------------------------------------------------------------------------- #
# Tests
# --------------------------------------------------------------------------- #
def test_full_turn_in_order(fake, client, store, log, rec):
    parts, wines = turn(client)
    before = len(fake.calls)
    result = make_sender(client, store, log, rec).deliver(CHAT, "upd-1", parts)

    assert chat_log(fake) == expected_log(parts)
    assert result.sent == [0, 1, 2, 3, 4] and result.skipped == [] and result.plain_fallbacks == []
    assert len(result.message_ids) == 5 and result.message_ids == sorted(result.message_ids)
    assert result.photo_sources == {1: "file_id", 2: "url", 3: "upload"}
    photos = [c for c in fake.calls[before:] if c.method == "sendPhoto"]
    assert [c.meta["photo_source"] for c in photos] == ["file_id", "url", "upload"]
    assert "X-Amz-" in photos[1].meta["photo_url"] or "Signature" in photos[1].meta["photo_url"]
    assert photos[2].files["photo"] == PNG
    # HTML mode, the keyboard only on the closing message.
    sent = fake.sent_messages(CHAT)
    assert all(c.params.get("parse_mode") == "HTML" for c in sent)
    assert sent[-1].result["reply_markup"] == parts[-1].reply_markup
    assert all("reply_markup" not in c.result for c in sent[:-1])
    # The cached file_id is unchanged; the other two are new and reported.
    assert rec.file_ids == [
        (wines["ByUrl"].id, sent[2].result["photo"][-1]["file_id"]),
        (wines["ByUpload"].id, sent[3].result["photo"][-1]["file_id"]),
    ]
    assert store.asked.count(("url", "wines/url.png")) == 1  # the cached wine never touched the store
    # Every part is logged with its message id.
    logged = log.delivered("upd-1")
    assert sorted(logged) == [0, 1, 2, 3, 4]
    assert [logged[i]["message_id"] for i in range(5)] == result.message_ids
    assert logged[2]["file_id"] == sent[2].result["photo"][-1]["file_id"]

    # A redelivered SQS message sends nothing again.
    again = make_sender(client, store, log, rec).deliver(CHAT, "upd-1", parts)
    assert again.sent == [] and again.skipped == [0, 1, 2, 3, 4]
    assert again.by_index == result.by_index
    assert chat_log(fake) == expected_log(parts)


def test_parse_error_resends_plain_text(fake, client, store, log, rec):
    parts = render_text("Привет & добро пожаловать <в> винный бот!")
    fake.fail_next("sendMessage", status=400, description=PARSE_ERROR)
    result = make_sender(client, store, log, rec).deliver(CHAT, "upd-parse", parts)
    calls = fake.calls_of("sendMessage")
    assert len(calls) == 2
    assert calls[0].params["parse_mode"] == "HTML" and not calls[0].delivered
    assert "parse_mode" not in calls[1].params and calls[1].params["text"] == parts[0].plain
    assert chat_log(fake) == [("sendMessage", "Привет & добро пожаловать <в> винный бот!")]
    assert result.plain_fallbacks == [0] and result.sent == [0]


def test_parse_error_on_caption_resends_plain_caption(fake, client, store, log, rec):
    parts, _ = turn(client)
    fake.fail_next("sendPhoto", status=400, description=PARSE_ERROR)
    result = make_sender(client, store, log, rec).deliver(CHAT, "upd-parse-photo", parts)
    assert chat_log(fake) == expected_log(parts)
    assert result.plain_fallbacks == [1]
    photo_calls = [c for c in fake.calls_of("sendPhoto") if c.chat_id == CHAT]
    assert photo_calls[1].delivered and "parse_mode" not in photo_calls[1].params
    assert photo_calls[1].meta["photo_source"] == "file_id"  # same source, plain caption


def test_429_waits_and_retries_the_same_part(fake, client, store, log, rec):
    parts, _ = turn(client)
    fake.fail_next("sendPhoto", status=429, retry_after=3)
    fake.fail_next("sendMessage", status=429, retry_after=2, times=1)
    result = make_sender(client, store, log, rec).deliver(CHAT, "upd-429", parts)
    assert rec.sleeps == [2, 3]  # intro first, then the first photo
    assert result.waited == 5
    assert chat_log(fake) == expected_log(parts)


def test_429_gives_up_past_max_retry_wait(fake, client, store, log, rec):
    parts = render_text("один") + render_text("два")
    fake.fail_next("sendMessage", status=429, retry_after=20, times=5)
    with pytest.raises(RetryAfter) as err:
        make_sender(client, store, log, rec, max_retry_wait=30).deliver(CHAT, "upd-429-long", parts)
    assert err.value.retry_after == 20
    assert rec.sleeps == [20]  # a second wait would exceed 30 s in total
    assert log.delivered("upd-429-long") == {}
    assert chat_log(fake) == []


def test_403_raises_forbidden_at_once(fake, client, store, log, rec):
    parts, _ = turn(client)
    fake.fail_next("sendMessage", status=403)
    with pytest.raises(Forbidden):
        make_sender(client, store, log, rec).deliver(CHAT, "upd-403", parts)
    assert len([c for c in fake.calls if c.chat_id == CHAT]) == 1  # no retries, nothing else sent
    assert rec.sleeps == [] and log.delivered("upd-403") == {}


def test_500_mid_turn_then_retry_delivers_each_part_once(fake, client, store, log, rec):
    parts, _ = turn(client)
    fake.fail_when(lambda c: c.method == "sendPhoto" and "ByUrl" in str(c.params.get("caption")), status=500)
    sender = make_sender(client, store, log, rec)
    with pytest.raises(ServerError):
        sender.deliver(CHAT, "upd-500", parts)
    assert chat_log(fake) == expected_log(parts)[:2]  # intro and the first photo made it
    assert sorted(log.delivered("upd-500")) == [0, 1]

    result = sender.deliver(CHAT, "upd-500", parts)  # the SQS redelivery
    assert result.skipped == [0, 1] and result.sent == [2, 3, 4]
    assert chat_log(fake) == expected_log(parts)  # the full set, exactly once
    assert sorted(log.delivered("upd-500")) == [0, 1, 2, 3, 4]


def test_network_error_before_send_is_reraised_and_retry_is_clean(fake, client, store, log, rec):
    parts, _ = turn(client)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    with TelegramClient(fake.token, dead) as down:
        with pytest.raises(NetworkError) as err:
            make_sender(down, store, log, rec).deliver(CHAT, "upd-net", parts)
    assert err.value.request_sent is False
    assert log.delivered("upd-net") == {}
    make_sender(client, store, log, rec).deliver(CHAT, "upd-net", parts)
    assert chat_log(fake) == expected_log(parts)


def test_reset_after_request_is_not_duplicated(fake, client, store, log, rec, caplog):
    parts, _ = turn(client)
    fake.reset_after_request("sendPhoto")  # the first photo is delivered, but the answer is lost
    sender = make_sender(client, store, log, rec)
    with caplog.at_level(logging.WARNING, logger="sommelier.telegram.delivery"):
        result = sender.deliver(CHAT, "upd-reset", parts)
    assert result.uncertain == [1] and result.sent == [0, 2, 3, 4]
    assert "may have been delivered" in caplog.text
    assert log.delivered("upd-reset")[1] == {"uncertain": True}
    assert chat_log(fake) == expected_log(parts)  # delivered once, not resent
    again = sender.deliver(CHAT, "upd-reset", parts)  # and a redelivery doesn't resend it either
    assert again.sent == []
    assert chat_log(fake) == expected_log(parts)


def test_bad_cached_file_id_falls_back_to_url_and_reports_new_file_id(fake, client, store, log, rec):
    w = wine("Stale", telegram_file_id="AgACstale-file-id", image_key="wines/url.png")
    part = render_answer(
        SommelierResponse(
            response_type="recommendation",
            intro="Вот:",
            closing="Ещё?",
            wines=[WineRecommendation(wine_name="Stale", wine_id=w.id, description="Свежее.")],
        ),
        {w.id: w},
        REF,
    )
    result = make_sender(client, store, log, rec).deliver(CHAT, "upd-stale", part)
    photo_calls = [c for c in fake.calls_of("sendPhoto")]
    assert [c.delivered for c in photo_calls] == [False, True]
    assert photo_calls[1].meta["photo_source"] == "url"
    new_id = photo_calls[1].result["photo"][-1]["file_id"]
    assert rec.file_ids == [(w.id, new_id)] and result.new_file_ids == {w.id: new_id}
    assert chat_log(fake) == expected_log(part)


def test_bad_file_id_and_bad_url_fall_back_to_upload(fake, client, store, log, rec):
    w = wine("Broken", telegram_file_id="AgACstale", image_key="wines/missing-in-url.png")
    parts = [
        Outgoing(
            kind="photo",
            html="<b>Broken</b>",
            plain="Broken",
            wine_id=w.id,
            image_key=w.image_key,
            file_id=w.telegram_file_id,
        )
    ]
    result = make_sender(client, store, log, rec).deliver(CHAT, "upd-upload", parts)
    assert [c.meta.get("photo_source") for c in fake.calls_of("sendPhoto")] == [None, None, "upload"]
    assert result.photo_sources == {0: "upload"} and len(rec.file_ids) == 1


def test_no_usable_photo_becomes_text(fake, client, log, rec, aws):
    empty = Store(BUCKET)  # the image key doesn't exist in the bucket
    parts = [
        Outgoing(
            kind="photo",
            html="<b>Ghost</b> &amp; Co",
            plain="Ghost & Co",
            wine_id="w1",
            image_key="wines/nowhere.png",
            file_id="AgACstale",
        )
    ]
    result = make_sender(client, empty, log, rec).deliver(CHAT, "upd-text", parts)
    assert result.text_fallbacks == [0]
    assert chat_log(fake) == [("sendMessage", "Ghost & Co")]
    assert rec.file_ids == []


def test_on_file_id_failure_does_not_break_delivery(fake, client, store, log):
    def boom(wine_id, file_id):
        raise RuntimeError("db down")

    parts, _ = turn(client)
    result = Sender(client, store, log, on_file_id=boom, sleep=lambda s: None).deliver(CHAT, "upd-boom", parts)
    assert result.sent == [0, 1, 2, 3, 4]
    assert chat_log(fake) == expected_log(parts)


def test_dynamo_log_items(aws):
    ddb = aws["dynamodb"]
    log = DynamoDeliveryLog(TABLE, ddb, clock=lambda: 1_000_000)
    assert log.delivered("k") == {}
    log.mark("k", 0, {"message_id": 11, "file_id": None})  # creates the item and its map
    log.mark("k", 3, {"uncertain": True})
    log.mark("k", 0, {"message_id": 12, "file_id": "AgAC"})  # overwrite
    assert log.delivered("k") == {0: {"message_id": 12, "file_id": "AgAC"}, 3: {"uncertain": True}}
    item = ddb.get_item(TableName=TABLE, Key={"id": {"S": "delivery#k"}})["Item"]
    assert item["expiration"] == {"N": str(1_000_000 + 86_400)}
    assert set(item["parts"]["M"]) == {"0", "3"}
    # An item that exists without the map (the "document path invalid" case).
    ddb.put_item(TableName=TABLE, Item={"id": {"S": "delivery#k2"}, "status": {"S": "INPROGRESS"}})
    log.mark("k2", 1, {"message_id": 5})
    assert log.delivered("k2") == {1: {"message_id": 5}}
    assert ddb.get_item(TableName=TABLE, Key={"id": {"S": "delivery#k2"}})["Item"]["status"] == {"S": "INPROGRESS"}
    # Keys don't collide and the real clock gives a TTL about a day ahead.
    real = DynamoDeliveryLog(TABLE, ddb)
    real.mark("k3", 0, {"message_id": 1})
    exp = int(ddb.get_item(TableName=TABLE, Key={"id": {"S": "delivery#k3"}})["Item"]["expiration"]["N"])
    assert abs(exp - (time.time() + 86_400)) < 60
    assert log.delivered("k") != log.delivered("k2")


def test_plain_mode_sticks_across_photo_sources(fake, client, store, log, rec):
    w = wine("Stale", telegram_file_id="AgACstale", image_key="wines/url.png")
    parts = [
        Outgoing(
            kind="photo",
            html="<b>Stale</b>",
            plain="Stale",
            wine_id=w.id,
            image_key=w.image_key,
            file_id=w.telegram_file_id,
        )
    ]
    fake.fail_next("sendPhoto", status=400, description=PARSE_ERROR)
    result = make_sender(client, store, log, rec).deliver(CHAT, "upd-sticky", parts)
    calls = fake.calls_of("sendPhoto")
    assert [c.params.get("parse_mode") for c in calls] == ["HTML", None, None]  # file_id html, file_id plain, URL plain
    assert calls[-1].meta["photo_source"] == "url" and calls[-1].result["caption"] == "Stale"
    assert result.plain_fallbacks == [0] and result.photo_sources == {0: "url"}


def test_a_send_answered_200_is_sent_even_when_its_body_does_not_parse(telegram, store, rec):
    """A channel addressed by its @username: the Bot API answers 200 with a message whose chat id is a string,
    which the strict Message model refuses. The card went out: delivering the plan again sends nothing twice."""
    client = TelegramClient(telegram.token, telegram.base_url)
    log = InMemoryDeliveryLog()
    wine = as_wine({"id": str(uuid.uuid4()), "name": "Красностоп", "producer": "Ведерниковъ", "price_rub": 1890})
    parts = [
        *render_text("Вот что я нашёл."),
        Outgoing(kind="text", html="Красностоп — Ведерниковъ", plain="Красностоп — Ведерниковъ", wine_id=wine.id),
        *render_text("Подобрать ещё?"),
    ]
    first = make_sender(client, store, log, rec).deliver("@wine_channel", "upd-channel", parts)
    again = make_sender(client, store, log, rec).deliver("@wine_channel", "upd-channel", parts)
    sent = [c for c in telegram.calls if c.method == "sendMessage"]
    assert len(sent) == 3 and all(c.http_status == 200 for c in sent)
    assert isinstance(sent[0].response["result"]["chat"]["id"], str)  # the body the strict model refuses
    assert [c.params["text"] for c in sent] == ["Вот что я нашёл.", "Красностоп — Ведерниковъ", "Подобрать ещё?"]
    assert first is not None and again is not None
