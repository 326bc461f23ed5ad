"""The agent consumer: one Telegram update → one turn → Telegram messages (docs/architecture.md).

Runs behind SQS FIFO in Lambda (handle_sqs), inline for `sommelier serve`, and for `sommelier poll`.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sommelier.agent.streaming import Shown
from sommelier.domain.conversation import Deadline
from sommelier.domain.errors import PortError
from sommelier.observability.telemetry import record_event
from sommelier.photos.store import PhotoStore
from sommelier.repositories.adapters import Repositories
from sommelier.settings import LLMSettings, SettingError, Settings
from sommelier.telegram.business import STRANGER_REFUSAL, BusinessConnections, stranger_report
from sommelier.telegram.client import BadRequest, Forbidden, RetryAfter, TelegramClient, TelegramError
from sommelier.telegram.delivery import DeliveryLog, DynamoDeliveryLog, InMemoryDeliveryLog
from sommelier.telegram.delivery import Sender as TelegramSender
from sommelier.telegram.dialog import Dialog, ReplyStream
from sommelier.telegram.progressive import DraftSupport, ProgressiveReply
from sommelier.telegram.render import Outgoing, render_text
from sommelier.telegram.router import Router, Turn
from sommelier.telegram.state import (
    DynamoRateLimiter,
    DynamoTurnPlans,
    FloodGate,
    InMemoryLedger,
    InMemoryRateLimiter,
    InMemoryTurnPlans,
    MessageLedger,
    RateDecision,
    RateLimiter,
    TurnPlans,
    album_key,
    answer_key,
    ledger_from_settings,
)
from sommelier.telegram.updates import BotUsername, Routed, UpdateError, parse_update, route

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

    from sommelier.domain.wire import JSONObject
    from sommelier.telegram.models import BusinessConnection

logger = logging.getLogger(__name__)

APOLOGY = (
    "Простите, у меня не получилось ответить на это сообщение из-за технической ошибки. "
    "Попробуйте, пожалуйста, написать ещё раз чуть позже."
)
MAX_FLOOD_WAIT_SECONDS = 900  # the longest Telegram flood wait honoured (locally slept, or the SQS visibility)


class FloodWait(Exception):
    """Telegram asked to wait longer than a turn may sleep: bring the update back after ``retry_after`` s."""

    def __init__(self, retry_after: float):
        self.retry_after = retry_after
        super().__init__(f"telegram flood wait of {retry_after:.0f} s")


class TelegramChannel:
    """The router's side calls, made in one Telegram chat (best effort, except a block)."""

    operator = False  # a customer's chat

    def __init__(self, bot: TelegramBot, routed: Routed):
        self.bot = bot
        self.routed = routed
        self.progress: ProgressiveReply | None = None

    def _progressive(self) -> ProgressiveReply | None:
        """The progressive reply of a text turn while the model streams (None: the reply goes at once)."""
        if self.progress is None and self.routed.kind == "text" and self.bot.progressive:
            self.progress = ProgressiveReply(
                client=self.bot.client,
                sender=self.bot.sender,
                plans=self.bot.plans,
                key=str(self.routed.update_id),
                place=self.routed.place,
                private=self.routed.chat_type == "private",
                drafts=self.bot.drafts,
                draft_interval=self.bot.draft_interval,
            )
        return self.progress

    def shown(self) -> Shown | None:
        progress = self._progressive()
        return progress.shown if progress is not None else None

    def allow(self) -> RateDecision:
        decision = self.bot.limiter.check(self.routed.chat)
        user = self.routed.user
        if decision.allowed and user is not None and user.id != self.routed.chat:
            # One customer's minute is one, whichever chats they write in: a group is no fresh bucket (a
            # user's id is their private chat's, so the private chat and every group share this count).
            decision = self.bot.limiter.check(user.id)
        return decision

    def typing(self) -> None:
        progress = self._progressive()
        if progress is not None:
            progress.start()  # a "Thinking…" draft in a private chat, typing elsewhere
            return
        place = self.routed.place
        if not place.takes_chat_actions or self.bot.floods.remaining(place.chat_id) > 0:
            return  # a channel's direct messages take no chat action; nothing at all inside a flood wait
        try:
            self.bot.client.send_chat_action(place.chat_id, "typing", **place.action_params())
        except Forbidden:
            raise
        except BadRequest as exc:
            if exc.is_chat_unavailable and exc.migrate_to_chat_id is None:
                raise  # a closed topic or a gone chat: end the turn before asking the model anything
            # (a group that became a supergroup: the answer goes there, see TelegramBot._deliver)
            logger.info("typing not shown: %s", exc)
        except TelegramError as exc:
            logger.info("typing not shown: %s", exc)

    def answer_callback(self, text: str | None) -> None:
        try:
            self.bot.client.answer_callback_query(self.routed.callback_id or "", text)
        except TelegramError as exc:
            logger.info("callback not answered: %s", exc)

    def edit_buttons(self, message_id: int, keyboard: JSONObject) -> None:
        try:
            self.bot.client.edit_message_reply_markup(self.routed.chat, message_id, keyboard)
        except TelegramError as exc:
            logger.info("could not update the buttons: %s", exc)

    def set_active(self, active: bool) -> None:
        self.bot.set_active(self.routed, active)

    def file(self, file_id: str, max_bytes: int) -> bytes | None:
        """getFile, then the download from {TELEGRAM_API_BASE_URL}/file/bot<token>/<file_path>."""
        try:
            found = self.bot.client.get_file(file_id)
            if not found.file_path or (found.file_size or 0) > max_bytes:
                logger.info("file %s not downloaded: no path, or %s bytes", file_id, found.file_size)
                return None
            return self.bot.client.download_file(found.file_path, max_bytes=max_bytes)
        except TelegramError as exc:  # too big for getFile (20 MB), gone, or Telegram did not answer
            logger.warning("file %s not downloaded: %s", file_id, exc)
            return None


class TelegramBot:
    def __init__(
        self,
        settings: Settings,
        client: TelegramClient,
        *,
        dialog: Dialog,
        repositories: Repositories,
        photos: PhotoStore,
        router: Router,
        delivery_log: DeliveryLog,
        plans: TurnPlans,
        limiter: RateLimiter,
        bot_username: str | None = None,
        max_receives: int = 3,
        sleep: Callable[[float], None] | None = None,
        ledger: MessageLedger | None = None,
        wait_out_floods: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.settings = settings
        self.dialog = dialog
        self.repositories = repositories
        self.chat = repositories.chat
        self.client = client
        self.plans = plans
        self.limiter = limiter
        self.bot_username = bot_username
        self.max_receives = max_receives
        self.router = router
        self.ledger: MessageLedger = ledger or InMemoryLedger()
        # Locally the worker sleeps through a flood wait; in Lambda the SQS message comes back after it.
        self.wait_out_floods = wait_out_floods
        self.sleep = sleep or time.sleep
        self.clock = clock
        self.floods = FloodGate(clock)  # chat -> when Telegram lets the bot write again, for every send path
        self.sender = TelegramSender(
            client, photos, delivery_log, on_file_id=self._cache_file_id, sleep=self.sleep, floods=self.floods
        )
        self.business = BusinessConnections(client, clock, settings.telegram.business_owner_ids)
        # Progressive replies need a model that streams; TELEGRAM_PROGRESSIVE=off sends each answer whole.
        telegram = settings.telegram
        self.progressive = bool(getattr(self.dialog.agent.llm, "streams", False)) and telegram.progressive
        self.drafts = DraftSupport()  # chats (or the whole bot) where the Bot API refused drafts
        self.draft_interval = telegram.draft_interval_s

    def _cache_file_id(self, wine_id: str, file_id: str) -> None:
        self.chat.remember_photo(wine_id, file_id)  # Lambda mode: written by the next end_turn

    # ------------------------------------------------------------------ entry
    def process(self, update: dict[str, Any], attempt: int = 1, deadline: Deadline | None = None) -> None:
        """Handle one update. Raises only to ask for a retry (the SQS message comes back); FloodWait says when."""
        try:
            routed = route(parse_update(update), self.bot_username)
        except UpdateError as exc:
            logger.warning("unreadable update skipped: %s", exc)
            return
        if routed.kind == "business" and routed.business is not None:
            self.business.remember(routed.business)  # connected, disconnected, rights changed: no reply
            if routed.business.is_enabled and not self.business.is_the_shops(routed.business):
                self._refuse_business(routed.business, routed.update_id)
            return
        if self.router.route_for(routed) is None or not self._may_answer_business(routed):
            return
        if routed.kind == "member":  # no reply to plan or deliver
            self.router.dispatch(self._turn(routed))
            return
        key = str(routed.update_id)
        try:
            plan = self.plans.load(key)
            if plan is None:
                claimed = self._claim(routed, key)
                if claimed is None:
                    return
                routed = claimed
                plan, progress = self._plan(routed, deadline)
                if plan is None:
                    return
                self.plans.save(key, plan)
                failed = progress.failed if progress is not None else None
                if failed is not None and not _deliver_handles(failed):
                    # A part sent while the answer streamed failed: retry the update like any failed
                    # delivery; the saved plan (no second LLM turn) resends only what is missing.
                    raise failed
            self._deliver(routed, key, plan)
        except FloodWait:
            raise  # never an apology inside a flood window: the update comes back after the wait
        except Forbidden:
            logger.info("the user blocked the bot; marking chat %s inactive", routed.chat)
            self.set_active(routed, False)
        except BadRequest as exc:
            # A 400 that reached here is Telegram refusing the chat itself (chat not found, a closed topic,
            # no rights): resending can't succeed, so the turn ends (other 400s were handled per part).
            logger.warning("telegram refused the reply to chat %s; the turn ends: %s", routed.chat, exc)
            record_event("TelegramChatUnavailable")
        except Exception:
            if attempt >= self.max_receives:
                self._apologise(routed, key)
            raise

    def _may_answer_business(self, routed: Routed) -> bool:
        """True outside Business chats; in one, only for the shop's own enabled connection with reply rights."""
        connection_id = routed.business_connection_id
        if connection_id is None:
            return True
        verdict = self.business.verdict(connection_id)
        if verdict == "serve":
            return True
        connection = self.business.get(connection_id)
        if verdict == "stranger" and connection is not None:
            self._refuse_business(connection, routed.update_id)
        logger.info("business connection %s is %s: no answer", connection_id, verdict)
        return False

    def _refuse_business(self, connection: BusinessConnection, update_id: int) -> None:
        """Someone else's Business account connected the bot: told once, politely, where the bot can be used;
        the shop's admin chat is told once too (claimed in the ledger, so once across processes)."""
        if not self.ledger.claim(f"business-refused#{connection.id}", str(update_id)):
            return
        logger.warning(
            "business connection %s of user %s refused: not in BUSINESS_OWNER_IDS", connection.id, connection.user.id
        )
        record_event("BusinessConnectionRefused")
        try:
            admin = self.settings.shop.admin_chat_id()
        except SettingError:
            admin = None
        for chat, text in ((connection.user_chat_id, STRANGER_REFUSAL), (admin, stranger_report(connection))):
            if chat is None:
                continue
            try:
                self.client.send_message(chat, text)
            except TelegramError as exc:
                logger.info("business refusal not delivered to chat %s: %s", chat, exc)

    def _claim(self, routed: Routed, key: str) -> Routed | None:
        """The update to answer for this message, or None when another update has (or had) its turn.

        One reply per album and per message: an edit of an answered message gets none, and a message
        edited while it waited in the queue is answered as edited (see sommelier.telegram.state).
        """
        if routed.kind not in ("text", "command", "voice", "photo", "non_text") or routed.message_id is None:
            return routed
        chat_id = routed.chat
        if routed.media_group_id and not self.ledger.claim(album_key(chat_id, routed.media_group_id), key):
            logger.info("album %s in chat %s already answered", routed.media_group_id, chat_id)
            return None
        if not self.ledger.claim(answer_key(chat_id, routed.message_id), key):
            logger.info("message %s in chat %s already answered; no new turn", routed.message_id, chat_id)
            return None
        if routed.edited:
            return routed
        edit = self.ledger.latest_edit(chat_id, routed.message_id)
        if edit is None:
            return routed
        try:
            edited = route(parse_update({"update_id": routed.update_id, "message": edit}), self.bot_username)
        except UpdateError:
            return routed
        logger.info("message %s in chat %s was edited while it waited: answering the edit", routed.message_id, chat_id)
        return edited if edited.kind != "ignored" else None

    def _deliver(self, routed: Routed, key: str, plan: list[Outgoing]) -> None:
        """Deliver the plan; a flood wait is slept through here (local) or handed to the queue (FloodWait); a
        basic group that became a supergroup gets the answer there."""
        waited = 0.0
        place = routed.place
        while True:
            try:
                self.sender.deliver(place.chat_id, key, plan, place=place)
                return
            except RetryAfter as exc:
                wait = min(max(float(exc.retry_after), 1.0), MAX_FLOOD_WAIT_SECONDS)
                until = self.floods.hold(place.chat_id, wait)
                record_event("TelegramFloodWait")
                if not self.wait_out_floods or waited + wait > MAX_FLOOD_WAIT_SECONDS:
                    logger.info("telegram flood wait of %.0f s for chat %s: the update comes back", wait, place.chat_id)
                    raise FloodWait(wait) from None
                logger.info("telegram flood wait of %.0f s for chat %s: waiting", wait, place.chat_id)
                self.sleep(wait)
                self.floods.served(place.chat_id, until)
                waited += wait
            except BadRequest as exc:
                moved = exc.migrate_to_chat_id
                if moved is None or moved == place.chat_id:
                    raise
                logger.info(
                    "chat %s became supergroup %s: the answer and the chat's state go there", place.chat_id, moved
                )
                record_event("TelegramChatMigrated")
                self._move_chat(place.chat_id, moved)
                place = place.moved_to(moved)

    # ------------------------------------------------------------------ planning a reply
    def _turn(self, routed: Routed, deadline: Deadline | None = None) -> Turn:
        return Turn(
            routed=routed,
            dialog=self.dialog,
            repositories=self.repositories,
            channel=TelegramChannel(self, routed),
            settings=self.settings,
            deadline=deadline,
        )

    def _plan(self, routed: Routed, deadline: Deadline | None) -> tuple[list[Outgoing] | None, ProgressiveReply | None]:
        """The reply's parts, and the progressive reply that sent some of them while the answer streamed."""
        turn = self._turn(routed, deadline)
        channel = TelegramChannel(self, routed)
        turn.channel = channel
        reply = self.router.dispatch(turn)
        progress = channel.progress
        if isinstance(reply, ReplyStream):
            # The answer's pieces go out as the model writes them, from here: never from inside the model call.
            for piece in reply:
                if progress is not None:
                    progress.show(piece)
            reply = reply.reply
        if reply is None or not reply.parts:
            return None, progress
        if progress is not None and reply.turn is not None:
            # What went out while the answer streamed keeps its indexes; the rest follows without repeats.
            return progress.finish(reply.parts, reply.turn.response.intro), progress
        return reply.parts, progress

    def _move_chat(self, old: int, new: int) -> None:
        """The conversation (history, votes, members) follows the group into its supergroup; best effort."""
        try:
            self.chat.move_chat(old, new)
        except PortError as exc:
            logger.warning("chat %s not moved to %s: %s", old, new, exc)

    def set_active(self, routed: Routed, active: bool) -> None:
        try:
            self.chat.set_active(routed.chat, active)
        except PortError as exc:
            logger.warning("could not mark chat %s active=%s: %s", routed.chat, active, exc)

    def _apologise(self, routed: Routed, key: str) -> None:
        """The last attempt failed: one apology (never repeated), then the message goes to the DLQ."""
        if self.floods.remaining(routed.chat) > 0:
            logger.info("no apology to chat %s inside its flood wait", routed.chat)
            return
        try:
            self.sender.deliver(routed.chat, f"{key}:apology", render_text(APOLOGY), place=routed.place)
        except Exception as exc:
            logger.warning("apology not delivered: %s", exc)


def _deliver_handles(failed: Exception) -> bool:
    """A streamed part's failure the plan's delivery deals with itself: a flood wait, a migrated group."""
    return isinstance(failed, RetryAfter) or (isinstance(failed, BadRequest) and failed.migrate_to_chat_id is not None)


def state_from_settings(settings: Settings) -> tuple[DeliveryLog, TurnPlans, RateLimiter]:
    """(delivery log, turn plans, rate limiter): DynamoDB when IDEMPOTENCY_TABLE is set, else memory."""
    table = settings.aws.idempotency_table
    per_minute = settings.telegram.rate_limit_per_minute
    if table:
        return DynamoDeliveryLog(table), DynamoTurnPlans(table), DynamoRateLimiter(table, per_minute)
    return InMemoryDeliveryLog(), InMemoryTurnPlans(), InMemoryRateLimiter(per_minute)


def bot_from_settings(
    settings: Settings,
    *,
    dialog: Dialog,
    repositories: Repositories,
    photos: PhotoStore,
    router: Router,
    ledger: MessageLedger | None = None,
    **options: Any,
) -> TelegramBot:
    """A bot from the settings: the Bot API client and the delivery state (DynamoDB or memory) around the
    dialog, the ports and the route table the composition root (sommelier.app) built."""
    client = TelegramClient.from_settings(settings.telegram)
    log, plans, limiter = state_from_settings(settings)
    options.setdefault("max_receives", settings.aws.sqs_max_receives)
    options.setdefault("wait_out_floods", not settings.aws.queue_url)
    return TelegramBot(
        settings,
        client,
        dialog=dialog,
        repositories=repositories,
        photos=photos,
        router=router,
        delivery_log=log,
        plans=plans,
        limiter=limiter,
        bot_username=BotUsername(settings.telegram, lambda: client.get_me().username).get(),
        ledger=ledger or ledger_from_settings(settings),
        **options,
    )


class AgentContainer:
    """What one agent process builds once and keeps across invocations: the bot (built on first use, and
    again after a secret changed).

    The handler (functions/webhook/agent.py), `sommelier serve` and `poll` each build one from their
    settings; tests build their own around the bot they made (``AgentContainer(bot=...)``)."""

    def __init__(
        self,
        settings: Callable[[], tuple[Settings, bool]] | None = None,
        *,
        build: Callable[[Settings], TelegramBot] | None = None,
        bot: TelegramBot | None = None,
    ):
        self._settings = settings
        self._build = build
        self._bot = bot
        self._lock = threading.Lock()

    def bot(self) -> TelegramBot:
        with self._lock:
            if self._settings is not None:
                settings, changed = self._settings()
                if (self._bot is None or changed) and self._build is not None:
                    self._bot = self._build(settings)  # a key or the token was rotated: rebuild the bot with it
            if self._bot is None:
                raise RuntimeError("an AgentContainer needs settings or a bot")
            return self._bot

    def reset(self) -> None:
        """Forget the bot (a rotated key or token): the next update builds it again."""
        with self._lock:
            self._bot = None

    def process_update(self, update: dict[str, Any], attempt: int = 1, deadline: Deadline | None = None) -> None:
        self.bot().process(update, attempt, deadline)

    def handle_sqs(self, event: dict[str, Any], context: Any = None) -> dict[str, Any]:
        try:
            bot = self.bot()
        except SettingError as exc:  # a configuration problem: one clear line, and every record comes back
            logger.error("could not process the batch: %s (SQS will redeliver)", exc)
            records = event.get("Records") if isinstance(event, dict) else None
            ids = [r.get("messageId") for r in records or [] if isinstance(r, dict) and r.get("messageId")]
            return {"batchItemFailures": [{"itemIdentifier": i} for i in ids]}
        return handle_sqs(event, context, bot.process, bot.settings)


RETRY_BACKOFF_SECONDS = 20


def retry_delay(attempt: int, flood_wait: float | None = None) -> int:
    """Seconds until a failed turn comes back: a short backoff, or just past Telegram's flood wait (capped)."""
    if flood_wait is not None:
        return int(min(math.ceil(flood_wait) + 1, MAX_FLOOD_WAIT_SECONDS))
    return min(RETRY_BACKOFF_SECONDS * attempt, 300)


def _retry_soon(record: SQSRecord, queue_url: str | None, attempt: int, flood_wait: float | None = None) -> None:
    """Bring a failed turn back in seconds, not after the whole visibility timeout (it blocks its chat)."""
    if not queue_url:
        return
    try:
        import boto3

        boto3.client("sqs").change_message_visibility(
            QueueUrl=queue_url,
            ReceiptHandle=record.receipt_handle,
            VisibilityTimeout=retry_delay(attempt, flood_wait),
        )
    except Exception as exc:  # the default visibility timeout still brings it back
        logger.warning("could not shorten the retry delay: %s", exc)


def lambda_turn_deadline(context: Any, llm: LLMSettings) -> Deadline | None:
    """The budget of a turn run by this Lambda invocation: its remaining time minus the delivery reserve,
    capped by LLM_TURN_BUDGET_S when that is set. None when the context cannot tell (local runs)."""
    remaining_ms = getattr(context, "get_remaining_time_in_millis", None)
    if remaining_ms is None:
        return None
    try:
        remaining = float(remaining_ms()) / 1000.0
    except (TypeError, ValueError):
        return None
    budget = remaining - llm.delivery_reserve_s
    if llm.turn_budget_s is not None:
        budget = min(budget, llm.turn_budget_s)
    return Deadline.after(max(budget, 0.0))


def handle_sqs(
    event: dict[str, Any],
    context: Any,
    process_update: Callable[[dict[str, Any], int, Deadline | None], None],
    settings: Settings,
) -> dict[str, Any]:
    """SQS FIFO batch with partial failures: a failed record and those after it are retried, in order."""
    from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response

    queue_url = settings.aws.queue_url

    def record_handler(record: SQSRecord) -> None:
        attempt = int(record.attributes.approximate_receive_count or 1)
        try:
            update = json.loads(record.body)
        except (ValueError, RecursionError):
            logger.error("an SQS message that is not JSON was dropped")
            return
        # This record's share of the invocation's remaining time.
        deadline = lambda_turn_deadline(context, settings.llm)
        try:
            process_update(update, attempt, deadline)
        except FloodWait as exc:
            _retry_soon(record, queue_url, attempt, exc.retry_after)
            raise
        except Exception:
            _retry_soon(record, queue_url, attempt)
            raise

    response: dict[str, Any] = dict(
        process_partial_response(
            event=event, record_handler=record_handler, processor=SqsFifoPartialProcessor(), context=context
        )
    )
    return response
