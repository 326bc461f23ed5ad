"""`e2e_local`: one text update end to end through the `sommelier serve` machinery.

`build_local_server(settings, ...)` (sommelier_dev/cli/serve_cmd.py) gives the local HTTP API with the
template's webhook route and the per-chat ordered workers that stand in for SQS FIFO; the bot behind them
is the real one the composition root builds from the settings (sommelier.app.build_bot, the settings read
from a dict as an entry point reads its environment): the agent with the zero-latency fake LLM (FakeOpenAI
over loopback), the tools in-process on a copy of the shipped catalogue (one `Database`, opened and closed
here), the Telegram client talking to FakeTelegram over loopback, photos from the local photo store.

One sample: POST the update over HTTP with the secret header → … → the closing message (the one
with the 👍 / 👎 / «Ещё варианты» buttons) arrives at the fake Telegram. The end time is the
fake's arrival timestamp of that request (time.monotonic), so no polling skews it. Every turn of
the same chat: after the warm-up the photos go by their cached Telegram file_id.
"""

from __future__ import annotations

import time
from typing import Any

from bench.agent_harness import TURN_TEXT, start_fake_llm
from bench.common import Context, Figure, figure, log, median, p50s, p95s

NAME = "e2e_local"
SECRET = "bench-e2e-secret"
BOT = "sommelier_bench_bot"
CHAT = 5552001


def text_update(update_id: int, text: str) -> dict[str, Any]:
    person = {"id": CHAT, "is_bot": False, "first_name": "Анна", "username": "anna", "language_code": "ru"}
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 1763800000,
            "text": text,
            "chat": {"id": CHAT, "type": "private", "first_name": "Анна"},
            "from": person,
        },
    }


def settings(ctx: Context) -> dict[str, int]:
    if ctx.smoke:
        return {"turns": 2, "warmup": 1}
    return {"turns": 8, "warmup": 4} if ctx.quick else {"turns": 25, "warmup": 5}


def bot_environment(telegram: Any, llm_base_url: str, database_url: str, state_dir: str) -> dict[str, str]:
    """What `sommelier serve` would read from its environment here: the fakes, the database, the local embedder."""
    return {
        "TELEGRAM_BOT_TOKEN": telegram.token,
        "TELEGRAM_API_BASE_URL": telegram.base_url,
        "TELEGRAM_WEBHOOK_SECRET": SECRET,
        "TELEGRAM_BOT_USERNAME": BOT,
        "DATABASE_URL": database_url,
        "EMBEDDING_PROVIDER": "local",
        "OPENAI_API_KEY": "test",
        "OPENAI_BASE_URL": llm_base_url,
        "LLM_MODEL": "test-model",
        "LLM_MAX_RETRIES": "0",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "SOMMELIER_STATE_DIR": state_dir,
        "SOMMELIER_AGE_GATE": "0",  # the turn itself is measured, not the age question
    }


def is_closing(call: Any) -> bool:
    markup = call.params.get("reply_markup") or {}
    return (
        call.method == "sendMessage"
        and call.delivered
        and bool(markup.get("inline_keyboard"))
        and (call.response.get("result") or {}).get("chat", {}).get("id") == CHAT
    )


def run(ctx: Context) -> list[Figure]:
    import httpx2
    from sommelier.observability.telemetry import metrics
    from sommelier.repositories.adapters import in_process_repositories
    from sommelier.settings import load_settings
    from sommelier_dev.cli.serve_cmd import build_local_server, webhook_path

    from tests.fakes.telegram_server import FakeTelegram

    cfg = settings(ctx)
    databases = ctx.db()
    wdb = databases.shipped_copy()
    fake_llm = start_fake_llm()
    telegram = FakeTelegram(bot_username=BOT).start()
    bot_settings = load_settings(
        bot_environment(telegram, fake_llm.base_url, wdb.url, str(databases.photos_dir.parent))
    )
    samples: list[list[float]] = []
    acks: list[float] = []
    ack_runs: list[list[float]] = []
    telegram_calls: list[int] = []
    update_ids = iter(range(700_000, 800_000))
    try:
        api, workers = build_local_server(bot_settings, workers=4, repositories=in_process_repositories(wdb.database))
        api.start()
        url = f"{api.url}{webhook_path()}"
        try:
            with httpx2.Client(timeout=30) as http:

                def turn() -> float:
                    before = len(telegram.calls)
                    started = time.monotonic()
                    response = http.post(
                        url,
                        json=text_update(next(update_ids), TURN_TEXT),
                        headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
                    )
                    acks.append((time.monotonic() - started) * 1000)
                    if response.status_code != 200:
                        raise RuntimeError(f"the webhook answered {response.status_code}: {response.text[:200]}")
                    if not workers.wait_idle(timeout=30):
                        raise RuntimeError("the turn did not finish within 30 s")
                    if workers.dead_letters:
                        raise RuntimeError(f"a turn failed: {workers.dead_letters[-1]}")
                    new = telegram.calls[before:]
                    closing = [c for c in new if is_closing(c)]
                    if not closing:
                        raise RuntimeError(f"no closing message; calls: {[c.method for c in new]}")
                    telegram_calls.append(len(new))
                    metrics.clear_metrics()  # Lambda flushes them after the invocation
                    return (closing[-1].time - started) * 1000

                for _ in range(cfg["warmup"]):
                    turn()
                acks.clear()
                telegram_calls.clear()
                for _ in range(ctx.runs):
                    samples.append([turn() for _ in range(cfg["turns"])])
                    ack_runs.append(list(acks))
                    acks.clear()
        finally:
            api.stop()
            workers.shutdown()
    finally:
        telegram.stop()
        fake_llm.stop()
        wdb.close()
        databases.postgres.drop_database(wdb.name)
    photos = sum(1 for c in telegram.calls if c.method == "sendPhoto")
    details = {"turns_per_run": cfg["turns"], "telegram_calls_per_turn": median(telegram_calls), "photos_sent": photos}
    p50, p95 = p50s(samples), p95s(samples)
    log(
        f"e2e_local: p50 {median(p50):.1f} ms, p95 {median(p95):.1f} ms, "
        f"{details['telegram_calls_per_turn']:.0f} Telegram calls per turn"
    )
    return [
        figure(NAME, "update → closing message p50", "ms", p50, details=details),
        figure(NAME, "update → closing message p95", "ms", p95),
        figure(
            NAME,
            "HTTP POST → 200 p50 (local API)",
            "ms",
            p50s(ack_runs),
            note="the 200 reaches the client after the closing message: see BENCHMARKS.md (Nagle/delayed ACK)",
        ),
    ]
