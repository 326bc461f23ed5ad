"""`sommelier serve`: the template's HTTP routes on a local port, with turns processed in-process.

The webhook route runs the real ingress (same path, same secret check). Instead of SQS FIFO,
updates go to per-chat ordered workers: one chat's turns run one after another, different
chats in parallel, failed turns are retried and then set aside, as SQS would with its DLQ.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

logger = logging.getLogger(__name__)

MAX_BODY = 2_000_000


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

    def enqueue(self, update: dict[str, Any], chat_id: int) -> None:
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


def api_gateway_event(method: str, path: str, headers: dict[str, str], body: bytes, source_ip: str) -> dict:
    """An HTTP API payload v2.0 event, as API Gateway would build it."""
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        import base64

        text, encoded = base64.b64encode(body).decode("ascii"), True
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {k.lower(): v for k, v in headers.items()},
        "requestContext": {
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": headers.get("User-Agent", ""),
            },
            "requestId": f"local-{time.time_ns()}",
            "routeKey": f"{method} {path}",
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "body": text,
        "isBase64Encoded": encoded,
    }


class LocalApi:
    """Serves routes {(method, path): handler(event) -> API Gateway response dict}."""

    def __init__(self, routes: dict[tuple[str, str], Callable[[dict], dict]], host: str = "127.0.0.1", port: int = 0):
        self.routes = routes
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: without this, Nagle + the client's delayed
            # ACK hold every response ~40 ms on loopback.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet: the CLI prints its own lines
                return

            def _serve(self, method: str) -> None:
                path = self.path.split("?", 1)[0]
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self._reply({"statusCode": 413, "body": json.dumps({"ok": False, "error": "body too large"})})
                    self.close_connection = True
                    return
                body = self.rfile.read(length) if length else b""
                if method == "GET" and path == "/healthz":
                    self._reply({"statusCode": 200, "body": json.dumps({"ok": True})})
                    return
                handler = api.routes.get((method, path))
                if handler is None:
                    self._reply({"statusCode": 404, "body": json.dumps({"message": "Not Found"})})
                    return
                event = api_gateway_event(method, path, dict(self.headers.items()), body, self.client_address[0])
                try:
                    response = handler(event)
                except Exception:  # API Gateway answers 500 when the function crashes
                    logger.exception("handler crashed")
                    response = {"statusCode": 500, "body": json.dumps({"message": "Internal Server Error"})}
                self._reply(response)

            def _reply(self, response: dict) -> None:
                body = (response.get("body") or "").encode("utf-8")
                self.send_response(int(response.get("statusCode", 200)))
                headers = response.get("headers") or {"content-type": "application/json"}
                for name, value in headers.items():
                    self.send_header(name, str(value))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                self._serve("POST")

            def do_GET(self) -> None:
                self._serve("GET")

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LocalApi:
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-api", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
