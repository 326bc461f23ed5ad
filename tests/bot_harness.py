"""A TelegramBot wired to the loopback fakes and a real database, shared by the e2e and hardening tests."""

from __future__ import annotations

from sommelier.app import build_router, build_runtime
from sommelier.repositories.adapters import in_process_repositories
from sommelier.settings import load_settings
from sommelier.telegram.client import TelegramClient
from sommelier.telegram.consumer import TelegramBot
from sommelier.telegram.delivery import InMemoryDeliveryLog
from sommelier.telegram.state import InMemoryRateLimiter, InMemoryTurnPlans

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.telegram_updates import TEST_BOT, ListSink, webhook_event, webhook_function


def configure_bot(monkeypatch, telegram: FakeTelegram, database, *, unset: tuple[str, ...] = ()) -> None:
    """The environment of a bot on the fake Bot API and a real database (local embeddings); `unset` are
    variables the test needs absent (a queue, an LLM key …)."""
    from tests.fakes.telegram_updates import TEST_WEBHOOK_SECRET

    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", TEST_WEBHOOK_SECRET)
    monkeypatch.setenv("TELEGRAM_BOT_USERNAME", TEST_BOT)
    monkeypatch.setenv("DATABASE_URL", database.conninfo)
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
    runtime = build_runtime(settings, repositories=repositories or in_process_repositories(database))
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
