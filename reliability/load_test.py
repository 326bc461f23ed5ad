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
    from sommelier.db.pool import Database
    from sommelier.repositories.adapters import in_process_repositories
    from sommelier.settings import load_settings
    from sommelier_dev.cli.serve_cmd import build_local_server

    from tests.fakes.openai_server import FakeOpenAI
    from tests.fakes.telegram_server import FakeTelegram

    if chats < 1 or updates < chats:
        raise ValueError("need at least one update per chat")
    load = LoadRun(updates, chats, deadline=time.monotonic() + time_cap, paced=paced)
    with FakeTelegram(token="424242:LOAD-TEST-TOKEN", bot_username=BOT) as telegram, FakeOpenAI() as llm:
        llm.default = echo_after_a_random_wait(random.Random(seed), max_llm_delay)
        settings = load_settings(_environment(telegram, llm, database_url))  # only these: nothing of the shell's
        database = Database.from_settings(settings)
        try:
            api, queue = build_local_server(settings, workers=workers, repositories=in_process_repositories(database))
            load.run(api, queue, llm, senders, ConnectionMonitor(database_url))
        finally:
            database.close()
        figures = load.figures(telegram, llm, queue)
    return {
        "updates": updates,
        "chats": chats,
        "senders": senders,
        "workers": workers,
        "paced": paced,
        "llm_delay_s": [0.0, max_llm_delay],
        "db_pool_size": settings.database.pool_size,
        **figures,
        "time_cap_s": time_cap,
    }


def echo_after_a_random_wait(rng: random.Random, max_delay: float):
    """The fake LLM's answer: "Ответ на: <the customer's message>" after 0..max_delay s, so order is checkable."""
    from tests.fakes.openai_server import delayed, reply

    lock = threading.Lock()

    def echo(body: dict):
        prompt = body["messages"][1]["content"]
        said = prompt.rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]
        with lock:
            wait = rng.uniform(0.0, max_delay)
        answer = {
            "response_type": "informational",
            "intro": f"Ответ на: {said}",
            "wines": [],
            "closing": "Что-нибудь ещё?",
            "guard_type": None,
        }
        return delayed(reply(json.dumps(answer, ensure_ascii=False)), wait)

    return echo


def _environment(telegram, llm, database_url: str) -> dict[str, str]:
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
        "SOMMELIER_AGE_GATE": "0",  # load on the turns, not on the age question
    }
    if os.environ.get("DATABASE_POOL_SIZE"):
        env["DATABASE_POOL_SIZE"] = os.environ["DATABASE_POOL_SIZE"]
    return env


class LoadRun:
    """One run: each chat's updates posted in order by bounded senders, every turn timed."""

    def __init__(self, updates: int, chats: int, *, deadline: float, paced: bool):
        self.per_chat = [updates // chats + (1 if i < updates % chats else 0) for i in range(chats)]
        self.chat_ids = [9_100_000 + i for i in range(chats)]
        self.deadline = deadline
        self.paced = paced
        self.timings: dict[int, dict[str, float]] = {}
        self.sent_at: dict[int, float] = {}
        self.statuses: dict[int, int] = {}
        self.capped = False
        self.first_send = self.finished = 0.0
        self.connections: list[int] = []
        self._lock = threading.Lock()

    def run(self, api, queue, llm, senders: int, monitor: ConnectionMonitor) -> None:
        from sommelier_dev.cli.serve_cmd import webhook_path

        process = queue._process

        def timed(update: dict, attempt: int) -> None:
            begin = time.monotonic()
            try:
                process(update, attempt)
            finally:
                with self._lock:
                    entry = self.timings.setdefault(update["update_id"], {})
                    entry.setdefault("start", begin)
                    entry["end"] = time.monotonic()
                    entry["attempts"] = attempt

        queue._process = timed
        monitor.start()
        api.start()
        url = f"{api.url}{webhook_path()}"
        self.first_send = time.monotonic()
        try:
            with ThreadPoolExecutor(max_workers=senders, thread_name_prefix="sender") as pool:
                list(pool.map(lambda index: self.send_chat(url, index), range(len(self.chat_ids))))
            self.capped = not queue.wait_idle(timeout=max(0.0, self.deadline - time.monotonic()))
        finally:
            self.finished = time.monotonic()
            api.stop()
            if self.capped:  # stop now: drop the turns still queued, cut the fake LLM's sleeps short
                with queue._lock:
                    queue._queues.clear()
                llm.stop()
            queue.shutdown()
            monitor.stop()
            self.connections = monitor.samples

    def send_chat(self, url: str, index: int) -> None:
        import httpx2

        chat_id = self.chat_ids[index]
        with httpx2.Client(timeout=30) as http:
            for n in range(self.per_chat[index]):
                if time.monotonic() > self.deadline:
                    return
                update_id = chat_id * 1000 + n
                self.sent_at[update_id] = time.monotonic()
                response = http.post(
                    url, json=_update(chat_id, update_id, n), headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
                )
                with self._lock:
                    self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
                while self.paced and "end" not in self.timings.get(update_id, {}) and time.monotonic() < self.deadline:
                    time.sleep(0.005)  # like a person: the next message after the answer

    def figures(self, telegram, llm, queue) -> dict[str, Any]:
        done = [t for t in self.timings.values() if "end" in t]
        return {
            "webhook_statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "turns_done": len(done),
            **self._delivery(telegram),
            "retried_turns": sum(1 for t in done if t.get("attempts", 1) > 1),
            "dead_letters": len(queue.dead_letters),
            **self._timing(done),
            "db_connections": {"peak": max(self.connections, default=None), "samples": len(self.connections)},
            "llm_calls": len(llm.chat_requests),
            "telegram_calls": len(telegram.calls),
            "capped": self.capped,
        }

    def _delivery(self, telegram) -> dict[str, int]:
        """What the chats received: every answer once, none lost, each chat's in the order sent."""
        seen: dict[int, list[int]] = {chat: [] for chat in self.chat_ids}
        for call in telegram.sent_messages():
            match = MARKER.match((call.response.get("result") or {}).get("text") or "")
            if match:
                seen.setdefault(int(match.group(1)), []).append(int(match.group(2)))
        expected = {chat: list(range(count)) for chat, count in zip(self.chat_ids, self.per_chat, strict=True)}
        return {
            "answers_seen": sum(len(v) for v in seen.values()),
            "duplicates": sum(len(got) - len(set(got)) for got in seen.values()),
            "lost": sum(len(set(expected[chat]) - set(got)) for chat, got in seen.items()),
            "chats_out_of_order": sum(1 for got in seen.values() if got != sorted(got)),
        }

    def _timing(self, done: list[dict[str, float]]) -> dict[str, Any]:
        """How fast: the run's wall time and throughput, each turn from its send, each turn's processing."""
        turn_ms = [
            (t["end"] - self.sent_at[u]) * 1000 for u, t in self.timings.items() if "end" in t and u in self.sent_at
        ]
        wall = self.finished - self.first_send
        return {
            "wall_seconds": round(wall, 2),
            "throughput_turns_per_s": round(len(done) / wall, 2) if wall > 0 else None,
            "turn_ms": _spread(turn_ms),
            "processing_ms": {
                **_spread(processing := [(t["end"] - t["start"]) * 1000 for t in done]),
                "mean": round(statistics.fmean(processing), 1) if processing else None,
            },
        }


def _spread(values: list[float]) -> dict[str, float | None]:
    return {
        "p50": _percentile(values, 50),
        "p95": _percentile(values, 95),
        "max": round(max(values), 1) if values else None,
    }


def _update(chat_id: int, update_id: int, n: int) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": n + 1,
            "date": 1763800000,
            "text": f"чат {chat_id} сообщение {n}",
            "chat": {"id": chat_id, "type": "private", "first_name": "Гость"},
            "from": {"id": chat_id, "is_bot": False, "first_name": "Гость", "language_code": "ru"},
        },
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
