"""`serve_concurrency`: Telegram's 40 webhook connections at once against `sommelier serve`'s server.

The deployed Starlette app under uvicorn (sommelier_dev.cli.serve_cmd.build_local_server) on loopback, with the
per-chat ordered workers. Each run opens 40 connections, releases them together (a barrier) and
POSTs one real-shaped text update on each: 10 chats x 4 updates. The turns themselves are recorded,
not run (this measures the edge, not the LLM), and are held until every acknowledgement is back, so
an ack that waited for a turn would show. Reported per run: answers that were 200, connections
reset or refused, whether every chat's turns ran in the order they were accepted, and the ack
latency (p50 and max over the 40 requests).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench.common import Context, Figure, figure, log, percentile

NAME = "serve_concurrency"
CONNECTIONS = 40
CHATS = 10
SECRET = "bench-webhook-secret-0123456789"


def _update(update_id: int, chat_id: int) -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 1763800000,
            "chat": {"id": chat_id, "type": "private", "first_name": "Анна"},
            "from": {"id": chat_id, "is_bot": False, "first_name": "Анна", "language_code": "ru"},
            "text": "Посоветуй красное сухое к стейку до 3000 рублей",
        },
    }


def server_settings():
    """`sommelier serve`'s settings for this benchmark: the secret and the bot's username (no token, no
    queue, no idempotency table: the turns are recorded, not run)."""
    from sommelier.settings import load_settings

    return load_settings({"TELEGRAM_WEBHOOK_SECRET": SECRET, "TELEGRAM_BOT_USERNAME": "sommelier_test_bot"})


def one_run(first_id: int, settings) -> dict:
    import httpx2
    from sommelier_dev.cli.serve_cmd import build_local_server

    release = threading.Event()
    lock = threading.Lock()
    accepted: dict[int, list[int]] = {}
    processed: dict[int, list[int]] = {}

    def process(update: dict, attempt: int) -> None:
        release.wait(timeout=60)
        with lock:
            processed.setdefault(update["message"]["chat"]["id"], []).append(update["update_id"])

    server, workers = build_local_server(settings, process=process, workers=4)
    original = workers.enqueue

    def recording(update: dict, chat_id: int) -> None:
        with lock:
            accepted.setdefault(chat_id, []).append(update["update_id"])
            original(update, chat_id)

    workers.enqueue = recording  # type: ignore[method-assign]
    server.start()
    barrier = threading.Barrier(CONNECTIONS)
    updates = [_update(first_id + n, 7_000 + n % CHATS) for n in range(CONNECTIONS)]

    def post(update: dict) -> tuple[int | None, float]:
        with httpx2.Client(timeout=30) as http:
            barrier.wait(timeout=30)
            started = time.perf_counter()
            try:
                response = http.post(
                    f"{server.url}/telegram/webhook",
                    json=update,
                    headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
                )
            except httpx2.TransportError:  # reset, refused, closed early
                return None, (time.perf_counter() - started) * 1000
            return response.status_code, (time.perf_counter() - started) * 1000

    try:
        with ThreadPoolExecutor(max_workers=CONNECTIONS) as pool:
            answers = list(pool.map(post, updates))
        acks_before_any_turn = sum(map(len, processed.values())) == 0
        release.set()
        workers.wait_idle(timeout=60)
    finally:
        release.set()
        server.stop()
        workers.shutdown()
    latencies = [ms for _, ms in answers]
    return {
        "ok": sum(1 for status, _ in answers if status == 200),
        "failed": sum(1 for status, _ in answers if status is None),
        "order_kept": processed == accepted and sum(map(len, processed.values())) == CONNECTIONS,
        "acks_before_any_turn": acks_before_any_turn,
        "p50_ms": percentile(latencies, 50),
        "max_ms": max(latencies),
    }


def run(ctx: Context) -> list[Figure]:
    results = []
    settings = server_settings()
    for n in range(ctx.runs):
        result = one_run(first_id=1_000_000 + n * 1000, settings=settings)
        results.append(result)
        log(
            f"serve_concurrency: run {n + 1}: {result['ok']}/{CONNECTIONS} x 200, {result['failed']} reset, "
            f"order kept {result['order_kept']}, ack p50 {result['p50_ms']:.1f} ms, max {result['max_ms']:.1f} ms"
        )
    details = {
        "connections": CONNECTIONS,
        "chats": CHATS,
        "every_run_kept_order": all(r["order_kept"] for r in results),
        "every_ack_before_any_turn": all(r["acks_before_any_turn"] for r in results),
    }
    return [
        figure(NAME, "40 simultaneous POSTs: answered 200", "count", [r["ok"] for r in results], details=details),
        figure(NAME, "40 simultaneous POSTs: reset or refused", "count", [r["failed"] for r in results], at_most=0),
        figure(
            NAME,
            "40 simultaneous POSTs: per-chat order kept",
            "bool",
            [1.0 if r["order_kept"] else 0.0 for r in results],
        ),
        figure(NAME, "40 simultaneous POSTs: ack p50", "ms", [r["p50_ms"] for r in results]),
        figure(NAME, "40 simultaneous POSTs: slowest ack", "ms", [r["max_ms"] for r in results]),
    ]
