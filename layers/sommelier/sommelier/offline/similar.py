"""Wines like another (the reader's rule 6): «как Киндзмараули, но подешевле», «похожее на Кьянти, но не из
Италии», «мне понравился Красностоп Золотовский, посоветуй похожее». The wine to be like is the catalogue's when
it has it (its own row), else what the wine knowledge knows of the name (an appellation, a famous wine, a grape);
the similar wines share its colour and are ranked by how much of its style they share (sweetness, grape, place,
body, price: similar.json `weights`), the wine itself left out and the message's own conditions applied.
The words are language/data/similar.json's; how a similarity is read and ranked is here."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from sommelier import language
from sommelier.domain.wine import SWEETNESS_LEVELS, Wine
from sommelier.language.filter_words import value_cues
from sommelier.offline.filters import read_filters
from sommelier.offline.intent import describe_filters
from sommelier.offline.message import WORD, prepare
from sommelier.offline.message_kind import ASK_VERB
from sommelier.offline.table import comparisons_in

_DATA = language.data("similar.json")
_BEFORE = re.compile(r"(?:^|\s)" + language.alternation(_DATA["before"]) + r"\s+")
_LIKED = re.compile(r"(?:^|\s)" + language.alternation(_DATA["liked"]) + r"\s+")
_AFTER = re.compile(language.alternation(_DATA["after"]))
_STOP = re.compile(r"\s*(?:[,.!?;:()]|\s" + language.alternation(_DATA["stop"]) + r"(?:\s|$))")
_NOT_A_WINE = frozenset(language.normalize(w) for w in _DATA["not_a_wine"])
_WEIGHTS: dict[str, float] = _DATA["weights"]
_STYLE_BODY: dict[str, int] = {language.normalize(k): v for k, v in _DATA["style_body"].items()}
_SWEETNESS_CUES = value_cues("sweetness")
POOL = 40  # the wines of the reference's colour ranked here: enough for three close ones
MAX_NAME_WORDS = 6


class Reference(NamedTuple):
    """The wine to be like: its name as said, and the style it stands for."""

    said: str
    wine_type: str | None
    sweetness: str | None
    grapes: tuple[str, ...]
    country: str | None
    region: str | None
    body: int | None
    price: float | None
    ids: tuple[str, ...]  # the catalogue's own rows of it, left out of the answer


class SimilarRequest(NamedTuple):
    said: str  # the wine's name as the customer wrote it
    rest: str  # the message without it: its own conditions («но подешевле», «не из Грузии»)
    lighter: bool
    fuller: bool


def read_similar(text: str) -> SimilarRequest | None:
    """«как X», «похожее на X», «понравился X … похожее»: the X and the rest of the message; None otherwise."""
    _, t = prepare(text or "")
    match = _BEFORE.search(t)
    if match is None:
        match = _LIKED.search(t)
        if match is None or not (_AFTER.search(t) or ASK_VERB.search(t)):
            return None
    tail = t[match.end() :]
    stop = _STOP.search(tail)
    said = (tail[: stop.start()] if stop else tail).strip()
    words = WORD.findall(said)
    if not words or len(words) > MAX_NAME_WORDS or words[0] in _NOT_A_WINE or said in _NOT_A_WINE:
        return None
    rest = t[: match.start()] + " " + (tail[stop.start() :] if stop else "")
    compared = comparisons_in(rest)
    return SimilarRequest(said, rest, "lighter" in compared, "fuller" in compared)


def _body_of(style: tuple[str, ...]) -> int | None:
    return next((_STYLE_BODY[language.normalize(s)] for s in style if language.normalize(s) in _STYLE_BODY), None)


def from_catalogue(hits: list[Wine]) -> Reference:
    first = hits[0]
    same = tuple(w.id for w in hits if w.name.casefold() == first.name.casefold()) or (first.id,)
    return Reference(
        said=first.name,
        wine_type=first.wine_type,
        sweetness=first.sweetness,
        grapes=tuple(first.grape_varieties),
        country=first.country,
        region=first.region_name or first.region,
        body=first.body,
        price=float(first.price_rub),
        ids=same,
    )


def from_knowledge(said: str) -> Reference | None:
    """What the wine knowledge knows of a name the catalogue lacks: a famous wine, an appellation, a grape."""
    named = language.named_wines_in(said)
    if named:
        wine = named[0][1]
        country = language.country_by_code(wine.country)
        grapes = (wine.grape,) if wine.grape else ()
        return Reference(
            wine.name,
            wine.wine_type,
            wine.sweetness,
            grapes,
            country.name if country else None,
            wine.region,
            None,
            None,
            (),
        )
    places = language.appellations_in(said)
    if places:
        place = places[0][1]
        country = language.country_by_code(place.country)
        sweetness = _SWEETNESS_CUES.search(" ".join(place.style))
        return Reference(
            place.name,
            place.colours[0] if place.colours else None,
            str(sweetness.value) if sweetness else None,
            place.grapes[:2],
            country.name if country else None,
            place.region,
            _body_of(place.style),
            None,
            (),
        )
    filters = read_filters(said, said).filters
    if not filters.get("grape_variety") and not filters.get("region"):
        return None
    grape = filters.get("grape_variety")
    return Reference(
        said,
        filters.get("wine_type"),
        filters.get("sweetness"),
        (str(grape),) if grape else (),
        filters.get("country"),
        filters.get("region"),
        None,
        None,
        (),
    )


def agrees(reference: Reference | None, hits: list[Wine]) -> bool:
    """A catalogue row found by the name is the wine meant, unless the knowledge places it elsewhere."""
    if not hits:
        return False
    if reference is None or reference.country is None:
        return True
    return hits[0].country in (None, reference.country)


def search_arguments(reference: Reference, request: SimilarRequest, exclude_ids: list[str]) -> dict[str, Any]:
    """The search for wines like the reference: its colour and the message's own conditions (a cheaper one
    costs less than the reference does)."""
    reading = read_filters(request.rest, request.rest)
    filters: dict[str, Any] = {}
    if reference.wine_type:
        filters["wine_type"] = reference.wine_type
    filters.update(describe_filters(reading.filters))
    if reading.direction == "cheaper" and reference.price:
        filters["price_max"] = math.ceil(reference.price) - 1
    elif reading.direction == "pricier" and reference.price:
        filters["price_min"] = math.floor(reference.price) + 1
    filters.pop("sort", None)
    return {**filters, "limit": POOL, "exclude_ids": list(dict.fromkeys([*reference.ids, *exclude_ids]))}


def _shares(wine: Wine, reference: Reference) -> dict[str, bool]:
    grapes = {language.normalize(g) for g in wine.grape_varieties}
    place = language.normalize(f"{wine.region} {wine.region_name or ''} {wine.appellation or ''}")
    return {
        "sweetness": bool(reference.sweetness) and wine.sweetness == reference.sweetness,
        "grape": any(language.normalize(g) in grapes for g in reference.grapes),
        "region": bool(reference.region) and language.normalize(reference.region or "") in place,
        "country": bool(reference.country) and wine.country == reference.country,
    }


def _score(wine: Wine, reference: Reference) -> float:
    shares = _shares(wine, reference)
    score = sum(_WEIGHTS[k] for k, shared in shares.items() if shared)
    if not shares["sweetness"] and reference.sweetness in SWEETNESS_LEVELS and wine.sweetness in SWEETNESS_LEVELS:
        if abs(SWEETNESS_LEVELS.index(wine.sweetness) - SWEETNESS_LEVELS.index(str(reference.sweetness))) == 1:
            score += _WEIGHTS["sweetness_near"]
    if reference.body and wine.body:
        score -= _WEIGHTS["body_step"] * abs(wine.body - reference.body)
    if reference.price and wine.price_rub:
        score -= _WEIGHTS["price_log"] * abs(math.log(float(wine.price_rub) / reference.price))
    return score


def ranked(wines: list[Wine], reference: Reference, request: SimilarRequest) -> list[Wine]:
    """The wines most like the reference first (ties: the search's order); «полегче»/«понасыщеннее» keep only
    the lighter or fuller ones when the reference's body is known."""
    pool = [w for w in wines if w.id not in reference.ids and w.name.casefold() != reference.said.casefold()]
    if reference.body and request.lighter:
        pool = [w for w in pool if w.body and w.body < reference.body]
    elif reference.body and request.fuller:
        pool = [w for w in pool if w.body and w.body > reference.body]
    order = {w.id: i for i, w in enumerate(pool)}
    return sorted(pool, key=lambda w: (-_score(w, reference), order[w.id]))


def plain_place(wine: Wine) -> str:
    """Where a wine is from, as its caption says it («Кахетия, Грузия»)."""
    return wine.region or wine.country or ""


def similarity(wine: Wine, reference: Reference, format_price: Callable[[Any], str]) -> str:
    """What makes the wine like the reference, and where it differs as asked («тот же сорт Саперави, тоже
    полусладкое; дешевле: 1 290 ₽ против 1 490 ₽»)."""
    shares = _shares(wine, reference)
    parts = []
    if shares["grape"]:
        common = [
            g
            for g in wine.grape_varieties
            if language.normalize(g) in {language.normalize(r) for r in reference.grapes}
        ]
        parts.append(f"тот же сорт {common[0]}" if common else "тот же сорт")
    if shares["sweetness"]:
        parts.append("такая же сладость")
    if shares["region"] or shares["country"]:
        parts.append(f"тоже {plain_place(wine)}")
    if reference.body and wine.body:
        if wine.body == reference.body:
            parts.append("та же полнота")
        elif wine.body < reference.body:
            parts.append("чуть легче")
        else:
            parts.append("чуть насыщеннее")
    if reference.price and float(wine.price_rub) < reference.price:
        parts.append(f"дешевле: {format_price(wine.price_rub)} против {format_price(reference.price)}")
    if not parts:
        parts.append("тот же цвет и близкий стиль")
    return f"Чем похоже на «{reference.said}»: " + ", ".join(parts) + "."
