"""Injected faults, one turn each: the database down or slow at every step, the LLM and the embedding
endpoint failing, a photo missing from S3, Telegram answering 429/403/400/5xx or resetting the
connection after the request was sent, and the agent crashing mid-send with SQS redelivering.

Expected everywhere: the user gets one sensible reply or one apology, no duplicate photos or messages,
saved turns are neither lost nor doubled, and a turn that keeps failing lands in the dead-letter queue
after bounded retries (moto SQS FIFO with a redrive policy, maxReceiveCount 3).
"""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from contextlib import contextmanager

import psycopg
import pytest
import sommelier.agent.loop as loop_module
import sommelier.telegram.consumer as consumer
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from sommelier.db.pool import Database
from sommelier.domain.errors import Unavailable
from sommelier.repositories.adapters import (
    InProcessCatalog,
    InProcessChat,
    InProcessShop,
    Repositories,
    in_process_repositories,
)
from sommelier.repositories.ports import InvocationCounter
from sommelier.settings import load_settings
from sommelier.toolfn.handler import run_operation

from tests.fakes.openai_server import (
    FakeOpenAI,
    delayed,
    drop_connection,
    drop_mid_body,
    error,
    malformed,
    reply,
    tool_calls,
)
from tests.fakes.provider_behaviours import prompt_candidates
from tests.hardening.support import (
    CHAT,
    catalogue_in_prompt,
    make_bot,
    record_figure,
    shown_texts,
    text_update,
    tool_results,
)

QUERY = "красное сухое к стейку до 6000"
SEARCH = ("search_wines", {"wine_type": "red", "food_pairing": "стейк", "price_max": 6000})
APOLOGY_MARKERS = ("Простите", "Извините", "не получается заглянуть в каталог", "каталог вин сейчас не отвечает")
MATRIX: dict[str, dict] = {}


def closed_port_url() -> str:
    """A PostgreSQL URL at a loopback port nobody listens on (connections are refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://sommelier:not-a-password@127.0.0.1:{port}/sommelier"


class DeadDatabase:
    """The database port with the server down: every checkout is a real refused connection."""

    def __init__(self, url: str):
        self.conninfo = url

    @contextmanager
    def connection(self):
        with psycopg.connect(self.conninfo, connect_timeout=1) as conn:  # raises OperationalError
            yield conn


class SlowDatabase:
    """The database port with every statement stuck behind a slow one: pg_sleep past statement_timeout."""

    def __init__(self, database: Database):
        self.inner = database
        self.conninfo = database.conninfo

    @contextmanager
    def connection(self):
        with self.inner.connection() as conn:
            conn.execute("SELECT pg_sleep(2)")  # QueryCanceled after DATABASE_STATEMENT_TIMEOUT_MS
            yield conn


class FaultyOperations:
    """The in-process adapters; the named operations ("*" = all) hit the faulty database."""

    live: Database
    faulty: object
    failing: set[str]
    failed_calls: Counter[str]

    def _operation(self, operation, arguments):
        name = operation.name
        broken = "*" in self.failing or name in self.failing
        try:
            return run_operation(self.faulty if broken else self.live, operation, arguments)
        except Unavailable:
            assert broken  # a database fault is reported as retryable (Unavailable)
            self.failed_calls[name] += 1
            raise


class FaultyCatalog(FaultyOperations, InProcessCatalog):
    pass


class FaultyChat(FaultyOperations, InProcessChat):
    pass


def faulty_repositories(live, faulty, failing: set[str]) -> Repositories:
    counter = InvocationCounter()
    failed_calls: Counter[str] = Counter()
    catalog, chat = FaultyCatalog(live, counter), FaultyChat(live, counter)
    for adapter in (catalog, chat):
        adapter.live, adapter.faulty, adapter.failing, adapter.failed_calls = live, faulty, failing, failed_calls
    return Repositories(catalog, chat, InProcessShop(live, counter), counter)


def smart_llm(body: dict):
    """A model that searches once, then recommends two of the wines it was given (tools or catalogue)."""
    results = tool_results(body)
    if body.get("tools") and not results:
        return tool_calls(SEARCH)
    wines = (
        [w for r in results for w in r.get("wines", [])]
        or catalogue_in_prompt(body)
        or prompt_candidates(str(body["messages"][1]["content"]))
    )
    if not wines:
        return reply(
            json.dumps(
                {
                    "response_type": "informational",
                    "intro": "Сейчас ничего не нашлось.",
                    "wines": [],
                    "closing": "Попробуем иначе?",
                    "guard_type": None,
                },
                ensure_ascii=False,
            )
        )
    return reply(
        json.dumps(
            {
                "response_type": "recommendation",
                "intro": "Вот что подойдёт к стейку.",
                "wines": [
                    {
                        "wine_id": w["id"],
                        "wine_name": w["name"],
                        "description": "Сочное вино с мягкими танинами к мясу.",
                    }
                    for w in wines[:2]
                ],
                "closing": "Подобрать ещё?",
                "guard_type": None,
            },
            ensure_ascii=False,
        )
    )


@pytest.fixture
def turns(monkeypatch):
    recorded: list[dict] = []
    original = loop_module.record_turn
    monkeypatch.setattr(loop_module, "record_turn", lambda m: (recorded.append(m), original(m)))
    return recorded


def summarise(telegram, bot, *, chat: int = CHAT) -> dict:
    sent = telegram.sent_messages(chat)
    shown = shown_texts(telegram, chat)
    photos = [c for c in sent if c.method == "sendPhoto"]
    headers = [(c.response["result"].get("caption") or "").split("\n")[0] for c in photos]
    chat_store = bot.runtime.repositories.chat
    if isinstance(chat_store, FaultyChat):
        chat_store = in_process_repositories(chat_store.live).chat
    history = {"messages": chat_store.history(chat, 50)}
    return {
        "messages": len(sent),
        "photos": len(photos),
        "duplicate_photos": len(headers) - len(set(headers)),
        "duplicate_texts": sum(n - 1 for n in Counter(shown).values() if n > 1),
        "apologies": sum(1 for t in shown if t.startswith(APOLOGY_MARKERS)),
        "answered": any("Подобрать ещё?" in t or "Рассказать подробнее" in t or "?" in t for t in shown[-1:]),
        "keyboard": bool((sent[-1].params.get("reply_markup") or {}).get("inline_keyboard")) if sent else False,
        "saved_roles": [m.role for m in history.get("messages", [])],
    }


def check_one_reply(summary: dict) -> None:
    assert summary["messages"] >= 1, "the user got something"
    assert summary["duplicate_photos"] == 0 and summary["duplicate_texts"] == 0, summary
    assert summary["apologies"] <= 1, summary
    # The 👍/👎/«Ещё варианты» buttons end a reply that shows wines (issue 16: only under recommendations);
    # an apology or a "the catalogue is unavailable" answer carries none.
    assert summary["keyboard"] or summary["apologies"] == 1, "the reply ends with the closing message and its buttons"


# ------------------------------------------------------------------ the database, step by step
DB_STEPS = {
    "begin_turn": "reply, saved",  # upsert the user and load the history (a turn the reader finds no search in)
    "open_turn": "reply, saved",  # the same, with the prefetch's searches: the agent searches after it
    "search_wines": "reply from the catalogue fallback, saved",
    "get_list": "reply, saved",
    "get_wines": "reply, saved",  # the streamed cards come from the tool results: no get_wines
    "cache_photo": "reply, saved",
    "end_turn": "reply with photos (wines read again), not saved",  # save the turn and load its wines
    "end_turn+get_wines": "reply, wines from the tool results (their photo keys came with them), not saved",
    # The prefetch's searches run inside open_turn: a failing search_wines operation alone leaves them.
    "search_wines+get_list": "reply from the searches that went with open_turn, saved",
    "open_turn+search_wines+get_list": "one apology (the offline fallback can't search either), not saved",
    "*": "one apology",
}


@pytest.mark.parametrize("steps", list(DB_STEPS), ids=list(DB_STEPS))
@pytest.mark.parametrize("kind", ["down", "slow"])
def test_database_fault_at_each_step(kind, steps, environment, fresh_db, telegram, llm, monkeypatch, turns):
    if kind == "down":
        faulty = DeadDatabase(closed_port_url())
    else:
        monkeypatch.setenv("DATABASE_STATEMENT_TIMEOUT_MS", "200")
        faulty = SlowDatabase(
            Database(fresh_db.conninfo + " application_name=hardening_slow", load_settings().database)
        )
    repositories = faulty_repositories(fresh_db, faulty, set(steps.split("+")))
    bot = make_bot(fresh_db, telegram, llm=llm, monkeypatch=monkeypatch, repositories=repositories)
    llm.default = smart_llm
    started = time.perf_counter()
    bot.process(text_update(100, QUERY), attempt=1)  # no exception: nothing to retry
    elapsed = time.perf_counter() - started
    summary = summarise(telegram, bot)
    check_one_reply(summary)
    if steps in ("*", "open_turn+search_wines+get_list"):
        assert summary["apologies"] == 1 and summary["saved_roles"] == [], summary
    elif steps.startswith("end_turn"):
        assert summary["apologies"] == 0 and summary["saved_roles"] == [], summary
    else:
        assert summary["apologies"] == 0, summary
        assert summary["saved_roles"] == ["user", "assistant"], summary
    if steps in ("search_wines", "get_list", "begin_turn", "open_turn", "cache_photo", "get_wines", "end_turn"):
        assert summary["photos"] >= 1, "the wines were shown"
    if steps == "end_turn+get_wines":  # the catalogue can't be read: the tool results' rows, photo keys included
        assert summary["photos"] >= 1 and summary["messages"] >= 4, "the wines are shown from the tool results"
    MATRIX[f"db {kind}: {steps}"] = {
        "mode": turns[-1]["mode"],
        **summary,
        "seconds": round(elapsed, 2),
        "failed_calls": dict(repositories.chat.failed_calls),
    }
    record_figure("faults.matrix", MATRIX)
    if kind == "slow":
        faulty.inner.close()


def test_database_url_at_a_closed_port_end_to_end(environment, monkeypatch, telegram, turns):
    """No fakes in the way: DATABASE_URL points at a closed port, the pool times out, the bot apologises."""
    monkeypatch.setenv("DATABASE_CONNECT_TIMEOUT_S", "1")
    url = closed_port_url()
    monkeypatch.setenv("DATABASE_URL", url)
    database = Database(url, load_settings().database)  # the pool's timeout is the one set above
    try:
        bot = make_bot(database, telegram)
        started = time.perf_counter()
        bot.process(text_update(101, QUERY), attempt=1)
        elapsed = time.perf_counter() - started
    finally:
        database.close()
    sent = shown_texts(telegram, CHAT)
    assert sum(1 for t in sent if t.startswith(APOLOGY_MARKERS)) == 1, sent
    assert len(sent) == len(set(sent))
    MATRIX["db down: DATABASE_URL at a closed port (real pool, offline mode)"] = {
        "mode": turns[-1]["mode"],
        "messages": len(sent),
        "apologies": 1,
        "seconds": round(elapsed, 2),
    }
    record_figure("faults.matrix", MATRIX)


def test_database_lock_times_out_the_save(environment, fresh_db, telegram, llm, monkeypatch, turns):
    """A real slow step: another session holds a lock on messages; save_turn gives up at statement_timeout."""
    monkeypatch.setenv("DATABASE_STATEMENT_TIMEOUT_MS", "300")
    slow = Database(fresh_db.conninfo + " application_name=hardening_lock", load_settings().database)
    bot = make_bot(slow, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = smart_llm
    with psycopg.connect(fresh_db.conninfo) as locker:
        locker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
        started = time.perf_counter()
        bot.process(text_update(102, QUERY), attempt=1)
        elapsed = time.perf_counter() - started
        locker.rollback()
    summary = summarise(telegram, bot)
    slow.close()
    check_one_reply(summary)
    assert summary["photos"] >= 1 and summary["saved_roles"] == []
    assert elapsed < 5, "statement_timeout bounds the wait"
    MATRIX["db slow: messages locked (history + save time out)"] = {
        "mode": turns[-1]["mode"],
        **summary,
        "seconds": round(elapsed, 2),
    }
    record_figure("faults.matrix", MATRIX)


# ------------------------------------------------------------------ the LLM and the embeddings
LLM_FAULTS = {
    "5xx": lambda: [error(500)] * 3,
    "503": lambda: [error(503, "overloaded")] * 3,
    "429": lambda: [error(429, retry_after=1)] * 3,
    "timeout": lambda: [delayed(reply("{}"), 5)] * 3,
    "drop connection": lambda: [drop_connection()] * 3,
    "drop mid-body": lambda: [drop_mid_body()] * 3,
    "not JSON (200)": lambda: [malformed("<html>gateway</html>")] * 3,
    "fails after the tool round": lambda: [tool_calls(SEARCH), error(502), error(502), error(502)],
}


@pytest.mark.parametrize("fault", list(LLM_FAULTS), ids=list(LLM_FAULTS))
def test_llm_fault(fault, environment, fresh_memory, telegram, llm, monkeypatch, turns):
    monkeypatch.setenv("LLM_TIMEOUT_S", "1")
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.script(*LLM_FAULTS[fault]())
    started = time.perf_counter()
    bot.process(text_update(200, QUERY), attempt=1)
    elapsed = time.perf_counter() - started
    summary = summarise(telegram, bot)
    check_one_reply(summary)
    assert turns[-1]["mode"] == "offline_fallback", turns[-1]["structured_output_errors"]
    assert summary["apologies"] == 0 and summary["photos"] >= 1, "the offline responder still picks wines"
    assert summary["saved_roles"] == ["user", "assistant"]
    assert elapsed < 10
    MATRIX[f"llm: {fault}"] = {"mode": turns[-1]["mode"], **summary, "seconds": round(elapsed, 2)}
    record_figure("faults.matrix", MATRIX)


def test_embedding_endpoint_down(environment, fresh_memory, telegram, llm, monkeypatch, turns):
    """EMBEDDING_PROVIDER=openai at a fake that answers 503: semantic search degrades, the turn goes on."""
    with FakeOpenAI() as embeddings:
        embeddings.script_embeddings(*[error(503, "embeddings down")] * 8)
        monkeypatch.setenv("EMBEDDING_PROVIDER", "openai")
        monkeypatch.setenv("EMBEDDING_BASE_URL", embeddings.base_url)
        monkeypatch.setenv("EMBEDDING_API_KEY", "test-embedding-key")
        bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
        llm.script(tool_calls(("semantic_search", {"query": "бархатное красное к мясу", "wine_type": "red"})))
        llm.default = smart_llm
        started = time.perf_counter()
        bot.process(text_update(300, "что-нибудь бархатное к мясу"), attempt=1)
        elapsed = time.perf_counter() - started
        attempts = len(embeddings.embedding_requests)
    summary = summarise(telegram, bot)
    check_one_reply(summary)
    assert attempts >= 1 and turns[-1]["tool_errors"], turns[-1]
    assert summary["apologies"] == 0 and summary["photos"] >= 1
    MATRIX["embeddings: endpoint answers 503"] = {
        "mode": turns[-1]["mode"],
        **summary,
        "seconds": round(elapsed, 2),
        "embedding_attempts": attempts,
    }
    record_figure("faults.matrix", MATRIX)


# ------------------------------------------------------------------ S3
def test_s3_photo_missing(environment, fresh_memory, telegram, llm, monkeypatch, turns):
    from moto import mock_aws
    from sommelier.photos.store import S3PhotoStore

    with mock_aws():
        import boto3

        s3 = boto3.client("s3", region_name="eu-central-1")
        s3.create_bucket(Bucket="hardening-photos", CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
        bot = make_bot(
            fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch, photos=S3PhotoStore("hardening-photos", client=s3)
        )
        llm.default = smart_llm
        bot.process(text_update(400, QUERY), attempt=1)
    summary = summarise(telegram, bot)
    check_one_reply(summary)
    assert summary["photos"] == 0 and summary["messages"] >= 4, "each wine is sent as text instead"
    assert summary["saved_roles"] == ["user", "assistant"]
    MATRIX["s3: photo objects missing"] = {"mode": turns[-1]["mode"], **summary}
    record_figure("faults.matrix", MATRIX)


# ------------------------------------------------------------------ Telegram
def test_telegram_429_waits_and_sends_once(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = smart_llm
    telegram.fail_next("sendPhoto", status=429, retry_after=3)
    telegram.fail_next("sendMessage", status=429, retry_after=2)
    bot.process(text_update(500, QUERY), attempt=1)
    summary = summarise(telegram, bot)
    check_one_reply(summary)
    assert sorted(bot.sleeps) == [2.0, 3.0]
    MATRIX["telegram: 429 retry_after"] = {**summary, "slept": bot.sleeps}
    record_figure("faults.matrix", MATRIX)


def test_telegram_403_marks_inactive_without_retry(environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = smart_llm
    bot.process(text_update(509, QUERY), attempt=1)  # a known user
    telegram.fail_when(lambda c: c.method in ("sendMessage", "sendPhoto", "sendChatAction"), status=403, times=100)
    bot.process(text_update(510, QUERY), attempt=1)  # no exception: blocked users are not retried
    (active,) = [u.is_active for u in fresh_memory.users.values() if u.chat_id == CHAT]
    assert active is False
    MATRIX["telegram: 403 blocked"] = {"raised": False, "user_active": active}
    record_figure("faults.matrix", MATRIX)


@pytest.mark.parametrize(
    "description,expect",
    [
        ("Bad Request: can't parse entities: Unsupported start tag", "plain resend"),
        ("Bad Request: chat not found", "dropped, not retried"),
    ],
)
def test_telegram_400(description, expect, environment, fresh_memory, telegram, llm, monkeypatch):
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = smart_llm
    times = 1 if expect == "plain resend" else 100
    telegram.fail_when(lambda c: c.method == "sendMessage", status=400, description=description, times=times)
    bot.process(text_update(520, QUERY), attempt=1)  # a 400 is never worth a retry
    summary = summarise(telegram, bot)
    if expect == "plain resend":
        check_one_reply(summary)
        assert "parse_mode" not in telegram.calls_of("sendMessage")[1].params
    else:
        assert summary["messages"] == 0 and len(telegram.calls_of("sendMessage")) == 1
    MATRIX[f"telegram: 400 {description.split(': ', 1)[1][:30]}"] = {"outcome": expect, **summary}
    record_figure("faults.matrix", MATRIX)


@pytest.mark.parametrize("method", ["sendPhoto", "sendMessage"])
def test_telegram_resets_after_the_request_was_sent(method, environment, fresh_memory, telegram, llm, monkeypatch):
    """The part may be in the chat already: it is not resent (a lost part beats a duplicate photo)."""
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = smart_llm
    telegram.reset_after_request(method)
    bot.process(text_update(530, QUERY), attempt=1)
    summary = summarise(telegram, bot)
    assert summary["duplicate_photos"] == 0 and summary["duplicate_texts"] == 0
    resets = [c for c in telegram.calls if c.connection_reset]
    assert len(resets) == 1 and len(telegram.calls_of(method)) == (2 if method == "sendPhoto" else 2)
    MATRIX[f"telegram: connection reset after {method} was sent"] = summary
    record_figure("faults.matrix", MATRIX)


# ------------------------------------------------------------------ SQS FIFO redelivery and the DLQ
@pytest.fixture
def queues(monkeypatch):
    from moto import mock_aws

    with mock_aws():
        import boto3

        monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
        sqs = boto3.client("sqs", region_name="eu-central-1")
        dlq = sqs.create_queue(QueueName="turns-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        queue = sqs.create_queue(
            QueueName="turns.fifo",
            Attributes={
                "FifoQueue": "true",
                "VisibilityTimeout": "720",
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"}),
            },
        )["QueueUrl"]
        yield sqs, queue, dlq


def _lambda_record(message: dict, queue_arn: str) -> dict:
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message["Attributes"],
        "messageAttributes": {},
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": "eu-central-1",
    }


def drive_queue(agent: consumer.AgentContainer, sqs, queue_url: str, max_rounds: int = 8) -> list[str]:
    """Lambda's SQS poller, by hand: receive, run handle_sqs, delete successes, make failures visible again."""
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    log = []
    for _ in range(max_rounds):
        messages = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=1, AttributeNames=["All"], WaitTimeSeconds=0
        ).get("Messages", [])
        if not messages:
            break
        try:
            result = agent.handle_sqs({"Records": [_lambda_record(m, arn) for m in messages]})
            failed = {item["itemIdentifier"] for item in result["batchItemFailures"]}
        except BatchProcessingError:  # every record failed: the invocation fails, the whole batch comes back
            failed = {m["MessageId"] for m in messages}
        for message in messages:
            receive_count = message["Attributes"]["ApproximateReceiveCount"]
            if message["MessageId"] in failed:
                log.append(f"receive {receive_count}: failed, visible again")
                sqs.change_message_visibility(
                    QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
                )
            else:
                log.append(f"receive {receive_count}: done, deleted")
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return log


def _enqueue(sqs, queue_url: str, update: dict) -> None:
    sqs.send_message(
        QueueUrl=queue_url,
        MessageBody=json.dumps(update, ensure_ascii=False),
        MessageGroupId=str(update["message"]["chat"]["id"]),
        MessageDeduplicationId=str(update["update_id"]),
    )


def _dlq_bodies(sqs, dlq: str) -> list[dict]:
    messages = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def test_crash_mid_send_then_redelivery(queues, environment, fresh_memory, telegram, llm, monkeypatch):
    sqs, queue, dlq = queues
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    agent = consumer.AgentContainer(bot=bot)
    llm.default = smart_llm
    real_send_photo = bot.client.send_photo
    crashes = {"left": 1}

    def crashing_send_photo(*args, **kwargs):
        if len(telegram.calls_of("sendPhoto")) >= 1 and crashes["left"]:
            crashes["left"] -= 1
            raise RuntimeError("the agent process died mid-send")
        return real_send_photo(*args, **kwargs)

    monkeypatch.setattr(bot.client, "send_photo", crashing_send_photo)
    _enqueue(sqs, queue, text_update(600, QUERY))
    log = drive_queue(agent, sqs, queue)
    summary = summarise(telegram, bot)
    check_one_reply(summary)
    assert log == ["receive 1: failed, visible again", "receive 2: done, deleted"], log
    assert summary["photos"] == 2 and summary["apologies"] == 0
    assert summary["saved_roles"] == ["user", "assistant"], "the turn is saved once, not lost, not doubled"
    assert len(llm.chat_requests) == 2, "the redelivery reuses the saved plan: no second LLM turn"
    assert _dlq_bodies(sqs, dlq) == []
    MATRIX["agent crash mid-send, SQS redelivers"] = {"sqs": log, **summary, "llm_calls": len(llm.chat_requests)}
    record_figure("faults.matrix", MATRIX)


def test_telegram_5xx_mid_send_then_redelivery(queues, environment, fresh_memory, telegram, llm, monkeypatch):
    sqs, queue, dlq = queues
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    agent = consumer.AgentContainer(bot=bot)
    llm.default = smart_llm
    telegram.fail_when(
        lambda c: c.method == "sendPhoto" and len(telegram.calls_of("sendPhoto")) >= 2, status=502, times=1
    )
    _enqueue(sqs, queue, text_update(610, QUERY))
    log = drive_queue(agent, sqs, queue)
    summary = summarise(telegram, bot)
    check_one_reply(summary)
    assert log == ["receive 1: failed, visible again", "receive 2: done, deleted"], log
    assert summary["photos"] == 2 and summary["saved_roles"] == ["user", "assistant"]
    assert _dlq_bodies(sqs, dlq) == []
    MATRIX["telegram 502 mid-send, SQS redelivers"] = {"sqs": log, **summary}
    record_figure("faults.matrix", MATRIX)


def test_permanent_failure_apologises_once_and_lands_in_the_dlq(
    queues, environment, fresh_memory, telegram, llm, monkeypatch
):
    sqs, queue, dlq = queues
    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    agent = consumer.AgentContainer(bot=bot)
    llm.default = smart_llm
    telegram.fail_when(lambda c: c.method == "sendPhoto", status=502, times=1000)
    update = text_update(620, QUERY)
    _enqueue(sqs, queue, update)
    log = drive_queue(agent, sqs, queue)
    summary = summarise(telegram, bot)
    assert log == [f"receive {n}: failed, visible again" for n in (1, 2, 3)], log
    assert summary["apologies"] == 1 and summary["duplicate_texts"] == 0, summary
    assert [b["update_id"] for b in _dlq_bodies(sqs, dlq)] == [620], "after 3 receives the turn is in the DLQ"
    assert len(llm.chat_requests) == 2, "retries resend the saved plan; the LLM ran once"
    assert summary["saved_roles"] == ["user", "assistant"], "saved once, not per attempt"
    MATRIX["telegram 502 on every photo: bounded retries then DLQ"] = {
        "sqs": log + ["receive 4: moved to the DLQ"],
        **summary,
    }
    record_figure("faults.matrix", MATRIX)
