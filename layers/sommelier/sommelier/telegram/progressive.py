"""Progressive delivery of one turn: a draft while the model thinks, then each piece as soon as it is ready.

- ``start``: in a private chat an empty ``sendMessageDraft`` (Telegram shows "Thinking…"); elsewhere, or
  when the Bot API refuses drafts for this bot or chat (remembered in ``DraftSupport``), typing.
- ``draft``: the intro as it streams, at most once per ``draft_interval`` (Telegram answers faster
  changes with 429).
- ``intro`` / ``wine``: a real message at once. Each goes through the usual idempotent ``Sender``
  under the update's key, so the delivery log records it per part index exactly as for a whole plan,
  and the parts sent so far are saved as the update's progress: a redelivered update knows what the
  customer already has (``shown``) and sends only the rest.
- ``finish``: the turn's whole plan = what was sent + the rest of the final answer, without repeats.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Callable

from sommelier.agent.streaming import AnswerPiece, DraftPiece, IntroPiece, Shown
from sommelier.domain.answer import WineRecommendation
from sommelier.domain.wine import Wine
from sommelier.telegram.client import BadRequest, Forbidden, RetryAfter, TelegramClient, TelegramError
from sommelier.telegram.delivery import Sender
from sommelier.telegram.place import Place
from sommelier.telegram.render import TEXT_LIMIT, Outgoing, render_text, render_wine, shorten
from sommelier.telegram.state import TurnPlans

logger = logging.getLogger(__name__)

DEFAULT_DRAFT_INTERVAL = 0.5  # seconds between draft changes; see BENCHMARKS.md (streaming)


class DraftSupport:
    """Where the Bot API refused drafts, for this process: the whole bot, or single chats."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.bot_refused = False
        self._chats: set[int] = set()

    def allowed(self, chat_id: int) -> bool:
        with self._lock:
            return not self.bot_refused and chat_id not in self._chats

    def refuse(self, chat_id: int, description: str) -> None:
        with self._lock:
            lowered = description.lower()
            if "private" in lowered:
                return  # a group or channel: the caller never drafts there anyway
            if "bot" in lowered or "method" in lowered or lowered.startswith("not found"):
                self.bot_refused = True  # e.g. "not available for this bot", or a server without the method
            else:
                self._chats.add(chat_id)


def progress_key(key: str) -> str:
    return f"{key}#progress"


class ProgressiveReply:
    """The streamed answer of one Telegram turn: each piece the agent yields is shown here (`show`)."""

    def __init__(
        self,
        *,
        client: TelegramClient,
        sender: Sender,
        plans: TurnPlans,
        key: str,
        place: Place,
        private: bool,
        drafts: DraftSupport,
        draft_interval: float = DEFAULT_DRAFT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.client = client
        self.sender = sender
        self.plans = plans
        self.key = key
        self.place = place
        self.chat_id = place.chat_id
        self.thread_id = place.thread_id
        self.drafts = drafts
        self.draft_interval = draft_interval
        self.clock = clock
        self.draft_id = zlib.crc32(key.encode()) or 1  # non-zero, stable for the update
        # Drafts: private chats of the bot itself (a Business chat takes no draft).
        self._drafting = private and place.business_connection_id is None and drafts.allowed(self.chat_id)
        self._last_draft = float("-inf")
        self._draft_blocked_until = float("-inf")
        self.parts: list[Outgoing] = plans.load(progress_key(key)) or []
        self.shown = _shown_from(self.parts)
        self.draft_calls = 0
        self.refused: TelegramError | None = None  # a 400/403 for this chat: nothing more is sent this turn
        self.failed: Exception | None = None  # a send failed otherwise: the rest waits for the saved plan

    # ---------------- the start of a turn ----------------
    def start(self) -> None:
        if self.sender.floods.remaining(self.chat_id) > 0:
            return  # inside a flood wait nothing goes to the chat, not even "typing"
        if self._drafting and self._send_draft(""):
            return
        if not self.place.takes_chat_actions:
            return
        try:
            self.client.send_chat_action(self.chat_id, "typing", **self.place.action_params())
        except Forbidden:
            raise
        except TelegramError as exc:
            logger.info("typing not shown: %s", exc)

    # ---------------- the answer's pieces ----------------
    def show(self, piece: AnswerPiece) -> None:
        """Show one piece of the answer; never raises (a failed send is kept for the saved plan)."""
        if isinstance(piece, DraftPiece):
            self.draft(piece.text)
        elif isinstance(piece, IntroPiece):
            self.intro(piece.text)
        else:
            self.wine(piece.recommendation, piece.wine)

    def draft(self, text: str) -> None:
        now = self.clock()
        if not self._drafting or self.refused is not None or not text or now < self._draft_blocked_until:
            return
        if self.sender.floods.remaining(self.chat_id) > 0:
            return
        if now - self._last_draft < self.draft_interval:
            return
        self._send_draft(shorten(text, TEXT_LIMIT))

    def intro(self, text: str) -> None:
        self._send(render_text(text))

    def wine(self, recommendation: WineRecommendation, wine: Wine) -> None:
        """The card from the row the tools returned this turn (with its photo keys): no catalogue read."""
        self._send([render_wine(wine, recommendation.description, recommendation.wine_name, recommendation.facts)])

    # ---------------- the end of a turn ----------------
    def finish(self, parts: list[Outgoing], intro: str | None) -> list[Outgoing]:
        """The whole plan: the parts sent so far, then ``parts`` (the final answer) without what was sent."""
        if self.refused is not None:
            raise self.refused  # the consumer drops the update (400) or marks the chat inactive (403)
        if not self.parts:
            return parts
        rest = list(parts)
        if self.shown.intro is not None and intro is not None:
            rest = rest[len(render_text(intro)) :]
        sent = self.shown.wine_ids()
        rest = [p for p in rest if not (p.wine_id and p.wine_id in sent)]
        return [*self.parts, *rest]

    # ---------------- plumbing ----------------
    def _send_draft(self, text: str) -> bool:
        self._last_draft = self.clock()
        try:
            self.client.send_message_draft(self.chat_id, self.draft_id, text, message_thread_id=self.thread_id)
        except RetryAfter as exc:
            self._draft_blocked_until = self.clock() + float(exc.retry_after)
            return False
        except Forbidden as exc:
            self.refused = exc
            self._drafting = False
            return False
        except TelegramError as exc:
            if exc.error_code in (400, 404):  # refused, or a Bot API server without the method
                self.drafts.refuse(self.chat_id, exc.description)
            logger.info("draft not shown (falling back to typing): %s", exc)
            self._drafting = False
            return False
        self.draft_calls += 1
        return True

    def _send(self, parts: list[Outgoing]) -> None:
        """Append and send at once; the delivery log makes a later resend of the whole plan skip them."""
        if self.refused is not None or self.failed is not None:
            self.parts.extend(parts)  # still part of the plan; the plan's delivery sends them
            return
        self.parts.extend(parts)
        self.plans.save(progress_key(self.key), self.parts)
        try:
            self.sender.deliver(self.chat_id, self.key, self.parts, place=self.place)
        except BadRequest as exc:
            if exc.migrate_to_chat_id is not None:  # the group became a supergroup: the plan goes there
                self.failed = exc
            else:  # Telegram refuses this chat: resending can't help
                self.refused = exc
        except Forbidden as exc:
            self.refused = exc
        except Exception as exc:  # 5xx, network, a crash: as for a whole plan, the update is retried with it
            logger.warning("a streamed part was not delivered; the saved plan resends it: %s", exc)
            self.failed = exc


def _shown_from(parts: list[Outgoing]) -> Shown:
    """What an earlier delivery of this update already showed (after a crash and an SQS redelivery)."""
    shown = Shown()
    for part in parts:
        if part.wine_id is None and not shown.wines and shown.intro is None:
            shown.intro = part.plain
        elif part.wine_id:
            header, _, description = part.plain.partition("\n\n")
            name = header.split("\n", 1)[0].split(" — ", 1)[0].strip() or "вино"
            shown.wines.append(
                WineRecommendation(wine_id=part.wine_id, wine_name=name, description=description.strip() or name)
            )
    return shown
