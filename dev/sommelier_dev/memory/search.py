"""The catalogue's searches in memory: `search_wines`, `semantic_search` and the fallback list, with the
filters and the orders of toolfn/search.py and toolfn/catalog_sql.py.

Which wines match and the orders the SQL fixes (an asked price order, the best the budget buys, the nearest
to a typical price, the suiting style first, the nearest vector) are the SQL's, rule for rule, on the
language layer's matching (sommelier.language.matching, pairing, constraints). How PostgreSQL's text search
ranks the wines a name or a word matches (`ts_rank`, `ts_rank_cd`) is approximated: by how many of the
name's words a wine has, then how often. tests/contract holds both stores to what is fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal, localcontext
from functools import cache
from operator import mul
from typing import Any

from sommelier import language
from sommelier.domain.errors import InvalidArgument
from sommelier.domain.search import SearchFilters, SearchResult, SemanticRequest
from sommelier.language import matching, pairing
from sommelier.language.constraints import stated_constraints
from sommelier.toolfn.search import (
    FUSION_DEPTH,
    MATCH_COUNT_CAP,
    RRF_K,
    WORD_CANDIDATES,
    money,
    photos_of,
    wine_for_tool,
)

from sommelier_dev.memory import sound, text_search
from sommelier_dev.memory.store import MemoryStore, WineRow, sql_norm

Predicate = Callable[[WineRow], bool]
Applied = dict[str, str | int | float]

TYPICAL_PRICE = Decimal(2000)
# «вино», «вина»…: they name every wine of a shop's legal names, so they rank none (toolfn/search.py).
_WINE_WORDS = language.cues("wine_words.json", "wine")
# SEARCH_WORDS' weights in ts_rank_cd: A (name, producer) and B (place, grapes).
_WEIGHT_A = 1.0
_WEIGHT_B = 0.4


# ---------------------------------------------------------------------------- numeric, as PostgreSQL's


@cache
def _ln(value: Decimal) -> Decimal:
    """PostgreSQL's numeric ln(): 16 significant digits after the result's leading digit, rounded half up
    (so a price and its mirror around the typical price tie exactly, and the id decides, as in the SQL)."""
    with localcontext() as context:
        context.prec = 50
        exact = value.ln()
        weight = exact.copy_abs().adjusted() if exact else 0
        return exact.quantize(Decimal(1).scaleb(-(16 - min(weight, 0))), rounding=ROUND_HALF_UP)


def typical_price_distance(price: Decimal) -> Decimal:
    """TYPICAL_PRICE_ORDER: abs(ln(price) - ln(2000))."""
    return abs(_ln(price) - _ln(TYPICAL_PRICE))


def as_numeric(value: float) -> Decimal:
    """A float8 parameter cast to numeric (its shortest exact digits)."""
    return Decimal(repr(value))


# ---------------------------------------------------------------------------- the filters


def _column_is(column: str, value: object) -> Predicate:
    return lambda wine: bool(getattr(wine, column) == value)


def _column_is_not(column: str, value: object) -> Predicate:
    return lambda wine: bool(getattr(wine, column) != value)


def _price_from(floor: Decimal) -> Predicate:
    return lambda wine: wine.price_rub >= floor


def _price_up_to(ceiling: Decimal) -> Predicate:
    return lambda wine: wine.price_rub <= ceiling


def _wine_filters(filters: SearchFilters, applied: Applied) -> list[Predicate]:
    """Colour, sweetness, price, grape, country, region: toolfn/search.py's `_where` up to the dish."""
    tests: list[Predicate] = []
    if filters.wine_type:
        tests.append(_column_is("wine_type", filters.wine_type))
        applied["wine_type"] = filters.wine_type
    if filters.sweetness:
        tests.append(_column_is("sweetness", filters.sweetness))
        applied["sweetness"] = filters.sweetness
    if filters.price_min is not None:
        tests.append(_price_from(as_numeric(filters.price_min)))
        applied["price_min"] = money(filters.price_min)
    if filters.price_max is not None:
        tests.append(_price_up_to(as_numeric(filters.price_max)))
        applied["price_max"] = money(filters.price_max)
    if filters.grape_variety:
        keys = frozenset(matching.grape_keys(filters.grape_variety))
        tests.append(lambda w: not keys.isdisjoint(w.grape_keys))
        applied["grape_variety"] = filters.grape_variety
    if filters.country:
        tests.append(_country(filters.country, "country", applied, exclude=False))
    if filters.region:
        region = _region(filters.region, "region", applied, exclude=False)
        if region is not None:
            tests.append(region)
    return tests


def _conditions(filters: SearchFilters) -> tuple[list[Predicate], Applied]:
    """Every condition of `_where`, and its filters_applied report."""
    applied: Applied = {}
    tests = [lambda w: w.available, *_wine_filters(filters, applied)]
    if filters.food_pairing and language.words(filters.food_pairing):
        tests.append(_food(filters.food_pairing))
        applied["food_pairing"] = filters.food_pairing
    if filters.name:
        query = sound.name_query(filters.name)
        tests.append(lambda w: query.matches(w.name_sound_words))
        applied["name"] = filters.name
    tests += _exclusions(filters, applied)
    if filters.sort:
        applied["sort"] = filters.sort
    if filters.exclude_ids:
        shown = frozenset(filters.exclude_ids)
        tests.append(lambda w: w.id not in shown)
    return tests, applied


def _exclusions(filters: SearchFilters, applied: Applied) -> list[Predicate]:
    """What the customer ruled out: «но не сухое», «только не итальянское», «без шардоне», «не кьянти»."""
    tests: list[Predicate] = []
    if filters.exclude_wine_type:
        tests.append(_column_is_not("wine_type", filters.exclude_wine_type))
        applied["exclude_wine_type"] = filters.exclude_wine_type
    if filters.exclude_sweetness:
        tests.append(_column_is_not("sweetness", filters.exclude_sweetness))
        applied["exclude_sweetness"] = filters.exclude_sweetness
    if filters.exclude_grape:
        keys = frozenset(matching.grape_keys(filters.exclude_grape))
        tests.append(lambda w: keys.isdisjoint(w.grape_keys))
        applied["exclude_grape"] = filters.exclude_grape
    if filters.exclude_country:  # every country of the list («Италия, Франция»)
        listed = matching.countries_listed(filters.exclude_country)
        tests += [_country(country, "exclude_country", applied, exclude=True) for country in listed]
        applied["exclude_country"] = ", ".join(listed)
    if filters.exclude_region:
        region = _region(filters.exclude_region, "exclude_region", applied, exclude=True)
        if region is not None:
            tests.append(region)
    return tests


def _country(country: str, key: str, applied: Applied, *, exclude: bool) -> Predicate:
    """By its code, or as the catalogue writes it for a country the vocabulary does not know; ruling out a
    code keeps the wines without one."""
    applied[key] = matching.canonical_country(country)
    code = matching.country_code(country)
    if code:
        if exclude:
            return lambda w: w.country_code != code
        return lambda w: w.country_code == code
    name = language.normalize(country)
    if exclude:
        return lambda w: sql_norm(w.country) != name
    return lambda w: sql_norm(w.country) == name


def _region(region: str, key: str, applied: Applied, *, exclude: bool) -> Predicate | None:
    """Whole words of the wine's region or appellation (any spelling of a known place and the places inside
    it), or a name that sounds like it. None when the value has no words (then it is no filter)."""
    phrases = [text_search.phrase(p) for p in matching.region_phrases(region)]
    if not phrases:
        return None
    sounded = sound.sound_phrase(region)
    applied[key] = region

    def named(wine: WineRow) -> bool:
        return any(text_search.has_phrase(wine.place_words, p) for p in phrases) or sound.has_sound_phrase(
            wine.name_sound, sounded
        )

    if exclude:
        return lambda w: not named(w)
    return named


def _food(food: str) -> Predicate:
    """The shop's own pairing (food categories) or, for a wine listed without pairings, its style; a dish the
    vocabulary does not know: its words among the pairings."""
    categories = frozenset(matching.food_categories(food))
    suits = style_test(food)
    if categories and suits is not None:
        fits = suits
        return lambda w: not categories.isdisjoint(w.food_categories) or (not w.food_categories and fits(w))
    if categories:
        return lambda w: not categories.isdisjoint(w.food_categories)
    wanted = text_search.all_words(food)
    return lambda w: bool(wanted) and wanted <= w.pairing_words


def style_test(food: str) -> Predicate | None:
    """`style_condition`: the dish's colours and sweetness, and its structure: the graded body, tannins and
    acidity where a wine is graded, else its grapes' typical structure. None for a dish the table does not know."""
    style = pairing.dish_style(food)
    if style is None:
        return None
    colours, levels = frozenset(style.colours), frozenset(style.sweetness)
    if not style.has_structure:
        return lambda w: w.wine_type in colours and w.sweetness in levels
    graded: list[tuple[str, frozenset[int]]] = []
    for attribute, column in (("body", "body"), ("tannin", "tannins"), ("acidity", "acidity")):
        allowed = pairing.grades(style, attribute)
        if allowed is not None:
            graded.append((column, frozenset(allowed)))
    grapes = frozenset(pairing.style_grape_keys(style))

    def suits(wine: WineRow) -> bool:
        if wine.wine_type not in colours or wine.sweetness not in levels:
            return False
        if wine.body is None and wine.tannins is None and wine.acidity is None:
            return not grapes.isdisjoint(wine.grape_keys)
        return all(_grade(wine, column) is None or _grade(wine, column) in allowed for column, allowed in graded)

    return suits


def _grade(wine: WineRow, column: str) -> int | None:
    grade: int | None = getattr(wine, column)
    return grade


# ---------------------------------------------------------------------------- the orders


def _order(filters: SearchFilters) -> Callable[[WineRow], Any]:
    """The order search_wines lists its wines in (the id breaks ties, as in the SQL)."""
    if filters.sort == "price_desc":
        return lambda w: (-w.price_rub, w.id)
    if filters.sort == "price_asc":
        return lambda w: (w.price_rub, w.id)
    if filters.name:
        query = sound.name_query(filters.name)
        return lambda w: (*_name_rank(query, w), typical_price_distance(w.price_rub), w.id)
    if filters.price_max is not None:
        return lambda w: (-w.price_rub, w.id)  # the best the budget buys
    if filters.price_min is not None:
        return lambda w: (w.price_rub, w.id)
    return lambda w: (typical_price_distance(w.price_rub), w.id)


def _name_rank(query: sound.NameQuery, wine: WineRow) -> tuple[int, int]:
    """ts_rank's order, approximately: more of the name's words first, then more words found."""
    found = sum(term.found_in((word,)) for term in query.terms for word in wine.name_sound)
    return -query.matched_terms(wine.name_sound_words), -found


def matching_wines(store: MemoryStore, tests: Iterable[Predicate]) -> list[WineRow]:
    checks = tuple(tests)
    return [wine for wine in store.wines.values() if all(check(wine) for check in checks)]


def _result(rows: list[WineRow], wines: list[Any], matched: int, applied: Applied) -> SearchResult:
    return SearchResult(
        found=len(wines),
        matched=matched,
        wines=wines,
        filters_applied=applied,
        matched_more=matched >= MATCH_COUNT_CAP,
        photos=photos_of([row.columns() for row in rows]),
    )


def search_wines(store: MemoryStore, filters: SearchFilters) -> SearchResult:
    tests, applied = _conditions(filters)
    found = matching_wines(store, tests)
    order = _order(filters)
    suits = style_test(filters.food_pairing) if filters.food_pairing and not filters.sort and not filters.name else None
    if suits is not None:
        fits = suits
        found.sort(key=lambda w: (not fits(w), order(w)))
    else:
        found.sort(key=order)
    rows = found[: filters.limit]
    return _result(rows, [wine_for_tool(row.columns()) for row in rows], min(len(found), MATCH_COUNT_CAP), applied)


# ---------------------------------------------------------------------------- semantic search


def _with_stated_constraints(request: SemanticRequest) -> tuple[SearchFilters, list[str]]:
    """The hard constraints the description states, when the caller passed none (toolfn/search.py)."""
    filters = request.filters
    given = (filters.country, filters.wine_type, filters.sweetness, filters.price_min, filters.price_max)
    if any(value is not None for value in given):
        return filters, []
    stated = stated_constraints(request.query)
    if not stated:
        return filters, []
    constrained = replace(
        filters, country=stated.get("country"), wine_type=stated.get("wine_type"), sweetness=stated.get("sweetness")
    )
    return constrained, sorted(stated)


def cosine_distance(wine: WineRow, query: Sequence[float], query_norm: float) -> float:
    """pgvector's `<=>`."""
    if wine.embedding is None or not wine.norm or not query_norm:
        return float("nan")
    dot: float = sum(map(mul, wine.embedding, query))
    return 1.0 - dot / (wine.norm * query_norm)


def semantic_search(store: MemoryStore, request: SemanticRequest) -> SearchResult:
    filters, read_from_query = _with_stated_constraints(request)
    tests, applied = _conditions(filters)
    model = request.embedding_model
    found = matching_wines(store, [*tests, lambda w: w.embedding_model == model])
    query = [float(x) for x in request.embedding]
    query_norm = sum(x * x for x in query) ** 0.5
    distances = {wine.id: cosine_distance(wine, query, query_norm) for wine in found}
    depth = max(filters.limit, FUSION_DEPTH) if request.hybrid else filters.limit
    rows = sorted(found, key=lambda w: distances[w.id])[:depth]
    if not rows:
        _refuse_model_mismatch(store, model)
    if request.hybrid and found:
        rows = _fused(rows, _word_ranked(found, request.query)[:depth], filters.limit, store)
    wines = [
        wine_for_tool(row.columns(), similarity_score=round(max(0.0, min(1.0, 1.0 - distances[row.id])), 4))
        for row in rows
    ]
    result = _result(rows, wines, min(len(found), MATCH_COUNT_CAP), applied)
    return replace(result, read_from_query=read_from_query) if read_from_query else result


def _word_ranked(found: list[WineRow], text: str) -> list[str]:
    """The ids of the wines with any of the query's words (stemmed) in a name, producer, place or grapes,
    best first (the first WORD_CANDIDATES matches are ranked, as in the SQL)."""
    words = text_search.all_words(_WINE_WORDS.remove(language.normalize(text)))
    if not words:
        return []
    scored: list[tuple[float, str]] = []
    for wine in found:
        score = sum(
            _WEIGHT_A if word in wine.name_words else _WEIGHT_B if word in wine.place_and_grape_words else 0.0
            for word in words
        )
        if score:
            scored.append((score, wine.id))
    ranked = scored[:WORD_CANDIDATES]
    return [key for _, key in sorted(ranked, key=lambda item: (-item[0], item[1]))]


def _fused(by_vector: list[WineRow], by_words: list[str], limit: int, store: MemoryStore) -> list[WineRow]:
    """Reciprocal rank fusion of the two rankings (toolfn/search.py's `_fused_rows`)."""
    scores: dict[str, float] = {}
    for ranking in ([row.id for row in by_vector], by_words):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
    near = {row.id for row in by_vector}
    first = sorted(scores, key=lambda key: (-scores[key], key not in near, key))[:limit]
    return [store.wines[key] for key in first if key in store.wines]


def _refuse_model_mismatch(store: MemoryStore, model: str) -> None:
    """No wine matched: if the catalogue is embedded with other models only, say so."""
    models = {wine.embedding_model for wine in store.wines.values() if wine.embedding_model is not None}
    if models and model not in models:
        raise InvalidArgument(
            f"the query was embedded with '{model}' but the catalogue is embedded with "
            f"{', '.join(repr(m) for m in sorted(models))}; vectors of different models are not comparable. "
            "Re-embed the catalogue (sommelier catalog reembed) or use the same EMBEDDING_PROVIDER/EMBEDDING_MODEL."
        )


# ---------------------------------------------------------------------------- the fallback list


def fallback_rows(store: MemoryStore, filters: SearchFilters, limit: int) -> list[WineRow]:
    """catalog_sql.get_list: the types interleaved, each type's wines nearest a typical price first."""
    tests: list[Predicate] = [lambda w: w.available]
    if filters.wine_type:
        tests.append(_column_is("wine_type", filters.wine_type))
    if filters.price_max is not None:
        tests.append(_price_up_to(as_numeric(filters.price_max)))
    if filters.exclude_ids:
        shown = frozenset(filters.exclude_ids)
        tests.append(lambda w: w.id not in shown)
    by_type: dict[str, list[WineRow]] = {}
    for wine in matching_wines(store, tests):
        by_type.setdefault(wine.wine_type, []).append(wine)
    ranked: list[tuple[int, str, str, WineRow]] = []
    for wine_type, wines in by_type.items():
        wines.sort(key=lambda w: (typical_price_distance(w.price_rub), w.id))
        ranked += [(rank, wine_type, wine.id, wine) for rank, wine in enumerate(wines, start=1)]
    ranked.sort(key=lambda item: item[:3])
    return [item[3] for item in ranked[:limit]]
