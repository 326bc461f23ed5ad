"""A fake Telegram Bot API server for tests (stdlib only).

It listens on loopback (OS-chosen port) and speaks real HTTP/1.1 (keep-alive,
Content-Length), so the bot's real HTTP client is exercised end to end::

    from tests.fakes.telegram_server import FakeTelegram

    with FakeTelegram() as tg:
        client = TelegramClient(token=tg.token, base_url=tg.base_url)
        tg.fail_next("sendMessage", status=429, retry_after=1)
        client.send_message(42, "<b>Hi</b>", parse_mode="HTML")
        assert tg.sent_messages(42)[0].response["result"]["text"] == "Hi"

Requests go to ``{base_url}/bot{token}/{method}`` (POST with a JSON,
form-urlencoded or multipart/form-data body, or GET with a query string).
Answers use the Bot API envelope: ``{"ok": true, "result": ...}`` or
``{"ok": false, "error_code": N, "description": "...", "parameters": {...}}``
(``parameters`` only for 429), with the HTTP status equal to ``error_code``.

Every request whose path looks like ``/bot<token>/<method>`` is recorded as a
:class:`Call` when it arrives, including ones answered 401 (wrong token) and
404 (unknown method); the call is completed (status, response, delivered) once
it has been processed. Method names are case-insensitive (as in Telegram) and
are recorded under their canonical spelling.

Realistic validation (400s with Telegram's descriptions): empty / too long
text (4096 UTF-16 code units after HTML entity parsing and whitespace trimming),
too long captions (1024), strict HTML parse_mode, unknown file_ids, photo URLs
containing "missing", inline keyboard ``callback_data`` longer than 64 bytes,
forum topics (``open_forum``, ``close_topic``: TOPIC_CLOSED, "message thread not found"), chats
the bot lost (``lose_chat``: "chat not found"), setMyCommands' command and description rules,
invalid chat actions, webhook URLs that are not https, getUpdates while a
webhook is set (409), "message is not modified" when editing a message this
fake sent with an identical reply_markup.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = [
    "Call",
    "FakeTelegram",
    "HtmlParseError",
    "parse_html",
    "utf16_len",
    "TEXT_LIMIT",
    "CAPTION_LIMIT",
]

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
CALLBACK_DATA_LIMIT = 64  # bytes
LONG_POLL_CAP = 1.0  # seconds a getUpdates with timeout>0 may wait at most

_WRONG_FILE = "Bad Request: wrong file identifier/HTTP URL specified"
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply "
    "markup are exactly the same as a current content and reply markup of the message"
)

_CANONICAL_METHODS = (
    "getMe",
    "sendMessage",
    "sendPhoto",
    "sendChatAction",
    "sendMessageDraft",
    "answerCallbackQuery",
    "editMessageReplyMarkup",
    "editMessageText",
    "deleteMessage",
    "setWebhook",
    "getWebhookInfo",
    "deleteWebhook",
    "getUpdates",
    "setMyCommands",
    "getMyCommands",
    "deleteMyCommands",
    "getBusinessConnection",
    "getFile",
)
_METHODS = {m.lower(): m for m in _CANONICAL_METHODS}

_CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)

_DEFAULT_DESCRIPTIONS = {
    400: "Bad Request: chat not found",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    404: "Not Found",
    409: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}

# Parameter coercion for form / multipart / query values (which are all strings).
_INT_FIELDS = frozenset(
    {
        "direct_messages_topic_id",
        "message_id",
        "draft_id",
        "reply_to_message_id",
        "offset",
        "limit",
        "timeout",
        "message_thread_id",
        "cache_time",
        "max_connections",
        "user_id",
        "from_chat_id",
    }
)
_BOOL_FIELDS = frozenset(
    {
        "disable_web_page_preview",
        "disable_notification",
        "protect_content",
        "show_alert",
        "drop_pending_updates",
        "allow_sending_without_reply",
        "has_spoiler",
        "show_caption_above_media",
    }
)
_JSON_FIELDS = frozenset(
    {
        "reply_markup",
        "reply_parameters",
        "link_preview_options",
        "allowed_updates",
        "entities",
        "caption_entities",
        "commands",
        "scope",
    }
)


# --------------------------------------------------------------------------- #
# Recorded calls
# --------------------------------------------------------------------------- #
@dataclass
class Call:
    """One request that reached the Bot API dispatcher."""

    method: str
    params: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    http_status: int = 0  # 0 while still being processed
    response: dict[str, Any] = field(default_factory=dict)
    delivered: bool = False
    time: float = 0.0  # time.monotonic() at arrival
    token: str = ""
    http_method: str = "POST"
    content_type: str = ""
    # extra facts, e.g. {"photo_source": "upload"|"url"|"file_id", "photo_size": n, "photo_url": u}
    meta: dict[str, Any] = field(default_factory=dict)
    connection_reset: bool = False  # answered by closing the socket (reset_after_request)

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))

    @property
    def result(self) -> Any:
        return self.response.get("result")

    @property
    def chat_id(self) -> Any:
        return self.params.get("chat_id")


class _ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


def _bad(description: str) -> _ApiError:
    return _ApiError(400, description)


def _error_envelope(status: int, description: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    env: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        env["parameters"] = parameters
    return env


# --------------------------------------------------------------------------- #
# Text helpers: UTF-16 length and Telegram's HTML parse_mode
# --------------------------------------------------------------------------- #
def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (how Telegram counts message length)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class HtmlParseError(ValueError):
    """Raised by :func:`parse_html`; str(exc) is the reason Telegram would give."""


_HTML_TAGS = frozenset(
    {
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "span",
        "tg-spoiler",
        "a",
        "code",
        "pre",
        "blockquote",
        "tg-emoji",
    }
)
_SIMPLE_ENTITY_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY_RE = re.compile(r"&(?:#([0-9]{1,8})|#[xX]([0-9a-fA-F]{1,8})|([a-zA-Z]{1,10}));")
_SPACE = " \t\r\n\f\v"


def _decode_entity(src: str, i: int) -> tuple[str, int] | None:
    """Decode the HTML entity at src[i] == '&' -> (char, index after it), or None."""
    m = _ENTITY_RE.match(src, i)
    if not m:
        return None
    dec, hexa, name = m.groups()
    if name is not None:
        ch = _NAMED_ENTITIES.get(name)
        if ch is None:
            return None
        return ch, m.end()
    code = int(dec) if dec is not None else int(hexa, 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code), m.end()


def _decode_attr_value(value: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(value):
        if value[i] == "&":
            dec = _decode_entity(value, i)
            if dec is not None:
                out.append(dec[0])
                i = dec[1]
                continue
        out.append(value[i])
        i += 1
    return "".join(out)


def parse_html(src: str) -> tuple[str, list[dict[str, Any]]]:
    """Parse Telegram-flavoured HTML -> (plain text, entities with UTF-16 offsets).

    Strict: unsupported tags, unclosed or mismatched tags, a bare ``<`` and an
    ``&`` that does not start a supported entity raise :class:`HtmlParseError`.
    A bare ``>`` is taken literally (as Telegram does).
    """

    def byte_offset(pos: int) -> int:
        return len(src[:pos].encode("utf-8", "surrogatepass"))

    out: list[str] = []
    u16 = 0
    # stack items: [name, start_u16, attrs, byte_offset, extra]
    stack: list[list[Any]] = []
    entities: list[dict[str, Any]] = []
    n = len(src)
    i = 0
    while i < n:
        c = src[i]
        if c == "&":
            dec = _decode_entity(src, i)
            if dec is None:
                raise HtmlParseError(f'Unsupported HTML entity or unescaped "&" at byte offset {byte_offset(i)}')
            out.append(dec[0])
            u16 += utf16_len(dec[0])
            i = dec[1]
            continue
        if c != "<":
            out.append(c)
            u16 += 2 if ord(c) > 0xFFFF else 1
            i += 1
            continue

        begin = i
        if i + 1 < n and src[i + 1] == "/":
            # ---- end tag ----
            close = src.find(">", i + 2)
            if close == -1:
                raise HtmlParseError(f"Unclosed end tag at byte offset {byte_offset(begin)}")
            name = src[i + 2 : close].strip(_SPACE).lower()
            if not stack:
                raise HtmlParseError(f"Unexpected end tag at byte offset {byte_offset(begin)}")
            top = stack[-1][0]
            if name != top:
                raise HtmlParseError(
                    f'Unmatched end tag at byte offset {byte_offset(begin)}, expected "</{top}>", found "</{name}>"'
                )
            tag, start, attrs, _, extra = stack.pop()
            length = u16 - start
            if tag == "code" and stack and stack[-1][0] == "pre":
                # <pre><code class="language-x">: the language belongs to the pre entity
                lang = attrs.get("class", "")
                if lang.startswith("language-") and len(lang) > len("language-"):
                    stack[-1][4]["language"] = lang[len("language-") :]
            elif length > 0:
                ent: dict[str, Any] = {"offset": start, "length": length}
                if tag in _SIMPLE_ENTITY_TYPES:
                    ent["type"] = _SIMPLE_ENTITY_TYPES[tag]
                elif tag == "a":
                    href = attrs.get("href", "")
                    if href.startswith("tg://user?id="):
                        ent["type"] = "text_mention"
                        ent["user"] = {"id": int(href.split("=", 1)[1]) if href.split("=", 1)[1].isdigit() else 0}
                    else:
                        ent["type"] = "text_link"
                        ent["url"] = href
                elif tag == "code":
                    ent["type"] = "code"
                elif tag == "pre":
                    ent["type"] = "pre"
                    if extra.get("language"):
                        ent["language"] = extra["language"]
                elif tag == "blockquote":
                    ent["type"] = "expandable_blockquote" if "expandable" in attrs else "blockquote"
                elif tag == "tg-emoji":
                    ent["type"] = "custom_emoji"
                    ent["custom_emoji_id"] = attrs.get("emoji-id", "")
                entities.append(ent)
            i = close + 1
            continue

        # ---- start tag ----
        j = i + 1
        while j < n and src[j] not in _SPACE and src[j] != ">":
            j += 1
        if j >= n:
            raise HtmlParseError(f"Unclosed start tag at byte offset {byte_offset(begin)}")
        name = src[i + 1 : j].lower()
        if name not in _HTML_TAGS:
            raise HtmlParseError(f'Unsupported start tag "{name}" at byte offset {byte_offset(begin)}')
        attrs: dict[str, str] = {}
        while True:
            while j < n and src[j] in _SPACE:
                j += 1
            if j >= n:
                raise HtmlParseError(f"Unclosed start tag at byte offset {byte_offset(begin)}")
            if src[j] == ">":
                j += 1
                break
            k = j
            while k < n and src[k] not in _SPACE and src[k] not in "=>":
                k += 1
            attr = src[j:k].lower()
            if not attr:
                raise HtmlParseError(f'Empty attribute name in the tag "{name}" at byte offset {byte_offset(begin)}')
            j = k
            while j < n and src[j] in _SPACE:
                j += 1
            value = ""
            if j < n and src[j] == "=":
                j += 1
                while j < n and src[j] in _SPACE:
                    j += 1
                if j >= n:
                    raise HtmlParseError(f"Unclosed start tag at byte offset {byte_offset(begin)}")
                if src[j] in "\"'":
                    quote = src[j]
                    end = src.find(quote, j + 1)
                    if end == -1:
                        raise HtmlParseError(
                            f'Unclosed attribute value in the tag "{name}" at byte offset {byte_offset(begin)}'
                        )
                    value = src[j + 1 : end]
                    j = end + 1
                else:
                    k = j
                    while k < n and src[k] not in _SPACE and src[k] != ">":
                        k += 1
                    value = src[j:k]
                    j = k
            attrs[attr] = _decode_attr_value(value)
        if name == "span" and attrs.get("class") != "tg-spoiler":
            raise HtmlParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {byte_offset(begin)}')
        if name == "tg-emoji" and not attrs.get("emoji-id"):
            raise HtmlParseError(f'Tag "tg-emoji" must have attribute "emoji-id" at byte offset {byte_offset(begin)}')
        stack.append([name, u16, attrs, byte_offset(begin), {}])
        i = j

    if stack:
        raise HtmlParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _trim(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Strip leading/trailing whitespace like Telegram, fixing entity offsets."""
    stripped = text.strip()
    if stripped == text:
        return text, entities
    if not stripped:
        return "", []
    lead = utf16_len(text[: len(text) - len(text.lstrip())])
    total = utf16_len(stripped)
    fixed: list[dict[str, Any]] = []
    for e in entities:
        start = max(e["offset"] - lead, 0)
        end = min(e["offset"] + e["length"] - lead, total)
        if end > start:
            e = dict(e, offset=start, length=end - start)
            fixed.append(e)
    return stripped, fixed


# --------------------------------------------------------------------------- #
# Request body parsing
# --------------------------------------------------------------------------- #
_PARAM_RE = re.compile(r';\s*([A-Za-z0-9_*-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def _header_params(value: str) -> tuple[str, dict[str, str]]:
    main = value.split(";", 1)[0].strip().lower()
    params: dict[str, str] = {}
    for m in _PARAM_RE.finditer(value):
        v = m.group(2).strip()
        if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
            v = re.sub(r"\\(.)", r"\1", v[1:-1])
        params[m.group(1).lower()] = v
    return main, params


def _parse_multipart(body: bytes, boundary: str) -> tuple[dict[str, str], dict[str, bytes], dict[str, str]]:
    """-> (text fields, file fields, file names). Raises ValueError on garbage."""
    fields: dict[str, str] = {}
    files: dict[str, bytes] = {}
    filenames: dict[str, str] = {}
    delim = b"--" + boundary.encode("latin-1")
    chunks = body.split(delim)
    if len(chunks) < 3:
        raise ValueError("no multipart parts")
    for chunk in chunks[1:]:
        if chunk.startswith(b"--"):
            break  # closing delimiter
        if chunk.startswith(b"\r\n"):
            chunk = chunk[2:]
        if chunk.endswith(b"\r\n"):
            chunk = chunk[:-2]
        head, sep, data = chunk.partition(b"\r\n\r\n")
        if not sep:
            raise ValueError("multipart part without header separator")
        headers: dict[str, str] = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        _, disp = _header_params(headers.get("content-disposition", ""))
        name = disp.get("name")
        if name is None:
            continue
        filename = disp.get("filename")
        if filename is None and "filename*" in disp:
            filename = unquote(disp["filename*"].split("''", 1)[-1])
        if filename is not None:
            files[name] = data
            filenames[name] = filename
        else:
            fields[name] = data.decode("utf-8", "replace")
    return fields, files, filenames


def _coerce_chat_id(value: Any) -> Any:
    if isinstance(value, str):
        s = value.strip()
        if re.fullmatch(r"-?\d+", s):
            return int(s)
        return s
    return value


def _coerce(params: dict[str, Any], from_strings: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key == "chat_id":
            value = _coerce_chat_id(value)
        elif key in _JSON_FIELDS and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass  # left as a string; validation reports it
        elif key in _INT_FIELDS and isinstance(value, str):
            if re.fullmatch(r"\s*-?\d+\s*", value):
                value = int(value)
        elif key in _BOOL_FIELDS and isinstance(value, str) and from_strings:
            value = value.strip().lower() in ("true", "1", "yes", "on")
        out[key] = value
    return out


# --------------------------------------------------------------------------- #
# HTTP plumbing
# --------------------------------------------------------------------------- #
class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, fake: FakeTelegram):
        self.fake = fake
        self.connections: set[socket.socket] = set()
        self.conn_lock = threading.Lock()
        super().__init__((fake.host, 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle + the client's delayed
    # ACK hold every response ~40 ms on loopback.
    disable_nagle_algorithm = True
    server_version = "FakeTelegramBotAPI/1.0"
    sys_version = ""
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence
        pass

    def setup(self) -> None:
        super().setup()
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        with self.server.conn_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            with self.server.conn_lock:
                self.server.connections.discard(self.connection)

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    # -- helpers --
    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            # Headers and body in one write: two small writes trip Nagle + delayed ACK (~40 ms).
            self._headers_buffer.append(b"\r\n")
            self.wfile.write(b"".join(self._headers_buffer) + data)
            self._headers_buffer = []
        except OSError:
            self.close_connection = True

    def _send_file(self, data: bytes | None) -> None:
        if data is None:
            self._send_json(404, _error_envelope(404, "Not Found"))
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _reset(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _handle(self, http_method: str) -> None:
        fake = self.server.fake
        try:
            body = self._read_body()
        except (OSError, ValueError):
            self.close_connection = True
            return
        url = urlsplit(self.path)
        download = re.fullmatch(r"/file/bot([^/]*)/(.+)", url.path)
        if download and http_method == "GET":
            self._send_file(fake.file_bytes(unquote(download.group(1)), unquote(download.group(2))))
            return
        m = re.fullmatch(r"/bot([^/]*)/([^/]+)/?", url.path)
        if not m:
            self._send_json(404, _error_envelope(404, "Not Found"))
            return
        token, method = unquote(m.group(1)), unquote(m.group(2))

        ctype_header = self.headers.get("Content-Type") or ""
        ctype, cparams = _header_params(ctype_header)
        raw: dict[str, Any] = dict(parse_qsl(url.query, keep_blank_values=True))
        files: dict[str, bytes] = {}
        filenames: dict[str, str] = {}
        from_strings = True
        parse_error: str | None = None
        try:
            if body:
                if ctype == "application/json":
                    decoded = json.loads(body.decode("utf-8"))
                    if not isinstance(decoded, dict):
                        raise ValueError("JSON body is not an object")
                    if raw:
                        raw = _coerce(raw, True)
                    raw.update(decoded)
                    from_strings = False
                elif ctype == "multipart/form-data":
                    boundary = cparams.get("boundary")
                    if not boundary:
                        raise ValueError("multipart boundary missing")
                    fields, files, filenames = _parse_multipart(body, boundary)
                    raw.update(fields)
                else:  # application/x-www-form-urlencoded (or unspecified)
                    raw.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        except (ValueError, UnicodeDecodeError) as exc:
            parse_error = f"Bad Request: can't parse request body: {exc}"
        params = _coerce(raw, from_strings)
        if fake.network_latency:  # the way there: the call is recorded when it "arrives"
            fake._stopping.wait(fake.network_latency / 2)

        status, payload, reset, delay = fake._dispatch(
            token=token,
            method=method,
            params=params,
            files=files,
            filenames=filenames,
            http_method=http_method,
            content_type=ctype,
            parse_error=parse_error,
        )
        delay += fake.network_latency / 2  # and the way back
        if delay > 0:
            fake._stopping.wait(delay)
        if reset:
            self._reset()
            return
        self._send_json(status, payload)


# --------------------------------------------------------------------------- #
# The fake
# --------------------------------------------------------------------------- #
@dataclass
class _FailureRule:
    status: int
    description: str | None
    retry_after: int | None
    times: int
    method: str | None = None
    predicate: Callable[[Call], bool] | None = None


@dataclass
class _CountedRule:
    times: int
    seconds: float = 0.0


class FakeTelegram:
    """In-process fake of the Telegram Bot API, served over loopback HTTP."""

    def __init__(
        self, token: str = "123456:TEST-TOKEN", *, bot_username: str = "sommelier_test_bot", host: str = "127.0.0.1"
    ):
        self.token = token
        self.host = host  # loopback; `make sam-test` uses the podman network's host address
        self.bot_username = bot_username
        head = token.split(":", 1)[0]
        self.bot_user: dict[str, Any] = {
            "id": int(head) if head.isdigit() else 123456,
            "is_bot": True,
            "first_name": "Sommelier",
            "username": bot_username,
        }
        self._lock = threading.RLock()
        self.network_latency = 0.0  # seconds per call, round trip (benchmarks model the real Bot API with it)
        self._cond = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._base_url: str | None = None
        self._init_state()

    def _init_state(self) -> None:
        self._calls: list[Call] = []
        self._failures: list[_FailureRule] = []
        self._resets: dict[str, list[_CountedRule]] = {}
        self._delays: dict[str, list[_CountedRule]] = {}
        self._updates: list[dict[str, Any]] = []
        self._last_update_id = 0
        self._webhook: dict[str, Any] | None = None
        self._commands: list[Any] = []
        self._commands_by_language: dict[str, list[Any]] = {}
        self._next_message_id: dict[Any, int] = {}
        self._messages: dict[tuple[Any, int], dict[str, Any]] = {}
        self._photos: dict[str, list[dict[str, Any]]] = {}
        self._forums: dict[int, dict[int, bool]] = {}  # forum chat -> {topic thread id: closed?}
        self._gone_chats: set[Any] = set()  # chats the bot can no longer see ("chat not found")
        self._drafts: dict[tuple[Any, int], dict[str, Any]] = {}  # (chat id, draft_id) -> {"text", "time"}
        self._draft_refused_chats: set[Any] = set()
        self.drafts_refused = False  # the whole bot may not use drafts (e.g. an older Bot API server)
        self.draft_min_interval: float | None = None  # faster changes of one draft get a 429
        self._business: dict[str, dict[str, Any]] = {}  # connection id -> BusinessConnection
        self._direct_chats: set[int] = set()  # channels' direct-messages chats
        self._migrated: dict[int, int] = {}  # basic group -> the supergroup it became
        self._files: dict[str, bytes] = {}  # file_id -> the bytes getFile and /file/ serve

    # ---------------- lifecycle ----------------
    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("FakeTelegram is not started; call start() or use it as a context manager")
        return self._base_url

    @property
    def api_url(self) -> str:
        """``{base_url}/bot{token}`` — append ``/{method}``."""
        return f"{self.base_url}/bot{self.token}"

    def start(self) -> FakeTelegram:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self)
        host, port = self._server.server_address[:2]
        self._base_url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="FakeTelegram",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server = self._server
        if server is None:
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        server.shutdown()
        server.server_close()
        with server.conn_lock:
            conns = list(server.connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeTelegram:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---------------- inspection ----------------
    @property
    def calls(self) -> list[Call]:
        """Snapshot of all recorded calls, in arrival order."""
        with self._lock:
            return list(self._calls)

    def calls_of(self, method: str) -> list[Call]:
        name = _METHODS.get(method.lower(), method)
        with self._lock:
            return [c for c in self._calls if c.method == name]

    def sent_messages(self, chat_id: int | str | None = None) -> list[Call]:
        """Successful (delivered) sendMessage/sendPhoto calls, in order, optionally for one chat."""
        with self._lock:
            out = []
            for c in self._calls:
                if c.method not in ("sendMessage", "sendPhoto") or not c.delivered:
                    continue
                if chat_id is not None:
                    result = c.response.get("result") or {}
                    if result.get("chat", {}).get("id") != _coerce_chat_id(chat_id):
                        continue
                out.append(c)
            return out

    def wait_for_calls(self, method: str, count: int = 1, timeout: float = 5.0) -> list[Call]:
        """Wait until at least ``count`` completed calls of ``method`` exist; return them."""
        deadline = time.monotonic() + timeout
        while True:
            done = [c for c in self.calls_of(method) if c.http_status]
            if len(done) >= count:
                return done
            if time.monotonic() >= deadline:
                raise TimeoutError(f"expected {count} {method} call(s), got {len(done)}")
            time.sleep(0.01)

    def reset(self) -> None:
        """Forget calls, scripted rules, updates, webhook, messages and file_ids."""
        with self._cond:
            self._init_state()
            self._cond.notify_all()

    # ---------------- scripting ----------------
    def fail_next(
        self,
        method: str,
        *,
        status: int,
        description: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        name = _METHODS.get(method.lower(), method)
        with self._lock:
            self._failures.append(_FailureRule(status, description, retry_after, times, method=name))

    def fail_when(
        self,
        predicate: Callable[[Call], bool],
        *,
        status: int,
        description: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        """Fail calls for which ``predicate(call)`` is true (call.params/files are filled in)."""
        with self._lock:
            self._failures.append(_FailureRule(status, description, retry_after, times, predicate=predicate))

    def reset_after_request(self, method: str, *, times: int = 1) -> None:
        """Process and record the next call(s) normally, then close the socket without answering."""
        name = _METHODS.get(method.lower(), method)
        with self._lock:
            self._resets.setdefault(name, []).append(_CountedRule(times))

    def delay(self, method: str, seconds: float, *, times: int = 1) -> None:
        """Hold the response of the next call(s) for ``seconds`` (the call is processed first)."""
        name = _METHODS.get(method.lower(), method)
        with self._lock:
            self._delays.setdefault(name, []).append(_CountedRule(times, seconds))

    def open_forum(self, chat_id: int, *topics: int) -> None:
        """Make ``chat_id`` a forum supergroup with these open topics (General is always there)."""
        with self._lock:
            self._forums.setdefault(chat_id, {}).update({t: False for t in topics})

    def close_topic(self, chat_id: int, thread_id: int) -> None:
        with self._lock:
            self._forums.setdefault(chat_id, {})[thread_id] = True

    def connect_business(
        self, connection_id: str, user_chat_id: int, *, can_reply: bool = True, enabled: bool = True
    ) -> dict[str, Any]:
        """A Business account (its owner's private chat ``user_chat_id``) connected to the bot."""
        connection: dict[str, Any] = {
            "id": connection_id,
            "user": {"id": user_chat_id, "is_bot": False, "first_name": "Owner"},
            "user_chat_id": user_chat_id,
            "date": int(time.time()),
            "is_enabled": enabled,
        }
        connection["rights"] = {"can_reply": True} if can_reply else {}  # false rights are omitted
        with self._lock:
            self._business[connection_id] = connection
        return copy.deepcopy(connection)

    def direct_messages_chat(self, chat_id: int) -> None:
        """``chat_id`` is a channel's direct-messages chat: sends need direct_messages_topic_id, no chat actions."""
        with self._lock:
            self._direct_chats.add(chat_id)

    def migrate_group(self, chat_id: int, supergroup_id: int) -> None:
        """The basic group became a supergroup: sends to the old id get 400 with migrate_to_chat_id."""
        with self._lock:
            self._migrated[chat_id] = supergroup_id

    def add_file(self, file_id: str, data: bytes) -> None:
        """A file users sent (a voice, a photo size): getFile knows it and /file/bot<token>/... serves it."""
        with self._lock:
            self._files[file_id] = data

    def lose_chat(self, chat_id: Any) -> None:
        """The chat is gone for the bot (deleted, or it never existed): every send gets "chat not found"."""
        with self._lock:
            self._gone_chats.add(chat_id)

    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update for getUpdates (assigning ``update_id`` if missing); returns the stored copy."""
        upd = copy.deepcopy(update)
        with self._cond:
            if "update_id" not in upd:
                upd["update_id"] = max(self._last_update_id, 100_000) + 1
            self._last_update_id = max(self._last_update_id, int(upd["update_id"]))
            self._updates.append(upd)
            self._updates.sort(key=lambda u: u["update_id"])
            self._cond.notify_all()
            return copy.deepcopy(upd)

    @property
    def webhook(self) -> dict[str, Any] | None:
        with self._lock:
            return copy.deepcopy(self._webhook)

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._updates)

    # ---------------- dispatch ----------------
    def _take_failure(self, call: Call) -> _FailureRule | None:
        for rule in self._failures:
            if rule.method is not None:
                hit = rule.method == call.method
            else:
                try:
                    hit = bool(rule.predicate(call)) if rule.predicate else False
                except Exception:  # a broken predicate must not kill the server
                    hit = False
            if hit:
                rule.times -= 1
                if rule.times <= 0:
                    self._failures.remove(rule)
                return rule
        return None

    @staticmethod
    def _take_counted(rules: dict[str, list[_CountedRule]], method: str) -> _CountedRule | None:
        queue = rules.get(method)
        if not queue:
            return None
        rule = queue[0]
        rule.times -= 1
        if rule.times <= 0:
            queue.pop(0)
        return rule

    @staticmethod
    def _scripted_error(rule: _FailureRule) -> _ApiError:
        status = rule.status
        params = None
        if status == 429:
            retry = rule.retry_after if rule.retry_after is not None else 1
            desc = rule.description or f"Too Many Requests: retry after {retry}"
            params = {"retry_after": retry}
        else:
            desc = rule.description or _DEFAULT_DESCRIPTIONS.get(status)
            if desc is None:
                try:
                    desc = HTTPStatus(status).phrase
                except ValueError:
                    desc = "Error"
        return _ApiError(status, desc, params)

    def _dispatch(
        self,
        *,
        token: str,
        method: str,
        params: dict[str, Any],
        files: dict[str, bytes],
        filenames: dict[str, str],
        http_method: str,
        content_type: str,
        parse_error: str | None,
    ) -> tuple[int, dict[str, Any], bool, float]:
        canonical = _METHODS.get(method.lower())
        call = Call(
            method=canonical or method,
            params=params,
            files=files,
            time=time.monotonic(),
            token=token,
            http_method=http_method,
            content_type=content_type,
        )
        if filenames:
            call.meta["filenames"] = dict(filenames)
        reset = False
        delay = 0.0
        with self._cond:
            self._calls.append(call)
            try:
                if token != self.token:
                    raise _ApiError(401, "Unauthorized")
                if canonical is None:
                    raise _ApiError(404, "Not Found")
                rule_r = self._take_counted(self._resets, canonical)
                rule_d = self._take_counted(self._delays, canonical)
                reset = rule_r is not None
                delay = rule_d.seconds if rule_d is not None else 0.0
                if parse_error:
                    raise _bad(parse_error)
                failure = self._take_failure(call)
                if failure is not None:
                    raise self._scripted_error(failure)
                handler = getattr(self, "_m_" + canonical)
                result, extra = handler(call)
                payload: dict[str, Any] = {"ok": True, "result": result}
                if extra:
                    payload["description"] = extra
                call.http_status = 200
                call.response = payload
                call.delivered = True
            except _ApiError as err:
                call.http_status = err.status
                call.response = _error_envelope(err.status, err.description, err.parameters)
                call.delivered = False
            except Exception as exc:  # bug in the fake: report loudly, keep serving
                call.http_status = 500
                call.response = _error_envelope(500, f"Internal Server Error: fake crashed: {exc!r}")
                call.delivered = False
            call.connection_reset = reset
            return call.http_status, call.response, reset, delay

    # ---------------- helpers for handlers ----------------
    def _chat(self, params: dict[str, Any], *, thread_in_any_supergroup: bool = False) -> dict[str, Any]:
        """The chat a call names, as Telegram would refuse it. ``message_thread_id`` is for a forum's topics only
        (sendMessage, sendPhoto…: "for forum supergroups and private chats of bots with forum topic mode enabled
        only"); sendChatAction takes one in any supergroup (``thread_in_any_supergroup``)."""
        chat = self._target_chat(params)
        thread = params.get("message_thread_id")
        if thread not in (None, "") and chat.get("type") in ("group", "supergroup") and not chat.get("is_forum"):
            if chat.get("type") == "group" or not thread_in_any_supergroup:
                raise _bad("Bad Request: message thread not found")
        return chat

    def _target_chat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        if chat_id is None or chat_id == "":
            raise _bad("Bad Request: chat_id is empty")
        if isinstance(chat_id, bool) or not isinstance(chat_id, (int, str)):
            raise _bad("Bad Request: chat not found")
        if isinstance(chat_id, str):
            if not re.fullmatch(r"@[A-Za-z][A-Za-z0-9_]{3,31}", chat_id):
                raise _bad("Bad Request: chat not found")
            return {"id": chat_id, "type": "channel", "username": chat_id[1:], "title": chat_id[1:]}
        if chat_id == 0 or chat_id in self._gone_chats:
            raise _bad("Bad Request: chat not found")
        if chat_id in self._migrated:
            raise _ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": self._migrated[chat_id]},
            )
        self._check_business(params)
        if chat_id in self._direct_chats:
            topic = params.get("direct_messages_topic_id")
            if isinstance(topic, bool) or not isinstance(topic, int):
                raise _bad("Bad Request: direct messages topic must be specified")
            return {"id": chat_id, "type": "supergroup", "title": "Shop direct messages", "is_direct_messages": True}
        if chat_id in self._forums:
            self._check_topic(chat_id, params.get("message_thread_id"))
            return {"id": chat_id, "type": "supergroup", "title": "Test forum", "is_forum": True}
        if chat_id > 0:
            return {"id": chat_id, "type": "private", "first_name": "Tester"}
        if str(chat_id).startswith("-100"):
            return {"id": chat_id, "type": "supergroup", "title": "Test supergroup"}
        return {"id": chat_id, "type": "group", "title": "Test group"}

    def _check_business(self, params: dict[str, Any]) -> None:
        """A send on behalf of a Business account: the connection must exist, be enabled and may reply."""
        connection_id = params.get("business_connection_id")
        if connection_id is None:
            return
        connection = self._business.get(connection_id) if isinstance(connection_id, str) else None
        # Disabled, or without the right to answer the account's chats (the exact text then is not known).
        if connection is None or not connection["is_enabled"] or not connection.get("rights", {}).get("can_reply"):
            raise _bad("Bad Request: business connection not found")

    def _check_topic(self, chat_id: int, thread: Any) -> None:
        """Forum rules: a message without a thread id goes to General; a closed or unknown topic refuses it."""
        if thread is None or thread == "":
            return
        if isinstance(thread, bool) or not isinstance(thread, int):
            raise _bad("Bad Request: message thread not found")
        topics = self._forums[chat_id]
        if thread not in topics:
            raise _bad("Bad Request: message thread not found")
        if topics[thread]:
            raise _bad("Bad Request: TOPIC_CLOSED")

    def _format(self, text: str, parse_mode: Any, entities: Any) -> tuple[str, list[dict[str, Any]]]:
        mode = (parse_mode or "").strip().lower() if isinstance(parse_mode, str) else ""
        if mode == "html":
            try:
                plain, ents = parse_html(text)
            except HtmlParseError as exc:
                raise _bad(f"Bad Request: can't parse entities: {exc}") from None
        elif mode in ("", "markdown", "markdownv2"):
            plain = text
            ents = list(entities) if isinstance(entities, list) else []
        else:
            raise _bad("Bad Request: unsupported parse_mode")
        return _trim(plain, ents)

    @staticmethod
    def _markup(params: dict[str, Any]) -> dict[str, Any] | None:
        markup = params.get("reply_markup")
        if markup is None or markup == "":
            return None
        if not isinstance(markup, dict):
            raise _bad("Bad Request: can't parse reply keyboard markup JSON object")
        if "inline_keyboard" in markup:
            rows = markup["inline_keyboard"]
            if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
                raise _bad(
                    'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'
                )
            for row in rows:
                for button in row:
                    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                        raise _bad("Bad Request: can't parse inline keyboard button: Text must be a String")
                    actions = set(button) - {"text"}
                    if not actions:
                        raise _bad(
                            "Bad Request: can't parse inline keyboard button: "
                            "Text buttons are unallowed in the inline keyboard"
                        )
                    if "callback_data" in button:
                        data = button["callback_data"]
                        if not isinstance(data, str) or not (1 <= len(data.encode("utf-8")) <= CALLBACK_DATA_LIMIT):
                            raise _bad("Bad Request: BUTTON_DATA_INVALID")
        return markup

    def _new_message(self, chat: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        key = chat["id"]
        mid = self._next_message_id.get(key, 0) + 1
        self._next_message_id[key] = mid
        msg: dict[str, Any] = {
            "message_id": mid,
            "from": dict(self.bot_user),
            "chat": dict(chat),
            "date": int(time.time()),
        }
        thread = params.get("message_thread_id")
        if chat.get("is_forum") and isinstance(thread, int) and not isinstance(thread, bool):
            msg.update(message_thread_id=thread, is_topic_message=True)
        reply_to = params.get("reply_to_message_id")
        rp = params.get("reply_parameters")
        if reply_to is None and isinstance(rp, dict):
            reply_to = rp.get("message_id")
        if isinstance(reply_to, int):
            msg["reply_to_message"] = self._messages.get(
                (key, reply_to), {"message_id": reply_to, "chat": dict(chat), "date": msg["date"]}
            )
        return msg

    @staticmethod
    def _attach_markup(msg: dict[str, Any], markup: dict[str, Any] | None) -> None:
        # Telegram echoes only inline keyboards back in the Message.
        if markup and markup.get("inline_keyboard"):
            msg["reply_markup"] = {"inline_keyboard": markup["inline_keyboard"]}
        else:
            msg.pop("reply_markup", None)

    def _new_file_id(self) -> str:
        while True:
            fid = "AgACAgIAAx" + secrets.token_urlsafe(36)
            if fid not in self._photos:
                return fid

    def _new_photo(self, largest_size: int) -> list[dict[str, Any]]:
        dims = [(90, 60), (320, 213), (1280, 853)]
        sizes: list[dict[str, Any]] = []
        for k, (w, h) in enumerate(dims):
            size = max(1, largest_size * (w * h) // (1280 * 853)) if k < 2 else largest_size
            sizes.append(
                {
                    "file_id": self._new_file_id(),
                    "file_unique_id": "AQAD" + secrets.token_urlsafe(12),
                    "width": w,
                    "height": h,
                    "file_size": size,
                }
            )
        for s in sizes:
            self._photos[s["file_id"]] = sizes
        return sizes

    # ---------------- method handlers: (result, description|None) ----------------
    def _m_getMe(self, call: Call) -> tuple[Any, str | None]:
        me = dict(self.bot_user)
        me.update(can_join_groups=True, can_read_all_group_messages=False, supports_inline_queries=False)
        return me, None

    def _m_sendMessage(self, call: Call) -> tuple[Any, str | None]:
        p = call.params
        chat = self._chat(p)
        text = p.get("text")
        text = "" if text is None else str(text)
        plain, ents = self._format(text, p.get("parse_mode"), p.get("entities"))
        if not plain:
            raise _bad("Bad Request: message text is empty")
        if utf16_len(plain) > TEXT_LIMIT:
            raise _bad("Bad Request: message is too long")
        markup = self._markup(p)
        msg = self._new_message(chat, p)
        msg["text"] = plain
        if ents:
            msg["entities"] = ents
        self._attach_markup(msg, markup)
        self._messages[(chat["id"], msg["message_id"])] = msg
        return copy.deepcopy(msg), None

    def _m_sendPhoto(self, call: Call) -> tuple[Any, str | None]:
        p = call.params
        chat = self._chat(p)
        caption = p.get("caption")
        plain, ents = self._format(
            "" if caption is None else str(caption), p.get("parse_mode"), p.get("caption_entities")
        )
        if utf16_len(plain) > CAPTION_LIMIT:
            raise _bad("Bad Request: message caption is too long")
        markup = self._markup(p)

        photo = p.get("photo")
        data: bytes | None = None
        if "photo" in call.files:
            data = call.files["photo"]
        elif isinstance(photo, str) and photo.startswith("attach://"):
            data = call.files.get(photo[len("attach://") :])
            if data is None:
                raise _bad(_WRONG_FILE)
        if data is not None:
            if not data:
                raise _bad("Bad Request: file must be non-empty")
            sizes = self._new_photo(len(data))
            call.meta.update(photo_source="upload", photo_size=len(data))
        elif isinstance(photo, str) and photo.strip():
            ref = photo.strip()
            if re.match(r"(?i)https?://", ref):
                if "missing" in ref:
                    raise _bad(_WRONG_FILE)
                sizes = self._new_photo(48_213)
                call.meta.update(photo_source="url", photo_url=ref)
            elif ref in self._photos:
                sizes = self._photos[ref]
                call.meta.update(photo_source="file_id")
            else:
                raise _bad(_WRONG_FILE)
        elif photo is None:
            raise _bad("Bad Request: there is no photo in the request")
        else:
            raise _bad(_WRONG_FILE)

        msg = self._new_message(chat, p)
        msg["photo"] = copy.deepcopy(sizes)
        if plain:
            msg["caption"] = plain
            if ents:
                msg["caption_entities"] = ents
        self._attach_markup(msg, markup)
        self._messages[(chat["id"], msg["message_id"])] = msg
        return copy.deepcopy(msg), None

    def _m_sendChatAction(self, call: Call) -> tuple[Any, str | None]:
        if call.params.get("chat_id") in self._direct_chats:  # "channel direct messages chats aren't supported"
            raise _bad("Bad Request: chat actions can't be sent to channel direct messages chats")
        self._chat(call.params, thread_in_any_supergroup=True)
        action = call.params.get("action")
        if not action:
            raise _bad("Bad Request: action is empty")
        if action not in _CHAT_ACTIONS:
            raise _bad("Bad Request: wrong parameter action in request")
        return True, None

    def refuse_drafts(self, chat_id: int | None = None) -> None:
        """Refuse sendMessageDraft for one chat, or (None) for this bot altogether."""
        with self._lock:
            if chat_id is None:
                self.drafts_refused = True
            else:
                self._draft_refused_chats.add(chat_id)

    def drafts(self, chat_id: int) -> list[Call]:
        """Accepted sendMessageDraft calls for a chat, in order."""
        return [c for c in self.calls_of("sendMessageDraft") if c.delivered and c.params.get("chat_id") == chat_id]

    def _m_sendMessageDraft(self, call: Call) -> tuple[Any, str | None]:
        """Drafts: private chats only, a non-zero integer draft_id, 0-4096 characters (empty: "Thinking…")."""
        p = call.params
        chat = self._chat(p)
        if chat["type"] != "private":
            raise _bad("Bad Request: message drafts can be sent only to private chats")
        if self.drafts_refused:
            raise _bad("Bad Request: message drafts are not available for this bot")
        if chat["id"] in self._draft_refused_chats:
            raise _bad("Bad Request: message drafts are not available in this chat")
        draft_id = p.get("draft_id")
        if isinstance(draft_id, bool) or not isinstance(draft_id, int) or draft_id == 0:
            raise _bad("Bad Request: draft_id must be a non-zero integer")
        text = p.get("text")
        text = "" if text is None else str(text)
        plain, _ = self._format(text, p.get("parse_mode"), p.get("entities"))
        if utf16_len(plain) > TEXT_LIMIT:
            raise _bad("Bad Request: message is too long")
        key = (chat["id"], draft_id)
        previous = self._drafts.get(key)
        if previous is not None and self.draft_min_interval is not None:
            waited = call.time - previous["time"]
            if waited < self.draft_min_interval:
                raise _ApiError(429, "Too Many Requests: retry after 1", {"retry_after": 1})
        self._drafts[key] = {"text": plain, "time": call.time}
        return True, None

    def _m_getBusinessConnection(self, call: Call) -> tuple[Any, str | None]:
        connection = self._business.get(call.params.get("business_connection_id") or "")
        if connection is None:
            raise _bad("Bad Request: business connection not found")
        return copy.deepcopy(connection), None

    def _m_getFile(self, call: Call) -> tuple[Any, str | None]:
        file_id = call.params.get("file_id")
        if not isinstance(file_id, str) or file_id not in self._files:
            raise _bad("Bad Request: invalid file_id")
        size = len(self._files[file_id])
        if size > 20 << 20:
            raise _bad("Bad Request: file is too big")
        return {
            "file_id": file_id,
            "file_unique_id": "AgAD" + file_id[-8:],
            "file_size": size,
            "file_path": f"files/{file_id}",
        }, None

    def file_bytes(self, token: str, file_path: str) -> bytes | None:
        """What ``GET /file/bot<token>/<file_path>`` serves (None: 404)."""
        with self._lock:
            if token != self.token or not file_path.startswith("files/"):
                return None
            return self._files.get(file_path[len("files/") :])

    def _m_answerCallbackQuery(self, call: Call) -> tuple[Any, str | None]:
        if not call.params.get("callback_query_id"):
            raise _bad("Bad Request: QUERY_ID_INVALID")
        return True, None

    def _lookup_for_edit(self, p: dict[str, Any]) -> tuple[dict[str, Any], int]:
        chat = self._chat(p)
        mid = p.get("message_id")
        if mid is None or mid == "":
            raise _bad("Bad Request: message identifier is not specified")
        if not isinstance(mid, int) or isinstance(mid, bool) or mid <= 0:
            raise _bad("Bad Request: message to edit not found")
        return chat, mid

    def _m_editMessageReplyMarkup(self, call: Call) -> tuple[Any, str | None]:
        p = call.params
        if p.get("inline_message_id"):
            self._markup(p)
            return True, None
        chat, mid = self._lookup_for_edit(p)
        markup = self._markup(p)
        known = self._messages.get((chat["id"], mid))
        if known is None:
            # Not sent through this fake (e.g. a user-visible message from a pushed update).
            msg: dict[str, Any] = {
                "message_id": mid,
                "from": dict(self.bot_user),
                "chat": chat,
                "date": int(time.time()),
            }
            self._attach_markup(msg, markup)
            return msg, None
        new_inline = (markup or {}).get("inline_keyboard") or None
        old_inline = (known.get("reply_markup") or {}).get("inline_keyboard") or None
        if new_inline == old_inline:
            raise _bad(_NOT_MODIFIED)
        self._attach_markup(known, markup)
        known["edit_date"] = int(time.time())
        return copy.deepcopy(known), None

    def _m_editMessageText(self, call: Call) -> tuple[Any, str | None]:
        p = call.params
        text = "" if p.get("text") is None else str(p.get("text"))
        plain, ents = self._format(text, p.get("parse_mode"), p.get("entities"))
        if not plain:
            raise _bad("Bad Request: message text is empty")
        if utf16_len(plain) > TEXT_LIMIT:
            raise _bad("Bad Request: MESSAGE_TOO_LONG")
        markup = self._markup(p)
        if p.get("inline_message_id"):
            return True, None
        chat, mid = self._lookup_for_edit(p)
        known = self._messages.get((chat["id"], mid))
        if known is None:
            msg: dict[str, Any] = {
                "message_id": mid,
                "from": dict(self.bot_user),
                "chat": chat,
                "date": int(time.time()),
            }
        else:
            new_inline = (markup or {}).get("inline_keyboard") or None
            old_inline = (known.get("reply_markup") or {}).get("inline_keyboard") or None
            if known.get("text") == plain and known.get("entities", []) == ents and new_inline == old_inline:
                raise _bad(_NOT_MODIFIED)
            msg = known
        msg["text"] = plain
        if ents:
            msg["entities"] = ents
        else:
            msg.pop("entities", None)
        self._attach_markup(msg, markup)
        msg["edit_date"] = int(time.time())
        return copy.deepcopy(msg), None

    def _m_deleteMessage(self, call: Call) -> tuple[Any, str | None]:
        chat = self._chat(call.params)
        mid = call.params.get("message_id")
        if mid is None or mid == "":
            raise _bad("Bad Request: message identifier is not specified")
        if isinstance(mid, int):
            self._messages.pop((chat["id"], mid), None)
        return True, None

    def _m_setWebhook(self, call: Call) -> tuple[Any, str | None]:
        p = call.params
        url = str(p.get("url") or "").strip()
        if not url:
            was = self._webhook is not None
            self._webhook = None
            return True, "Webhook was deleted" if was else "Webhook is already deleted"
        if not url.lower().startswith("https://"):
            raise _bad("Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        secret = p.get("secret_token")
        if secret is not None and secret != "":
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", str(secret)):
                raise _bad("Bad Request: secret token contains unallowed characters")
        allowed = p.get("allowed_updates")
        if p.get("drop_pending_updates") is True:
            self._updates.clear()
        existed = self._webhook is not None and self._webhook.get("url") == url
        self._webhook = {
            "url": url,
            "secret_token": secret if secret else None,
            "allowed_updates": allowed if isinstance(allowed, list) else None,
            "max_connections": p.get("max_connections"),
        }
        return True, "Webhook is already set" if existed else "Webhook was set"

    def _m_getWebhookInfo(self, call: Call) -> tuple[Any, str | None]:
        hook = self._webhook
        info: dict[str, Any] = {
            "url": hook["url"] if hook else "",
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates) if hook else 0,
        }
        if hook:
            if hook.get("allowed_updates") is not None:
                info["allowed_updates"] = list(hook["allowed_updates"])
            if hook.get("max_connections"):
                info["max_connections"] = hook["max_connections"]
        return info, None

    def _m_deleteWebhook(self, call: Call) -> tuple[Any, str | None]:
        was = self._webhook is not None
        self._webhook = None
        if call.params.get("drop_pending_updates") is True:
            self._updates.clear()
        return True, "Webhook was deleted" if was else "Webhook is already deleted"

    def _m_getUpdates(self, call: Call) -> tuple[Any, str | None]:
        p = call.params
        if self._webhook is not None:
            raise _ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = p.get("offset")
        limit = p.get("limit")
        limit = limit if isinstance(limit, int) and 1 <= limit <= 100 else 100
        timeout = p.get("timeout")
        timeout = timeout if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) else 0
        allowed = p.get("allowed_updates")
        allowed = set(allowed) if isinstance(allowed, list) and allowed else None

        if isinstance(offset, int) and not isinstance(offset, bool):
            if offset < 0:
                self._updates = self._updates[offset:]  # keep the last -offset updates
            elif offset > 0:
                self._updates = [u for u in self._updates if u["update_id"] >= offset]

        def matching() -> list[dict[str, Any]]:
            ups = self._updates
            if allowed is not None:
                ups = [u for u in ups if any(k in allowed for k in u if k != "update_id")]
            return ups[:limit]

        deadline = time.monotonic() + min(max(float(timeout), 0.0), LONG_POLL_CAP)
        ups = matching()
        while not ups and not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._cond.wait(remaining)
            ups = matching()
        return copy.deepcopy(ups), None

    def _m_setMyCommands(self, call: Call) -> tuple[Any, str | None]:
        cmds = call.params.get("commands")
        if not isinstance(cmds, list):
            raise _bad("Bad Request: can't parse commands JSON object")
        if len(cmds) > 100:
            raise _bad("Bad Request: BOT_COMMANDS_TOO_MUCH")
        for item in cmds:
            if not isinstance(item, dict) or not isinstance(item.get("command"), str):
                raise _bad("Bad Request: can't parse BotCommand object")
            if not re.fullmatch(r"[a-z0-9_]{1,32}", item["command"]):
                raise _bad("Bad Request: BOT_COMMAND_INVALID")
            description = item.get("description")
            if not isinstance(description, str) or not 1 <= len(description.strip()) <= 256:
                raise _bad("Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        language = call.params.get("language_code")
        self._commands = copy.deepcopy(cmds)
        self._commands_by_language[language or ""] = copy.deepcopy(cmds)
        return True, None

    def _m_getMyCommands(self, call: Call) -> tuple[Any, str | None]:
        language = call.params.get("language_code") or ""
        return copy.deepcopy(self._commands_by_language.get(language, self._commands_by_language.get("", []))), None

    def _m_deleteMyCommands(self, call: Call) -> tuple[Any, str | None]:
        self._commands = []
        self._commands_by_language.clear()
        return True, None
