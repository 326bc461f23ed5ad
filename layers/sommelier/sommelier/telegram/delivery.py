"""Idempotent sending of one turn's messages.

An SQS message (one Telegram update) may be processed more than once: a turn that failed
half-way is retried, and a redelivery must not resend what already reached the chat. The
``DeliveryLog`` records, per update key and part index, what was delivered; ``Sender`` skips
those parts and marks each new part right after Telegram accepts it.

Policy (docs/architecture.md):

* HTML first; on "can't parse entities" the same part is resent as plain text.
* Photos: cached file_id → presigned URL → upload of the bytes → a text message. A bad file
  reference falls through to the next option. A new file_id is reported via ``on_file_id``.
* 429: sleep ``retry_after`` and retry the part (give up with RetryAfter past ``max_retry_wait``).
* 403: raise Forbidden at once (the caller marks the user inactive).
* 5xx and network errors before the request was sent: re-raise (the turn is retried; the log
  prevents duplicates).
* A network error after the request was sent: the part may be in the chat. It is marked
  delivered ``{"uncertain": true}`` and the turn goes on: a lost part beats a duplicate photo.
* 400 "message is too long": the part is sent in halves; "message caption is too long": the
  photo goes with its header as caption and the text follows as its own message. The pieces
  are logged under ``<key>/<index>``, so a retry resumes inside the part too.
* 400 "chat not found", a closed or deleted topic, no rights: raised (nothing more can reach
  the chat). Any other 400: that part is left out (logged, metric ``TelegramPartRefused``) and
  the rest of the answer is delivered.
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

from sommelier.observability.telemetry import record_event
from sommelier.photos.store import PhotoStore
from sommelier.telegram.client import BadRequest, NetworkError, RetryAfter, TelegramClient
from sommelier.telegram.models import Message
from sommelier.telegram.place import Place
from sommelier.telegram.render import TEXT_LIMIT, Outgoing, shorten, split_text, utf16_len
from sommelier.telegram.state import FloodGate

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

logger = logging.getLogger(__name__)

DELIVERY_TTL_SECONDS = 24 * 3600
HTML = "HTML"


# --------------------------------------------------------------------------- #
# Delivery logs
# --------------------------------------------------------------------------- #
class PartRecord(TypedDict, total=False):
    """What became of one part of a reply, as the delivery log keeps it."""

    message_id: int  # the message that carries it
    file_id: str | None  # the photo's file_id, to send again without the upload
    pieces: int  # sent in this many pieces (too long for one message)
    uncertain: bool  # the send may have reached the chat: never sent again
    refused: str  # Telegram's refusal
    reshape: str  # (under the part's reshape index) how an attempt began splitting it


class DeliveryLog(Protocol):
    """Which parts of an update's reply were already delivered."""

    def delivered(self, key: str) -> dict[int, PartRecord]: ...

    def mark(self, key: str, index: int, info: PartRecord) -> None: ...


class InMemoryDeliveryLog:
    def __init__(self) -> None:
        self._parts: dict[str, dict[int, PartRecord]] = {}

    def delivered(self, key: str) -> dict[int, PartRecord]:
        return {i: info.copy() for i, info in self._parts.get(key, {}).items()}

    def mark(self, key: str, index: int, info: PartRecord) -> None:
        self._parts.setdefault(key, {})[int(index)] = info.copy()


def _to_dynamo(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (str, int, Decimal)):
        return value
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {str(k): _to_dynamo(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_dynamo(v) for v in value]
    return str(value)


def _from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    return value


class DynamoDeliveryLog:
    """The log in DynamoDB: the Powertools idempotency table (string hash key ``id``) is reused.

    One item per update: ``id = "delivery#<key>"``, a map ``parts`` (index → info) and a numeric
    ``expiration`` TTL about a day ahead.
    """

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient | None = None,
        *,
        ttl_seconds: int = DELIVERY_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ):
        import boto3
        from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

        self.table_name = table_name
        self._client = client or boto3.client("dynamodb")
        self._ttl = ttl_seconds
        self._clock = clock
        self._ser = TypeSerializer()
        self._de = TypeDeserializer()

    @staticmethod
    def item_id(key: str) -> str:
        return f"delivery#{key}"

    def _key(self, key: str) -> dict[str, Any]:
        return {"id": {"S": self.item_id(key)}}

    def delivered(self, key: str) -> dict[int, PartRecord]:
        answer = self._client.get_item(
            TableName=self.table_name,
            Key=self._key(key),
            ConsistentRead=True,
            ProjectionExpression="#p",
            ExpressionAttributeNames={"#p": "parts"},
        )
        raw = answer.get("Item", {}).get("parts")
        if not raw:
            return {}
        parts = _from_dynamo(self._de.deserialize(raw))
        out: dict[int, PartRecord] = {}
        for index, info in (parts or {}).items():
            try:
                out[int(index)] = cast(PartRecord, dict(info)) if isinstance(info, dict) else {}  # what mark wrote
            except ValueError:
                continue
        return out

    def mark(self, key: str, index: int, info: PartRecord) -> None:
        from botocore.exceptions import ClientError

        value = self._ser.serialize(_to_dynamo(dict(info)))
        expiration = {"N": str(int(self._clock()) + self._ttl)}
        for _attempt in range(3):
            try:
                # The usual case: the item and its map exist; set one entry.
                self._client.update_item(
                    TableName=self.table_name,
                    Key=self._key(key),
                    UpdateExpression="SET #p.#i = :info, #e = :exp",
                    ExpressionAttributeNames={"#p": "parts", "#i": str(int(index)), "#e": "expiration"},
                    ExpressionAttributeValues={":info": value, ":exp": expiration},
                )
                return
            except ClientError as exc:
                error = exc.response.get("Error", {})
                if error.get("Code") != "ValidationException" or "document path" not in str(error.get("Message", "")):
                    raise
            # "The document path provided in the update expression is invalid for update": no map yet.
            try:
                self._client.update_item(
                    TableName=self.table_name,
                    Key=self._key(key),
                    UpdateExpression="SET #p = :parts, #e = :exp",
                    ConditionExpression="attribute_not_exists(#p)",
                    ExpressionAttributeNames={"#p": "parts", "#e": "expiration"},
                    ExpressionAttributeValues={":parts": {"M": {str(int(index)): value}}, ":exp": expiration},
                )
                return
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise
                # Someone created the map in between: set the entry again.
        raise RuntimeError(f"could not record delivery of part {index} for {key!r}")


# --------------------------------------------------------------------------- #
# The sender
# --------------------------------------------------------------------------- #
@dataclass
class DeliveryResult:
    message_ids: list[int] = field(default_factory=list)  # messages sent by this call, in order
    by_index: dict[int, int] = field(default_factory=dict)  # part index -> message_id, earlier calls included
    sent: list[int] = field(default_factory=list)  # part indexes sent now
    skipped: list[int] = field(default_factory=list)  # part indexes already delivered earlier
    plain_fallbacks: list[int] = field(default_factory=list)  # parts resent as plain text (parse error)
    text_fallbacks: list[int] = field(default_factory=list)  # photo parts sent as text (no usable photo)
    uncertain: list[int] = field(default_factory=list)  # parts that may or may not have arrived
    reshaped: list[int] = field(default_factory=list)  # parts split (too long) or moved out of a caption
    refused: list[int] = field(default_factory=list)  # parts Telegram refused with an unknown 400: left out
    photo_sources: dict[int, str] = field(default_factory=dict)  # index -> "file_id" | "url" | "upload"
    new_file_ids: dict[str, str] = field(default_factory=dict)  # wine id -> file_id reported via on_file_id
    waited: float = 0.0  # seconds slept on 429s


class _Uncertain(Exception):
    """Internal: a request may have been delivered; stop trying this part."""

    def __init__(self, error: NetworkError):
        self.error = error


SHORT_CAPTION = 200  # UTF-16 units of the caption left on a photo whose text moves to its own message


class Sender:
    def __init__(
        self,
        client: TelegramClient,
        photos: PhotoStore,
        log: DeliveryLog,
        *,
        on_file_id: Callable[[str, str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_retry_wait: float = 30.0,
        floods: FloodGate | None = None,
    ):
        self.client = client
        self.photos = photos
        self.log = log
        self.on_file_id = on_file_id
        self.sleep = sleep
        self.max_retry_wait = max_retry_wait
        self.floods = floods or FloodGate()  # shared with every other send path of the bot

    def deliver(
        self, chat_id: int, key: str, parts: list[Outgoing], *, thread_id: int | None = None, place: Place | None = None
    ) -> DeliveryResult:
        """Send the parts not yet delivered for ``key``, in order. See the module doc for the error policy.

        ``place``: where in the chat, with what each send there carries (a forum topic, a Business
        connection, a channel's direct-messages topic, the comment answered); ``thread_id`` alone: a topic.
        """
        target = place if place is not None else Place(chat_id, thread_id)
        return self._deliver(target, key, parts, _Budget(self.max_retry_wait))

    def _deliver(self, target: Place, key: str, parts: list[Outgoing], budget: _Budget) -> DeliveryResult:
        result = DeliveryResult()
        done = self.log.delivered(key)
        for index, part in enumerate(parts):
            if index in done:
                result.skipped.append(index)
                if isinstance(done[index].get("message_id"), int):
                    result.by_index[index] = done[index]["message_id"]
                continue
            try:
                reshape = done.get(_reshape_index(index), {}).get("reshape")
                if reshape in _RESHAPES:  # an earlier attempt began sending this part in pieces: resume them
                    message, info = self._reshaped(target, key, index, reshape, part, result, budget)
                else:
                    message, info = self._send_part(target, key, index, part, result, budget)
            except _Uncertain as unc:
                logger.warning(
                    "telegram part %d of %s may have been delivered (%s); not resending it",
                    index,
                    key,
                    unc.error.description,
                )
                self.log.mark(key, index, {"uncertain": True})
                result.uncertain.append(index)
                continue
            except BadRequest as exc:
                if exc.is_chat_unavailable:
                    raise  # nothing more can reach this chat or topic: the caller ends the turn
                logger.warning(
                    "telegram refused part %d of %s (%s); delivering the rest without it", index, key, exc.description
                )
                record_event("TelegramPartRefused")
                self.log.mark(key, index, {"refused": exc.description[:200]})
                result.refused.append(index)
                continue
            self.log.mark(key, index, info)
            result.sent.append(index)
            if message is not None:
                result.message_ids.append(message.message_id)
                result.by_index[index] = message.message_id
                self._report_file_id(part, message, result)
        return result

    # ---------------- one part ----------------
    def _send_part(
        self, target: Place, key: str, index: int, part: Outgoing, result: DeliveryResult, budget: _Budget
    ) -> tuple[Message | None, PartRecord]:
        if part.kind == "photo":
            try:
                sent = self._send_photo(target, index, part, result, budget)
            except BadRequest as exc:
                if not exc.is_caption_too_long:
                    raise
                logger.info("caption of part %d refused as too long; the text goes in its own message", index)
                return self._reshaped(target, key, index, "caption", part, result, budget)
            if sent is not None:
                return sent, {"message_id": sent.message_id, "file_id": sent.largest_file_id}
            result.text_fallbacks.append(index)
        try:
            message = self._formatted(
                target,
                index,
                result,
                budget,
                lambda text, mode: self.client.send_message(
                    target.chat_id,
                    text,
                    parse_mode=mode,
                    reply_markup=part.reply_markup,
                    place=target.send_params(),
                ),
                part,
            )
        except BadRequest as exc:
            if not (exc.is_too_long and len(_halves(part)) >= 2):
                raise
            logger.info("part %d refused as too long; sending it in pieces", index)
            return self._reshaped(target, key, index, "halves", part, result, budget)
        return message, {"message_id": message.message_id}

    def _reshaped(
        self,
        target: Place,
        key: str,
        index: int,
        reshape: str,
        part: Outgoing,
        result: DeliveryResult,
        budget: _Budget,
    ) -> tuple[Message | None, PartRecord]:
        """Deliver a part as several messages, logged under their own key so a retry resumes mid-part.

        The way it was cut is logged first (at a negative index the part loop never reaches): the
        pieces are a pure function of the part, so a retry cuts it the same way and skips what arrived.
        """
        pieces = _RESHAPES[reshape](part)
        self.log.mark(key, _reshape_index(index), {"reshape": reshape})
        inner = self._deliver(target, f"{key}/{index}", pieces, budget)
        result.reshaped.append(index)
        result.waited += inner.waited
        result.new_file_ids.update(inner.new_file_ids)
        result.message_ids.extend(inner.message_ids)
        last = inner.by_index.get(len(pieces) - 1)
        if last is not None:
            result.by_index[index] = last
        return None, {"message_id": last, "pieces": len(pieces)} if last is not None else {"pieces": len(pieces)}

    def _send_photo(
        self, target: Place, index: int, part: Outgoing, result: DeliveryResult, budget: _Budget
    ) -> Message | None:
        for source, photo in self._photo_sources(part):
            try:

                def send(text: str, mode: str | None, photo: Any = photo) -> Message:
                    return self.client.send_photo(
                        target.chat_id,
                        photo,
                        caption=text,
                        parse_mode=mode,
                        reply_markup=part.reply_markup,
                        place=target.send_params(),
                    )

                message = self._formatted(target, index, result, budget, send, part)
            except BadRequest as exc:
                if exc.is_bad_file:
                    logger.info("photo source %s unusable for wine %s: %s", source, part.wine_id, exc.description)
                    continue
                raise
            result.photo_sources[index] = source
            return message
        return None

    def _photo_sources(self, part: Outgoing) -> Iterator[tuple[str, str | bytes]]:
        """Lazily: the cached file_id, a presigned URL, then the bytes."""
        if part.file_id:
            yield "file_id", part.file_id
        if not part.image_key:
            return
        url = self._store_call("presigned_url", part.image_key)
        if url:
            yield "url", url
        data = self._store_call("get", part.image_key)
        if data:
            yield "upload", data

    def _store_call(self, name: str, key: str) -> Any:
        try:
            return getattr(self.photos, name)(key)
        except Exception as exc:  # a broken store must not lose the answer: fall through to the next option
            logger.warning("photo store %s(%s) failed: %s", name, key, exc)
            return None

    def _formatted(
        self,
        target: Place,
        index: int,
        result: DeliveryResult,
        budget: _Budget,
        send: Callable[[str, str | None], Message],
        part: Outgoing,
    ) -> Message:
        """HTML first; on a parse error the same part as plain text (and plain for the rest of this part)."""
        if index not in result.plain_fallbacks:
            try:
                return self._with_retry(target, lambda: send(part.html, HTML), budget, result)
            except BadRequest as exc:
                if not exc.is_parse_error:
                    raise
                logger.warning("HTML rejected for part %d (%s); resending as plain text", index, exc.description)
                result.plain_fallbacks.append(index)
        return self._with_retry(target, lambda: send(part.plain, None), budget, result)

    def _with_retry(
        self, target: Place, call: Callable[[], Message], budget: _Budget, result: DeliveryResult
    ) -> Message:
        while True:
            try:
                closed = self.floods.remaining(target.chat_id)
                if closed > 0:  # another path of this bot met a flood wait in this chat: never send inside it
                    raise RetryAfter(429, f"flood wait: {closed:.0f} s left", retry_after=closed, method="local")
                return call()
            except RetryAfter as exc:
                wait = max(float(exc.retry_after), 0.0)
                until = self.floods.hold(target.chat_id, wait)
                if not budget.take(wait):
                    raise
                logger.info("telegram 429: waiting %.1f s", wait)
                self.sleep(wait)
                self.floods.served(target.chat_id, until)
                result.waited += wait
            except NetworkError as exc:
                if exc.request_sent:
                    raise _Uncertain(exc) from None
                raise

    def _report_file_id(self, part: Outgoing, message: Message, result: DeliveryResult) -> None:
        new = message.largest_file_id
        if not (part.kind == "photo" and part.wine_id and new and new != part.file_id):
            return
        result.new_file_ids[part.wine_id] = new
        if self.on_file_id is None:
            return
        try:
            self.on_file_id(part.wine_id, new)
        except Exception:  # the photo is already in the chat: caching is best effort
            logger.exception("could not store the file_id of wine %s", part.wine_id)


def _halves(part: Outgoing) -> list[Outgoing]:
    """A text part Telegram found too long, as pieces of about half its length (plain text, escaped)."""
    plain = part.plain.strip()
    pieces = split_text(plain, max(1, (utf16_len(plain) + 1) // 2))
    out = [Outgoing(kind="text", html=html.escape(piece, quote=False), plain=piece) for piece in pieces]
    if out:
        out[-1].reply_markup = part.reply_markup
    return out


def _caption_moved_out(part: Outgoing) -> list[Outgoing]:
    """The photo with its header as a short caption, then the rest of the caption as its own message(s)."""
    head_html, _, _ = part.html.partition("\n\n")
    head_plain, _, rest = part.plain.partition("\n\n")
    if not rest.strip():  # nothing to move: the photo goes bare and the whole caption follows
        head_html, head_plain, rest = "", "", part.plain
    if utf16_len(head_plain) > SHORT_CAPTION:
        head_plain = shorten(head_plain, SHORT_CAPTION)
        head_html = html.escape(head_plain, quote=False)
    photo = Outgoing(
        kind="photo",
        html=head_html,
        plain=head_plain,
        wine_id=part.wine_id,
        image_key=part.image_key,
        file_id=part.file_id,
    )
    texts = [Outgoing(kind="text", html=html.escape(c, quote=False), plain=c) for c in split_text(rest, TEXT_LIMIT)]
    pieces = [photo, *texts]
    pieces[-1].reply_markup = part.reply_markup
    return pieces


_RESHAPES: dict[str, Callable[[Outgoing], list[Outgoing]]] = {"halves": _halves, "caption": _caption_moved_out}


def _reshape_index(index: int) -> int:
    return -(index + 1)


class _Budget:
    """The total time one deliver() call may sleep on 429s."""

    def __init__(self, limit: float):
        self.limit = limit
        self.used = 0.0

    def take(self, seconds: float) -> bool:
        if self.used + seconds > self.limit:
            return False
        self.used += seconds
        return True
