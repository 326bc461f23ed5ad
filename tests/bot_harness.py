"""A TelegramBot wired to the loopback fakes and a store, shared by the e2e and hardening tests.

The store is the in-memory one (`sommelier_dev.memory.MemoryStore`: the tests of the bot's logic) or a real
database (`db.pool.Database`: the tests of what the database does). With the memory store DATABASE_URL points
at a closed port, so nothing reaches for a database the test does not have.
"""

from __future__ import annotations

from sommelier.app import build_router, build_runtime
from sommelier.repositories.adapters import Repositories, in_process_repositories
from sommelier.settings import load_settings
from sommelier.telegram.client import TelegramClient
from sommelier.telegram.consumer import TelegramBot
from sommelier.telegram.delivery import InMemoryDeliveryLog
from sommelier.telegram.state import InMemoryRateLimiter, InMemoryTurnPlans

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.telegram_updates import TEST_BOT, ListSink, webhook_event, webhook_function

# Where DATABASE_URL points for a bot on the memory store: a closed port, so a stray connection fails at once.
NO_DATABASE_URL = "postgresql://memory-store@127.0.0.1:9/none?connect_timeout=1"


def repositories_for(store) -> Repositories:
    """The ports on a test's store: the in-memory ones on a MemoryStore, else in process on a Database."""
    from sommelier_dev.memory import MemoryStore, memory_repositories

    if isinstance(store, MemoryStore):
        return memory_repositories(store)
    return in_process_repositories(store)


def database_url(store) -> str:
    return getattr(store, "conninfo", NO_DATABASE_URL)


def configure_bot(monkeypatch, telegram: FakeTelegram, database, *, unset: tuple[str, ...] = ()) -> None:
    """The environment of a bot on the fake Bot API and a store (local embeddings); `unset` are variables
    the test needs absent (a queue, an LLM key …)."""
    from tests.fakes.telegram_updates import TEST_WEBHOOK_SECRET

    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", TEST_BOT)
    monkeypatch.setenv("DATABASE_URL", database_url(database))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
    for name in unset:
        monkeypatch.delenv(name, raising=False)


def configure_llm(monkeypatch, llm: FakeOpenAI) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    monkeypatch.setenv("LLM_MODEL", "test-model")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")


def make_bot(
    database,
    telegram: FakeTelegram,
    *,
    llm: FakeOpenAI | None = None,
    rate: int = 10,
    monkeypatch=None,
    repositories=None,
    photos=None,
    max_receives: int = 3,
) -> TelegramBot:
    """In-memory delivery log, plans and rate limiter; `bot.sleeps` records the waits it asked for."""
    if llm is not None:
        configure_llm(monkeypatch, llm)
    settings = load_settings()  # the test's environment, as an entry point reads it
    runtime = build_runtime(settings, repositories=repositories or repositories_for(database))
    if photos is not None:
        runtime.photos = photos
    client = TelegramClient(telegram.token, telegram.base_url, read_timeout=5)
    sleeps: list[float] = []
    bot = TelegramBot(
        settings,
        client,
        dialog=runtime.dialog,
        repositories=runtime.repositories,
        photos=runtime.photos,
        router=build_router(runtime),
        delivery_log=InMemoryDeliveryLog(),
        plans=InMemoryTurnPlans(),
        limiter=InMemoryRateLimiter(rate),
        bot_username=TEST_BOT,
        sleep=sleeps.append,
        max_receives=max_receives,
    )
    bot.sleeps = sleeps
    bot.runtime = runtime  # what the test built the bot from
    bot.inbox = ListSink()  # what the webhook enqueued for this bot
    # One webhook per bot: duplicates are caught across deliveries; it shares the bot's message ledger
    # (edits recorded at the webhook are seen by the consumer, as through DynamoDB when deployed).
    bot.webhook = webhook_function(bot.inbox, settings, ledger=bot.ledger)
    return bot


def deliver(bot: TelegramBot, update: dict, attempt: int = 1) -> dict:
    """Through the real ingress (secret check, parsing) into the bot, like the queue would."""
    response = bot.webhook(webhook_event(update), None)
    items, bot.inbox.items = bot.inbox.items, []
    for item, _ in items:
        bot.process(item, attempt)
    return response


def restart(bot: TelegramBot) -> TelegramBot:
    """The same bot as a process started now would run it: the settings read again from the environment
    (what a test changed with monkeypatch.setenv after the bot was made)."""
    bot.settings = load_settings()
    return bot


def rows_mentioning(store, value: int) -> dict[str, int]:
    """Every row holding ``value`` in an integer column, by "table.column": of the memory store's tables, or of
    every table of the database (tests/integration/test_shop_ops.py reads information_schema)."""
    from dataclasses import fields

    from sommelier_dev.memory import MemoryStore

    if not isinstance(store, MemoryStore):
        from tests.integration.test_shop_ops import rows_mentioning as in_the_database

        return in_the_database(store, value)
    found: dict[str, int] = {}
    for table in ("wines", "messages", "users", "user_chats", "feedback", "age_answers", "turn_stats"):
        for row in getattr(store, table).values():
            for column in fields(row):
                cell = getattr(row, column.name)
                if isinstance(cell, int) and not isinstance(cell, bool) and cell == value:
                    key = f"{table}.{column.name}"
                    found[key] = found.get(key, 0) + 1
    if value in store.taste_profiles:  # table taste_profiles: the user id is its key (migration 0013)
        found["taste_profiles.telegram_user_id"] = 1
    return found
