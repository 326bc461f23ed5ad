"""An OpenAI-compatible fake HTTP server for tests (stdlib only).

It listens on loopback (OS-chosen port) so the *real* ``openai`` SDK talks to it
over a real socket::

    from tests.fakes.openai_server import FakeOpenAI, reply, tool_calls, error

    with FakeOpenAI() as fake:
        fake.script(tool_calls(("search_wines", {"q": "rioja"})), reply("Try a Rioja."))
        client = openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        ...
        assert fake.chat_requests[0]["model"] == "gpt-4o-mini"

Chat completions and embeddings each have their own FIFO queue of :class:`Step`
objects; every ``POST /v1/chat/completions`` (resp. ``POST /v1/embeddings``)
consumes one step. When the chat queue is empty, ``fake.default(body)`` is used
if set, else an HTTP 500 is returned (and the request is recorded in
``fake.unscripted``). When the embeddings queue is empty, deterministic
unit-norm vectors derived from a hash of each input text are returned (see
:func:`deterministic_embedding`).

Every request is recorded *before* it is answered (even dropped ones).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeOpenAI",
    "RecordedRequest",
    "Step",
    "reply",
    "tool_calls",
    "error",
    "malformed",
    "json_response",
    "drop_connection",
    "drop_mid_body",
    "delayed",
    "trickled",
    "streamed",
    "embeddings_vectors",
    "deterministic_embedding",
    "DEFAULT_MODELS",
]

DEFAULT_MODELS = ("gpt-4o-mini", "gpt-4o", "text-embedding-3-small")

_CHAT_PATH = "/v1/chat/completions"
_EMBEDDINGS_PATH = "/v1/embeddings"
_TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions"
_MODELS_PATH = "/v1/models"


# ---------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One scripted server behaviour. Build with the module-level constructors."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # compact, readable in assertion messages
        return f"Step({self.kind}, {dict(self.data)!r})"


def reply(
    content: str | None,
    *,
    finish_reason: str = "stop",
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    refusal: str | None = None,
) -> Step:
    """A normal ``chat.completion`` with one assistant message."""
    return Step(
        "reply",
        {
            "content": content,
            "finish_reason": finish_reason,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "refusal": refusal,
        },
    )


def tool_calls(
    *calls: tuple[str, dict | str],
    content: str | None = None,
    finish_reason: str = "tool_calls",
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> Step:
    """An assistant message with ``tool_calls``. ``args`` may be a dict (JSON-encoded)
    or a raw string (sent verbatim, e.g. to test malformed arguments)."""
    norm: list[tuple[str, str]] = []
    for call in calls:
        name, args = call
        norm.append((name, args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)))
    return Step(
        "tool_calls",
        {
            "calls": tuple(norm),
            "content": content,
            "finish_reason": finish_reason,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        },
    )


def _default_error_type(status: int) -> str:
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "requests"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def error(
    status: int,
    message: str = "fake error",
    *,
    retry_after: float | None = None,
    code: str | None = None,
    type: str | None = None,  # noqa: A002 - mirrors the OpenAI field name
) -> Step:
    """An HTTP error with an OpenAI-style body ``{"error": {"message","type","code"}}``."""
    if code is None and status == 429:
        code = "rate_limit_exceeded"
    return Step(
        "error",
        {
            "status": status,
            "message": message,
            "retry_after": retry_after,
            "code": code,
            "type": type or _default_error_type(status),
        },
    )


def malformed(raw: bytes | str, status: int = 200, content_type: str = "application/json") -> Step:
    """Send ``raw`` verbatim as the response body."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    return Step("malformed", {"raw": raw, "status": status, "content_type": content_type})


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Step:
    """Send an arbitrary JSON body (escape hatch for odd shapes)."""
    return Step("json", {"body": body, "status": status, "headers": dict(headers or {})})


def drop_connection() -> Step:
    """Read the request, then close the socket without any response."""
    return Step("drop_connection")


def drop_mid_body(step: Step | None = None) -> Step:
    """Send status + headers announcing the full body length, write only part of the
    body, then close. The body is that of ``step`` (default: ``reply("...")``)."""
    return Step("drop_mid_body", {"step": step})


def delayed(step: Step, seconds: float) -> Step:
    """Sleep ``seconds`` (cut short by ``FakeOpenAI.stop()``) before performing ``step``."""
    return Step("delayed", {"step": step, "seconds": float(seconds)})


def trickled(step: Step, seconds: float, interval: float = 0.05) -> Step:
    """Send the status line and headers at once, then one space of the body every ``interval`` for
    ``seconds`` (JSON allows leading whitespace), then the body of ``step``: a response kept alive so that
    no read ever times out."""
    return Step("trickled", {"step": step, "seconds": float(seconds), "interval": float(interval)})


def streamed(
    step: Step,
    *,
    first_token_s: float = 0.0,
    tokens_per_s: float | None = None,
    chars_per_token: int = 16,
    comments: int = 0,
    error_after: int | None = None,
    finish_error_after: int | None = None,
    break_after: int | None = None,
    stall_after: int | None = None,
    stall_s: float = 3600.0,
    keepalive_s: float | None = None,
) -> Step:
    """``step`` (a reply or tool_calls) as a timed SSE stream, when the request asks for ``stream``.

    Chunk sizes and pacing: ``chars_per_token`` characters of content per chunk, the first after
    ``first_token_s``, then ``tokens_per_s`` chunks a second (None: all at once). ``comments`` SSE
    comment lines (``: OPENROUTER PROCESSING``) go before the first chunk. After that many content
    chunks: ``error_after`` sends an ``error`` object (OpenRouter's mid-stream error), ``finish_error_after``
    a chunk with ``finish_reason: "error"``, ``break_after`` closes the socket, ``stall_after`` goes
    silent for ``stall_s`` (with ``keepalive_s``: a comment line that often, so only a deadline ends it).
    A request without ``stream`` gets the plain reply.
    """
    return Step(
        "streamed",
        {
            "step": step,
            "first_token_s": float(first_token_s),
            "tokens_per_s": tokens_per_s,
            "chars_per_token": max(1, int(chars_per_token)),
            "comments": int(comments),
            "error_after": error_after,
            "finish_error_after": finish_error_after,
            "break_after": break_after,
            "stall_after": stall_after,
            "stall_s": float(stall_s),
            "keepalive_s": keepalive_s,
        },
    )


def embeddings_vectors(vectors: list[list[float]]) -> Step:
    """An embeddings response with exactly these vectors (honours ``encoding_format``)."""
    return Step("embeddings", {"vectors": tuple(tuple(float(x) for x in v) for v in vectors)})


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _to_float32(vec: list[float]) -> list[float]:
    return list(struct.unpack(f"<{len(vec)}f", struct.pack(f"<{len(vec)}f", *vec)))


def deterministic_embedding(text: str, dimensions: int = 1536) -> list[float]:
    """The vector the fake returns for ``text`` by default: unit norm, float32-exact,
    seeded from sha256(text). Identical between float and base64 encodings."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big")
    rnd = random.Random(seed)
    vec = [rnd.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return _to_float32([x / norm for x in vec])


def _estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _encode_vector(vec: list[float] | tuple[float, ...], encoding_format: str | None) -> Any:
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
    return _to_float32(list(vec))


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without query string
    query: str
    headers: dict[str, str]  # lower-case keys
    body: Any  # parsed JSON or None
    raw: bytes
    time: float


@dataclass
class _Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------------------
# HTTP plumbing
# ---------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:  # noqa: D401
        # Connection resets/broken pipes are expected (client timeouts, drops).
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle + the client's delayed
    # ACK hold every response ~40 ms on loopback.
    disable_nagle_algorithm = True
    server_version = "FakeOpenAI/1.0"
    sys_version = ""
    timeout = 30  # idle keep-alive sockets eventually go away on their own
    disable_nagle_algorithm = True  # headers and body are separate writes
    server: _Server

    # -- lifecycle ---------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    # -- dispatch ----------------------------------------------------------
    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline()
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        fake = self.server.fake
        try:
            raw = self._read_body()
        except (OSError, ValueError):
            self.close_connection = True
            return
        path, _, query = self.path.partition("?")
        if len(path) > 1:
            path = path.rstrip("/")
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = RecordedRequest(
            method=self.command,
            path=path,
            query=query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
            time=time.time(),
        )
        step = fake._record_and_pick(rec)
        try:
            self._perform(step, rec)
        except OSError:
            self.close_connection = True

    # -- performing steps --------------------------------------------------
    def _perform(self, step: Step, rec: RecordedRequest) -> None:
        fake = self.server.fake
        kind = step.kind
        if kind == "delayed":
            if fake._stopping.wait(step.data["seconds"]):
                self._drop()
                return
            self._perform(step.data["step"], rec)
        elif kind == "drop_connection":
            self._drop()
        elif kind == "trickled":
            resp = fake._render(step.data["step"], rec)
            spaces = max(1, int(step.data["seconds"] / step.data["interval"]))
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            self.send_header("Content-Length", str(spaces + len(resp.body)))
            self.end_headers()
            self.wfile.flush()
            for _ in range(spaces):
                if fake._stopping.wait(step.data["interval"]):
                    self._drop()
                    return
                self.wfile.write(b" ")
                self.wfile.flush()
            self.wfile.write(resp.body)
            self.wfile.flush()
        elif kind == "streamed":
            if isinstance(rec.body, dict) and rec.body.get("stream"):
                self._stream(step, rec)
            else:  # the same generation, delivered whole once it is done
                if fake._stopping.wait(fake._generation_seconds(step, rec)):
                    self._drop()
                    return
                self._send(fake._render(step.data["step"], rec))
        elif kind == "drop_mid_body":
            inner = step.data["step"] or reply("This response will be cut in the middle. " * 4)
            resp = fake._render(inner, rec)
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            self.send_header("Content-Length", str(len(resp.body)))
            self.end_headers()
            self.wfile.write(resp.body[: max(1, len(resp.body) // 2)])
            self.wfile.flush()
            self._drop()
        else:
            self._send(fake._render(step, rec))

    def _stream(self, step: Step, rec: RecordedRequest) -> None:
        """Write an SSE stream chunk by chunk (chunked transfer encoding), paced and broken as scripted."""
        fake = self.server.fake
        d = step.data
        body = rec.body if isinstance(rec.body, dict) else {}
        events = fake._stream_events(d["step"], body, d["chars_per_token"])
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", f"req_fake_{fake._next_id()}")
        self.end_headers()

        def write(data: bytes) -> None:
            self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        for _ in range(d["comments"]):
            write(b": OPENROUTER PROCESSING\n\n")
        if d["first_token_s"] and fake._stopping.wait(d["first_token_s"]):
            self._drop()
            return
        interval = 1.0 / d["tokens_per_s"] if d["tokens_per_s"] else 0.0
        first_token_at = time.monotonic()
        content_sent = 0
        for kind, event in events:
            if kind == "content":
                if content_sent == d["error_after"]:
                    write(_sse({"error": {"code": 502, "message": "fake: provider error mid-stream"}}))
                    write(b"data: [DONE]\n\n")
                    write(b"")
                    return
                if content_sent == d["finish_error_after"]:
                    write(fake._error_chunk(body))
                    write(b"data: [DONE]\n\n")
                    write(b"")
                    return
                if content_sent == d["break_after"]:
                    self._drop()
                    return
                if content_sent == d["stall_after"]:
                    if not self._stall(d, write):
                        return
                    first_token_at = time.monotonic() - content_sent * interval  # the pace resumes
                # Paced against the clock from the first token, so waits don't add up their oversleeps.
                due = first_token_at + content_sent * interval
                if content_sent and interval and fake._stopping.wait(max(due - time.monotonic(), 0.0)):
                    self._drop()
                    return
                content_sent += 1
            write(event)
        write(b"")  # the last chunk of the chunked body

    def _stall(self, d: Mapping[str, Any], write: Callable[[bytes], None]) -> bool:
        """Go silent (or send only keep-alive comments) for stall_s; False when the client went away."""
        fake = self.server.fake
        deadline = time.monotonic() + d["stall_s"]
        while time.monotonic() < deadline:
            pause = min(d["keepalive_s"] or d["stall_s"], max(deadline - time.monotonic(), 0.0))
            if fake._stopping.wait(pause):
                self._drop()
                return False
            if d["keepalive_s"]:
                try:
                    write(b": OPENROUTER PROCESSING\n\n")
                except OSError:
                    return False
        return True

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send(self, resp: _Response) -> None:
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Content-Length", str(len(resp.body)))
        self.send_header("x-request-id", f"req_fake_{self.server.fake._next_id()}")
        for k, v in resp.headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(resp.body)
        self.wfile.flush()


# ---------------------------------------------------------------------------
# The fake
# ---------------------------------------------------------------------------


class FakeOpenAI:
    """OpenAI-compatible fake server on 127.0.0.1. Thread-safe."""

    def __init__(self, *, embedding_dimensions: int = 1536, models: tuple[str, ...] = DEFAULT_MODELS) -> None:
        self.embedding_dimensions = embedding_dimensions
        self.models = tuple(models)
        self.default: Callable[[dict], Step] | None = None
        # A provider that does not stream: every request with ``stream: true`` gets this 400 (no step consumed).
        self.refuse_stream: str | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._chat_queue: list[Step | Callable[[dict], Step]] = []
        self._emb_queue: list[Step | Callable[[dict], Step]] = []
        self._requests: list[RecordedRequest] = []
        self._chat_requests: list[dict] = []
        self._embedding_requests: list[dict] = []
        self._transcriptions: dict[bytes, str] = {}  # audio -> what the fake "hears" in it
        self._transcription_requests: list[dict] = []
        self._unscripted: list[RecordedRequest] = []
        self._counter = 0
        self._call_counter = 0
        self._conns: set[socket.socket] = set()
        self._accepted = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> FakeOpenAI:
        if self._server is not None:
            raise RuntimeError("FakeOpenAI already started")
        self._stopping.clear()
        self._accepted = 0
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        host, port = server.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="FakeOpenAI", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # cut sleeps short
        server.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # wake handlers blocked on idle keep-alive reads
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def client(self, **kwargs: Any) -> Any:
        """A real ``openai.OpenAI`` pointed at this fake (max_retries=0 unless given)."""
        import openai

        kwargs.setdefault("api_key", "test")
        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(base_url=self.base_url, **kwargs)

    # -- scripting ---------------------------------------------------------
    def behave(self, name: str, *, time_scale: float = 1.0) -> Any:
        """Answer every chat request as the named documented provider behaviour (see
        ``tests/fakes/provider_behaviours.py``); returns the simulated model (its ``calls`` and ``stats``)."""
        from tests.fakes.provider_behaviours import BEHAVIOURS

        model = BEHAVIOURS[name].build(time_scale)
        self.default = model
        return model

    def script(self, *steps: Step | Callable[[dict], Step]) -> None:
        """Append steps to the chat-completions queue (a callable gets the request body)."""
        with self._lock:
            self._chat_queue.extend(steps)

    def script_embeddings(self, *steps: Step | Callable[[dict], Step]) -> None:
        with self._lock:
            self._emb_queue.extend(steps)

    @property
    def pending(self) -> int:
        """Number of chat steps not yet consumed."""
        with self._lock:
            return len(self._chat_queue)

    @property
    def pending_embeddings(self) -> int:
        with self._lock:
            return len(self._emb_queue)

    @property
    def connections_accepted(self) -> int:
        """TCP connections accepted since start (keep-alive reuse keeps this low)."""
        with self._lock:
            return self._accepted

    def reset(self) -> None:
        """Clear queues and records (keeps ``default`` and the running server)."""
        with self._lock:
            self._chat_queue.clear()
            self._emb_queue.clear()
            self._requests.clear()
            self._chat_requests.clear()
            self._embedding_requests.clear()
            self._unscripted.clear()
            self._call_counter = 0

    # -- records -----------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[dict]:
        with self._lock:
            return list(self._chat_requests)

    @property
    def embedding_requests(self) -> list[dict]:
        with self._lock:
            return list(self._embedding_requests)

    @property
    def unscripted(self) -> list[RecordedRequest]:
        """Chat requests that found an empty queue and no ``default`` (answered 500)."""
        with self._lock:
            return list(self._unscripted)

    def last_chat_request(self) -> dict:
        with self._lock:
            if not self._chat_requests:
                raise AssertionError("no chat completion request was recorded")
            return self._chat_requests[-1]

    def tools_in_request(self, i: int = -1) -> list[str]:
        """Function names offered in the i-th chat request's ``tools``."""
        body = self.chat_requests[i]
        return [t.get("function", {}).get("name") for t in body.get("tools") or []]

    def messages_in_request(self, i: int = -1) -> list[dict]:
        return list(self.chat_requests[i].get("messages") or [])

    def wait_for_requests(self, n: int, timeout: float = 2.0) -> list[RecordedRequest]:
        """Block until at least ``n`` requests were recorded (AssertionError on timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            reqs = self.requests
            if len(reqs) >= n:
                return reqs
            if time.monotonic() >= deadline:
                raise AssertionError(f"expected {n} requests, got {len(reqs)}")
            time.sleep(0.005)

    # -- internals ---------------------------------------------------------
    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
                self._accepted += 1
            else:
                self._conns.discard(conn)

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _record_and_pick(self, rec: RecordedRequest) -> Step:
        """Record the request and choose the step that answers it (under the lock)."""
        body = rec.body if isinstance(rec.body, dict) else None
        with self._lock:
            self._requests.append(rec)
            if rec.method == "POST" and rec.path == _CHAT_PATH:
                if body is None:
                    return _bad_request("fake: request body is not a JSON object")
                self._chat_requests.append(body)
                if body.get("stream") and self.refuse_stream:
                    return error(400, self.refuse_stream, code="unsupported_parameter")
                if self._chat_queue:
                    step = self._chat_queue.pop(0)
                elif self.default is not None:
                    step = self.default
                else:
                    self._unscripted.append(rec)
                    return error(500, "fake: no scripted response", code="fake_unscripted")
            elif rec.method == "POST" and rec.path == _EMBEDDINGS_PATH:
                if body is None:
                    return _bad_request("fake: request body is not a JSON object")
                self._embedding_requests.append(body)
                step = self._emb_queue.pop(0) if self._emb_queue else Step("embeddings_default")
            elif rec.method == "POST" and rec.path == _TRANSCRIPTIONS_PATH:
                return self._transcribe(rec)
            elif rec.method == "GET" and rec.path == _MODELS_PATH:
                return Step("models")
            elif rec.method == "GET" and rec.path.startswith(_MODELS_PATH + "/"):
                return Step("model", {"id": rec.path[len(_MODELS_PATH) + 1 :]})
            else:
                return error(404, f"fake: unknown path {rec.method} {rec.path}", code="unknown_url")
        # user callables run outside the lock
        try:
            while callable(step) and not isinstance(step, Step):
                step = step(body)
        except Exception as exc:  # surface test-callable bugs as a 500, not a dropped socket
            return error(500, f"fake: script/default callable raised {exc!r}", code="fake_callable_error")
        if not isinstance(step, Step):
            return error(500, f"fake: default/script callable returned {step!r}, not a Step")
        return step

    # -- speech to text ----------------------------------------------------
    def hear(self, audio: bytes, text: str) -> None:
        """What /audio/transcriptions returns for this audio (other audio: 400, as for a file it can't decode)."""
        with self._lock:
            self._transcriptions[bytes(audio)] = text

    @property
    def transcription_requests(self) -> list[dict]:
        """{"model", "filename", "size", "language", "content_type"} of each transcription request."""
        with self._lock:
            return [dict(r) for r in self._transcription_requests]

    def _transcribe(self, rec: RecordedRequest) -> Step:
        """Multipart form: ``file`` and ``model`` required, as the real endpoint; answers {"text": ...}."""
        from email.parser import BytesParser
        from email.policy import HTTP

        ctype = rec.headers.get("content-type", "")
        if not ctype.startswith("multipart/form-data"):
            return _bad_request("fake: transcriptions take multipart/form-data")
        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + rec.raw)
        fields: dict[str, str] = {}
        audio: tuple[str, bytes, str] | None = None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if name == "file":
                audio = (part.get_filename() or "", payload, part.get_content_type())
            elif isinstance(name, str):
                fields[name] = payload.decode("utf-8", "replace")
        if audio is None or not fields.get("model"):
            return _bad_request("fake: 'file' and 'model' are required")
        self._transcription_requests.append(
            {
                "model": fields["model"],
                "filename": audio[0],
                "size": len(audio[1]),
                "language": fields.get("language"),
                "content_type": audio[2],
            }
        )
        text = self._transcriptions.get(audio[1])
        if text is None:
            return error(400, "Invalid file format.", code="invalid_value")
        return json_response({"text": text})

    def _usage(self, step: Step, body: dict, completion_text: str) -> dict:
        pt = step.data.get("prompt_tokens")
        ct = step.data.get("completion_tokens")
        if pt is None:
            pt = _estimate_tokens(json.dumps(body.get("messages", []), ensure_ascii=False))
        if ct is None:
            ct = _estimate_tokens(completion_text)
        return {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}

    def _render(self, step: Step, rec: RecordedRequest) -> _Response:
        """Turn a (non-transport) step into a response."""
        body = rec.body if isinstance(rec.body, dict) else {}
        d = step.data
        kind = step.kind
        if kind == "error":
            headers = {}
            if d["retry_after"] is not None:
                ra = d["retry_after"]
                headers["Retry-After"] = str(int(ra)) if float(ra).is_integer() else str(ra)
                headers["retry-after-ms"] = str(int(ra * 1000))
            payload = {"error": {"message": d["message"], "type": d["type"], "param": None, "code": d["code"]}}
            return _Response(d["status"], _json_bytes(payload), headers=headers)
        if kind == "malformed":
            return _Response(d["status"], d["raw"], content_type=d["content_type"])
        if kind == "json":
            return _Response(d["status"], _json_bytes(d["body"]), headers=d["headers"])
        if kind in ("reply", "tool_calls"):
            return self._render_chat(step, body)
        if kind in ("embeddings", "embeddings_default"):
            return self._render_embeddings(step, body)
        if kind == "models":
            data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"} for m in self.models]
            return _Response(200, _json_bytes({"object": "list", "data": data}))
        if kind == "model":
            if d["id"] not in self.models:
                return self._render(error(404, f"The model '{d['id']}' does not exist", code="model_not_found"), rec)
            return _Response(
                200, _json_bytes({"id": d["id"], "object": "model", "created": 1700000000, "owned_by": "fake"})
            )
        if kind in ("delayed", "drop_connection", "drop_mid_body"):
            # only meaningful at top level / as delayed's inner step; here: render inner or empty
            inner = d.get("step") or reply("")
            return self._render(inner, rec)
        return self._render(error(500, f"fake: unknown step kind {kind!r}"), rec)

    def _render_chat(self, step: Step, body: dict) -> _Response:
        d = step.data
        model = body.get("model", "gpt-4o-mini")
        created = int(time.time())
        cid = f"chatcmpl-fake{self._next_id()}"
        message: dict[str, Any] = {"role": "assistant", "content": d["content"], "refusal": d.get("refusal")}
        calls: list[dict] = []
        if step.kind == "tool_calls":
            with self._lock:
                for name, args in d["calls"]:
                    self._call_counter += 1
                    calls.append(
                        {
                            "id": f"call_{self._call_counter}",
                            "type": "function",
                            "function": {"name": name, "arguments": args},
                        }
                    )
            message["tool_calls"] = calls
        completion_text = (d["content"] or "") + (d.get("refusal") or "")
        completion_text += "".join(c["function"]["name"] + c["function"]["arguments"] for c in calls)
        usage = self._usage(step, body, completion_text)
        if body.get("stream"):
            return self._render_stream(cid, created, model, message, d["finish_reason"], usage, body)
        payload = {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": d["finish_reason"]}],
            "usage": usage,
        }
        return _Response(200, _json_bytes(payload))

    def _render_stream(
        self, cid: str, created: int, model: str, message: dict, finish_reason: str, usage: dict, body: dict
    ) -> _Response:
        events = self._chunk_events(cid, created, model, message, finish_reason, usage, body, 16)
        return _Response(200, b"".join(e for _, e in events), content_type="text/event-stream")

    def _stream_events(self, step: Step, body: dict, chars_per_token: int) -> list[tuple[str, bytes]]:
        """The SSE events of a reply/tool_calls step: ("content", …) for each content chunk, ("meta", …) else."""
        response = self._render_chat(step, {**body, "stream": False})
        payload = json.loads(response.body)
        choice = payload["choices"][0]
        return self._chunk_events(
            payload["id"],
            payload["created"],
            payload["model"],
            choice["message"],
            choice["finish_reason"],
            payload["usage"],
            body,
            chars_per_token,
        )

    def _generation_seconds(self, step: Step, rec: RecordedRequest) -> float:
        """How long the scripted pacing of a `streamed` step takes from the request to the last chunk."""
        d = step.data
        body = rec.body if isinstance(rec.body, dict) else {}
        chunks = sum(kind == "content" for kind, _ in self._stream_events(d["step"], body, d["chars_per_token"]))
        pace = (max(chunks - 1, 0) / d["tokens_per_s"]) if d["tokens_per_s"] else 0.0
        return d["first_token_s"] + pace

    def _error_chunk(self, body: dict) -> bytes:
        return _sse(
            {
                "id": f"chatcmpl-fake{self._next_id()}",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body.get("model", "gpt-4o-mini"),
                "error": {"code": "server_error", "message": "fake: upstream failed"},
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            }
        )

    @staticmethod
    def _chunk_events(
        cid: str,
        created: int,
        model: str,
        message: dict,
        finish_reason: str,
        usage: dict,
        body: dict,
        chars_per_token: int,
    ) -> list[tuple[str, bytes]]:
        def chunk(delta: dict, fr: str | None = None, choices: bool = True, **extra: Any) -> bytes:
            obj: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": fr}] if choices else [],
            }
            obj.update(extra)
            return _sse(obj)

        events = [("meta", chunk({"role": "assistant", "content": ""}))]
        content = message.get("content") or ""
        for i in range(0, len(content), chars_per_token):
            events.append(("content", chunk({"content": content[i : i + chars_per_token]})))
        if message.get("refusal"):
            events.append(("meta", chunk({"refusal": message["refusal"]})))
        for idx, call in enumerate(message.get("tool_calls") or []):
            fn = call["function"]
            head = {
                "index": idx,
                "id": call["id"],
                "type": "function",
                "function": {"name": fn["name"], "arguments": ""},
            }
            events.append(("meta", chunk({"tool_calls": [head]})))
            arguments = fn["arguments"]
            half = len(arguments) // 2  # arguments arrive in pieces, as real providers send them
            for piece in (arguments[:half], arguments[half:]):
                if piece:
                    events.append(("meta", chunk({"tool_calls": [{"index": idx, "function": {"arguments": piece}}]})))
        events.append(("meta", chunk({}, finish_reason)))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(("meta", chunk({}, choices=False, usage=usage)))
        events.append(("meta", b"data: [DONE]\n\n"))
        return events

    def _render_embeddings(self, step: Step, body: dict) -> _Response:
        inp = body.get("input", "")
        texts: list[Any] = [inp] if isinstance(inp, str) else list(inp)
        if texts and all(isinstance(t, int) for t in texts):  # a single token array
            texts = [texts]
        texts = [t if isinstance(t, str) else json.dumps(t) for t in texts]
        fmt = body.get("encoding_format")
        if step.kind == "embeddings":
            vectors = [list(v) for v in step.data["vectors"]]
        else:
            dims = int(body.get("dimensions") or self.embedding_dimensions)
            vectors = [deterministic_embedding(t, dims) for t in texts]
        tokens = sum(_estimate_tokens(t) for t in texts)
        payload = {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": _encode_vector(v, fmt)} for i, v in enumerate(vectors)
            ],
            "model": body.get("model", "text-embedding-3-small"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return _Response(200, _json_bytes(payload))


def _sse(obj: Any) -> bytes:
    return b"data: " + _json_bytes(obj) + b"\n\n"


def _bad_request(message: str) -> Step:
    return error(400, message, code="invalid_json")
