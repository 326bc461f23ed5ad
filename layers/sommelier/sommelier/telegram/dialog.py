"""What the bot says to each kind of input, independent of transport.

The Telegram consumer and the terminal chat both call this, so the terminal shows exactly
what Telegram would: the same parts, captions and buttons.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace

from sommelier.agent.context import moment_context
from sommelier.agent.llm.port import drain
from sommelier.agent.loop import SommelierAgent, TurnRequest, TurnResult
from sommelier.agent.prefetch import Opening
from sommelier.agent.streaming import AnswerPiece, Shown
from sommelier.agent.transcription import Transcriber
from sommelier.domain.answer import SommelierResponse
from sommelier.domain.conversation import ChatMessage, Deadline, UserInfo
from sommelier.domain.errors import PortError
from sommelier.domain.search import ToolRequest
from sommelier.domain.shop_facts import ShopFacts
from sommelier.domain.taste import TasteNote, TasteProfile, describe
from sommelier.domain.wine import Wine
from sommelier.repositories.adapters import Repositories
from sommelier.telegram.limits import Admission, SpendingLimits
from sommelier.telegram.render import MORE, VOTE, Outgoing, render_answer, render_text

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
    "/profile — что я помню о вашем вкусе, /privacy — что я о вас храню, /forget — удалить всё это.\n"
    "Под подборкой есть кнопки 👍 / 👎 и «Ещё варианты»."
)
PROFILE_HEAD = "Что я помню о вашем вкусе:"
PROFILE_TAIL = (
    "Это помогает подбирать вина под вас, но то, что вы просите сейчас, всегда важнее. "
    "Понравилось вино — так и напишите или нажмите 👍; /forget сотрёт всё это."
)
PROFILE_EMPTY = (
    "Пока я ничего не знаю о вашем вкусе. Нажимайте 👍 / 👎 под подборками или пишите, что понравилось, "
    "а что нет («не люблю кислое»), — и я буду учитывать это в следующих советах."
)
PROFILE_FAILED = "Не получилось открыть ваш профиль вкуса, попробуйте чуть позже."
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


class ReplyStream:
    """A reply whose answer streams: iterate its pieces (deliver each before the next), then read `reply`."""

    def __init__(self, pieces: Generator[AnswerPiece, None, Reply]):
        self._pieces = pieces
        self.reply: Reply | None = None

    def __iter__(self) -> Iterator[AnswerPiece]:
        self.reply = yield from self._pieces


@dataclass
class Author:
    """Who wrote: enough to keep the users table current."""

    user_id: int
    chat_id: int
    username: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    language_code: str | None = None

    def as_user(self) -> UserInfo:
        return UserInfo(
            telegram_user_id=self.user_id,
            chat_id=self.chat_id,
            username=self.username,
            first_name=self.first_name,
            last_name=self.last_name,
            language_code=self.language_code,
        )


class Dialog:
    def __init__(
        self,
        agent: SommelierAgent,
        repositories: Repositories,
        *,
        health_warning: str | None = None,
        transcriber: Transcriber | None = None,
        limits: SpendingLimits | None = None,
    ):
        self.agent = agent
        self.limits = limits  # the spending limits (None: none, as in the terminal chat's tests)
        self.transcriber = transcriber  # voice messages heard as text (None: customers are asked to type)
        self.health_warning = health_warning  # the line under every answer that shows wine (None: none)
        self.repositories = repositories
        self.chat = repositories.chat
        self.catalog = repositories.catalog

    # -- commands -------------------------------------------------------------
    def start(self, sender: Author) -> Reply:
        try:
            self.chat.upsert_user(sender.as_user())
        except PortError as exc:
            logger.warning("user not saved: %s", exc)
        season = moment_context().season
        answer = self.agent.offline.respond(SEASON_QUERIES[season], [])
        parts = render_text(WELCOME)
        if answer.response.wines:
            parts += self._render(answer.response, answer_ref="start")
        return Reply(parts=parts)

    def help(self) -> Reply:
        return Reply(parts=render_text(HELP))

    def reset(self, sender: Author) -> Reply:
        try:
            self.chat.reset_history(sender.chat_id)
        except PortError:
            return Reply(parts=render_text("Не получилось очистить историю, попробуйте чуть позже."))
        return Reply(parts=render_text(RESET_DONE))

    # -- messages -------------------------------------------------------------
    def message(
        self,
        sender: Author,
        text: str,
        *,
        update_id: int | None = None,
        exclude_ids: list[str] | None = None,
        deadline: Deadline | None = None,
        invocations_at_start: int | None = None,
        image: str | None = None,
    ) -> Reply:
        """One recommendation turn, answered whole: begin_turn, the model's tool calls, end_turn (three
        invocations). ``image``: a photo the customer sent (a data URL), for a model that sees."""
        turn = self.message_stream(
            sender,
            text,
            update_id=update_id,
            exclude_ids=exclude_ids,
            deadline=deadline,
            invocations_at_start=invocations_at_start,
            image=image,
        )
        return drain(turn)

    def message_stream(
        self,
        sender: Author,
        text: str,
        *,
        update_id: int | None = None,
        exclude_ids: list[str] | None = None,
        shown: Shown | None = None,
        deadline: Deadline | None = None,
        invocations_at_start: int | None = None,
        image: str | None = None,
    ) -> Generator[AnswerPiece, None, Reply]:
        """The same turn, yielding the answer's pieces while the model streams them (``shown``: what the
        customer already has from this update, updated as pieces go out; None: the answer comes whole)."""
        if invocations_at_start is None:
            invocations_at_start = self.repositories.counter.count
        profile, history, opening, shop, taste = self._begin(
            sender, self.agent.opening_searches(text, exclude_ids or [])
        )
        request = TurnRequest(
            text=text,
            chat_id=sender.chat_id,
            user_id=sender.user_id,
            update_id=update_id,
            profile=profile,
            exclude_ids=exclude_ids or [],
            shown=shown,
            history=history,
            invocations_at_start=invocations_at_start,
            deadline=deadline,
            image=image,
            opening=opening,
            shop=shop,
            taste=taste,
            taste_note=self._taste_note(text, history),
        )
        admission = self._admit(sender)
        if admission is not None and not admission.llm:
            request = replace(request, use_llm=False)
        turn = yield from self.agent.stream_turn(request)
        if admission is not None and self.limits is not None and admission.llm:
            self.limits.settle(admission, turn.metadata.get("cost_usd"), int(turn.metadata.get("llm_calls") or 0))
        ref = str(turn.assistant_message_id) if turn.assistant_message_id else (str(update_id) if update_id else "0")
        parts = self._render(turn.response, answer_ref=ref, found=turn.found_wines, wines=turn.wines)
        notice = admission.notice if admission is not None else None
        return Reply(parts=(render_text(notice) + parts) if notice else parts, turn=turn)

    def _admit(self, sender: Author) -> Admission | None:
        """The spending limits' word on this turn (None: no LLM to spend on, or no limits here)."""
        if self.limits is None or self.agent.llm is None:
            return None
        try:
            return self.limits.admit(sender.user_id, sender.chat_id)
        except Exception as exc:  # the counters can't be reached: no spending they could not count
            logger.warning("spending limits not checked, the offline responder answers: %s", exc)
            return Admission(False)

    def callback(
        self,
        sender: Author,
        data: str,
        *,
        update_id: int | None = None,
        before_search: Callable[[], None] | None = None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """A pressed button. ``before_search`` runs just before «Ещё варианты» asks the agent (the toast)."""
        vote = VOTE.unpack(data)
        if vote is not None:
            return self._vote(sender, vote.answer_ref, vote.rating)
        more = MORE.unpack(data)
        if more is not None:
            return self._more(sender, more.answer_ref, update_id, before_search, deadline)
        return Reply(callback_text="Эта кнопка устарела")

    def _vote(self, sender: Author, ref: str, rating: int) -> Reply:
        """👍 / 👎 under an answer: stored once per answer (a second press replaces the first)."""
        message_id = int(ref) if ref.isdigit() and int(ref) > 0 else None
        try:
            saved = self.chat.save_feedback(
                chat_id=sender.chat_id, user_id=sender.user_id, message_id=message_id, rating=rating
            )
        except PortError as exc:
            logger.warning("feedback not saved: %s", exc)
            return Reply(callback_text=FEEDBACK_THANKS[rating], vote=rating)
        if saved.changed:
            return Reply(callback_text=FEEDBACK_CHANGED[rating], vote=rating)
        if saved.previous_rating == rating:
            return Reply(callback_text=FEEDBACK_SAME[rating], vote=rating)
        return Reply(callback_text=FEEDBACK_THANKS[rating], vote=rating)

    def _more(
        self,
        sender: Author,
        ref: str,
        update_id: int | None,
        before_search: Callable[[], None] | None,
        deadline: Deadline | None,
    ) -> Reply:
        """«Ещё варианты»: the same request again, without any wine already shown in this chat.

        A button of an answer the chat no longer has (after /reset) is old: a polite toast, no agent call.
        When nothing is left, that is said once (as a message, and the button goes away); a later press
        of the same button gets a toast.
        """
        invocations_at_start = self.repositories.counter.count  # the history read counts toward the turn
        try:
            messages = self.chat.history(sender.chat_id, HISTORY_FOR_BUTTONS)
            history_read = True
        except PortError:
            messages, history_read = [], False
        position = _answer_position(messages, ref)
        if ref.isdigit() and position is None and history_read:
            return Reply(callback_text=OLD_ANSWER)
        query = _last_request(messages[:position] if position is not None else messages)
        if position is not None and _exhausted(messages[position + 1 :], query):
            return Reply(callback_text=NOTHING_MORE_TOAST)
        shown = [wid for m in messages if m.role == "assistant" for wid in m.wine_ids]
        if before_search is not None:
            before_search()
        reply = self.message(
            sender,
            query or MORE_REQUEST,
            update_id=update_id,
            exclude_ids=shown,
            deadline=deadline,
            invocations_at_start=invocations_at_start,
        )
        reply.callback_text = "Ищу другие варианты…"
        if reply.turn is not None and not reply.turn.response.wine_ids():
            reply.parts = render_text(NOTHING_MORE)
            reply.exhausted = True
        return reply

    def sees_images(self) -> bool:
        """Whether a photo can be shown to the model now (an online model that has not refused images)."""
        llm = self.agent.llm
        return llm is not None and bool(getattr(llm, "sees_images", False))

    # -- helpers --------------------------------------------------------------
    def _render(
        self,
        response: SommelierResponse,
        answer_ref: str,
        found: Mapping[str, Wine] | None = None,
        wines: Mapping[str, Wine] | None = None,
    ) -> list[Outgoing]:
        ids = response.wine_ids()
        if ids and wines is None:  # end_turn did not load them (it failed, or this is /start)
            try:
                wines = {w.id: w for w in self.catalog.get_wines(ids).wines}
            except PortError as exc:
                # The catalogue can't be read right now: show the wines as the tools returned them this
                # turn (with the photo keys they came with) rather than an answer with its wines missing.
                logger.warning("wines not loaded for rendering (%s); using this turn's tool results", exc)
                known = found or {}
                wines = {wid: known[wid] for wid in ids if wid in known}
        return render_answer(response, wines or {}, answer_ref, footer=self.health_warning)

    def _taste_note(self, text: str, history: list[ChatMessage]) -> TasteNote | None:
        """What the message says of the customer's taste (offline/taste.py), learnt when the turn is saved; the
        shown wines are loaded only for a message that speaks of taste."""
        from sommelier.offline.taste import read_taste

        def shown() -> list[Wine]:
            ids = next((m.wine_ids for m in reversed(history) if m.role == "assistant" and m.wine_ids), [])
            return self.catalog.get_wines(ids).wines if ids else []

        try:
            return read_taste(text, shown)
        except PortError as exc:
            logger.warning("the shown wines were not read for the taste: %s", exc)
            return read_taste(text, list)

    def profile(self, sender: Author) -> Reply:
        """/profile: what the bot remembers of the customer's taste, and how to erase it."""
        try:
            kept = self.chat.taste_profile(sender.user_id)
        except PortError as exc:
            logger.warning("taste profile not read: %s", exc)
            return Reply(parts=render_text(PROFILE_FAILED))
        lines = describe(kept)
        if not lines:
            return Reply(parts=render_text(PROFILE_EMPTY))
        return Reply(parts=render_text("\n".join([PROFILE_HEAD, *(f"• {line}" for line in lines), "", PROFILE_TAIL])))

    def _begin(
        self, sender: Author, searches: list[ToolRequest]
    ) -> tuple[dict[str, object] | None, list[ChatMessage], Opening | None, ShopFacts | None, TasteProfile | None]:
        """Upsert the user and load the history and the shop's facts in one call, with the prefetch's
        ``searches`` when there are any (open_turn); the profile the prompt greets by, the history, the
        searches' answers and the facts."""
        fallback: dict[str, object] | None = {"name": sender.first_name} if sender.first_name else None
        opening: Opening | None = None
        try:
            user_info, limit = sender.as_user(), self.agent.history_messages
            if searches:
                opened = self.chat.open_turn(sender.chat_id, user=user_info, history_limit=limit, searches=searches)
                user, history, shop, taste = opened.user, opened.history, opened.shop, opened.taste
                opening = Opening(searches, opened.results) if opened.results is not None else None
            else:
                begun = self.chat.begin_turn(sender.chat_id, user=user_info, history_limit=limit)
                user, history, shop, taste = begun.user, begun.history, begun.shop, begun.taste
        except PortError as exc:
            logger.warning("turn not begun (user not saved, no history): %s", exc)
            return fallback, [], None, None, None
        if user is None:
            return fallback, history, opening, shop, None
        profile: dict[str, object] = dict(user.profile)
        if user.first_name:
            profile.setdefault("имя", user.first_name)
        return profile, history, opening, shop, taste


def _answer_position(messages: list[ChatMessage], ref: str) -> int | None:
    """Where the answer a button belongs to is in the history (None: not there, or the button names none)."""
    if not ref.isdigit():
        return None
    return next((i for i, m in enumerate(messages) if m.role == "assistant" and str(m.id) == ref), None)


def _last_request(messages: list[ChatMessage]) -> str | None:
    """The customer's last request among the messages («Ещё варианты» itself asks for nothing new)."""
    return next((m.content for m in reversed(messages) if m.role == "user" and m.content != MORE_REQUEST), None)


def _exhausted(later: list[ChatMessage], query: str | None) -> bool:
    """Did a later «Ещё варианты» for the same request already come back empty?"""
    for i, message in enumerate(later):
        if message.role != "assistant" or message.wine_ids:
            continue
        asked = later[i - 1] if i > 0 and later[i - 1].role == "user" else None
        if asked is not None and query is not None and asked.content == query:
            return True
    return False
