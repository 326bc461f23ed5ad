"""What the customer reads is plain Russian text: Markdown emphasis taken out, the language checked.

Models write **bold** despite the prompt (Claude does in every caption), and some answer in English.
Telegram shows Markdown marks literally in HTML parse mode, so the marks are removed from every text
field before validation (the words stay). The language check is a validation error like any other:
the model is asked once more, in Russian, and a second English answer ends in the degraded answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# Paired emphasis marks around a span that does not start or end with a space: **x**, __x__, *x*, _x_, ~~x~~.
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.DOTALL)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.DOTALL)
_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_EM_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_BULLET_STAR = re.compile(r"^(\s*)[*+]\s+", re.MULTILINE)
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:https?://|tg://)[^)\s]+\)")

_MARKUP = re.compile(r"<[^<>]{1,200}>|https?://\S+")  # tags and links are not language
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
MIN_RUSSIAN_SHARE = 0.6  # of the letters, after the wines' own (often Latin) names are taken out
MIN_LETTERS_TO_JUDGE = 12

LANGUAGE_ERROR = (
    "ответ написан не по-русски. Покупатель читает по-русски: напиши вступление, описания вин и "
    "заключительную фразу на русском языке (названия вин оставь как в каталоге)"
)


def plain_text(text: str) -> str:
    """The text without Markdown emphasis, inline code, headings, star bullets or link syntax."""
    previous = None
    while previous != text:  # nested marks (***x***, **_x_**) come off layer by layer
        previous = text
        text = _STRONG.sub(r"\2", text)
        text = _STRIKE.sub(r"\1", text)
        text = _EM_STAR.sub(r"\1", text)
        text = _EM_UNDERSCORE.sub(r"\1", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _HEADING.sub("", text)
    return _BULLET_STAR.sub(r"\1• ", text)


_OPEN_MARKS = re.compile(r"\*\*|__|~~|`")
_OPEN_EMPHASIS = re.compile(r"(?<![\w*_])[*_](?=\w[^*_]*$)")


def plain_draft(text: str) -> str:
    """A text still being written: `plain_text`, and marks whose closing half has not arrived yet removed."""
    text = plain_text(text)
    return _OPEN_EMPHASIS.sub("", _OPEN_MARKS.sub("", text))


def plain_answer(data: Any) -> Any:
    """The parsed answer with `plain_text` applied to every customer-facing text field."""
    if not isinstance(data, dict):
        return data
    cleaned = dict(data)
    for key in ("intro", "closing"):
        if isinstance(cleaned.get(key), str):
            cleaned[key] = plain_text(cleaned[key])
    wines = cleaned.get("wines")
    if isinstance(wines, list):
        cleaned["wines"] = [
            {
                **wine,
                **{k: plain_text(wine[k]) for k in ("wine_name", "description") if isinstance(wine.get(k), str)},
            }
            if isinstance(wine, dict)
            else wine
            for wine in wines
        ]
    return cleaned


def russian_share(texts: Iterable[str], names: Iterable[str] = ()) -> float | None:
    """Cyrillic letters as a share of all letters, with the given names taken out; None if too short."""
    text = _MARKUP.sub(" ", " ".join(texts))
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = text.replace(name, " ")
    cyrillic = len(_CYRILLIC.findall(text))
    latin = len(_LATIN.findall(text))
    if cyrillic + latin < MIN_LETTERS_TO_JUDGE:
        return None
    return cyrillic / (cyrillic + latin)


def language_problem(response: Any, found_wines: dict[str, dict[str, Any]]) -> str | None:
    """LANGUAGE_ERROR when the customer-facing text of a SommelierResponse is not Russian."""
    texts = [response.intro, response.closing] + [w.description for w in response.wines]
    names: list[str] = []
    for rec in response.wines:
        names.append(rec.wine_name)
        wine = found_wines.get(rec.wine_id or "", {})
        names += [wine.get("name") or "", wine.get("producer") or "", wine.get("region") or ""]
        names += [g for g in wine.get("grape_varieties") or [] if isinstance(g, str)]
    share = russian_share(texts, names)
    if share is not None and share < MIN_RUSSIAN_SHARE:
        return LANGUAGE_ERROR
    return None
