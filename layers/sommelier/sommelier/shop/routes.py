"""The shop's routes, added to a route table (telegram.router) by `register`: the age gate, /privacy,
/forget, wine deep links on /start, and the admin commands. Thin: the rules live in the other
sommelier.shop modules."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sommelier.agent.care import stated_minor
from sommelier.domain.errors import PortError
from sommelier.domain.pricing import LLMPrice, parse_price
from sommelier.shop import age_gate, privacy
from sommelier.shop.admin import is_admin_turn, stats_text
from sommelier.shop.cards import card_parts
from sommelier.shop.deeplinks import wine_ref_from_start
from sommelier.telegram.dialog import WELCOME, Reply
from sommelier.telegram.render import render_text
from sommelier.telegram.router import RATE_NOTICE, Route, Router, Turn

if TYPE_CHECKING:
    from sommelier.domain.wire import JSONObject

logger = logging.getLogger(__name__)

REMOVED_BUTTONS: JSONObject = {"inline_keyboard": []}
# Routes a customer reaches before answering the age question: they show no wine.
OPEN_ROUTES = {
    "/help",
    "/privacy",
    "/forget",
    "/stats",
    "/report",
    "member",
    "non_text",
    f"button:{age_gate.ANSWER.prefix}",
    f"button:{privacy.ANSWER.prefix}",
}


def register(router: Router, gate: age_gate.AgeGate) -> Router:
    """Add the shop's routes to ``router``; ``gate`` is the process's age gate (its cache of confirmed adults)."""
    routes = GatedRoutes(gate)
    router.before(routes.ask_age_first)
    router.before(routes.minor_stated)  # after the gate: a confirmed customer who says they are 16
    router.button(age_gate.ANSWER)(routes.age_answered)
    router.command("/start")(start)
    router.command("/privacy", rate_limited=False, typing=False)(privacy_info)
    router.command("/forget", typing=False)(forget_asked)
    router.button(privacy.ANSWER)(routes.forget_answered)
    router.command("/stats", rate_limited=False, typing=False)(stats)
    router.command("/report", rate_limited=False)(report_now)
    return router


class GatedRoutes:
    """The routes that read or change the age gate's answers."""

    def __init__(self, gate: age_gate.AgeGate):
        self.gate = gate

    def ask_age_first(self, turn: Turn, route: Route) -> Reply | None:
        if route.name in OPEN_ROUTES or turn.channel.operator or not turn.settings.shop.age_gate:
            return None
        user_id = turn.sender.user_id
        if self.gate.is_adult(user_id):
            return None
        if turn.routed.kind == "callback":
            # A button (an old answer's, someone else's, an inline message's) only gets a toast: the question
            # goes with the customer's next message, never as a new message from a button.
            turn.channel.answer_callback(age_gate.ANSWER_FIRST)
            return Reply()
        # The question counts against the chat's rate limit like any reply: asking is no way around it.
        decision = turn.channel.allow()
        if not decision.allowed:
            return Reply(parts=render_text(RATE_NOTICE)) if decision.notify else None
        payload = turn.args if route.name == "/start" and wine_ref_from_start(turn.args) else ""
        question = render_text(age_gate.QUESTION, age_gate.question_keyboard(user_id, payload))
        # /start still greets; the seasonal picks wait for the answer.
        return Reply(parts=render_text(WELCOME) + question if route.name == "/start" else question)

    def minor_stated(self, turn: Turn, route: Route) -> Reply | None:
        """A customer who says they are under 18 («мне 16»): their age answer is reset, so the question comes
        again with their next message; this message goes on to the agent, whose care turn answers without
        wine in both modes (agent.care)."""
        if route.name not in ("text", "photo") or turn.channel.operator or not turn.settings.shop.age_gate:
            return None
        if stated_minor(turn.routed.text):
            self.gate.record(turn.sender.user_id, False)
        return None

    def age_answered(self, turn: Turn) -> Reply | None:
        answer = age_gate.ANSWER.unpack(turn.routed.callback_data)
        if answer is None:
            turn.channel.answer_callback("Эта кнопка устарела")
            return None
        if answer.user_id != turn.sender.user_id:
            turn.channel.answer_callback(age_gate.NOT_YOURS)
            return None
        if not self.gate.record(answer.user_id, answer.adult):
            turn.channel.answer_callback("Не получилось сохранить ответ, попробуйте ещё раз")
            return None
        turn.channel.answer_callback(age_gate.THANKS if answer.adult else None)
        if turn.routed.message_id:
            turn.channel.edit_buttons(turn.routed.message_id, REMOVED_BUTTONS)
        if not answer.adult:
            return Reply(parts=render_text(age_gate.REFUSAL))
        ref = wine_ref_from_start(answer.start_payload)
        if ref:
            return Reply(parts=card_parts(turn.repositories.shop, ref, turn.settings.shop.health_warning))
        return turn.dialog.start(turn.sender)

    def forget_answered(self, turn: Turn) -> Reply | None:
        answer = privacy.ANSWER.unpack(turn.routed.callback_data)
        if answer is None:
            turn.channel.answer_callback("Эта кнопка устарела")
            return None
        if answer.user_id != turn.sender.user_id:
            turn.channel.answer_callback(privacy.NOT_YOURS)
            return None
        if turn.routed.message_id:
            turn.channel.edit_buttons(turn.routed.message_id, REMOVED_BUTTONS)
        if not answer.confirmed:
            turn.channel.answer_callback(None)
            return Reply(parts=render_text(privacy.KEPT))
        try:
            turn.repositories.shop.forget_user(answer.user_id)
        except PortError as exc:
            logger.warning("forget_user failed: %s", exc)
            turn.channel.answer_callback(None)
            return Reply(parts=render_text(privacy.FAILED))
        self.gate.forget(answer.user_id)
        turn.channel.answer_callback(None)
        return Reply(parts=render_text(privacy.FORGOTTEN))


# --------------------------------------------------------------------------- deep links
def start(turn: Turn) -> Reply:
    """`/start w_<sku or id>` (a shelf QR code) opens that wine's card; a plain /start is the welcome."""
    ref = wine_ref_from_start(turn.args)
    if ref:
        return Reply(parts=card_parts(turn.repositories.shop, ref, turn.settings.shop.health_warning))
    return turn.dialog.start(turn.sender)


# --------------------------------------------------------------------------- privacy
def privacy_info(turn: Turn) -> Reply:
    return Reply(parts=render_text(privacy.privacy_text(privacy.stated_retention_days(turn.settings.shop))))


def forget_asked(turn: Turn) -> Reply:
    keyboard = privacy.confirm_keyboard(turn.sender.user_id)
    return Reply(parts=render_text(privacy.CONFIRM_QUESTION, keyboard))


# --------------------------------------------------------------------------- the admin chat
def stats(turn: Turn) -> Reply | None:
    if not is_admin_turn(turn.settings.shop, turn.routed):
        return None  # not a command anywhere else
    try:
        result = turn.repositories.shop.admin_stats()
    except PortError as exc:
        return Reply(parts=render_text(f"Статистика недоступна: {exc}"))
    try:
        price: LLMPrice | None = parse_price(turn.settings.llm.price_per_mtok)
    except ValueError:  # an unreadable LLM_PRICE_PER_MTOK: the summary without the cost (the doctor names it)
        price = None
    limits = turn.dialog.limits
    try:
        hits = limits.hits() if limits is not None else None
    except Exception as exc:  # the counters can't be read now: the summary without them
        logger.warning("limit figures not read: %s", exc)
        hits = None
    return Reply(parts=render_text(stats_text(result, price, hits)))


def report_now(turn: Turn) -> Reply | None:
    if not is_admin_turn(turn.settings.shop, turn.routed):
        return None
    from sommelier.shop.report_delivery import request_report

    limits = turn.dialog.limits
    return Reply(parts=render_text(request_report(turn.settings, turn.routed.chat, turn.repositories.shop, limits)))
