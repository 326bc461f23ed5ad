"""`sommelier serve`: the webhook's ASGI app under uvicorn, with turns processed in-process.

The app is the deployed one (same routes, secret check, limits). Instead of SQS FIFO, updates go
to per-chat ordered workers: one chat's turns run one after another, different chats in parallel,
failed turns are retried and then set aside, as SQS would with its DLQ. Enqueueing never waits
for a turn, so the acknowledgement never does either.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sommelier.domain.wire import JSONObject

logger = logging.getLogger(__name__)


class ChatOrderedWorkers:
    """A stand-in for SQS FIFO: message groups by chat, in order, with bounded redelivery."""

    def __init__(
        self,
        process: Callable[[dict[str, Any], int], None],
        *,
        workers: int = 8,
        max_attempts: int = 3,
        retry_delay: float = 0.2,
    ):
        self._process = process
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="turn")
        self._queues: dict[int, deque[dict[str, Any]]] = {}
        self._running: set[int] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self.max_attempts = max_attempts
        self.retry_delay = retry_delay
        self.dead_letters: list[dict[str, Any]] = []
        self.processed = 0

    def enqueue(self, update: JSONObject, chat_id: int) -> None:
        with self._lock:
            self._queues.setdefault(chat_id, deque()).append(update)
            if chat_id in self._running:
                return
            self._running.add(chat_id)
        self._pool.submit(self._drain, chat_id)

    def _drain(self, chat_id: int) -> None:
        while True:
            with self._lock:
                queue = self._queues.get(chat_id)
                if not queue:
                    self._running.discard(chat_id)
                    self._queues.pop(chat_id, None)
                    self._idle.notify_all()
                    return
                update = queue.popleft()
            self._run_with_retries(update)

    def _run_with_retries(self, update: dict[str, Any]) -> None:
        for attempt in range(1, self.max_attempts + 1):
            try:
                self._process(update, attempt)
                break
            except Exception as exc:
                logger.warning("turn for update %s failed (attempt %s): %s", update.get("update_id"), attempt, exc)
                if attempt == self.max_attempts:
                    with self._lock:
                        self.dead_letters.append(update)
                else:
                    time.sleep(self.retry_delay * attempt)
        with self._lock:
            self.processed += 1

    def wait_idle(self, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._running:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)


class LocalServer:
    """An ASGI app under uvicorn on a local port, in a background thread or in the foreground.

    uvicorn, not http.server: its listen backlog (2048) and event loop take Telegram's 40 concurrent
    webhook connections without a reset.
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0):
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, lifespan="off", access_log=False, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if not self._server.started:
            raise RuntimeError("the server has not started")
        host, port = self._server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def start(self, timeout: float = 30.0) -> LocalServer:
        self._thread = threading.Thread(target=self._server.run, name="local-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the local server did not start")
            time.sleep(0.01)
        return self

    def serve_forever(self) -> None:
        self._server.run()  # returns on Ctrl-C (uvicorn handles the signal)

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
