"""Load test over loopback: many updates from many chats, concurrently, through the `sommelier serve` machinery.

    python reliability/load_test.py                      # 500 updates over 50 chats (the RELIABILITY.md run)
    python reliability/load_test.py --updates 60 --chats 6 --max-llm-delay 0.1
    python reliability/load_test.py --paced            # each chat waits for its answer before the next message
    python reliability/load_test.py --database-url postgresql://...   # else a fresh database in the embedded server

What runs: `build_local_server` (the template's webhook route with the real ingress and secret check,
per-chat ordered workers standing in for SQS FIFO, the real consumer and agent), the fake OpenAI server
(every call waits a random 0–max_llm_delay s, then answers "Ответ на: <the customer's message>", so the
order of answers is checkable) and the fake Telegram Bot API. Senders post each chat's updates in order
from a bounded thread pool. A monitor thread polls pg_stat_activity for the database connection peak.

Reported: throughput, p50/p95/max turn time (webhook POST → turn done, and processing alone), the
connection peak, and per-chat order, duplicates and lost turns. Bounded in count and time: the run
stops by itself at --time-cap seconds (partial figures are reported with "capped": true).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python reliability/load_test.py` from anywhere
    sys.path.insert(0, str(ROOT))

SECRET = "load-test-webhook-secret"
BOT = "sommelier_load_bot"
MARKER = re.compile(r"^Ответ на: чат (\d+) сообщение (\d+)$")


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return round(ordered[index], 1)


@contextmanager
def _environment(values: dict[str, str | None]):
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class ConnectionMonitor(threading.Thread):
    """Polls the number of server connections to the test database (its own connection excluded)."""

    def __init__(self, database_url: str, interval: float = 0.02):
        super().__init__(name="pg-connection-monitor", daemon=True)
        self.database_url = database_url
        self.interval = interval
        self.samples: list[int] = []
        self._halt = threading.Event()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self._halt.is_set():
                count = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchone()[0]
                self.samples.append(int(count))
                self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def run_load(
    database_url: str,
    *,
    updates: int = 500,
    chats: int = 50,
    senders: int = 16,
    workers: int = 8,
    max_llm_delay: float = 0.5,
    time_cap: float = 180.0,
    seed: int = 7,
    paced: bool = False,
) -> dict[str, Any]:
    """Run the load test against a migrated database; returns the figures (see the module doc)."""
    import httpx2
    from sommelier.db.pool import reset_default_database
    from sommelier_dev.cli.serve_cmd import build_local_server, webhook_path

    from tests.fakes.openai_server import FakeOpenAI, delayed, reply
    from tests.fakes.telegram_server import FakeTelegram

    if chats < 1 or updates < chats:
        raise ValueError("need at least one update per chat")
    started_wall = time.monotonic()
    deadline = started_wall + time_cap
    rng = random.Random(seed)
    rng_lock = threading.Lock()
    per_chat = [updates // chats + (1 if i < updates % chats else 0) for i in range(chats)]
    chat_ids = [9_100_000 + i for i in range(chats)]

    def echo(body: dict):
        prompt = body["messages"][1]["content"]
        said = prompt.rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]
        with rng_lock:
            wait = rng.uniform(0.0, max_llm_delay)
        answer = {
            "response_type": "informational",
            "intro": f"Ответ на: {said}",
            "wines": [],
            "closing": "Что-нибудь ещё?",
            "guard_type": None,
        }
        return delayed(reply(json.dumps(answer, ensure_ascii=False)), wait)

    with FakeTelegram(token="424242:LOAD-TEST-TOKEN", bot_username=BOT) as telegram, FakeOpenAI() as llm:
        llm.default = echo
        env = {
            "TELEGRAM_BOT_TOKEN": telegram.token,
            "TELEGRAM_API_BASE_URL": telegram.base_url,
            "TELEGRAM_WEBHOOK_SECRET": SECRET,
            "TELEGRAM_BOT_USERNAME": BOT,
            "DATABASE_URL": database_url,
            "OPENAI_API_KEY": "load-test-key",
            "OPENAI_BASE_URL": llm.base_url,
            "LLM_MODEL": "load-test-model",
            "LLM_MAX_RETRIES": "0",
            "LLM_TIMEOUT_S": "10",
            "EMBEDDING_PROVIDER": "local",
            "RATE_LIMIT_PER_MINUTE": "1000000",
            "SOMMELIER_OFFLINE": None,
            "SOMMELIER_AGE_GATE": "0",  # load on the turns, not on the age question
            "QUEUE_URL": None,
            "IDEMPOTENCY_TABLE": None,
            "TOOL_FUNCTION_NAME": None,
            "IMAGES_BUCKET": None,
            "SOMMELIER_SECRETS_ARN": None,
        }
        with _environment(env):
            reset_default_database()
            api, queue = build_local_server(workers=workers)
            process = queue._process
            timings: dict[int, dict[str, float]] = {}
            timing_lock = threading.Lock()

            def timed(update: dict, attempt: int) -> None:
                begin = time.monotonic()
                try:
                    process(update, attempt)
                finally:
                    with timing_lock:
                        entry = timings.setdefault(update["update_id"], {})
                        entry.setdefault("start", begin)
                        entry["end"] = time.monotonic()
                        entry["attempts"] = attempt

            queue._process = timed
            monitor = ConnectionMonitor(database_url)
            monitor.start()
            api.start()
            sent_at: dict[int, float] = {}
            statuses: dict[int, int] = {}
            capped = False
            url = f"{api.url}{webhook_path()}"

            def send_chat(index: int) -> None:
                chat_id = chat_ids[index]
                with httpx2.Client(timeout=30) as http:
                    for n in range(per_chat[index]):
                        if time.monotonic() > deadline:
                            return
                        update_id = chat_id * 1000 + n
                        update = {
                            "update_id": update_id,
                            "message": {
                                "message_id": n + 1,
                                "date": 1763800000,
                                "text": f"чат {chat_id} сообщение {n}",
                                "chat": {"id": chat_id, "type": "private", "first_name": "Гость"},
                                "from": {"id": chat_id, "is_bot": False, "first_name": "Гость", "language_code": "ru"},
                            },
                        }
                        sent_at[update_id] = time.monotonic()
                        response = http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
                        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                        while paced and "end" not in timings.get(update_id, {}) and time.monotonic() < deadline:
                            time.sleep(0.005)  # like a person: the next message after the answer

            first_send = time.monotonic()
            try:
                with ThreadPoolExecutor(max_workers=senders, thread_name_prefix="sender") as pool:
                    list(pool.map(send_chat, range(chats)))
                if not queue.wait_idle(timeout=max(0.0, deadline - time.monotonic())):
                    capped = True
            finally:
                finished = time.monotonic()
                api.stop()
                if capped:  # stop now: drop the turns still queued, cut the fake LLM's sleeps short
                    with queue._lock:
                        queue._queues.clear()
                    llm.stop()
                queue.shutdown()
                monitor.stop()
                reset_default_database()

        # ---------------------------------------------------------------- the figures
        seen: dict[int, list[int]] = {chat: [] for chat in chat_ids}
        for call in telegram.sent_messages():
            match = MARKER.match((call.response.get("result") or {}).get("text") or "")
            if match:
                seen.setdefault(int(match.group(1)), []).append(int(match.group(2)))
        expected = {chat: list(range(count)) for chat, count in zip(chat_ids, per_chat, strict=True)}
        duplicates = sum(len(got) - len(set(got)) for got in seen.values())
        lost = sum(len(set(expected[chat]) - set(got)) for chat, got in seen.items())
        out_of_order = [chat for chat, got in seen.items() if got != sorted(got)]
        done = [t for t in timings.values() if "end" in t]
        turn_ms = [(t["end"] - sent_at[uid]) * 1000 for uid, t in timings.items() if "end" in t and uid in sent_at]
        processing_ms = [(t["end"] - t["start"]) * 1000 for t in done]
        wall = finished - first_send
        samples = monitor.samples
        return {
            "updates": updates,
            "chats": chats,
            "senders": senders,
            "workers": workers,
            "paced": paced,
            "llm_delay_s": [0.0, max_llm_delay],
            "db_pool_size": int(os.environ.get("DATABASE_POOL_SIZE", "4")),
            "webhook_statuses": {str(k): v for k, v in sorted(statuses.items())},
            "turns_done": len(done),
            "answers_seen": sum(len(v) for v in seen.values()),
            "duplicates": duplicates,
            "lost": lost,
            "chats_out_of_order": len(out_of_order),
            "retried_turns": sum(1 for t in done if t.get("attempts", 1) > 1),
            "dead_letters": len(queue.dead_letters),
            "wall_seconds": round(wall, 2),
            "throughput_turns_per_s": round(len(done) / wall, 2) if wall > 0 else None,
            "turn_ms": {
                "p50": _percentile(turn_ms, 50),
                "p95": _percentile(turn_ms, 95),
                "max": round(max(turn_ms), 1) if turn_ms else None,
            },
            "processing_ms": {
                "p50": _percentile(processing_ms, 50),
                "p95": _percentile(processing_ms, 95),
                "max": round(max(processing_ms), 1) if processing_ms else None,
                "mean": round(statistics.fmean(processing_ms), 1) if processing_ms else None,
            },
            "db_connections": {"peak": max(samples) if samples else None, "samples": len(samples)},
            "llm_calls": len(llm.chat_requests),
            "telegram_calls": len(telegram.calls),
            "capped": capped,
            "time_cap_s": time_cap,
        }


@contextmanager
def fresh_embedded_database():
    """A new database in the embedded server (`sommelier dev up`'s), migrated; dropped afterwards."""
    import psycopg
    from sommelier.db.embedded import ensure_embedded_database
    from sommelier.db.migrations import apply_migrations
    from sommelier.settings import load_settings

    admin = ensure_embedded_database(load_settings().state_dir / "pgdata", database="postgres")
    name = f"sommelier_load_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # nosec B608 - the name is generated here
    info = psycopg.conninfo.conninfo_to_dict(admin)
    info["dbname"] = name
    url = psycopg.conninfo.make_conninfo(**info)
    try:
        apply_migrations(url)
        yield url
    finally:
        from sommelier.db.pool import close_pools

        close_pools()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # nosec B608 - generated name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=500)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--senders", type=int, default=16, help="concurrent HTTP senders (bounded thread pool)")
    parser.add_argument("--workers", type=int, default=8, help="turn workers (as in `sommelier serve`)")
    parser.add_argument("--max-llm-delay", type=float, default=0.5, help="fake LLM latency: uniform 0..this s")
    parser.add_argument("--time-cap", type=float, default=180.0, help="stop by itself after this many seconds")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--paced",
        action="store_true",
        help="each chat sends its next message only after the previous answer (like a person)",
    )
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or None)
    parser.add_argument("--output", help="also write the JSON figures to this file")
    args = parser.parse_args(argv)

    # Last resort: whatever happens, the process ends shortly after the cap.
    watchdog = threading.Timer(args.time_cap + 60, lambda: (print('{"capped": true, "killed": true}'), os._exit(2)))
    watchdog.daemon = True
    watchdog.start()
    import logging

    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # keep stdout for the figures (no EMF blobs)
    kwargs = dict(
        updates=args.updates,
        chats=args.chats,
        senders=args.senders,
        workers=args.workers,
        max_llm_delay=args.max_llm_delay,
        time_cap=args.time_cap,
        seed=args.seed,
        paced=args.paced,
    )
    if args.database_url:
        from sommelier.db.migrations import apply_migrations

        apply_migrations(args.database_url)
        figures = run_load(args.database_url, **kwargs)
    else:
        with fresh_embedded_database() as url:
            figures = run_load(url, **kwargs)
    watchdog.cancel()
    text = json.dumps(figures, ensure_ascii=False, indent=2)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", "utf-8")
    ok = figures["duplicates"] == 0 and figures["lost"] == 0 and figures["chats_out_of_order"] == 0
    return 0 if ok and not figures["capped"] else 1


if __name__ == "__main__":
    sys.exit(main())
