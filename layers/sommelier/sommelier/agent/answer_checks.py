"""Every sentence the model writes is checked before a customer reads it (docs/architecture.md §6).

The intro, each wine's reason, the closing and an informational answer are split into sentences
(language.sentences), and each sentence must pass:

- ``number``: a price, year, percentage, volume or quantity (and any bare number of three digits or more,
  which in a wine shop's answer is a price or a year) is one of the catalogue's facts of the wines it may
  speak of (a reason: its own wine; the intro and closing: the answer's wines), or a number the customer
  wrote (their budget, their guests);
- ``contact``: no link, @handle, e-mail address or phone number other than the shop's own (SHOP_CONTACTS);
- ``promo``: no promo code (a word for one, or a code-like token that is not a wine's name);
- ``claim``: no claim of stock, discounts, delivery or online sale (only the shop knows them);
- ``other_shop``: no other shop's name;
- ``other_wine``: a reason speaks only of its own wine: another shown wine's grape, region, producer or name
  in it is a mismatch;
- ``cut``: no sentence cut off («…» at its end) and none that copies a catalogue text where the prompt's row
  cut it (the words before the row's «…»).

The vocabulary (claim words, shop words, units) is language data (language/data/answer_checks.json). A failing
sentence is removed and the check is logged; a field left empty fails the answer (the model is asked once
more, then the turn answers from the catalogue).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sommelier import language
from sommelier.agent.catalogue_rows import trimmed_tail
from sommelier.domain.answer import SommelierResponse
from sommelier.domain.wine import Wine
from sommelier.language import answer_words

if TYPE_CHECKING:
    from sommelier.agent.turn import OnlineTurn

logger = logging.getLogger(__name__)

MIN_CHECKED_NUMBER = 100  # a bare number from here up is a price or a year
NOTE_WORDS = 5  # this many words in a row from another wine's notes, and not from its own: that wine's text
_CUT_END = re.compile(r"(?:…|\.\.\.|,|\s[—–-])\s*[»\")]*\s*$")


@dataclass(frozen=True)
class ShopVoice:
    """What the shop itself may say: its name and its own contacts (SHOP_NAME, SHOP_CONTACTS)."""

    name: str | None = None
    contacts: tuple[str, ...] = ()

    def own_contact(self, text: str) -> bool:
        key = _contact_key(text)
        return any(key and key == _contact_key(c) for c in self.contacts)


def _contact_key(text: str) -> str:
    text = text.strip().lower()
    if re.fullmatch(r"[\d\s()+-]+", text):
        digits = re.sub(r"\D", "", text)
        return digits[-10:]
    return re.sub(r"^(?:https?://)?(?:www\.)?", "", text).rstrip("/")


@dataclass(frozen=True)
class Checking:
    """What one answer is checked against: the wines it may speak of, the customer's words, the shop."""

    found: Mapping[str, Wine]
    customer_text: str = ""
    shop: ShopVoice = field(default_factory=ShopVoice)

    def customer_numbers(self) -> set[float]:
        values: set[float] = set()
        for number in answer_words.numbers(self.customer_text):
            values |= {number.value, number.value * 1000}
        return values


@dataclass
class Failure:
    check: str
    where: str
    sentence: str


def _facts(wines: Iterable[Wine]) -> set[float]:
    values: set[float] = set()
    for wine in wines:
        if wine.vintage_year:
            values.add(float(wine.vintage_year))
        if wine.price_rub:
            price = float(wine.price_rub)
            values |= {price, float(round(price, -1)), float(round(price, -2))}
    return values


def _attributes(wine: Wine) -> list[str]:
    """A wine's own words another wine's reason must not use: grapes, region parts, producer."""
    parts = [*wine.grape_varieties, wine.producer]  # not the name: «Красное сухое» names many wines
    parts += [p.strip() for p in (wine.region or "").split(",")]
    return [p for p in parts if p and len(p) > 2]


def _stems(text: str) -> list[str]:
    return [language.stem(w) for w in language.words(text)]


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = language.words(text)
    return {tuple(words[i : i + NOTE_WORDS]) for i in range(len(words) - NOTE_WORDS + 1)}


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


class SentenceChecker:
    """The checks of one answer's sentences (see the module's docstring)."""

    def __init__(self, checking: Checking, shown: Sequence[Wine]):
        self.checking = checking
        self.shown = list(shown)
        self.customer = checking.customer_numbers()
        self.names = [n for w in checking.found.values() for n in (w.name, w.producer)] + [checking.shop.name or ""]
        self.tails = [t for w in checking.found.values() if (t := trimmed_tail(w))]
        self.notes = {w.id: _shingles(f"{w.tasting_notes} {w.description}") for w in checking.found.values()}
        # A streamed draft is re-read on every delta: each sentence is checked once.
        self._verdicts: dict[tuple[str, tuple[str, ...], str], str | None] = {}

    def problem(self, sentence: str, own: Sequence[Wine], *, reason_of: Wine | None = None) -> str | None:
        """The name of the first check the sentence fails, or None."""
        key = (sentence, tuple(w.id for w in own), reason_of.id if reason_of else "")
        if key not in self._verdicts:
            self._verdicts[key] = self._first_problem(sentence, own, reason_of)
        return self._verdicts[key]

    def _first_problem(self, sentence: str, own: Sequence[Wine], reason_of: Wine | None) -> str | None:
        for check in (
            self._cut,
            self._contact,
            self._promo,
            self._claim,
            self._other_shop,
        ):
            if check(sentence):
                return check.__name__[1:]
        if self._number(sentence, own):
            return "number"
        if reason_of is not None and self._other_wine(sentence, reason_of):
            return "other_wine"
        return None

    def _cut(self, sentence: str) -> bool:
        if _CUT_END.search(sentence):
            return True
        folded = " ".join(language.words(sentence))
        return any(f" {tail} " in f" {folded} " for tail in self.tails)

    def _contact(self, sentence: str) -> bool:
        return any(not self.checking.shop.own_contact(c) for c in answer_words.contacts(sentence))

    def _promo(self, sentence: str) -> bool:
        if answer_words.claim(sentence) == "promo":
            return True
        names = " ".join(self.names)
        return any(token not in names for token in answer_words.promo_tokens(sentence))

    def _claim(self, sentence: str) -> bool:
        return answer_words.claim(sentence) is not None

    def _other_shop(self, sentence: str) -> bool:
        return answer_words.other_shop(sentence, self.names) is not None

    def _number(self, sentence: str, own: Sequence[Wine]) -> bool:
        allowed = _facts(own) | self.customer
        for contact in answer_words.contacts(sentence):  # the shop's own phone is no price (others fail before)
            sentence = sentence.replace(contact, " ")
        for number in answer_words.numbers(sentence):
            if number.kind == "bare" and number.value < MIN_CHECKED_NUMBER:
                continue
            if number.kind in ("percent", "volume", "quantity"):
                if number.value not in self.customer:
                    return True
                continue
            if number.value not in allowed:
                return True
        return False

    def _other_wine(self, sentence: str, wine: Wine) -> bool:
        """Another wine's grape, region or producer, or a run of words from its notes, in this wine's reason."""
        said = _shingles(sentence)
        own_notes = self.notes.get(wine.id, set())
        if any(said & (notes - own_notes) for wine_id, notes in self.notes.items() if wine_id != wine.id):
            return True
        stems = _stems(sentence)
        own = [_stems(a) for a in _attributes(wine)]
        for other in self.shown:
            if other.id == wine.id:
                continue
            for attribute in _attributes(other):
                needle = _stems(attribute)
                if any(_contains(o, needle) or _contains(needle, o) for o in own):
                    continue  # a word both wines share (their country, a grape of both)
                if _contains(stems, needle):
                    return True
        return False

    def clean(
        self,
        text: str,
        own: Sequence[Wine],
        where: str,
        failures: list[Failure],
        *,
        reason_of: Wine | None = None,
        log: bool = True,
    ) -> str:
        """The text with every failing sentence removed (each failure logged, unless ``log`` is false: a draft
        re-read on every delta, and added to ``failures``)."""
        kept: list[str] = []
        before = len(failures)
        for sentence in language.sentences(text):
            check = self.problem(sentence, own, reason_of=reason_of)
            if check is None:
                kept.append(sentence)
                continue
            failures.append(Failure(check, where, sentence))
            if log:
                logger.warning("answer check %r removed a sentence of the %s: %r", check, where, sentence[:160])
        return text if len(failures) == before else " ".join(kept)


def checked(response: SommelierResponse, checking: Checking) -> tuple[SommelierResponse, list[Failure]]:
    """The grounded answer with every failing sentence removed, and the failures. A field left empty stays
    empty: the caller refuses such an answer (``empty_after_checks``)."""
    checker = SentenceChecker(checking, list(checking.found.values()))  # a reason names no other candidate
    failures: list[Failure] = []
    shown = [checking.found[w.wine_id or ""] for w in response.wines if (w.wine_id or "") in checking.found]
    # An answer that shows no wine may speak of the turn's wines (the table's: «сколько стоит первое?»), as a
    # streamed intro may before its wines are known.
    own = shown or list(checking.found.values())
    intro = checker.clean(response.intro, own, "intro", failures)
    closing = checker.clean(response.closing, own, "closing", failures)
    wines = []
    for rec in response.wines:
        wine = checking.found[rec.wine_id or ""]
        reason = checker.clean(rec.description, [wine], f"reason of {rec.ref or rec.wine_id}", failures, reason_of=wine)
        wines.append(rec.model_copy(update={"description": reason}))
    return response.model_copy(update={"intro": intro, "closing": closing, "wines": wines}), failures


def empty_after_checks(response: SommelierResponse) -> bool:
    return (
        not response.intro.strip()
        or not response.closing.strip()
        or any(not w.description.strip() for w in response.wines)
    )


def failure_message(failures: Sequence[Failure]) -> str:
    """The error fed back to the model: which checks failed, on which sentences."""
    lines = ["часть текста не прошла проверку по каталогу:"]
    for failure in failures[:4]:
        lines.append(f"- {failure.where}: «{failure.sentence[:120]}» ({CHECK_WORDS.get(failure.check, failure.check)})")
    lines.append(
        "Пиши только то, что есть в строке самого вина: без своих цен, годов, процентов и количеств, без "
        "ссылок, контактов и промокодов, без обещаний наличия, скидок и доставки, без других магазинов; "
        "в причине — только о своём вине, законченными предложениями."
    )
    return "\n".join(lines)


CHECK_WORDS = {
    "number": "число не из каталога",
    "contact": "ссылка или контакт",
    "promo": "промокод",
    "claim": "обещание наличия, скидки, доставки или продажи онлайн",
    "other_shop": "другой магазин",
    "other_wine": "о другом вине",
    "cut": "оборванный текст",
}


def checking(turn: OnlineTurn) -> Checking:
    """What a turn's sentences are checked against: its wines, the customer's words (this message and the
    history's), the shop."""
    history = " ".join(m.content for m in turn.request.history or [] if m.role == "user")
    return Checking(turn.found, customer_text=f"{history} {turn.request.text}", shop=_with_file(turn))


def _with_file(turn: OnlineTurn) -> ShopVoice:
    """SHOP_NAME and SHOP_CONTACTS, and the owner's shop file's name, phones and map links (docs/shop.md)."""
    facts = turn.request.shop
    if facts is None:
        return turn.shop
    contacts = [*turn.shop.contacts]
    for store in facts.stores:
        contacts += [c for c in (store.phone, store.map_url) if c]
    return ShopVoice(name=turn.shop.name or facts.name, contacts=tuple(dict.fromkeys(contacts)))
