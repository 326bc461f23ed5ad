"""The answer as it streams: what may be shown, what was shown, and the answer that results.

``AnswerScanner`` reads the growing text of a SommelierResponse (bare JSON, in a code fence or after
prose) and reports response_type, the intro (also while it grows, for drafts), each wine and the
closing as soon as each is complete. It parses the prefix with jiter's partial mode (jiter ships with
the openai SDK): re-parsing a few kilobytes per delta costs microseconds.

The agent feeds every content delta of a call to ``StreamedAnswer``. It passes the customer-visible
pieces on only once each is complete and passes the same checks as a whole answer: the output guard on
its text and, for a wine, validation and grounding in this turn's tool results. ``Shown`` remembers what
went out, so a retry asks only for what is missing and the final answer (``merge_shown``) never repeats
what the customer already has.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import jiter
from pydantic import ValidationError

from sommelier.agent.answer import MIN_RUSSIAN_SHARE, ground, plain_answer, plain_draft, plain_text, russian_share
from sommelier.agent.answer_checks import Checking, SentenceChecker
from sommelier.agent.catalogue_rows import card_facts
from sommelier.agent.output_guard import strip_control_characters, text_problem
from sommelier.domain.answer import MAX_INTRO, MAX_WINES, SommelierResponse, WineRecommendation
from sommelier.domain.wine import Wine

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------- #
# The answer as it grows
# --------------------------------------------------------------------------- #
EventKind = Literal["response_type", "intro_draft", "intro", "wine", "closing"]


@dataclass(frozen=True)
class AnswerEvent:
    kind: EventKind
    value: Any  # str, or the wine's dict for "wine"
    index: int = 0  # the wine's position in the answer


class AnswerScanner:
    """Feed it content deltas; it returns the parts of the answer that became available."""

    def __init__(self) -> None:
        self.text = ""
        self._start: int | None = None
        self._search_from = 0
        self._sent: set[tuple[str, int]] = set()
        self._draft = ""
        self._wines_done = 0

    def feed(self, delta: str) -> list[AnswerEvent]:
        self.text += delta
        parsed = self._parse()
        if parsed is None:
            return []
        complete, growing = parsed
        events: list[AnswerEvent] = []
        keys = list(growing)  # a key whose string value has just begun already closes the key before it
        for key in ("response_type", "intro"):
            events += self._once(key, complete.get(key))
        if ("intro", 0) not in self._sent:
            draft = growing.get("intro")
            if isinstance(draft, str) and draft != self._draft:
                self._draft = draft
                events.append(AnswerEvent("intro_draft", draft))
        wines = complete.get("wines")
        if isinstance(wines, list):
            # A wine is complete once its reference and reason are (the new shape), or once the next one
            # starts or a key after "wines" appears (today's shape, whose name and description may come in
            # any order).
            closed = "wines" in keys and keys.index("wines") < len(keys) - 1
            ready = len(wines) if closed or (wines and _whole(wines[-1])) else len(wines) - 1
            while self._wines_done < ready:
                wine = wines[self._wines_done]
                events.append(AnswerEvent("wine", wine, self._wines_done))
                self._wines_done += 1
        events += self._once("closing", complete.get("closing"))
        return events

    def _once(self, key: EventKind, value: Any) -> list[AnswerEvent]:
        if not isinstance(value, str) or (key, 0) in self._sent:
            return []
        self._sent.add((key, 0))
        return [AnswerEvent(key, value)]

    def _parse(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        while True:
            if self._start is None:
                start = self.text.find("{", self._search_from)
                if start < 0:
                    self._search_from = len(self.text)
                    return None
                self._start = start
            data = self.text[self._start :].encode("utf-8")
            try:
                complete = jiter.from_json(data, partial_mode="on")
                growing = jiter.from_json(data, partial_mode="trailing-strings")
            except ValueError:
                # The brace began prose, not the answer: look for the next one.
                self._search_from = self._start + 1
                self._start = None
                continue
            if not isinstance(complete, dict) or not isinstance(growing, dict):
                return None
            return complete, growing


def _whole(wine: Any) -> bool:
    """A wine of the new shape whose reference and reason are both complete strings."""
    return isinstance(wine, dict) and isinstance(wine.get("ref"), str) and isinstance(wine.get("reason"), str)


class DraftPiece(NamedTuple):
    """The intro as it grows (a draft a private chat may show while the model writes)."""

    text: str


class IntroPiece(NamedTuple):
    """The intro, complete and checked: a real message may go out at once."""

    text: str


class WinePiece(NamedTuple):
    """One recommended wine, complete, validated and grounded in this turn's tool results (``wine``: the row
    with its photo keys, so its card needs no catalogue read)."""

    recommendation: WineRecommendation
    wine: Wine


AnswerPiece = DraftPiece | IntroPiece | WinePiece


@dataclass
class Shown:
    """What the customer already has from this turn (this attempt or an earlier delivery of the update)."""

    intro: str | None = None
    wines: list[WineRecommendation] = field(default_factory=list)

    @property
    def anything(self) -> bool:
        return self.intro is not None or bool(self.wines)

    def wine_ids(self) -> set[str]:
        return {w.wine_id for w in self.wines if w.wine_id}

    def retry_note(self) -> str:
        """Added to the retry instruction: the model must not count on repeating what was shown."""
        if not self.anything:
            return ""
        lines = ["Покупатель уже видит часть ответа, её не покажут повторно:"]
        if self.intro is not None:
            lines.append(f"- вступление: «{self.intro[:200]}»")
        for wine in self.wines:
            lines.append(f"- вино «{wine.wine_name}» (ref {wine.ref})" if wine.ref else f"- вино «{wine.wine_name}»")
        lines.append(
            "Верни полный JSON-объект; не рекомендуй эти вина снова, добавь только недостающее "
            "(другие вина, если нужны, и заключение)."
        )
        return "\n".join(lines)


class StreamedAnswer:
    """One streamed call: content deltas in, checked pieces out (`feed`). A piece handed out counts as shown:
    the caller delivers it before it feeds the next delta."""

    def __init__(
        self,
        found: Mapping[str, Wine],
        shown: Shown,
        checking: Checking | None = None,
        *,
        admit: Callable[[Wine], bool] | None = None,
        hold_intro: bool = False,
    ):
        self.found = found
        self.shown = shown
        self.checking = checking or Checking(found)
        self.checker = SentenceChecker(self.checking, list(found.values()))
        # agent.fitting: a wine that breaks the request is never sent; a turn that must show wines sends its
        # intro with the first wine that passes (an intro of an answer that then shows none is never sent).
        self.admit = admit
        self.hold_intro = hold_intro
        self._intro_held: str | None = None
        self.scanner = AnswerScanner()
        self.response_type: str | None = None
        self._held: list[dict[str, Any]] = []  # wines that arrived before the response type or the intro

    def feed(self, delta: str) -> list[AnswerPiece]:
        pieces: list[AnswerPiece] = []
        for event in self.scanner.feed(delta):
            try:
                pieces += self._handle(event)
            except Exception:  # a piece that can't be shown must never break the turn: the final answer follows
                logger.exception("a streamed %s could not be shown", event.kind)
        return pieces

    def _handle(self, event: AnswerEvent) -> list[AnswerPiece]:
        if event.kind == "response_type":
            self.response_type = event.value
            return self._release()
        if event.kind == "intro_draft":
            if self.shown.intro is None and not (self.hold_intro and self.response_type != "recommendation"):
                # A draft is read too: the word being written waits (a number may still grow), and only the
                # sentences that pass the checks are shown.
                draft = _settled(plain_draft(_clean(event.value)))
                if len(draft) > MAX_INTRO:  # an intro over the limit is refused whole: its draft is not shown
                    return []
                draft = self.checker.clean(draft, list(self.found.values()), "intro draft", [], log=False)
                if draft and _russian([draft]):  # an English answer is not shown even as a draft
                    return [DraftPiece(draft)]
            return []
        if event.kind == "intro":
            return self._intro(event.value) + self._release()
        if event.kind == "wine":
            self._held.append(event.value)
            return self._release()
        return []

    def _intro(self, raw: str) -> list[AnswerPiece]:
        if self.shown.intro is not None:
            return []
        text = plain_text(_clean(raw))
        if not text or len(text) > MAX_INTRO or text_problem([text]) or not _russian([text]):
            return []  # the whole answer's validation reports it; the retry fixes it
        # The wines are not known yet: the intro's numbers may be any candidate's facts.
        text = self.checker.clean(text, list(self.found.values()), "streamed intro", [])
        if not text:
            return []
        if self.hold_intro:
            self._intro_held = text
            return []
        self.shown.intro = text
        return [IntroPiece(text)]

    def _release(self) -> list[AnswerPiece]:
        if self.response_type != "recommendation" or (self.shown.intro is None and self._intro_held is None):
            return []
        held, self._held = self._held, []
        pieces: list[AnswerPiece] = []
        for raw in held:
            piece = self._wine(raw)
            if piece is None:
                continue
            if self._intro_held is not None:  # the held intro goes out just before the first wine
                self.shown.intro, self._intro_held = self._intro_held, None
                pieces.append(IntroPiece(self.shown.intro))
            pieces.append(piece)
        return pieces

    def _wine(self, raw: Any) -> WinePiece | None:
        if len(self.shown.wines) >= MAX_WINES or not isinstance(raw, dict):
            return None
        try:
            cleaned = plain_answer({"wines": [strip_control_characters(raw)]})["wines"][0]
            candidate = WineRecommendation.model_validate(cleaned)
        except ValidationError:
            return None
        recommendation = ground_one(candidate, self.found)
        if recommendation is None or recommendation.wine_id in self.shown.wine_ids():
            return None  # ungrounded or already shown: never sent
        if text_problem([recommendation.wine_name, recommendation.description]):
            return None
        wine = self.found[recommendation.wine_id or ""]
        if self.admit is not None and not self.admit(wine):
            return None  # breaks the customer's request: never sent (the answer's check replaces it)
        names = [recommendation.wine_name, wine.name, wine.producer, wine.region]
        if not _russian([recommendation.description], names):
            return None
        where = f"streamed reason of {recommendation.ref}"
        reason = self.checker.clean(recommendation.description, [wine], where, [], reason_of=wine)
        if not reason:
            return None  # nothing of it may be shown: the whole answer's checks ask again or answer themselves
        recommendation = recommendation.model_copy(update={"description": reason, "facts": card_facts(wine)})
        self.shown.wines.append(recommendation)
        return WinePiece(recommendation, wine)


def _settled(draft: str) -> str:
    """A growing text without the word still being written (up to its last space)."""
    return draft if not draft or draft[-1].isspace() else draft[: max(draft.rfind(" "), 0)].rstrip()


def _russian(texts: list[str], names: list[str] | None = None) -> bool:
    """The whole answer's language rule, applied to one piece (too short to judge counts as fine)."""
    share = russian_share(texts, names or [])
    return share is None or share >= MIN_RUSSIAN_SHARE


def _clean(text: str) -> str:
    return strip_control_characters(text).strip()


def ground_one(recommendation: WineRecommendation, found: Mapping[str, Wine]) -> WineRecommendation | None:
    """The wine grounded in this turn's tool results (id filled in), or None."""
    probe = SommelierResponse.model_construct(
        response_type="recommendation", intro="-", wines=[recommendation], closing="-", guard_type=None
    )
    try:
        return ground(probe, found).wines[0]
    except ValueError:
        return None


def merge_shown(final: SommelierResponse, shown: Shown) -> SommelierResponse:
    """The answer the customer ends up with: what was shown, then the rest of ``final`` without repeats."""
    if not shown.anything:
        return final
    seen = shown.wine_ids()
    room = MAX_WINES - len(shown.wines)
    extra = [w for w in final.wines if w.wine_id not in seen][: max(room, 0)]
    wines = [*shown.wines, *extra]
    update: dict[str, Any] = {"intro": shown.intro or final.intro, "wines": wines}
    if wines:
        update.update(response_type="recommendation", guard_type=None)
    return final.model_copy(update=update)
