"""One route table for every way an update arrives: the SQS consumer, `serve`, `poll` and the terminal chat.

`updates.route` classifies an update once (kind, command, text, "addressed to the bot"); this module
decides what answers it. A route is a function `Turn -> Reply | None`; the `Channel` of a turn does
the side calls (rate limit, "typing…", the callback toast, buttons, the chat's active flag) that
Telegram needs and the terminal imitates.

`customer_router()` builds a new table with the conversation's routes; the shop's duties add theirs
(`shop.routes.register`). Extending one (commands are matched without their `@username`,
case-insensitively):

    router.command("/stats", rate_limited=False)(stats)   # def stats(turn: Turn) -> Reply | None
    router.before(age_gate)   # runs before every route, in registration order; a Reply answers instead

`turn.args` is the text after the command (a deep-link /start payload, say).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from sommelier.agent.transcription import TranscriptionError
from sommelier.domain.conversation import Deadline
from sommelier.settings import Settings
from sommelier.telegram.callback_data import CallbackData, prefix_of
from sommelier.telegram.dialog import Author, Reply, ReplyStream
from sommelier.telegram.limits import VOICE_LIMIT_REPLY
from sommelier.telegram.render import MORE, VOTE, feedback_keyboard, render_text, shorten
from sommelier.telegram.state import RateDecision
from sommelier.telegram.updates import Kind, Routed

if TYPE_CHECKING:
    from sommelier.agent.streaming import Shown
    from sommelier.domain.wire import JSONObject
    from sommelier.repositories.adapters import Repositories
    from sommelier.telegram.dialog import Dialog

logger = logging.getLogger(__name__)

NON_TEXT_REPLY = "Я пока понимаю только текст 🙂 Напишите, к какому блюду или поводу нужно вино, и какой у вас бюджет."
VOICE_AS_TEXT = (
    "Голосовые сообщения я пока не слушаю 🙂 Напишите, пожалуйста, текстом: к какому блюду или поводу нужно вино "
    "и какой у вас бюджет."
)
LABEL_AS_TEXT = (
    "Этикетку по фото я пока не читаю 🙂 Напишите название вина (производитель, сорт, год) — и я проверю, есть ли "
    "оно у нас или что-то похожее."
)
VOICE_TOO_LONG = "Это длинное голосовое 🙂 Я слушаю сообщения до {minutes} мин. Запишите покороче или напишите текстом."
VOICE_NOT_HEARD = "Не получилось разобрать голосовое 🙂 Запишите ещё раз или напишите, пожалуйста, текстом."
HEARD = "🎙 Я услышал: «{text}»"
HEARD_SHOWN = 600  # characters of the transcript shown back
VOICE_FILES = {"voice": "voice.ogg", "video_note": "video_note.mp4"}  # what Telegram records them as
LABEL_QUESTION = "Что это за вино? Есть ли оно или похожее в магазине?"
PHOTO_MAX_BYTES = 5 * 1024 * 1024  # a Telegram photo is a JPEG of a few hundred kB; more is not a photo
RATE_NOTICE = "Вы пишете очень быстро 🙂 Дайте мне минутку подумать — и напишите снова."
CALLBACK_TOO_OFTEN = "Слишком часто — подождите минутку 🙂"
CALLBACK_SEARCHING = "Ищу другие варианты…"
OLD_BUTTON = "Это сообщение уже устарело — напишите мне, что ищете 🙂"
INACTIVE_STATUSES = {"kicked", "left"}


class Channel(Protocol):
    """The side calls a route may make in the chat the update came from."""

    operator: bool  # True in the terminal chat: an operator's tool, exempt from the customer age gate

    def allow(self) -> RateDecision: ...

    def typing(self) -> None: ...

    def shown(self) -> Shown | None:
        """Where the chat shows the answer while the model writes it: what it has shown so far (a redelivered
        update's too); None when the answer goes whole."""
        ...

    def answer_callback(self, text: str | None) -> None: ...

    def edit_buttons(self, message_id: int, keyboard: JSONObject) -> None: ...

    def set_active(self, active: bool) -> None: ...

    def file(self, file_id: str, max_bytes: int) -> bytes | None:
        """The bytes of a file the customer sent (None: not available here, or over ``max_bytes``)."""
        ...


@dataclass
class Turn:
    """One routed update and what a route needs to answer it."""

    routed: Routed
    dialog: Dialog
    repositories: Repositories
    channel: Channel
    settings: Settings
    deadline: Deadline | None = None  # the turn's time budget (None: the local default)

    @property
    def sender(self) -> Author:
        user = self.routed.user
        chat_id = self.routed.chat_id or 0
        return Author(
            user_id=user.id if user else chat_id,
            chat_id=chat_id,
            username=user.username if user else None,
            first_name=(user.first_name or None) if user else None,
            last_name=user.last_name if user else None,
            language_code=user.language_code if user else None,
        )

    @property
    def args(self) -> str:
        """The text after a command (`/start wine42` -> `wine42`); empty otherwise."""
        if self.routed.kind != "command":
            return ""
        return self.routed.text.partition(" ")[2].strip()


Handler = Callable[[Turn], "Reply | ReplyStream | None"]
Guard = Callable[[Turn, "Route"], "Reply | None"]


class Route(NamedTuple):
    name: str
    handler: Handler
    rate_limited: bool = True  # counts against the per-chat limit; a refused turn gets RATE_NOTICE once
    typing: bool = True  # show "typing…" before the (slow) handler runs


@dataclass
class Router:
    commands: dict[str, Route] = field(default_factory=dict)
    kinds: dict[str, Route] = field(default_factory=dict)
    unknown_command: Route | None = None
    guards: list[Guard] = field(default_factory=list)
    callbacks: dict[str, Route] = field(default_factory=dict)  # by the callback data's prefix before ":"

    def command(self, *names: str, rate_limited: bool = True, typing: bool = True) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for name in names:
                key = name.lower() if name.startswith("/") else f"/{name.lower()}"
                self.commands[key] = Route(key, handler, rate_limited, typing)
            return handler

        return register

    def on(self, kind: Kind, *, rate_limited: bool = True, typing: bool = True) -> Callable[[Handler], Handler]:
        """The route for a kind of update: text, voice, photo, non_text, callback, member (command: unknown
        commands)."""

        def register(handler: Handler) -> Handler:
            route = Route(kind, handler, rate_limited, typing)
            if kind == "command":
                self.unknown_command = route
            else:
                self.kinds[kind] = route
            return handler

        return register

    def button(
        self, kind: CallbackData[Any], *, rate_limited: bool = False, typing: bool = False
    ) -> Callable[[Handler], Handler]:
        """The route for one kind of inline button (its prefix; other buttons: the callback route)."""

        def register(handler: Handler) -> Handler:
            self.callbacks[kind.prefix] = Route(f"button:{kind.prefix}", handler, rate_limited, typing)
            return handler

        return register

    def before(self, guard: Guard) -> Guard:
        self.guards.append(guard)
        return guard

    def route_for(self, routed: Routed) -> Route | None:
        if routed.kind == "ignored" or routed.chat_id is None:
            return None
        if routed.kind == "command":
            return self.commands.get(routed.command or "", self.unknown_command)
        if routed.kind == "callback":
            prefix = prefix_of(routed.callback_data)
            if prefix in self.callbacks:
                return self.callbacks[prefix]
        found = self.kinds.get(routed.kind)
        if found is None and routed.kind in ("voice", "photo"):
            return self.kinds.get("non_text")  # a table without those routes answers them as any non-text
        return found

    def dispatch(self, turn: Turn) -> Reply | ReplyStream | None:
        """The reply to this turn (None: nothing to send; a ReplyStream: its answer streams)."""
        route = self.route_for(turn.routed)
        if route is None:
            return None
        for guard in self.guards:
            reply = guard(turn, route)
            if reply is not None:
                return reply
        if route.rate_limited:
            decision = turn.channel.allow()
            if not decision.allowed:
                return Reply(parts=render_text(RATE_NOTICE)) if decision.notify else None
        if route.typing:
            turn.channel.typing()
        return route.handler(turn)

    def command_names(self) -> list[str]:
        return sorted(self.commands)


def customer_router() -> Router:
    """A new route table with the conversation's routes; the shop's join it (shop.routes.register)."""
    router = Router()
    router.command("/start")(start)
    router.command("/help", rate_limited=False, typing=False)(help_)
    router.command("/reset")(reset)
    router.command("/profile", typing=False)(profile)
    router.on("command")(unknown_command)
    router.on("text")(text)
    router.on("voice", typing=False)(voice)  # typing only while it is heard: no transcriber, no wait
    router.on("photo", typing=False)(photo)
    router.on("non_text", typing=False)(non_text)  # stickers count toward the rate limit like text
    router.on("member", rate_limited=False, typing=False)(member)
    router.on("callback", rate_limited=False, typing=False)(callback)
    return router


def start(turn: Turn) -> Reply:
    return turn.dialog.start(turn.sender)


def help_(turn: Turn) -> Reply:
    return turn.dialog.help()


def reset(turn: Turn) -> Reply:
    return turn.dialog.reset(turn.sender)


def profile(turn: Turn) -> Reply:
    return turn.dialog.profile(turn.sender)


def unknown_command(turn: Turn) -> Reply:
    return turn.dialog.help()


def text(turn: Turn) -> Reply | ReplyStream:
    """A typed message, or a caption (with its photo, for a model that sees)."""
    image = _photo_for_the_model(turn) if turn.routed.media == "photo" else None
    shown = turn.channel.shown()
    if shown is None:
        return turn.dialog.message(
            turn.sender, turn.routed.text, update_id=turn.routed.update_id, deadline=turn.deadline, image=image
        )
    pieces = turn.dialog.message_stream(
        turn.sender,
        turn.routed.text,
        update_id=turn.routed.update_id,
        shown=shown,
        deadline=turn.deadline,
        image=image,
    )
    return ReplyStream(pieces)


def voice(turn: Turn) -> Reply:
    """A voice message or a video note: what was said and its caption together are answered like a typed message,
    and the answer begins with what was heard. Nothing heard (silence, no transcription configured, too long, the
    day's minutes spent): the caption alone is the request; with no caption either, a polite word about it."""
    routed = turn.routed
    caption = routed.text
    heard, refusal = _heard(turn)
    if not heard and not caption:
        return Reply(parts=render_text(refusal))
    request = "\n".join(part for part in (heard, caption) if part)
    reply = turn.dialog.message(turn.sender, request, update_id=routed.update_id, deadline=turn.deadline)
    if heard:
        reply.parts = render_text(HEARD.format(text=shorten(heard, HEARD_SHOWN))) + reply.parts
    return reply


def _heard(turn: Turn) -> tuple[str, str]:
    """What the voice note said ("" when nothing was heard) and, for that case, why (the reply without a caption)."""
    routed, transcriber, limits = turn.routed, turn.dialog.transcriber, turn.settings.speech
    if transcriber is None or routed.file_id is None:
        return "", VOICE_AS_TEXT
    if (routed.duration or 0) > limits.max_seconds or (routed.file_size or 0) > limits.max_bytes:
        return "", VOICE_TOO_LONG.format(minutes=max(1, limits.max_seconds // 60))
    spending = turn.dialog.limits
    if spending is not None and not spending.admit_voice(turn.sender.user_id, routed.duration or 0):
        return "", VOICE_LIMIT_REPLY  # the day's minutes are heard: typed, it is answered
    turn.channel.typing()
    audio = turn.channel.file(routed.file_id, limits.max_bytes)
    if audio:
        try:
            return transcriber.transcribe(audio, VOICE_FILES.get(routed.media or "", "voice.ogg")).strip(), ""
        except TranscriptionError as exc:
            logger.warning("voice message not transcribed: %s", exc)
    return "", VOICE_NOT_HEARD


def photo(turn: Turn) -> Reply:
    """A photo with no caption, a label most often: a model that sees names the wine and searches for it; with
    none (offline, or a model that refused images), the customer is asked for the name as text."""
    image = _photo_for_the_model(turn)
    if image is None:
        return Reply(parts=render_text(LABEL_AS_TEXT))
    turn.channel.typing()
    return turn.dialog.message(
        turn.sender, LABEL_QUESTION, update_id=turn.routed.update_id, deadline=turn.deadline, image=image
    )


def _photo_for_the_model(turn: Turn) -> str | None:
    """The customer's photo (its largest size) as a data URL, when the chat model can see it."""
    file_id = turn.routed.file_id
    if file_id is None or not turn.dialog.sees_images():
        return None
    data = turn.channel.file(file_id, PHOTO_MAX_BYTES)
    if not data:
        return None
    kind = "image/png" if data.startswith(b"\x89PNG") else "image/webp" if data[8:12] == b"WEBP" else "image/jpeg"
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def non_text(turn: Turn) -> Reply:
    return Reply(parts=render_text(NON_TEXT_REPLY))


def member(turn: Turn) -> None:
    """Added, blocked, removed: keep the chat's active flag (nothing to send)."""
    turn.channel.set_active(turn.routed.member_status not in INACTIVE_STATUSES)


def callback(turn: Turn) -> Reply | None:
    routed, channel = turn.routed, turn.channel
    if routed.inline or routed.inaccessible:
        # A button under an inline message (no chat of ours to answer in) or under a message too old for the
        # bot to see: Telegram still wants the callback answered, and nothing else is safe to do.
        channel.answer_callback(OLD_BUTTON if routed.inaccessible else None)
        return None
    data = routed.callback_data or ""
    more = MORE.unpack(data)
    if more is not None:
        if not channel.allow().allowed:
            channel.answer_callback(CALLBACK_TOO_OFTEN)
            return None

        def searching() -> None:
            # Telegram wants an answer to the button within seconds: give it before the slow turn.
            channel.answer_callback(CALLBACK_SEARCHING)
            channel.typing()

        reply = turn.dialog.callback(
            turn.sender, data, update_id=routed.update_id, before_search=searching, deadline=turn.deadline
        )
        if not reply.parts:  # an old answer, or nothing more was found already: only the toast
            channel.answer_callback(reply.callback_text)
            return None
        if reply.exhausted and routed.message_id:
            channel.edit_buttons(routed.message_id, feedback_keyboard(more.answer_ref, more=False))
        return reply
    reply = turn.dialog.callback(turn.sender, data, update_id=routed.update_id)
    channel.answer_callback(reply.callback_text)
    vote = VOTE.unpack(data)
    if vote is not None and routed.message_id and reply.vote is not None:
        # Both votes stay pressable (the last press wins); the one stored is marked.
        channel.edit_buttons(routed.message_id, feedback_keyboard(vote.answer_ref, chosen=reply.vote))
    return reply if reply.parts else None
