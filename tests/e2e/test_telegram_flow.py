"""End to end: API Gateway event → ingress → (queue) → agent consumer → recorded Telegram calls.

Real adapters everywhere but the data: the fake Bot API and the fake OpenAI server over loopback, moto for SQS
and DynamoDB, and the in-memory data ports (held to the PostgreSQL adapters' contract in tests/contract).
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from sommelier.domain.search import SearchFilters
from sommelier.telegram.router import LABEL_AS_TEXT, NON_TEXT_REPLY, VOICE_AS_TEXT
from sommelier_dev.cli.serve_cmd import build_local_server

from tests.bot_harness import database_url, deliver, make_bot, repositories_for
from tests.fakes.openai_server import reply
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.telegram_updates import (
    TEST_BOT,
    TEST_CHAT,
    TEST_WEBHOOK_SECRET,
    ListSink,
    private_chat,
    text_update,
    user,
    webhook_event,
    webhook_function,
)

SECRET = TEST_WEBHOOK_SECRET
BOT = TEST_BOT
PRIVATE_CHAT = TEST_CHAT


def echo_answer(body: dict):
    """Fake LLM: an informational answer quoting the customer's message (shows order and content)."""
    prompt = body["messages"][1]["content"]
    said = prompt.rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]
    return reply(
        json.dumps(
            {
                "response_type": "informational",
                "intro": f"Ответ на: {said}",
                "wines": [],
                "closing": "Что-нибудь ещё?",
                "guard_type": None,
            },
            ensure_ascii=False,
        )
    )


@pytest.fixture
def environment(monkeypatch, telegram, llm, fresh_memory, state_dir):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("DATABASE_URL", database_url(fresh_memory))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    monkeypatch.delenv("QUEUE_URL", raising=False)
    monkeypatch.delenv("IDEMPOTENCY_TABLE", raising=False)
    yield


def texts(telegram: FakeTelegram, chat_id: int = PRIVATE_CHAT) -> list[str]:
    out = []
    for call in telegram.sent_messages(chat_id):
        out.append(call.params.get("text") or call.params.get("caption") or "")
    return out


# ---------------------------------------------------------------- ingress


def test_bad_secret_is_rejected_without_any_work(environment, fresh_memory, telegram):
    sink = ListSink()
    for secret in ("wrong", "", None, SECRET + "x"):
        response = webhook_function(sink)(webhook_event(text_update(1, "привет"), secret=secret), None)
        assert response["statusCode"] == 401
    assert sink.items == [] and telegram.calls == []


@pytest.mark.parametrize(
    "body,status",
    [
        ("", 400),
        ("not json", 400),
        ("[1,2]", 400),
        ('{"no_update_id": 1}', 400),
        ('{"update_id": "7"}', 400),
        ('{"update_id": 7, "message": {"chat": 5}}', 200),
        ('{"update_id": 8, "channel_post": {}}', 200),
    ],
)
def test_bad_bodies_get_a_4xx_or_are_dropped(environment, body, status):
    sink = ListSink()
    assert webhook_function(sink)(webhook_event(body), None)["statusCode"] == status
    assert sink.items == []


def test_duplicate_delivery_gets_exactly_one_reply(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    update = text_update(100, "что такое танины?")
    assert deliver(bot, update)["statusCode"] == 200
    replies = len(telegram.sent_messages(PRIVATE_CHAT))
    second = deliver(bot, update)
    assert second["statusCode"] == 200 and json.loads(second["body"]).get("duplicate") is True
    assert len(telegram.sent_messages(PRIVATE_CHAT)) == replies > 0


def test_ingress_enqueues_to_sqs_fifo_and_dedupes_with_dynamodb(environment, monkeypatch):
    import boto3
    from moto import mock_aws

    with mock_aws():
        monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
        sqs = boto3.client("sqs", region_name="eu-central-1")
        queue = sqs.create_queue(QueueName="turns.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        dynamo = boto3.client("dynamodb", region_name="eu-central-1")
        dynamo.create_table(
            TableName="idem",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        monkeypatch.setenv("QUEUE_URL", queue)
        monkeypatch.setenv("IDEMPOTENCY_TABLE", "idem")
        update = text_update(200, "красное к пицце")
        from sommelier_dev.cli.invoke_cmd import LambdaContext

        for _ in range(3):  # three containers: only the DynamoDB table can tell the repeats apart
            context = LambdaContext("WebhookFunction", memory_mb=256, timeout_s=10, region="eu-central-1")
            assert webhook_function()(webhook_event(update), context)["statusCode"] == 200
        messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, AttributeNames=["All"]).get(
            "Messages", []
        )
        assert len(messages) == 1
        assert messages[0]["Attributes"]["MessageGroupId"] == str(PRIVATE_CHAT)
        assert messages[0]["Attributes"]["MessageDeduplicationId"] == "200"
        assert json.loads(messages[0]["Body"])["update_id"] == 200


# ---------------------------------------------------------------- update types


def test_text_turn_renders_intro_photos_and_buttons(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(300, "красное сухое к стейку до 3000"))
    calls = telegram.sent_messages(PRIVATE_CHAT)
    methods = [c.method for c in calls]
    assert methods[0] == "sendMessage" and methods[-1] == "sendMessage"
    photos = [c for c in calls if c.method == "sendPhoto"]
    assert 1 <= len(photos) <= 3
    assert all(len(c.files.get("photo", b"")) > 1000 for c in photos), "local photos are uploaded as bytes"
    keyboard = calls[-1].params["reply_markup"]["inline_keyboard"]
    labels = [b["text"] for row in keyboard for b in row]
    assert labels == ["👍", "👎", "Ещё варианты"]
    assert telegram.calls_of("sendChatAction")[0].params["action"] == "typing"
    # the file_ids Telegram returned are cached for the next time
    catalog = repositories_for(fresh_memory).catalog
    ids = [w.id for w in catalog.search_wines(SearchFilters(limit=20)).wines]
    cached = catalog.get_wines(ids).wines
    assert sum(1 for w in cached if w.telegram_file_id) >= len(photos)


def test_second_turn_reuses_cached_file_ids(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(310, "красное сухое к стейку до 3000"))
    first = [c for c in telegram.sent_messages(PRIVATE_CHAT) if c.method == "sendPhoto"]
    deliver(bot, text_update(311, "красное сухое к стейку до 3000"))
    later = [c for c in telegram.sent_messages(PRIVATE_CHAT) if c.method == "sendPhoto"][len(first) :]
    assert later and all(isinstance(c.params.get("photo"), str) and not c.files for c in later)


def test_start_help_reset(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(400, "/start"))
    start = telegram.sent_messages(PRIVATE_CHAT)
    assert "сомелье" in start[0].params["text"].lower()
    assert sum(1 for c in start if c.method == "sendPhoto") == 3, "a welcome plus 3 seasonal picks"
    deliver(bot, text_update(401, "/help"))
    assert "/reset" in texts(telegram)[-1]
    deliver(bot, text_update(402, "что такое танины?"))
    assert repositories_for(fresh_memory).chat.history(PRIVATE_CHAT)
    deliver(bot, text_update(403, "/reset"))
    assert "забыл" in texts(telegram)[-1]
    assert repositories_for(fresh_memory).chat.history(PRIVATE_CHAT) == []


def test_feedback_button_is_stored_and_buttons_updated(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(500, "белое сухое к рыбе"))
    closing = telegram.sent_messages(PRIVATE_CHAT)[-1]
    data = closing.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    callback = {
        "update_id": 501,
        "callback_query": {
            "id": "cbq-1",
            "from": user(),
            "chat_instance": "ci",
            "data": data,
            "message": {"message_id": closing.response["result"]["message_id"], "date": 1, "chat": private_chat()},
        },
    }
    deliver(bot, callback)
    answered = telegram.calls_of("answerCallbackQuery")
    assert answered and answered[0].params["callback_query_id"] == "cbq-1"
    edit = telegram.calls_of("editMessageReplyMarkup")[0].params["reply_markup"]["inline_keyboard"]
    assert [b["text"] for row in edit for b in row] == ["👍 ✓", "👎", "Ещё варианты"]  # changeable, marked
    assert [v.rating for v in fresh_memory.feedback.values() if v.user_id == PRIVATE_CHAT] == [1]


def test_more_button_excludes_wines_already_shown(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(600, "красное сухое до 5000"))
    first = [c.params.get("caption", "") for c in telegram.sent_messages(PRIVATE_CHAT) if c.method == "sendPhoto"]
    closing = telegram.sent_messages(PRIVATE_CHAT)[-1]
    more = closing.params["reply_markup"]["inline_keyboard"][1][0]["callback_data"]
    deliver(
        bot,
        {
            "update_id": 601,
            "callback_query": {
                "id": "cbq-2",
                "from": user(),
                "chat_instance": "ci",
                "data": more,
                "message": {"message_id": closing.response["result"]["message_id"], "date": 1, "chat": private_chat()},
            },
        },
    )
    captions = [c.params.get("caption", "") for c in telegram.sent_messages(PRIVATE_CHAT) if c.method == "sendPhoto"]
    second = captions[len(first) :]
    assert second, "«Ещё варианты» shows new wines"
    first_names = {c.split("\n")[0] for c in first}
    assert not first_names & {c.split("\n")[0] for c in second}


@pytest.mark.parametrize(
    "payload",
    [
        {"photo": [{"file_id": "AgAD", "file_unique_id": "u1", "width": 90, "height": 90}]},
        {
            "sticker": {
                "file_id": "CAAD",
                "file_unique_id": "u2",
                "width": 512,
                "height": 512,
                "type": "regular",
                "is_animated": False,
                "is_video": False,
            }
        },
        {"voice": {"file_id": "AwAD", "file_unique_id": "u3", "duration": 3}},
    ],
)
def test_non_text_messages_get_a_polite_reply(environment, fresh_memory, telegram, payload):
    bot = make_bot(fresh_memory, telegram)
    update = {
        "update_id": 700,
        "message": {"message_id": 7, "date": 1, "chat": private_chat(), "from": user(), **payload},
    }
    deliver(bot, update)
    # Offline, with no transcription: a photo, a sticker or a voice each gets its request to write instead.
    polite = {"photo": LABEL_AS_TEXT, "sticker": NON_TEXT_REPLY, "voice": VOICE_AS_TEXT}
    assert texts(telegram)[-1] == next(polite[kind] for kind in payload)


def test_edited_message_is_answered(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    update = {
        "update_id": 710,
        "edited_message": {
            "message_id": 9,
            "date": 1,
            "edit_date": 2,
            "chat": private_chat(),
            "from": user(),
            "text": "что такое танины",
        },
    }
    deliver(bot, update)
    assert any("танин" in t.lower() for t in texts(telegram))


def test_groups_answer_only_when_addressed(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    group = {"id": -100123, "type": "supergroup", "title": "Винный клуб"}
    chatter = {
        "update_id": 720,
        "message": {"message_id": 1, "date": 1, "chat": group, "from": user(1), "text": "кто придёт в субботу?"},
    }
    deliver(bot, chatter)
    assert telegram.sent_messages(-100123) == []
    text = f"@{BOT} что такое танины?"
    mention = {
        "update_id": 721,
        "message": {
            "message_id": 2,
            "date": 1,
            "chat": group,
            "from": user(1),
            "text": text,
            "entities": [{"type": "mention", "offset": 0, "length": len(BOT) + 1}],
        },
    }
    deliver(bot, mention)
    assert telegram.sent_messages(-100123)


def test_blocked_bot_marks_the_user_inactive(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(730, "привет"))
    member = {
        "update_id": 731,
        "my_chat_member": {
            "chat": private_chat(),
            "from": user(),
            "date": 2,
            "old_chat_member": {"status": "member", "user": {"id": 1, "is_bot": True, "first_name": "S"}},
            "new_chat_member": {
                "status": "kicked",
                "user": {"id": 1, "is_bot": True, "first_name": "S"},
                "until_date": 0,
            },
        },
    }
    calls_before = len(telegram.calls)
    deliver(bot, member)
    assert len(telegram.calls) == calls_before
    assert [u.is_active for u in fresh_memory.users.values() if u.chat_id == PRIVATE_CHAT] == [False]


def test_unknown_update_types_get_200_and_are_ignored(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    for update in (
        {"update_id": 740, "channel_post": {"message_id": 1, "date": 1, "chat": {"id": -1, "type": "channel"}}},
        {"update_id": 741, "poll": {"id": "p"}},
        {"update_id": 742},
    ):
        assert deliver(bot, update)["statusCode"] == 200
    assert telegram.calls == []


# ---------------------------------------------------------------- Telegram errors

LONG_ANSWER = {
    "response_type": "informational",
    "intro": ("Вино & <b>сыр</b> — «классика» <script>alert(1)</script>. " * 16).strip(),  # ≤ 1000 chars
    "wines": [],
    "closing": "Ещё вопрос? <i>да</i> & нет",
    "guard_type": None,
}


def test_long_russian_text_with_html_specials_is_escaped_and_fits(
    environment, fresh_memory, telegram, llm, monkeypatch
):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.script(reply(json.dumps(LONG_ANSWER, ensure_ascii=False)))
    deliver(bot, text_update(800, "расскажи про сыр"))
    sent = telegram.sent_messages(PRIVATE_CHAT)
    assert all(c.http_status == 200 for c in telegram.calls_of("sendMessage"))
    shown = "".join(c.response["result"].get("text", "") for c in sent)  # what the user sees, after parsing
    assert "<script>alert(1)</script>" in shown and "<b>сыр</b>" in shown, "model markup arrives as literal text"
    assert "&amp;" not in shown


def test_parse_error_leads_to_a_plain_resend(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    telegram.fail_next("sendMessage", status=400, description="Bad Request: can't parse entities: unexpected tag")
    deliver(bot, text_update(810, "что такое танины?"))
    first, resend = telegram.calls_of("sendMessage")[:2]
    assert first.http_status == 400 and resend.http_status == 200
    assert "parse_mode" not in resend.params


def test_429_waits_retry_after_then_succeeds(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    telegram.fail_next("sendMessage", status=429, retry_after=3)
    deliver(bot, text_update(820, "что такое танины?"))
    assert bot.sleeps and bot.sleeps[0] >= 3
    assert telegram.sent_messages(PRIVATE_CHAT)


def test_403_marks_inactive_and_stops(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    deliver(bot, text_update(830, "привет"))
    telegram.fail_when(
        lambda call: call.method in ("sendMessage", "sendChatAction", "sendPhoto"), status=403, times=100
    )
    deliver(bot, text_update(831, "что такое танины?"))  # no exception: nothing to retry
    assert [u.is_active for u in fresh_memory.users.values() if u.chat_id == PRIVATE_CHAT] == [False]


def test_crash_mid_send_then_redelivery_sends_no_duplicate_photos(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    telegram.fail_when(
        lambda call: call.method == "sendPhoto" and len(telegram.calls_of("sendPhoto")) >= 2, status=500, times=1
    )
    update = text_update(840, "красное сухое к стейку до 3000")
    sink = ListSink()
    webhook_function(sink)(webhook_event(update), None)
    with pytest.raises(Exception):
        bot.process(sink.items[0][0], attempt=1)
    bot.process(sink.items[0][0], attempt=2)  # SQS redelivers the same message
    photos = [c for c in telegram.sent_messages(PRIVATE_CHAT) if c.method == "sendPhoto"]
    captions = [c.params["caption"] for c in photos]
    assert len(captions) == len(set(captions)) and 1 <= len(photos) <= 3
    assert texts(telegram)[-1], "the closing message was delivered"
    history = repositories_for(fresh_memory).chat.history(PRIVATE_CHAT)
    assert [m.role for m in history] == ["user", "assistant"], "the turn is saved once"


def test_last_attempt_failure_apologises_once(environment, fresh_memory, telegram):
    bot = make_bot(fresh_memory, telegram)
    telegram.fail_when(lambda call: call.method == "sendPhoto", status=502, times=100)
    update = text_update(850, "красное сухое к стейку до 3000")
    for attempt in (1, 2, 3):
        with pytest.raises(Exception):
            bot.process(update, attempt=attempt)
    apologies = [t for t in texts(telegram) if "Простите" in t]
    assert len(apologies) == 1


def test_rate_limit_sends_one_notice_and_spends_no_llm(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch, rate=3)
    llm.default = echo_answer
    for i in range(6):
        deliver(bot, text_update(900 + i, f"вопрос {i}"))
    assert len(llm.chat_requests) == 3
    notices = [t for t in texts(telegram) if "очень быстро" in t]
    assert len(notices) == 1


def test_sqs_batch_handler_reports_partial_failures(environment, fresh_memory, telegram, monkeypatch):
    import sommelier.telegram.consumer as consumer

    bot = make_bot(fresh_memory, telegram)
    agent = consumer.AgentContainer(bot=bot)
    telegram.fail_when(lambda call: call.params.get("chat_id") == 42, status=500, times=100)

    def record(i: int, update: dict) -> dict:
        return {
            "messageId": f"m{i}",
            "receiptHandle": f"r{i}",
            "body": json.dumps(update),
            "attributes": {
                "ApproximateReceiveCount": "1",
                "MessageGroupId": str(update["message"]["chat"]["id"]),
                "MessageDeduplicationId": str(update["update_id"]),
                "SequenceNumber": str(i),
                "SentTimestamp": "1",
                "SenderId": "x",
                "ApproximateFirstReceiveTimestamp": "1",
            },
            "messageAttributes": {},
            "md5OfBody": "x",
            "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:eu-central-1:123456789012:turns.fifo",
            "awsRegion": "eu-central-1",
        }

    event = {
        "Records": [
            record(1, text_update(950, "что такое танины?")),
            record(2, text_update(951, "что такое танины?", chat_id=42)),
            record(3, text_update(952, "что такое танины?")),
        ]
    }
    result = agent.handle_sqs(event)
    failed = [item["itemIdentifier"] for item in result["batchItemFailures"]]
    assert failed == ["m2", "m3"], "FIFO: the failed record and everything after it come back, in order"


# ---------------------------------------------------------------- ordering under concurrency


def test_per_chat_order_under_concurrency(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch, rate=100)
    llm.default = echo_answer
    api, workers = build_local_server(bot.settings, process=bot.process, workers=6)
    api.start()
    chats = [7000 + i for i in range(5)]
    try:

        def send_chat(chat_id: int) -> None:
            with httpx2.Client(timeout=10) as http:
                for n in range(4):
                    update = text_update(chat_id * 10 + n, f"сообщение {n}", chat_id=chat_id)
                    response = http.post(
                        f"{api.url}/telegram/webhook", json=update, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
                    )
                    assert response.status_code == 200

        with ThreadPoolExecutor(max_workers=5) as pool:
            list(pool.map(send_chat, chats))
        assert workers.wait_idle(timeout=60)
    finally:
        api.stop()
        workers.shutdown()
    assert workers.dead_letters == []
    for chat_id in chats:
        intros = [t for t in texts(telegram, chat_id) if t.startswith("Ответ на:")]
        assert [re.search(r"сообщение (\d)", t).group(1) for t in intros] == ["0", "1", "2", "3"]
