"""`sommelier chat`: the bot in the terminal, showing what Telegram would show."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from sommelier_dev.cli.output import fail, print_json

if TYPE_CHECKING:
    from sommelier.agent.streaming import Shown
    from sommelier.app import Runtime
    from sommelier.domain.wire import JSONObject
    from sommelier.photos.store import PhotoStore
    from sommelier.telegram.dialog import Reply
    from sommelier.telegram.render import Outgoing
    from sommelier.telegram.state import RateDecision

    from sommelier_dev.cli.context import CliContext

T = TypeVar("T")

QUIT_WORDS = {"/quit", "/exit", "выход"}
BUTTON_NUMBER_MAX_DIGITS = 2  # "7" is a button press; "1500" is a budget


def wrap_for_terminal(text: str, width: int) -> str:
    """Wrap at ordinary spaces only. Rich wraps at any whitespace, the no-break spaces inside «1 190 ₽»
    included; textwrap breaks only at ASCII whitespace, so a price stays on one line (as in Telegram)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(textwrap.wrap(paragraph, width=max(width, 12), break_on_hyphens=False) or [""])
    return "\n".join(lines)


def no_such_button(number: str, buttons: list[tuple[str, str]]) -> str:
    """The hint for a typed number that is no button under the last answer."""
    if not buttons:
        return f"Кнопки «{number}» нет: кнопки появляются под подборкой вин. Напишите, что ищете 🙂"
    return f"Кнопки «{number}» нет: под последним ответом кнопки 1–{len(buttons)}."


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("chat", help="chat with the sommelier in the terminal")
    parser.add_argument("--once", metavar="TEXT", help="answer one message and exit")
    parser.add_argument("--json", action="store_true", help="with --once: print response, metadata and Telegram calls")
    parser.add_argument("--chat-id", type=int, default=1, help="the chat to talk in (history is per chat)")
    parser.set_defaults(run=run)


def telegram_calls(chat_id: int, parts: list[Outgoing], photos: PhotoStore) -> list[dict[str, Any]]:
    """The Bot API calls the Telegram consumer would make for these parts."""
    calls: list[dict[str, Any]] = []
    for part in parts:
        markup = {"reply_markup": part.reply_markup} if part.reply_markup else {}
        if part.kind == "photo":
            photo = part.file_id or (photos.presigned_url(part.image_key) if part.image_key else None)
            if not photo and part.image_key:
                photo = f"upload:{photos.describe(part.image_key)}"
            calls.append(
                {
                    "method": "sendPhoto",
                    "params": {
                        "chat_id": chat_id,
                        "photo": photo,
                        "caption": part.html,
                        "parse_mode": "HTML",
                        **markup,
                    },
                }
            )
        else:
            calls.append(
                {
                    "method": "sendMessage",
                    "params": {"chat_id": chat_id, "text": part.html, "parse_mode": "HTML", **markup},
                }
            )
    return calls


def fresh_update_id() -> int:
    """An update id for a terminal turn: milliseconds since the epoch, so a later session or another `--once`
    call on the same chat never reuses an earlier id (the messages table keeps one message per chat and id)."""
    return time.time_ns() // 1_000_000


def terminal_update(update_id: int, chat_id: int, text: str) -> dict[str, Any]:
    """A line typed in the terminal as the private-chat Update Telegram would deliver."""
    message: dict[str, Any] = {
        "message_id": update_id,
        "date": int(time.time()),
        "chat": {"id": chat_id, "type": "private"},
        "from": {"id": chat_id, "is_bot": False, "first_name": ""},
        "text": text,
    }
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return {"update_id": update_id, "message": message}


def terminal_button(update_id: int, chat_id: int, data: str) -> dict[str, Any]:
    """A pressed inline button as Telegram's callback_query Update."""
    return {
        "update_id": update_id,
        "callback_query": {
            "id": f"terminal-{update_id}",
            "from": {"id": chat_id, "is_bot": False, "first_name": ""},
            "message": {"message_id": update_id - 1, "chat": {"id": chat_id, "type": "private"}},
            "data": data,
        },
    }


class TerminalChannel:
    """The router's side calls, shown in the terminal (no rate limit: one person types here)."""

    operator = True  # the shop's own tool: no customer age gate

    def __init__(self, chat: TerminalChat):
        self.chat = chat

    def allow(self) -> RateDecision:
        from sommelier.telegram.state import RateDecision

        return RateDecision(allowed=True)

    def typing(self) -> None:
        return None  # the spinner of TerminalChat._busy shows it

    def shown(self) -> Shown | None:
        return None  # the terminal shows the whole answer at once

    def answer_callback(self, text: str | None) -> None:
        if text:
            self.chat.console.print(Text(f"🔔 {text}", style="italic"))

    def edit_buttons(self, message_id: int, keyboard: JSONObject) -> None:
        rows = keyboard.get("inline_keyboard")
        buttons = [b for row in rows if isinstance(row, list) for b in row] if isinstance(rows, list) else []
        self.chat.buttons = [(str(b["text"]), str(b["callback_data"])) for b in buttons if isinstance(b, dict)]

    def set_active(self, active: bool) -> None:
        return None  # a terminal chat never blocks the bot

    def file(self, file_id: str, max_bytes: int) -> bytes | None:
        return None  # the terminal sends text only


class TerminalChat:
    def __init__(self, runtime: Runtime, chat_id: int, console: Console):
        from sommelier.app import build_router

        self.runtime = runtime
        self.router = build_router(runtime)
        self.console = console
        self.chat_id = chat_id
        self.buttons: list[tuple[str, str]] = []  # (label, callback data) of the last keyboard
        self.update_id = fresh_update_id()

    def banner(self) -> None:
        settings = self.runtime.settings
        if self.runtime.offline:
            mode = "офлайн-режим: правила без LLM (задайте OPENAI_API_KEY, чтобы подключить модель)"
        else:
            mode = f"LLM {settings.llm.model}"
        self.console.print(
            Panel(
                Text(f"Сомелье · {mode}\nКоманды: /start /help /reset, цифра — нажать кнопку, /quit — выход"),
                style="bold magenta",
            )
        )

    def reply_to(self, update: dict[str, Any]) -> Reply | None:
        """The reply the shared router gives this update (None: nothing to show)."""
        from sommelier.telegram.dialog import ReplyStream
        from sommelier.telegram.router import Turn
        from sommelier.telegram.updates import parse_update, route

        routed = route(parse_update(update))
        turn = Turn(
            routed=routed,
            dialog=self.runtime.dialog,
            repositories=self.runtime.repositories,
            channel=TerminalChannel(self),
            settings=self.runtime.settings,
        )
        reply = self._busy(lambda: self.router.dispatch(turn))
        if isinstance(reply, ReplyStream):  # never: TerminalChannel.shown() is None, so every answer comes whole
            raise TypeError("the terminal chat shows whole answers, not streamed ones")
        return reply

    def handle(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        self.update_id += 1
        if text.isdigit() and len(text) <= BUTTON_NUMBER_MAX_DIGITS:
            if not 1 <= int(text) <= len(self.buttons):
                self.console.print(Text(no_such_button(text, self.buttons), style="yellow"))
                return
            label, data = self.buttons[int(text) - 1]
            self.console.print(Text(f"[нажата кнопка {label}]", style="dim"))
            reply = self.reply_to(terminal_button(self.update_id, self.chat_id, data))
        else:
            reply = self.reply_to(terminal_update(self.update_id, self.chat_id, text))
        if reply is not None:
            self.show(reply)

    def _busy(self, work: Callable[[], T]) -> T:
        if self.console.is_terminal:
            with self.console.status("Сомелье подбирает вино…", spinner="dots"):
                return work()
        return work()

    def _photo_location(self, part: Outgoing) -> str:
        if part.file_id:
            return f"Telegram file_id {part.file_id}"
        if not part.image_key:
            return "нет"
        where = self.runtime.photos.describe(part.image_key)
        try:
            return str(Path(where).relative_to(Path.cwd()))
        except ValueError:
            return where

    def show(self, reply: Reply) -> None:
        for part in reply.parts:
            if part.kind == "photo":
                body = Text(wrap_for_terminal(part.plain, self.console.width - 4), no_wrap=True)
                self.console.print(Panel(body, title="📷 фото", title_align="left", border_style="red"))
                self.console.print(Text(f"   фото: {self._photo_location(part)}", style="dim"), soft_wrap=True)
            else:
                self.console.print(Text(wrap_for_terminal("🍷 " + part.plain, self.console.width - 1), no_wrap=True))
            if part.reply_markup:
                self.buttons = [
                    (b["text"], b["callback_data"]) for row in part.reply_markup["inline_keyboard"] for b in row
                ]
                labels = "   ".join(f"[{i}] {label}" for i, (label, _) in enumerate(self.buttons, 1))
                self.console.print(Text(labels, style="bold cyan"))
        self.console.print()


def _prepare(context: CliContext) -> Runtime:
    from sommelier.app import build_runtime

    from sommelier_dev.cli.dev_cmd import ensure_ready

    if not context.settings.aws.tool_function_name:
        ensure_ready(context, quiet=True)
    return build_runtime(context.settings, repositories=context.repositories())


def run(args: argparse.Namespace) -> int:
    try:
        runtime = _prepare(args.context)
    except Exception as exc:
        return fail(f"the sommelier could not start: {exc}")
    if args.once is not None:
        return _once(runtime, args)
    console = Console(highlight=False, soft_wrap=False)
    chat = TerminalChat(runtime, args.chat_id, console)
    chat.banner()
    interactive = sys.stdin.isatty()
    while True:
        try:
            line = console.input("[bold green]Вы:[/] ") if interactive else sys.stdin.readline()
        except EOFError:
            break
        if not interactive:
            if line == "":
                break
            if line.strip():
                console.print(Text(f"Вы: {line.strip()}", style="bold green"))
        if line.strip().lower() in QUIT_WORDS:
            break
        try:
            chat.handle(line)
        except Exception as exc:  # keep the conversation going
            console.print(Text(f"Что-то пошло не так: {type(exc).__name__}. Попробуйте ещё раз.", style="red"))
    return 0


def _once(runtime: Runtime, args: argparse.Namespace) -> int:
    from sommelier.telegram.dialog import Reply

    text = args.once.strip() or "?"
    chat = TerminalChat(runtime, args.chat_id, Console(highlight=False))
    reply = chat.reply_to(terminal_update(fresh_update_id(), args.chat_id, text)) or Reply()
    if args.json:
        command = text.split()[0] if text.startswith("/") else ""
        print_json(
            {
                "response": reply.turn.response.model_dump(mode="json") if reply.turn else None,
                "metadata": reply.turn.metadata if reply.turn else {"mode": "command", "command": command},
                "telegram": telegram_calls(args.chat_id, reply.parts, runtime.photos),
            }
        )
        return 0
    chat.show(reply)
    return 0
