"""A small typed, synchronous Telegram Bot API client on httpx2.

Only the methods the bot uses. Answers are parsed into small pydantic models that
ignore unknown fields; failures become exceptions that carry Telegram's own fields:

* ``TelegramError(error_code, description)`` — any ``{"ok": false}`` answer
* ``RetryAfter`` (429, ``retry_after`` seconds), ``Forbidden`` (403), ``BadRequest`` (400,
  with ``is_parse_error`` / ``is_bad_file``), ``ServerError`` (5xx)
* ``NetworkError(request_sent)`` — no answer at all. ``request_sent`` is False when the
  request never fully reached the server (connect error or timeout, write error, pool
  timeout: safe to retry), True when it may have been processed (read timeout, connection
  reset, remote protocol error: the message may already be in the chat).

The bot token is part of every URL. It never appears in an exception message or a repr,
and the httpx2 request log line is redacted as well.
"""

from __future__ import annotations

import json
import logging
import mimetypes
from collections.abc import Mapping
from typing import Any

import httpx2
from pydantic import ValidationError

from sommelier.observability.redaction import MASK, TELEGRAM_BOT_TOKEN
from sommelier.observability.telemetry import subsegment
from sommelier.outbound import tls_context
from sommelier.settings import DEFAULT_TELEGRAM_API_BASE_URL, TelegramSettings
from sommelier.telegram.models import BusinessConnection, Chat, File, Message, PhotoSize, User, WebhookInfo

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 15.0
WRITE_TIMEOUT = 15.0
POOL_TIMEOUT = 5.0

_MASK = MASK
_KNOWN_TOKENS: set[str] = set()  # tokens of clients created in this process, masked in httpx2 log lines


def mask_token(text: str, token: str | None = None) -> str:
    """Remove a bot token (the given one, and anything shaped like one) from text."""
    if token:
        text = text.replace(token, _MASK)
    return TELEGRAM_BOT_TOKEN.sub(_MASK, text)


class _RedactTokens(logging.Filter):
    """httpx2 logs every request URL (with the token in it) at INFO: redact it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            if record.args:
                record.msg = record.getMessage()
                record.args = None
            message = str(record.msg)
            for token in tuple(_KNOWN_TOKENS):
                message = message.replace(token, _MASK)
            record.msg = mask_token(message)
        except Exception:  # never break logging  # nosec B110 - a log filter must never raise (nor log)
            pass
        return True


_httpx_logger = logging.getLogger("httpx2")
if not any(isinstance(f, _RedactTokens) for f in _httpx_logger.filters):
    _httpx_logger.addFilter(_RedactTokens())


# --------------------------------------------------------------------------- #
# Errors
# --------------------------------------------------------------------------- #
class TelegramError(Exception):
    """An error answer from the Bot API (or, for NetworkError, no answer)."""

    def __init__(
        self, error_code: int, description: str, *, method: str | None = None, parameters: dict[str, Any] | None = None
    ):
        self.error_code = error_code
        self.description = description
        self.method = method
        self.parameters = parameters or {}
        super().__init__(self._message())

    def _message(self) -> str:
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.error_code} {self.description}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(error_code={self.error_code!r}, description={self.description!r}, method={self.method!r})"


class RetryAfter(TelegramError):
    """429 Too Many Requests: wait ``retry_after`` seconds."""

    def __init__(
        self,
        error_code: int,
        description: str,
        *,
        retry_after: float,
        method: str | None = None,
        parameters: dict[str, Any] | None = None,
    ):
        self.retry_after = retry_after
        super().__init__(error_code, description, method=method, parameters=parameters)


class Forbidden(TelegramError):
    """403: the bot was blocked, kicked, or the user is deactivated. Don't retry."""


_BAD_FILE_MARKERS = (
    "wrong file identifier/http url specified",
    "failed to get http url content",
    "wrong type of the web page content",
    "wrong remote file identifier",
    "wrong file_id",
    "file must be non-empty",
    "image_process_failed",
    "photo_invalid_dimensions",
    "photo_save_file_invalid",
    "photo_ext_invalid",
    "wrong padding in the string",
)


_CHAT_UNAVAILABLE_MARKERS = (
    "chat not found",
    "topic_closed",
    "topic_deleted",
    "message thread not found",
    "not enough rights",
    "have no rights",
    "chat_write_forbidden",
    "chat_restricted",
    "group chat was upgraded",
    "business connection not found",
    "business_connection_invalid",
    "business_peer_usage_missing",
)


class BadRequest(TelegramError):
    """400 Bad Request."""

    @property
    def is_parse_error(self) -> bool:
        return self.description.startswith("Bad Request: can't parse entities")

    @property
    def is_bad_file(self) -> bool:
        """The photo reference (file_id, URL or upload) is unusable; another source may work."""
        low = self.description.lower()
        return any(marker in low for marker in _BAD_FILE_MARKERS)

    @property
    def is_not_modified(self) -> bool:
        return "message is not modified" in self.description

    @property
    def is_too_long(self) -> bool:
        low = self.description.lower()
        return "too long" in low or "message_too_long" in low

    @property
    def is_caption_too_long(self) -> bool:
        low = self.description.lower()
        return "caption is too long" in low or "media_caption_too_long" in low

    @property
    def is_chat_unavailable(self) -> bool:
        """The chat or topic can take no message now (gone, closed, no rights): resending can't help."""
        low = self.description.lower()
        return any(marker in low for marker in _CHAT_UNAVAILABLE_MARKERS) or "migrate_to_chat_id" in self.parameters

    @property
    def migrate_to_chat_id(self) -> int | None:
        """The supergroup a basic group became ("group chat was upgraded to a supergroup chat")."""
        value = self.parameters.get("migrate_to_chat_id")
        return value if isinstance(value, int) and not isinstance(value, bool) else None


class FileTooBig(TelegramError):
    """A file the bot would download is over its size limit."""

    def __init__(self, description: str):
        super().__init__(413, description, method="file")


class ServerError(TelegramError):
    """5xx from Telegram (or a proxy in front of it). Retry later."""


class NetworkError(TelegramError):
    """No answer. ``request_sent`` tells whether Telegram may have processed the request."""

    def __init__(self, description: str, *, request_sent: bool, method: str | None = None):
        self.request_sent = request_sent
        super().__init__(0, description, method=method)

    def _message(self) -> str:
        where = f"{self.method}: " if self.method else ""
        state = "request may have been delivered" if self.request_sent else "request not sent"
        return f"{where}network error ({state}): {self.description}"

    def __repr__(self) -> str:
        return f"NetworkError(description={self.description!r}, request_sent={self.request_sent!r}, method={self.method!r})"


# --------------------------------------------------------------------------- #
# The client
# --------------------------------------------------------------------------- #
# Failures before the request fully left this process: the server cannot have acted on it.
_NOT_SENT = (
    httpx2.ConnectError,
    httpx2.ConnectTimeout,
    httpx2.PoolTimeout,
    httpx2.WriteError,
    httpx2.WriteTimeout,
    httpx2.LocalProtocolError,
    httpx2.UnsupportedProtocol,
    httpx2.ProxyError,
)


class TelegramClient:
    """Synchronous Bot API client. Thread-safe (one httpx2 connection pool); close() when done."""

    def __init__(
        self,
        token: str,
        base_url: str | None = None,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        transport: httpx2.BaseTransport | None = None,
    ):
        if not token:
            raise ValueError("a Telegram bot token is required")
        self._token = token
        _KNOWN_TOKENS.add(token)
        self.base_url = (base_url or DEFAULT_TELEGRAM_API_BASE_URL).rstrip("/")
        self._read_timeout = read_timeout
        self._timeout = httpx2.Timeout(
            connect=connect_timeout, read=read_timeout, write=WRITE_TIMEOUT, pool=POOL_TIMEOUT
        )
        self._http = httpx2.Client(timeout=self._timeout, transport=transport, trust_env=True, verify=tls_context())

    @classmethod
    def from_settings(cls, settings: TelegramSettings) -> TelegramClient:
        """A client for the configured bot; MissingSetting when there is no token."""
        return cls(settings.require_token(), settings.api_base_url)

    def __repr__(self) -> str:
        return f"TelegramClient(base_url={self.base_url!r}, token={_MASK!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> TelegramClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---------------- transport ----------------
    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        files: dict[str, tuple[str, bytes, str]] | None = None,
        read_timeout: float | None = None,
    ) -> Any:
        """Call a Bot API method and return its ``result`` (raises TelegramError subclasses)."""
        url = f"{self.base_url}/bot{self._token}/{method}"
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        timeout = (
            self._timeout
            if read_timeout is None
            else httpx2.Timeout(
                connect=self._timeout.connect, read=read_timeout, write=WRITE_TIMEOUT, pool=POOL_TIMEOUT
            )
        )
        try:
            with subsegment("telegram", method=method):
                if files:
                    form = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in clean.items()}
                    response = self._http.post(url, data=form, files=files, timeout=timeout)
                else:
                    response = self._http.post(url, json=clean, timeout=timeout)
        except httpx2.TransportError as exc:
            sent = not isinstance(exc, _NOT_SENT)
            detail = mask_token(f"{type(exc).__name__}: {exc}", self._token)
            logger.debug("telegram %s failed: %s", method, detail)
            raise NetworkError(detail, request_sent=sent, method=method) from None
        except httpx2.InvalidURL as exc:  # a misconfigured TELEGRAM_API_BASE_URL; the URL holds the token
            raise ValueError(mask_token(f"invalid Telegram API URL: {exc}", self._token)) from None
        except httpx2.HTTPError as exc:  # decoding errors and the like: an answer came back
            detail = mask_token(f"{type(exc).__name__}: {exc}", self._token)
            raise NetworkError(detail, request_sent=True, method=method) from None
        return self._result(method, response)

    def _result(self, method: str, response: httpx2.Response) -> Any:
        status = response.status_code
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if not isinstance(payload, dict) or "ok" not in payload:
            description = mask_token(
                f"{response.reason_phrase or 'invalid response'} (not a Bot API answer)", self._token
            )
            if status >= 500:
                raise ServerError(status, description, method=method)
            raise TelegramError(status, description, method=method)
        if payload.get("ok"):
            return payload.get("result")
        code = payload.get("error_code")
        code = code if isinstance(code, int) else status
        description = mask_token(str(payload.get("description") or ""), self._token)
        raw_parameters = payload.get("parameters")
        parameters: dict[str, Any] = raw_parameters if isinstance(raw_parameters, dict) else {}
        if code == 429 or "retry_after" in parameters:
            retry = parameters.get("retry_after")
            retry = float(retry) if isinstance(retry, (int, float)) and not isinstance(retry, bool) else 1.0
            raise RetryAfter(code, description, retry_after=retry, method=method, parameters=parameters)
        if code == 403:
            raise Forbidden(code, description, method=method, parameters=parameters)
        if code == 400:
            raise BadRequest(code, description, method=method, parameters=parameters)
        if code >= 500:
            raise ServerError(code, description, method=method, parameters=parameters)
        raise TelegramError(code, description, method=method, parameters=parameters)

    # ---------------- methods ----------------
    def get_me(self) -> User:
        return User.model_validate(self.call("getMe"))

    def send_message(
        self,
        chat_id: int | str,
        text: str,
        parse_mode: str | None = None,
        reply_markup: dict[str, Any] | None = None,
        reply_to_message_id: int | None = None,
        message_thread_id: int | None = None,
        place: Mapping[str, Any] | None = None,
    ) -> Message:
        """``place``: what a send to that chat must carry (``telegram.place.Place.send_params``)."""
        params: dict[str, Any] = {
            "chat_id": chat_id,
            "message_thread_id": message_thread_id,
            "text": text,
            "parse_mode": parse_mode,
            "reply_markup": reply_markup,
            "link_preview_options": {"is_disabled": True},
        }
        if reply_to_message_id is not None:
            params["reply_parameters"] = {"message_id": reply_to_message_id, "allow_sending_without_reply": True}
        params.update({k: v for k, v in (place or {}).items() if v is not None})
        return sent_message("sendMessage", self.call("sendMessage", params))

    def send_photo(
        self,
        chat_id: int | str,
        photo: str | bytes,
        caption: str | None = None,
        parse_mode: str | None = None,
        reply_markup: dict[str, Any] | None = None,
        filename: str = "wine.png",
        message_thread_id: int | None = None,
        place: Mapping[str, Any] | None = None,
    ) -> Message:
        """``photo``: a file_id or an HTTP(S) URL (str), or the image bytes (multipart upload)."""
        params: dict[str, Any] = {
            "chat_id": chat_id,
            "message_thread_id": message_thread_id,
            "caption": caption,
            "parse_mode": parse_mode if caption else None,
            "reply_markup": reply_markup,
        }
        params.update({k: v for k, v in (place or {}).items() if v is not None})
        if isinstance(photo, (bytes, bytearray, memoryview)):
            data = bytes(photo)
            ctype = _image_type(data) or mimetypes.guess_type(filename)[0] or "application/octet-stream"
            result = self.call("sendPhoto", params, files={"photo": (filename, data, ctype)})
        else:
            params["photo"] = photo
            result = self.call("sendPhoto", params)
        return sent_message("sendPhoto", result)

    def send_chat_action(
        self,
        chat_id: int | str,
        action: str = "typing",
        message_thread_id: int | None = None,
        business_connection_id: str | None = None,
    ) -> bool:
        params = {
            "chat_id": chat_id,
            "action": action,
            "message_thread_id": message_thread_id,
            "business_connection_id": business_connection_id,
        }
        return bool(self.call("sendChatAction", params))

    def get_business_connection(self, business_connection_id: str) -> BusinessConnection:
        result = self.call("getBusinessConnection", {"business_connection_id": business_connection_id})
        return BusinessConnection.model_validate(result)

    def get_file(self, file_id: str) -> File:
        return File.model_validate(self.call("getFile", {"file_id": file_id}))

    def download_file(self, file_path: str, *, max_bytes: int) -> bytes:
        """The file at ``{base}/file/bot<token>/<file_path>`` (from getFile), at most ``max_bytes`` long."""
        url = f"{self.base_url}/file/bot{self._token}/{file_path.lstrip('/')}"
        try:
            with subsegment("telegram", method="file"), self._http.stream("GET", url) as response:
                if response.status_code != 200:
                    raise TelegramError(response.status_code, f"file download failed ({response.status_code})")
                data = bytearray()
                for chunk in response.iter_bytes():
                    data.extend(chunk)
                    if len(data) > max_bytes:
                        raise FileTooBig(f"the file is larger than {max_bytes} bytes")
                return bytes(data)
        except httpx2.TransportError as exc:
            detail = mask_token(f"{type(exc).__name__}: {exc}", self._token)
            raise NetworkError(detail, request_sent=True, method="file") from None

    def send_message_draft(
        self,
        chat_id: int,
        draft_id: int,
        text: str = "",
        parse_mode: str | None = None,
        message_thread_id: int | None = None,
    ) -> bool:
        """Show (or animate) an ephemeral draft in a private chat; an empty text is the "Thinking…" placeholder."""
        params = {
            "chat_id": chat_id,
            "draft_id": draft_id,
            "text": text,
            "parse_mode": parse_mode,
            "message_thread_id": message_thread_id,
        }
        return bool(self.call("sendMessageDraft", params))

    def answer_callback_query(self, callback_query_id: str, text: str | None = None) -> bool:
        return bool(self.call("answerCallbackQuery", {"callback_query_id": callback_query_id, "text": text}))

    def edit_message_reply_markup(
        self, chat_id: int | str, message_id: int, reply_markup: dict[str, Any] | None = None
    ) -> Message | bool:
        """Replace (or, with None, remove) a message's inline keyboard."""
        result = self.call(
            "editMessageReplyMarkup",
            {"chat_id": chat_id, "message_id": message_id, "reply_markup": reply_markup or {"inline_keyboard": []}},
        )
        return Message.model_validate(result) if isinstance(result, dict) else bool(result)

    def set_webhook(
        self,
        url: str,
        secret_token: str,
        allowed_updates: list[str] | None = None,
        drop_pending_updates: bool = False,
        *,
        read_timeout: float | None = None,
    ) -> bool:
        params = {
            "url": url,
            "secret_token": secret_token,
            "allowed_updates": allowed_updates,
            "drop_pending_updates": drop_pending_updates,
        }
        return bool(self.call("setWebhook", params, read_timeout=read_timeout))

    def set_my_commands(
        self, commands: list[dict[str, str]], language_code: str | None = None, *, read_timeout: float | None = None
    ) -> bool:
        """The menu of commands (``[{"command": "start", "description": "..."}]``), for all users or one language."""
        params = {"commands": commands, "language_code": language_code}
        return bool(self.call("setMyCommands", params, read_timeout=read_timeout))

    def get_webhook_info(self, *, read_timeout: float | None = None) -> WebhookInfo:
        return WebhookInfo.model_validate(self.call("getWebhookInfo", read_timeout=read_timeout))

    def delete_webhook(self, drop_pending_updates: bool = False, *, read_timeout: float | None = None) -> bool:
        params = {"drop_pending_updates": drop_pending_updates}
        return bool(self.call("deleteWebhook", params, read_timeout=read_timeout))

    def get_updates(
        self, offset: int | None = None, timeout: int = 0, allowed_updates: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """Long polling. Updates come back as raw dicts: the same shape the webhook receives."""
        result = self.call(
            "getUpdates",
            {"offset": offset, "timeout": timeout, "allowed_updates": allowed_updates},
            read_timeout=max(float(timeout), 0.0) + self._read_timeout,
        )
        return [u for u in (result or []) if isinstance(u, dict)]


def _image_type(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _whole_number(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def sent_message(method: str, result: Any) -> Message:
    """The message a send was answered with. The Bot API answered 200 with ok: the message IS sent, even when
    its body does not parse (a chat id as a string, a field of a newer Bot API): what can be read is kept,
    never an error that would have the whole plan (and the message) sent again."""
    try:
        return Message.model_validate(result)
    except ValidationError as exc:
        logger.warning("%s was answered 200 with a message that does not parse; counted as sent: %s", method, exc)
    fields: dict[str, Any] = result if isinstance(result, dict) else {}
    raw_chat = fields.get("chat")
    chat: dict[str, Any] = raw_chat if isinstance(raw_chat, dict) else {}
    photos = []
    for size in fields.get("photo") or [] if isinstance(fields.get("photo"), list) else []:
        try:
            photos.append(PhotoSize.model_validate(size, strict=False))
        except ValidationError:
            continue
    return Message.model_construct(
        message_id=_whole_number(fields.get("message_id")),
        date=_whole_number(fields.get("date")),
        chat=Chat.model_construct(id=_whole_number(chat.get("id")), type=str(chat.get("type") or "")),
        photo=photos or None,
        entities=[],
        caption_entities=[],
    )
