"""SommelierResponse → Telegram messages (docs/architecture.md).

intro → text; each wine → photo with a caption (or text when it has no photo); closing → text
with the 👍 / 👎 / «Ещё варианты» inline keyboard.

Everything from the model or the catalogue is escaped (HTML parse mode), so ``<script>``, ``&`` or
``**markdown**`` in a description arrive as literal text. Limits are counted the way Telegram counts
them — on the text after entity parsing, in UTF-16 code units — so every length decision is made on
the plain text first and escaped afterwards: a cut can never land inside an entity or a tag.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from sommelier import language
from sommelier.domain.answer import SommelierResponse
from sommelier.domain.wine import Wine
from sommelier.language.name_line import name_line
from sommelier.telegram.callback_data import CallbackData

TEXT_LIMIT = 4096
CAPTION_LIMIT = 1024
ELLIPSIS = "…"
NNBSP = "\u202f"  # narrow no-break space: thousands separator and before the currency sign
MORE_BUTTON = "Ещё варианты"
MAX_HEADER_FIELD = 300  # a catalogue name/region longer than this is shortened in the caption header


@dataclass
class Outgoing:
    kind: Literal["text", "photo"]
    html: str  # HTML parse-mode text or caption, escaped with html.escape
    plain: str  # the same without markup (for the plain-text resend)
    wine_id: str | None = None
    image_key: str | None = None
    file_id: str | None = None  # cached Telegram file_id
    reply_markup: dict[str, Any] | None = None


# --------------------------------------------------------------------------- #
# Text measuring and cutting
# --------------------------------------------------------------------------- #
def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (how Telegram counts message and caption length)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _prefix_within(text: str, limit: int) -> int:
    """The largest n such that utf16_len(text[:n]) <= limit."""
    used = 0
    for i, ch in enumerate(text):
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > limit:
            return i
    return len(text)


def _safe_cut(text: str, n: int) -> int:
    """Move a hard cut left so it doesn't split a grapheme (ZWJ emoji, variation selector, accent)."""
    while 0 < n < len(text):
        nxt, prev = text[n], text[n - 1]
        if (
            nxt in "\u200d\ufe0e\ufe0f"
            or prev == "\u200d"
            or unicodedata.combining(nxt)
            or 0x1F3FB <= ord(nxt) <= 0x1F3FF
            or 0xE0020 <= ord(nxt) <= 0xE007F
        ):
            n -= 1
            continue
        break
    return n


_SENTENCE_END = re.compile(r"[.!?…](?:[\"»”')\]]*)(?=\s)")
_PARAGRAPH = re.compile(r"\n\s*\n")


def _last_boundary(window: str, minimum: int) -> tuple[int, str] | None:
    """The best cut position in window: paragraph, line, sentence, then word. -> (index, kind)."""
    for kind, pattern in (
        ("paragraph", _PARAGRAPH),
        ("line", re.compile(r"\n")),
        ("sentence", _SENTENCE_END),
        ("word", re.compile(r"\s")),
    ):
        best = None
        for m in pattern.finditer(window):
            pos = m.end() if kind == "sentence" else m.start()
            if pos >= minimum:
                best = pos
        if best is not None:
            return best, kind
    return None


def shorten(text: str, limit: int) -> str:
    """Fit text into ``limit`` UTF-16 units, cutting at a sentence or word boundary and marking it with "…"."""
    text = text.strip()
    if utf16_len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    room = _prefix_within(text, limit - 1)  # keep one unit for the ellipsis
    window = text[:room]
    cut = None
    for m in _SENTENCE_END.finditer(window + " "):
        if m.end() >= room * 0.5:
            cut = m.end()
    if cut is not None:
        head = window[:cut].rstrip()
        if head.endswith("."):
            head = head[:-1]  # "…" replaces the full stop
        return head.rstrip() + ELLIPSIS
    space = max(window.rfind(" "), window.rfind("\n"))
    if space >= room * 0.3:
        head = window[:space]
    else:
        head = window[: _safe_cut(window, room)]
    head = head.rstrip().rstrip(",;:—–-").rstrip()
    return head + ELLIPSIS


def split_text(text: str, limit: int = TEXT_LIMIT) -> list[str]:
    """Split plain text into chunks of at most ``limit`` UTF-16 units, at paragraph/line/sentence/word boundaries."""
    text = text.strip()
    chunks: list[str] = []
    while text:
        if utf16_len(text) <= limit:
            chunks.append(text)
            break
        room = _prefix_within(text, limit)
        window = text[:room]
        found = _last_boundary(window, minimum=max(1, room // 3))
        cut = found[0] if found else _safe_cut(text, room)
        if cut <= 0:
            cut = room  # a single unsplittable run: hard cut
        head = text[:cut].rstrip()
        if head:
            chunks.append(head)
        text = text[cut:].lstrip()
    return chunks


# --------------------------------------------------------------------------- #
# Labels and keyboards
# --------------------------------------------------------------------------- #
def price_label(price: Any) -> str:
    """1799 -> "1 799 ₽" (narrow no-break spaces); 1799.5 -> "1 799,50 ₽"."""
    number = float(price)
    if number.is_integer():
        body = f"{int(number):,}".replace(",", NNBSP)
    else:
        body = f"{number:,.2f}".replace(",", NNBSP).replace(".", ",")
    return f"{body}{NNBSP}₽"


class Vote(NamedTuple):
    """👍 (1) or 👎 (-1) under an answer: callback data fb:<rating>:<answer_ref>."""

    rating: Literal[1, -1]
    answer_ref: str


class MoreWines(NamedTuple):
    """«Ещё варианты» under an answer: callback data more:<answer_ref>."""

    answer_ref: str


VOTE = CallbackData("fb", Vote)
MORE = CallbackData("more", MoreWines)


def feedback_keyboard(answer_ref: str, *, chosen: int | None = None, more: bool = True) -> dict[str, Any]:
    """[[👍, 👎], [«Ещё варианты»]] for an answer (callback data fb:1:<ref>, fb:-1:<ref>, more:<ref>).

    ``chosen``: the vote given (1 or -1), marked with ✓; both stay pressable, the last press wins.
    ``more=False``: without «Ещё варианты» (nothing more to show for this answer).
    A ref that cannot ride in a button (empty, with ':', too long) is a CallbackDataError (a ValueError).
    """
    ratings: tuple[tuple[str, Literal[1, -1]], ...] = (("👍", 1), ("👎", -1))
    votes = [
        {"text": f"{label} ✓" if chosen == rating else label, "callback_data": VOTE.pack(Vote(rating, answer_ref))}
        for label, rating in ratings
    ]
    rows = [votes]
    if more:
        rows.append([{"text": MORE_BUTTON, "callback_data": MORE.pack(MoreWines(answer_ref))}])
    return {"inline_keyboard": rows}


# --------------------------------------------------------------------------- #
# Rendering
# --------------------------------------------------------------------------- #
_SPACE = "[ \u00a0\u2009\u202f]"
_GROUPED_NUMBER = re.compile(rf"(?<![\d.,])\d{{1,3}}(?:{_SPACE}\d{{3}})+(?![\d])")
_MONEY = language.alternation(language.data("budget.json")["units"]["money"], word_start=False)
_NUMBER_AND_UNIT = re.compile(rf"(?<=\d){_SPACE}?({_MONEY})")


def keep_prices_together(text: str) -> str:
    """«2 000 ₽» written by the model or the offline responder with ordinary spaces: the thousands
    separator and the space before the currency become narrow no-break spaces, so no line break
    (in Telegram, or in the terminal chat) ever falls inside a price."""
    text = _GROUPED_NUMBER.sub(lambda m: re.sub(_SPACE, NNBSP, m.group(0)), text)
    return _NUMBER_AND_UNIT.sub(lambda m: NNBSP + m.group(1), text)


def _text_parts(plain: str, reply_markup: dict[str, Any] | None = None) -> list[Outgoing]:
    chunks = split_text(keep_prices_together(plain), TEXT_LIMIT)
    parts = [Outgoing(kind="text", html=_esc(c), plain=c) for c in chunks]
    if parts and reply_markup is not None:
        parts[-1].reply_markup = reply_markup
    return parts


def render_text(text: str, reply_markup: dict[str, Any] | None = None) -> list[Outgoing]:
    """A simple reply (welcome, help, apology, notice): escaped, split at 4096, keyboard on the last part."""
    return _text_parts(text, reply_markup)


def _field(value: Any) -> str:
    return shorten(" ".join(str(value).split()), MAX_HEADER_FIELD) if value not in (None, "") else ""


def _wine_header(wine: Wine, fallback_name: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The caption's first two lines as (html, plain) pairs."""
    # the shop's name without the vintage, producer, size and strength the line says apart (language/name_line.py)
    name = _field(name_line(wine.name, wine.producer, wine.vintage_year) if wine.name else "") or _field(fallback_name)
    producer = _field(wine.producer)
    vintage = wine.vintage_year
    vintage_text = str(vintage) if vintage else "NV"
    tail = ", ".join(x for x in (producer, vintage_text) if x)
    line1_plain = f"{name} — {tail}" if tail else name
    line1_html = f"<b>{_esc(name)}</b> — {_esc(tail)}" if tail else f"<b>{_esc(name)}</b>"
    second = [
        x
        for x in (
            _field(wine.region),
            price_label(wine.price_rub),
        )
        if x
    ]
    line2 = " · ".join(second)
    lines = [(line1_html, line1_plain)]
    if line2:
        lines.append((_esc(line2), line2))
    return lines, [p for _, p in lines]


def _wine_part(wine: Wine, description: str, fallback_name: str, facts: str = "") -> Outgoing:
    lines, plain_lines = _wine_header(wine, fallback_name)
    header_plain = "\n".join(plain_lines)
    header_html = "\n".join(h for h, _ in lines)
    image_key = wine.image_key or None
    file_id = wine.telegram_file_id or None
    kind: Literal["text", "photo"] = "photo" if (image_key or file_id) else "text"
    limit = CAPTION_LIMIT if kind == "photo" else TEXT_LIMIT
    budget = limit - utf16_len(header_plain) - 2  # "\n\n" between the header and the description
    body = "\n\n".join(p.strip() for p in (description, facts) if p and p.strip())  # the reason, the catalogue's text
    desc = shorten(keep_prices_together(body), budget) if budget > 0 else ""
    plain = f"{header_plain}\n\n{desc}" if desc else header_plain
    html_text = f"{header_html}\n\n{_esc(desc)}" if desc else header_html
    return Outgoing(
        kind=kind,
        html=html_text,
        plain=plain,
        wine_id=wine.id or None,
        image_key=image_key,
        file_id=file_id,
    )


def render_wine(wine: Wine, description: str, fallback_name: str | None = None, facts: str = "") -> Outgoing:
    """One catalogue wine as a photo with a caption (or a text without a photo), as in an answer: the header
    from the catalogue, the description (the model's reason), then the catalogue's ``facts`` (grapes, notes)."""
    return _wine_part(wine, description, fallback_name or wine.name, facts)


def _lookup(wines_by_id: Mapping[str, Wine], wine_id: str | None, wine_name: str) -> Wine | None:
    if wine_id:
        wine = wines_by_id.get(wine_id) or wines_by_id.get(wine_id.lower())
        if wine is None:
            wine = next((w for k, w in wines_by_id.items() if str(k).lower() == wine_id.lower()), None)
        if wine is not None:
            return wine
    wanted = " ".join(wine_name.split()).casefold()
    return next((w for w in wines_by_id.values() if " ".join(w.name.split()).casefold() == wanted), None)


def render_answer(
    response: SommelierResponse, wines_by_id: Mapping[str, Wine], answer_ref: str, *, footer: str | None = None
) -> list[Outgoing]:
    """The Telegram messages for one answer, in order. Wines missing from wines_by_id are skipped.

    ``footer`` (the health warning) ends the closing message when at least one wine is shown.
    The 👍 / 👎 / «Ещё варианты» buttons go only under a recommendation that shows wines: there is
    nothing to rate or to continue under an informational, off-topic or "спасибо" reply.
    """
    parts = _text_parts(response.intro)
    shown = 0
    for rec in response.wines:
        wine = _lookup(wines_by_id, rec.wine_id, rec.wine_name)
        if wine is None:
            continue  # not grounded in the catalogue: the caller already validated the answer
        parts.append(_wine_part(wine, rec.description, rec.wine_name, rec.facts))
        shown += 1
    closing = response.closing.strip()
    if footer and shown:
        closing = f"{closing}\n\n{footer}" if closing else footer
    parts.extend(_text_parts(closing))
    if parts and shown and response.response_type == "recommendation":
        parts[-1].reply_markup = feedback_keyboard(answer_ref)
    return parts
