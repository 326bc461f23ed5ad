"""What the bot says to each kind of input, independent of transport.

The Telegram consumer and the terminal chat both call this, so the terminal shows exactly
what Telegram would: the same parts, captions and buttons.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.context import moment_context
from sommelier.agent.loop import SommelierAgent, TurnRequest, TurnResult
from sommelier.agent.progress import AnswerListener
from sommelier.shop.health import health_warning
from sommelier.telegram.render import Outgoing, parse_callback_data, render_answer, render_text
from sommelier.tools.client import ToolClient

logger = logging.getLogger(__name__)

WELCOME = (
    "Здравствуйте! Я сомелье нашего магазина 🍷\n"
    "Напишите, к какому блюду или поводу нужно вино, какой бюджет и что вы любите, — "
    "и я подберу до трёх бутылок из нашего каталога. Например: «красное сухое к стейку до 2000 ₽» "
    "или «что-нибудь лёгкое на летний вечер»."
)
HELP = (
    "Как со мной говорить:\n"
    "• опишите блюдо, повод или настроение: «к утке», «на день рождения», «лёгкое белое»;\n"
    "• добавьте бюджет: «до 1500», «около 3 тысяч»;\n"
    "• уточняйте: «а подешевле?», «а белое?», «ещё варианты»;\n"
    "• спрашивайте о вине: «что такое танины?».\n\n"
    "Команды: /start — начать заново, /help — эта подсказка, /reset — забыть наш разговор, "
    "/privacy — что я о вас храню, /forget — удалить всё это.\n"
    "Под подборкой есть кнопки 👍 / 👎 и «Ещё варианты»."
)
RESET_DONE = "Готово, я забыл наш разговор. С чего начнём?"
FEEDBACK_THANKS = {1: "Спасибо! Рад, что понравилось 🍷", -1: "Спасибо за честность — учту и подберу лучше."}
MORE_REQUEST = "Покажи другие варианты по моему предыдущему запросу"
FEEDBACK_CHANGED = {1: "Оценка изменена на 👍 — спасибо!", -1: "Оценка изменена на 👎 — учту."}
FEEDBACK_SAME = {1: "Вы уже поставили 👍", -1: "Вы уже поставили 👎"}
OLD_ANSWER = "Этот ответ уже устарел — напишите, что ищете, и я подберу заново 🙂"
NOTHING_MORE = (
    "Больше вариантов по этому запросу у меня нет — я показал всё подходящее из каталога. "
    "Давайте изменим условия: другой бюджет, цвет, страна или повод?"
)
NOTHING_MORE_TOAST = "Больше вариантов нет — попробуйте изменить условия"
HISTORY_FOR_BUTTONS = 50  # the answers a button may refer to (load_history's maximum)

# /start picks: a query for the season, read by the offline responder (no LLM spend on a welcome), within
# an everyday budget so a welcome never suggests the dearest bottle of the shelf.
START_BUDGET_RUB = 3000
SEASON_QUERIES = {
    season: f"{query}, до {START_BUDGET_RUB} рублей"
    for season, query in {
        "зима": "насыщенное согревающее вино для зимнего вечера у камина",
        "весна": "свежее фруктовое вино для весеннего ужина",
        "лето": "лёгкое освежающее вино на летний вечер",
        "осень": "бархатное вино для осеннего ужина",
    }.items()
}


@dataclass
class Reply:
    parts: list[Outgoing] = field(default_factory=list)
    turn: TurnResult | None = None
    callback_text: str | None = None  # the toast for answerCallbackQuery
    vote: int | None = None  # a 👍 (1) / 👎 (-1) press: the vote now stored for the pressed answer
    exhausted: bool = False  # «Ещё варианты» found nothing more: its button goes away


@dataclass
class Sender:
    """Who wrote: enough to keep the users table current."""

    user_id: int
    chat_id: int
    username: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    language_code: str | None = None


class Dialog:
    def __init__(self, agent: SommelierAgent, tools: ToolClient):
        self.agent = agent
        self.tools = tools

    # -- commands -------------------------------------------------------------
    def start(self, sender: Sender) -> Reply:
        self._remember(sender)
        season = moment_context().season
        answer = self.agent.offline.respond(SEASON_QUERIES[season], [])
        parts = render_text(WELCOME)
        if answer.response.wines:
            parts += self._render(answer.response, answer_ref="start")
        return Reply(parts=parts)

    def help(self) -> Reply:
        return Reply(parts=render_text(HELP))

    def reset(self, sender: Sender) -> Reply:
        result = self.tools.call("reset_history", {"chat_id": sender.chat_id})
        if "error" in result:
            return Reply(parts=render_text("Не получилось очистить историю, попробуйте чуть позже."))
        return Reply(parts=render_text(RESET_DONE))

    # -- messages -------------------------------------------------------------
    def message(
        self,
        sender: Sender,
        text: str,
        *,
        update_id: int | None = None,
        exclude_ids: list[str] | None = None,
        listener: AnswerListener | None = None,
    ) -> Reply:
        """``listener`` (Telegram's progressive reply) gets the answer's pieces while it streams."""
        profile = self._remember(sender)
        turn = self.agent.run(
            TurnRequest(
                text=text,
                chat_id=sender.chat_id,
                user_id=sender.user_id,
                update_id=update_id,
                profile=profile,
                exclude_ids=exclude_ids or [],
                listener=listener,
                shown=getattr(listener, "shown", None),
            )
        )
        ref = str(turn.assistant_message_id) if turn.assistant_message_id else (str(update_id) if update_id else "0")
        return Reply(parts=self._render(turn.response, answer_ref=ref, found=turn.found_wines), turn=turn)

    def callback(
        self,
        sender: Sender,
        data: str,
        *,
        update_id: int | None = None,
        before_search: Callable[[], None] | None = None,
    ) -> Reply:
        """A pressed button. ``before_search`` runs just before «Ещё варианты» asks the agent (the toast)."""
        pressed = parse_callback_data(data)
        if pressed is None:
            return Reply(callback_text="Эта кнопка устарела")
        if pressed.action == "feedback":
            ref = pressed.answer_ref
            message_id = int(ref) if ref.isdigit() and int(ref) > 0 else None
            saved = self.tools.call(
                "save_feedback",
                {
                    "chat_id": sender.chat_id,
                    "user_id": sender.user_id,
                    "message_id": message_id,
                    "rating": pressed.rating,
                },
            )
            rating = pressed.rating
            if saved.get("changed"):
                return Reply(callback_text=FEEDBACK_CHANGED[rating], vote=rating)
            if saved.get("previous_rating") == rating:
                return Reply(callback_text=FEEDBACK_SAME[rating], vote=rating)
            return Reply(callback_text=FEEDBACK_THANKS[rating], vote=rating)
        return self._more(sender, pressed.answer_ref, update_id, before_search)

    def _more(self, sender: Sender, ref: str, update_id: int | None, before_search: Callable[[], None] | None) -> Reply:
        """«Ещё варианты»: the same request again, without any wine already shown in this chat.

        A button of an answer the chat no longer has (after /reset) is old: a polite toast, no agent call.
        When nothing is left, that is said once (as a message, and the button goes away); a later press
        of the same button gets a toast.
        """
        history = self.tools.call("load_history", {"chat_id": sender.chat_id, "limit": HISTORY_FOR_BUTTONS})
        messages = history.get("messages", [])
        position = None
        if ref.isdigit():
            position = next(
                (i for i, m in enumerate(messages) if m["role"] == "assistant" and str(m["id"]) == ref), None
            )
            if position is None and "error" not in history:
                return Reply(callback_text=OLD_ANSWER)
        before = messages[:position] if position is not None else messages
        query = next(
            (m["content"] for m in reversed(before) if m["role"] == "user" and m["content"] != MORE_REQUEST), None
        )
        if position is not None and _exhausted(messages[position + 1 :], query):
            return Reply(callback_text=NOTHING_MORE_TOAST)
        shown = [wid for m in messages if m["role"] == "assistant" for wid in m.get("wine_ids", [])]
        if before_search is not None:
            before_search()
        reply = self.message(sender, query or MORE_REQUEST, update_id=update_id, exclude_ids=shown)
        reply.callback_text = "Ищу другие варианты…"
        if reply.turn is not None and not reply.turn.response.wine_ids():
            reply.parts = render_text(NOTHING_MORE)
            reply.exhausted = True
        return reply

    # -- helpers --------------------------------------------------------------
    def _render(self, response, answer_ref: str, found: dict[str, dict[str, Any]] | None = None) -> list[Outgoing]:
        ids = response.wine_ids()
        wines: dict[str, dict[str, Any]] = {}
        if ids:
            result = self.tools.call("get_wines", {"ids": ids})
            wines = {w["id"]: w for w in result.get("wines", [])}
            if "error" in result and found:
                # The catalogue can't be read right now: show the wines as the tools returned them this
                # turn (as text, without photos) rather than an answer with its wines missing.
                logger.warning("wines not loaded for rendering (%s); using this turn's tool results", result["error"])
                wines = {wid: found[wid] for wid in ids if wid in found}
        return render_answer(response, wines, answer_ref, footer=health_warning())

    def _remember(self, sender: Sender) -> dict[str, Any] | None:
        result = self.tools.call(
            "upsert_user",
            {
                "telegram_user_id": sender.user_id,
                "chat_id": sender.chat_id,
                "username": sender.username,
                "first_name": sender.first_name,
                "last_name": sender.last_name,
                "language_code": sender.language_code,
            },
        )
        if "error" in result:
            logger.warning("user not saved: %s", result["error"])
            return {"name": sender.first_name} if sender.first_name else None
        user = result["user"]
        profile = dict(user.get("profile") or {})
        if user.get("first_name"):
            profile.setdefault("имя", user["first_name"])
        return profile


def _exhausted(later: list[dict[str, Any]], query: str | None) -> bool:
    """Did a later «Ещё варианты» for the same request already come back empty?"""
    for i, message in enumerate(later):
        if message["role"] != "assistant" or message.get("wine_ids"):
            continue
        asked = later[i - 1] if i > 0 and later[i - 1]["role"] == "user" else None
        if asked is not None and query is not None and asked["content"] == query:
            return True
    return False
