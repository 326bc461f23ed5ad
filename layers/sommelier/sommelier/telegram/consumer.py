"""The agent consumer: one Telegram update → one turn → Telegram messages (DESIGN.md §10).

Runs behind SQS FIFO in Lambda (handle_sqs), inline for `sommelier serve`, and for `sommelier poll`.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from sommelier.bot.dialog import Dialog, Reply, Sender
from sommelier.bot.runtime import Runtime, build_runtime
from sommelier.config import env, env_int
from sommelier.telegram.client import BadRequest, Forbidden, TelegramClient, TelegramError
from sommelier.telegram.delivery import Sender as TelegramSender
from sommelier.telegram.render import feedback_keyboard, parse_callback_data, render_text
from sommelier.telegram.state import RateLimiter, TurnPlans, state_from_environment
from sommelier.telegram.updates import Routed, UpdateError, parse_update, route

logger = logging.getLogger(__name__)

NON_TEXT_REPLY = "Я пока понимаю только текст 🙂 Напишите, к какому блюду или поводу нужно вино, и какой у вас бюджет."
RATE_NOTICE = "Вы пишете очень быстро 🙂 Дайте мне минутку подумать — и напишите снова."
APOLOGY = (
    "Простите, у меня не получилось ответить на это сообщение из-за технической ошибки. "
    "Попробуйте, пожалуйста, написать ещё раз чуть позже."
)
INACTIVE_STATUSES = {"kicked", "left"}


class TelegramBot:
    def __init__(
        self,
        runtime: Runtime,
        client: TelegramClient,
        *,
        delivery_log,
        plans: TurnPlans,
        limiter: RateLimiter,
        bot_username: str | None = None,
        max_receives: int = 3,
        sleep=None,
    ):
        self.runtime = runtime
        self.dialog: Dialog = runtime.dialog
        self.tools = runtime.tools
        self.client = client
        self.plans = plans
        self.limiter = limiter
        self.bot_username = bot_username
        self.max_receives = max_receives
        extra = {"sleep": sleep} if sleep else {}
        self.sender = TelegramSender(client, runtime.photos, delivery_log, on_file_id=self._cache_file_id, **extra)

    def _cache_file_id(self, wine_id: str, file_id: str) -> None:
        self.tools.call("cache_photo", {"wine_id": wine_id, "file_id": file_id})

    # ------------------------------------------------------------------ entry
    def process(self, update: dict[str, Any], attempt: int = 1) -> None:
        """Handle one update. Raises only to ask for a retry (the SQS message comes back)."""
        try:
            routed = route(parse_update(update), self.bot_username)
        except UpdateError as exc:
            logger.warning("unreadable update skipped: %s", exc)
            return
        if routed.kind == "ignored" or routed.chat_id is None:
            return
        if routed.kind == "member":
            self._member_changed(routed)
            return
        key = str(routed.update_id)
        try:
            plan = self.plans.load(key)
            if plan is None:
                plan = self._plan(routed)
                if plan is None:
                    return
                self.plans.save(key, plan)
            self.sender.deliver(routed.chat_id, key, plan)
        except Forbidden:
            logger.info("the user blocked the bot; marking chat %s inactive", routed.chat_id)
            self._set_active(routed, False)
        except BadRequest as exc:
            # A 400 is Telegram refusing this very request (chat not found, ...): resending the same reply
            # can't succeed, so the update is done (parse errors and bad photos were handled by the sender).
            logger.warning("telegram refused the reply to chat %s; not retrying: %s", routed.chat_id, exc)
        except Exception:
            if attempt >= self.max_receives:
                self._apologise(routed, key)
            raise

    # ------------------------------------------------------------------ planning a reply
    def _plan(self, routed: Routed):
        sender = Sender(
            user_id=routed.user.id if routed.user else routed.chat_id,
            chat_id=routed.chat_id,
            username=routed.user.username if routed.user else None,
            first_name=routed.user.first_name if routed.user else None,
            last_name=routed.user.last_name if routed.user else None,
            language_code=routed.user.language_code if routed.user else None,
        )
        if routed.kind == "non_text":
            return render_text(NON_TEXT_REPLY)
        if routed.kind == "callback":
            return self._callback(routed, sender)
        if routed.kind == "command" and routed.command == "/help":
            return self.dialog.help().parts
        decision = self.limiter.check(routed.chat_id)
        if not decision.allowed:
            return render_text(RATE_NOTICE) if decision.notify else None
        self._typing(routed.chat_id)
        if routed.kind == "command":
            if routed.command == "/start":
                return self.dialog.start(sender).parts
            if routed.command == "/reset":
                return self.dialog.reset(sender).parts
            return self.dialog.help().parts
        return self.dialog.message(sender, routed.text, update_id=routed.update_id).parts

    def _callback(self, routed: Routed, sender: Sender):
        pressed = parse_callback_data(routed.callback_data)
        if pressed is not None and pressed.action == "more":
            decision = self.limiter.check(routed.chat_id)
            if not decision.allowed:
                self._answer_callback(routed, "Слишком часто — подождите минутку 🙂")
                return None
            # Telegram wants an answer to the button within seconds: give it before the slow turn.
            self._answer_callback(routed, "Ищу другие варианты…")
            self._typing(routed.chat_id)
            reply: Reply = self.dialog.callback(sender, routed.callback_data or "", update_id=routed.update_id)
            return reply.parts
        reply = self.dialog.callback(sender, routed.callback_data or "", update_id=routed.update_id)
        self._answer_callback(routed, reply.callback_text)
        if pressed is not None and pressed.action == "feedback" and routed.message_id:
            # Keep only «Ещё варианты» under the rated answer: the vote is recorded.
            keyboard = feedback_keyboard(pressed.answer_ref)
            keyboard["inline_keyboard"] = keyboard["inline_keyboard"][1:]
            try:
                self.client.edit_message_reply_markup(routed.chat_id, routed.message_id, keyboard)
            except TelegramError as exc:
                logger.info("could not update the buttons: %s", exc)
        return reply.parts or None

    # ------------------------------------------------------------------ side calls (best effort)
    def _answer_callback(self, routed: Routed, text: str | None) -> None:
        try:
            self.client.answer_callback_query(routed.callback_id or "", text)
        except TelegramError as exc:
            logger.info("callback not answered: %s", exc)

    def _typing(self, chat_id: int) -> None:
        try:
            self.client.send_chat_action(chat_id, "typing")
        except Forbidden:
            raise
        except TelegramError as exc:
            logger.info("typing not shown: %s", exc)

    def _member_changed(self, routed: Routed) -> None:
        self._set_active(routed, routed.member_status not in INACTIVE_STATUSES)

    def _set_active(self, routed: Routed, active: bool) -> None:
        result = self.tools.call("set_user_active", {"chat_id": routed.chat_id, "active": active})
        if "error" in result:
            logger.warning("could not mark chat %s active=%s: %s", routed.chat_id, active, result["error"])

    def _apologise(self, routed: Routed, key: str) -> None:
        """The last attempt failed: one apology (never repeated), then the message goes to the DLQ."""
        try:
            self.sender.deliver(routed.chat_id, f"{key}:apology", render_text(APOLOGY))
        except Exception as exc:
            logger.warning("apology not delivered: %s", exc)


_default_bot: TelegramBot | None = None
_default_lock = threading.Lock()


def default_bot() -> TelegramBot:
    """The bot for this process, built from the environment on first use."""
    global _default_bot
    with _default_lock:
        if _default_bot is None:
            runtime = build_runtime()
            client = TelegramClient.from_settings(runtime.settings)
            log, plans, limiter = state_from_environment(env_int("RATE_LIMIT_PER_MINUTE", 10))
            _default_bot = TelegramBot(
                runtime,
                client,
                delivery_log=log,
                plans=plans,
                limiter=limiter,
                bot_username=_bot_username(client),
                max_receives=env_int("SQS_MAX_RECEIVES", 3),
            )
        return _default_bot


def reset_default_bot() -> None:
    global _default_bot
    with _default_lock:
        _default_bot = None


def _bot_username(client: TelegramClient) -> str | None:
    configured = env("TELEGRAM_BOT_USERNAME")
    if configured:
        return configured.lstrip("@")
    try:
        return client.get_me().username
    except TelegramError as exc:
        logger.warning("getMe failed (%s); group mentions are matched loosely", exc)
        return None


def process_update(update: dict[str, Any], attempt: int = 1) -> None:
    default_bot().process(update, attempt)


RETRY_BACKOFF_SECONDS = 20


def _retry_soon(record, attempt: int) -> None:
    """Bring a failed turn back in seconds, not after the whole visibility timeout (it blocks its chat)."""
    queue_url = env("QUEUE_URL")
    if not queue_url:
        return
    try:
        import boto3

        boto3.client("sqs").change_message_visibility(
            QueueUrl=queue_url,
            ReceiptHandle=record.receipt_handle,
            VisibilityTimeout=min(RETRY_BACKOFF_SECONDS * attempt, 300),
        )
    except Exception as exc:  # the default visibility timeout still brings it back
        logger.warning("could not shorten the retry delay: %s", exc)


def handle_sqs(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """SQS FIFO batch with partial failures: a failed record and those after it are retried, in order."""
    from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    def record_handler(record: SQSRecord) -> None:
        attempt = int(record.attributes.approximate_receive_count or 1)
        try:
            update = json.loads(record.body)
        except (ValueError, RecursionError):
            logger.error("an SQS message that is not JSON was dropped")
            return
        try:
            process_update(update, attempt)
        except Exception:
            _retry_soon(record, attempt)
            raise

    return process_partial_response(
        event=event, record_handler=record_handler, processor=SqsFifoPartialProcessor(), context=context
    )
