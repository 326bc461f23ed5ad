"""The two LLM tools, `search_wines` and `semantic_search`, as parameterised SQL."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import psycopg
from pgvector import Vector
from psycopg.rows import dict_row

from sommelier import language
from sommelier.db.pool import first_row
from sommelier.domain.errors import ModelMismatchError
from sommelier.domain.search import SearchFilters, SearchResult, SemanticRequest, search_filters, semantic_request
from sommelier.domain.wine import SWEETNESS_LEVELS, WINE_TYPES, Wine, WinePhoto
from sommelier.language import matching, pairing
from sommelier.language.constraints import stated_constraints

# Normalise a column the way sommelier.language.normalize normalises the customer's words.
_NORM = "lower(translate({col}, 'Ёё-', 'Ее '))"

# The words of a wine's region and appellation, stemmed by PostgreSQL's `russian` text search: the region
# filter matches whole words («Асти» is in «Asti DOCG», not in «Кастилия»). Migration 0007 indexes exactly
# this expression (GIN, available wines), so keep the two identical.
PLACE_WORDS = (
    "to_tsvector('russian'::regconfig, " + _NORM.format(col="w.region || ' ' || coalesce(w.appellation, '')") + ")"
)

# The words a customer names a wine by, weighted name/producer A, place/grapes B, and how a wine's name,
# producer and place sound, Latin and Cyrillic alike: stored columns (migration 0010).
SEARCH_WORDS = "w.search_words"
NAME_SOUND = "w.name_sound"
# In a scalar subquery, so it is computed once per query even under a prepared statement's generic plan
# (inline, the fifteen regular expressions of the sound key ran again for every wine ranked: 60 ms at 10k).
NAME_QUERY = "(SELECT sommelier_sound_query(%(name)s))"
# Any of the query's words (stemmed) in a wine's name, producer, place or grapes, for ranking by words beside
# the vector ranking: a mood's words («свежее», «минеральное») are the vector's to weigh.
ANY_WORD_QUERY = "(SELECT replace(plainto_tsquery('russian'::regconfig, %(text_query)s)::text, '&', '|')::tsquery)"
# Reciprocal rank fusion: each ranking adds 1 / (RRF_K + rank); 60 is the constant of the original method.
RRF_K = 60
# Each ranking fused reads this many wines (or the limit, if more).
FUSION_DEPTH = 30
# The word ranking ranks at most this many of the wines its words match.
WORD_CANDIDATES = 300
# A name ranks at most this many of the wines it matches, the first its index gives (a real shop's name
# matches a handful; a synthetic 100k catalogue's 1 500, whose rows read whole cost 20 ms).
NAME_CANDIDATES = 300

# Without a price filter, list wines nearest a typical shop price (2000 ₽) first, so a default
# list is neither the cheapest nor the most expensive shelf. Migration 0003 indexes exactly this
# expression (with `id` as the tie-break), so keep the two identical.
TYPICAL_PRICE_ORDER = "abs(ln(w.price_rub) - ln(2000))"

WINE_COLUMNS = (
    "w.id, w.name, w.producer, w.country, w.region, w.appellation, w.vintage_year, w.grape_varieties, "
    "w.wine_type, w.sweetness, w.body, w.tannins, w.acidity, w.price_rub, w.description, "
    "w.tasting_notes, w.food_pairings, w.image_key, w.telegram_file_id, w.available, w.grape_keys, w.name_sound"
)
# Tool results carry a shortened description: full ones run to 20,000 characters.
TOOL_DESCRIPTION_CHARS = 600
TOOL_NOTES_CHARS = 400
# "matched" counts up to this many wines; more is reported as this number with "matched_more": true.
MATCH_COUNT_CAP = 200
# At most this many matches are fetched and sorted; more are read in order from the price-order index. Any
# count below the cap is exact, and fetching that many rows by their index beats walking the price order
# past the wines that do not match (a name or a place matches a few hundred at 100k).
FEW_MATCHES = MATCH_COUNT_CAP - 1


def money(value: Decimal | float | int) -> int | float:
    number = float(value)
    return int(number) if number.is_integer() else round(number, 2)


def wine_for_tool(row: dict[str, Any], **more: Any) -> Wine:
    """A wine as the two search tools answer it, plus its id. The country is given by its usual name
    («Соединенные Штаты Америки» → США), as a customer reads it in a caption."""
    known = language.country(row["country"], fuzzy=False) if row["country"] else None
    region = ", ".join(part for part in (row["region"], known.name if known else row["country"]) if part)
    return Wine(
        id=str(row["id"]),
        name=row["name"],
        producer=row["producer"],
        region=region,
        vintage_year=row["vintage_year"],
        grape_varieties=list(row["grape_varieties"]),
        wine_type=row["wine_type"],
        sweetness=row["sweetness"],
        body=row["body"],
        tannins=row["tannins"],
        acidity=row["acidity"],
        price_rub=money(row["price_rub"]),
        description=language.brief(row["description"], TOOL_DESCRIPTION_CHARS),
        tasting_notes=language.brief(row["tasting_notes"], TOOL_NOTES_CHARS, skip_colour=True),
        food_pairings=list(row["food_pairings"]),
        **more,
    )


def full_wine(row: dict[str, Any]) -> Wine:
    """A wine read by id: the tools' view plus where it comes from exactly, its photo keys and availability."""
    return wine_for_tool(
        row,
        country=row["country"],
        region_name=row["region"],
        appellation=row["appellation"],
        image_key=row["image_key"],
        telegram_file_id=row["telegram_file_id"],
        available=row["available"],
    )


def photos_of(rows: list[dict[str, Any]]) -> dict[str, WinePhoto]:
    """The photo keys of the wines found (those with a photo), by id, beside the model's view of them: the
    agent keeps them for the wine cards it sends while the answer streams and never shows them to the model."""
    return {
        str(row["id"]): WinePhoto(row["image_key"], row["telegram_file_id"])
        for row in rows
        if row["image_key"] or row["telegram_file_id"]
    }


def _where(filters: SearchFilters) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """SQL conditions, their parameters, and the filters_applied report. Grapes, countries and food
    compare the normalised columns written at import (indexed), never the free text."""
    conditions: list[str] = ["w.available"]
    params: dict[str, Any] = {}
    applied: dict[str, Any] = {}

    if filters.wine_type:
        conditions.append("w.wine_type = %(wine_type)s")
        params["wine_type"] = applied["wine_type"] = filters.wine_type
    if filters.sweetness:
        conditions.append("w.sweetness = %(sweetness)s")
        params["sweetness"] = applied["sweetness"] = filters.sweetness
    if filters.price_min is not None:
        conditions.append("w.price_rub >= %(price_min)s::numeric")
        params["price_min"] = filters.price_min
        applied["price_min"] = money(filters.price_min)
    if filters.price_max is not None:
        conditions.append("w.price_rub <= %(price_max)s::numeric")
        params["price_max"] = filters.price_max
        applied["price_max"] = money(filters.price_max)
    if filters.grape_variety:
        conditions.append("w.grape_keys && %(grape_keys)s::text[]")
        params["grape_keys"] = matching.grape_keys(filters.grape_variety)
        applied["grape_variety"] = filters.grape_variety
    if filters.country:
        _country(filters.country, "country", conditions, params, applied, exclude=False)
    if filters.region:
        _region(filters.region, "region", conditions, params, applied, exclude=False)
    if filters.food_pairing and language.words(filters.food_pairing):
        categories = matching.food_categories(filters.food_pairing)
        style = style_condition(filters.food_pairing, params)
        if categories and style:
            # The shop's own pairing wins; a wine listed without pairings is judged by its style.
            conditions.append(
                f"(w.food_categories && %(food_categories)s::text[] OR (cardinality(w.food_categories) = 0 AND {style}))"
            )
            params["food_categories"] = categories
        elif categories:
            conditions.append("w.food_categories && %(food_categories)s::text[]")
            params["food_categories"] = categories
        else:  # a dish the vocabulary does not know: the same words among the pairings
            conditions.append(
                "to_tsvector('russian'::regconfig, array_to_string(w.food_pairings, ' '))"
                " @@ plainto_tsquery('russian'::regconfig, %(food_words)s)"
            )
            params["food_words"] = filters.food_pairing
        applied["food_pairing"] = filters.food_pairing
    if filters.name:
        conditions.append(f"{NAME_SOUND} @@ {NAME_QUERY}")
        params["name"] = applied["name"] = filters.name
    _exclusions(filters, conditions, params, applied)
    if filters.sort:
        applied["sort"] = filters.sort
    if filters.exclude_ids:
        conditions.append("NOT (w.id = ANY(%(exclude_ids)s::uuid[]))")
        params["exclude_ids"] = filters.exclude_ids
    return conditions, params, applied


def style_condition(food: str, params: dict[str, Any]) -> str | None:
    """SQL that is true for a wine whose style suits the dish (language/data/dish_styles.json): its colour and
    sweetness, and its structure — graded body, tannins and acidity where the file grades them, else its
    grapes' typical structure. None for a dish the table does not know."""
    style = pairing.dish_style(food)
    if style is None:
        return None
    params["style_colours"] = list(style.colours)
    params["style_sweetness"] = list(style.sweetness)
    condition = "w.wine_type = ANY(%(style_colours)s::text[]) AND w.sweetness = ANY(%(style_sweetness)s::text[])"
    if not style.has_structure:
        return f"({condition})"
    graded: list[str] = []
    for attribute, column in (("body", "body"), ("tannin", "tannins"), ("acidity", "acidity")):
        allowed = pairing.grades(style, attribute)
        if allowed is not None:
            params[f"style_{attribute}"] = allowed
            graded.append(f"coalesce(w.{column} = ANY(%(style_{attribute})s::int[]), true)")
    params["style_grapes"] = pairing.style_grape_keys(style)
    return (
        f"({condition} AND CASE WHEN coalesce(w.body, w.tannins, w.acidity) IS NOT NULL "
        f"THEN {' AND '.join(graded)} ELSE w.grape_keys && %(style_grapes)s::text[] END)"
    )


def _exclusions(filters: SearchFilters, conditions: list[str], params: dict[str, Any], applied: dict[str, Any]) -> None:
    """What the customer ruled out: «но не сухое», «только не итальянское», «без шардоне», «не кьянти»."""
    if filters.exclude_wine_type:
        conditions.append("w.wine_type <> %(exclude_wine_type)s")
        params["exclude_wine_type"] = applied["exclude_wine_type"] = filters.exclude_wine_type
    if filters.exclude_sweetness:
        conditions.append("w.sweetness <> %(exclude_sweetness)s")
        params["exclude_sweetness"] = applied["exclude_sweetness"] = filters.exclude_sweetness
    if filters.exclude_grape:
        conditions.append("NOT (w.grape_keys && %(exclude_grape_keys)s::text[])")
        params["exclude_grape_keys"] = matching.grape_keys(filters.exclude_grape)
        applied["exclude_grape"] = filters.exclude_grape
    if filters.exclude_country:  # «кроме Италии и Франции»: every country of the list
        listed = matching.countries_listed(filters.exclude_country)
        for i, country in enumerate(listed):
            _country(country, f"exclude_country_{i}", conditions, params, applied, exclude=True)
            applied.pop(f"exclude_country_{i}", None)
        applied["exclude_country"] = ", ".join(listed)
    if filters.exclude_region:
        _region(filters.exclude_region, "exclude_region", conditions, params, applied, exclude=True)


def _region(
    region: str, key: str, conditions: list[str], params: dict[str, Any], applied: dict[str, Any], *, exclude: bool
) -> None:
    """A region or appellation asked for or ruled out: whole words of the wine's region or appellation (any
    spelling of a known place, and the places inside a known region), or a name that sounds like it, in
    either alphabet («Barolo» → «Бароло ДОКГ»). Ruling one out keeps the wines that name no place."""
    phrases = matching.region_phrases(region)
    if not phrases:
        return
    names = [f"{key}_{i}" for i in range(len(phrases))]
    wanted = " || ".join(f"phraseto_tsquery('russian'::regconfig, %({name})s)" for name in names)
    named = f"(SELECT phraseto_tsquery('simple'::regconfig, sommelier_sound(%({key}_sound)s)))"
    match = f"({PLACE_WORDS} @@ ({wanted}) OR {NAME_SOUND} @@ {named})"
    conditions.append(f"NOT coalesce({match}, false)" if exclude else match)
    params.update(zip(names, phrases, strict=True))
    params[f"{key}_sound"] = region
    applied[key] = region


def _country(
    country: str, key: str, conditions: list[str], params: dict[str, Any], applied: dict[str, Any], *, exclude: bool
) -> None:
    """A country asked for or ruled out: by its code, or, for one the vocabulary does not know, as the
    catalogue writes it. Ruling out a code keeps the wines with no country (IS DISTINCT FROM)."""
    code = matching.country_code(country)
    if code:
        operator = "IS DISTINCT FROM" if exclude else "="
        conditions.append(f"w.country_code {operator} %({key}_code)s")
        params[f"{key}_code"] = code
    else:
        conditions.append(f"{_NORM.format(col='w.country')} {'<>' if exclude else '='} %({key}_name)s")
        params[f"{key}_name"] = language.normalize(country)
    applied[key] = matching.canonical_country(country)


def _order(filters: SearchFilters) -> str:
    """The order search_wines lists its wines in: the one asked for; a named wine best match first; else
    the best the budget buys, the cheapest above a floor, or nearest a typical price."""
    if filters.sort == "price_desc":
        return "w.price_rub DESC"
    if filters.sort == "price_asc":
        return "w.price_rub ASC"
    if filters.name:
        return f"ts_rank({NAME_SOUND}, {NAME_QUERY}) DESC, {TYPICAL_PRICE_ORDER}"
    if filters.price_max is not None:
        return "w.price_rub DESC"  # the best the budget buys
    if filters.price_min is not None:
        return "w.price_rub ASC"
    return TYPICAL_PRICE_ORDER


def _matched(
    conn: psycopg.Connection,
    where: str,
    params: dict[str, Any],
    *,
    prepare: bool | None = None,
    cap: int = MATCH_COUNT_CAP,
) -> int:
    sql = f"SELECT count(*) FROM (SELECT 1 FROM wines w WHERE {where} LIMIT {cap}) matched"  # nosec B608 - constant fragments; values are bound
    count: int = first_row(conn.execute(sql, params, prepare=prepare))[0]
    return count


def search_wines(conn: psycopg.Connection, filters: SearchFilters) -> SearchResult:
    conditions, params, applied = _where(filters)
    order = _order(filters)
    # Within the shop's pairing, the wines whose style suits the dish come first (not when an order was asked).
    style = (
        style_condition(filters.food_pairing, params)
        if filters.food_pairing and not filters.sort and not filters.name
        else None
    )
    where = " AND ".join(conditions) or "TRUE"
    params["limit"] = filters.limit
    # Count first (bounded): nothing matched → no ordered scan at all; a counted few (below the cap) → fetch
    # those rows and sort them (walking an ordered index would visit every wine to find a handful); many →
    # the ordered index stops at the limit.
    # A name, a place or a dish's style: planned for its values each time (a prepared statement's generic
    # plan cannot see how few wines a name matches and scans them all); other filters keep the plan cache.
    prepare = False if (filters.name or filters.region or style) else None
    matched = _matched(conn, where, params, prepare=prepare)
    with conn.cursor(row_factory=dict_row) as cur:
        if matched == 0:
            rows: list[dict[str, Any]] = []
        elif filters.name and not filters.sort:
            rows = cur.execute(_ranked(where, order, bound=NAME_CANDIDATES), params, prepare=False).fetchall()
        elif matched <= FEW_MATCHES or filters.name or (filters.region and _few_for_a_place(conn, where, params)):
            # A name, or a place with at most a few thousand wines: its wines come from their indexes and are
            # sorted (walking the price order computed each wine's place words until the place's wines turned
            # up: 340 ms at 100k for «Barolo», whose wines cost far from the typical price; 14 ms sorted).
            first = f"{style} DESC, " if style else ""
            rows = cur.execute(_ranked(where, first + order), params, prepare=prepare).fetchall()
        else:
            rows = _walked(cur, filters, where, order, params, style=style, prepare=prepare)
    return _result(rows, [wine_for_tool(row) for row in rows], matched, applied)


def _walked(
    cur: psycopg.Cursor[dict[str, Any]],
    filters: SearchFilters,
    where: str,
    order: str,
    params: dict[str, Any],
    *,
    style: str | None,
    prepare: bool | None,
) -> list[dict[str, Any]]:
    """Many matched: the first wines of the ordered index, walked until the limit."""
    if style:
        # The ordered index twice, the suiting wines first, then the rest of the pairing if short.
        rows = cur.execute(_walk(f"{where} AND {style}", order), params, prepare=False).fetchall()
        if len(rows) < filters.limit:
            more = {**params, "limit": filters.limit - len(rows)}
            rows += cur.execute(_walk(f"{where} AND NOT {style}", order), more, prepare=False).fetchall()
        return rows
    if order.startswith("w.price_rub") and (filters.exclude_wine_type or filters.exclude_sweetness):
        return cur.execute(_walk_each_style(where, order), _styles_left(filters, params), prepare=False).fetchall()
    return cur.execute(_walk(where, order), params, prepare=prepare).fetchall()


# A place with more wines than this is walked in the price order (they turn up soon); fewer are sorted.
PLACE_SORT_CAP = 3000


def _few_for_a_place(conn: psycopg.Connection, where: str, params: dict[str, Any]) -> bool:
    return _matched(conn, where, params, prepare=False, cap=PLACE_SORT_CAP) < PLACE_SORT_CAP


# The columns an order or a dish's style reads: the matched wines are ranked on these alone.
RANK_COLUMNS = "w.id, w.price_rub, w.name_sound, w.wine_type, w.sweetness, w.body, w.tannins, w.acidity, w.grape_keys"


def _ranked(where: str, order: str, *, bound: int | None = None) -> str:
    """The matched wines from their indexes (at most `bound`, the first the index gives), ranked on the few
    columns the order reads; only the listed wines' rows are read whole (1 500 whole rows: 12 ms at 100k)."""
    limit = f" LIMIT {bound}" if bound else ""
    return (
        f"WITH m AS MATERIALIZED (SELECT {RANK_COLUMNS} FROM wines w WHERE {where}{limit}), "  # nosec B608 - built from constant fragments; every value is a bound parameter
        f"best AS (SELECT w.id, row_number() OVER (ORDER BY {order}, w.id) AS place FROM m w "
        f"ORDER BY {order}, w.id LIMIT %(limit)s) "
        f"SELECT {WINE_COLUMNS} FROM wines w JOIN best ON best.id = w.id ORDER BY best.place"
    )


def _walk_each_style(where: str, order: str) -> str:
    """A price order with a colour or a sweetness ruled out: each colour and sweetness left walks its own part
    of the (wine_type, sweetness, price) index, and the few each gives are merged (one walk of the price index
    passed 13 000 dry wines to find five red non-dry ones at 100k: 22 ms)."""
    each = _walk(f"{where} AND w.wine_type = kind.wine_type AND w.sweetness = kind.sweetness", order)
    return (
        "SELECT w.* FROM unnest(%(walk_types)s::text[]) AS t(wine_type) "  # nosec B608 - built from constant fragments; every value is a bound parameter
        "CROSS JOIN unnest(%(walk_levels)s::text[]) AS s(sweetness) "
        "CROSS JOIN LATERAL (SELECT t.wine_type, s.sweetness) AS kind "
        f"CROSS JOIN LATERAL ({each}) AS w ORDER BY {order}, w.id LIMIT %(limit)s"
    )


def _styles_left(filters: SearchFilters, params: dict[str, Any]) -> dict[str, Any]:
    types = [filters.wine_type] if filters.wine_type else [t for t in WINE_TYPES if t != filters.exclude_wine_type]
    levels = (
        [filters.sweetness] if filters.sweetness else [s for s in SWEETNESS_LEVELS if s != filters.exclude_sweetness]
    )
    return {**params, "walk_types": types, "walk_levels": levels}


def _walk(where: str, order: str) -> str:
    return f"SELECT {WINE_COLUMNS} FROM wines w WHERE {where} ORDER BY {order}, w.id LIMIT %(limit)s"  # nosec B608 - built from constant fragments; every value is a bound parameter


# Session settings for the nearest-neighbour query when many wines match, local to its transaction.
SEMANTIC_SEARCH_SETTINGS = (
    # Keep scanning the HNSW graph until enough rows pass the filters (pgvector >= 0.8).
    "SET LOCAL hnsw.iterative_scan = 'relaxed_order'",
    # The planner does not count reading the TOASTed 6 KB vectors, so on a wide table it prices "scan
    # every match, then sort by distance" below the HNSW graph (44 ms instead of a few at 10k wines).
    "SET LOCAL enable_seqscan = off",
    "SET LOCAL enable_sort = off",
)


def _with_stated_constraints(request: SemanticRequest) -> tuple[SearchFilters, list[str]]:
    """The request's filters plus the hard constraints its own words state («американское вино» → США), when
    the caller passed none of them (country, colour, sweetness, price): the caller's filters always win."""
    filters = request.filters
    given = (filters.country, filters.wine_type, filters.sweetness, filters.price_min, filters.price_max)
    if any(value is not None for value in given):
        return filters, []
    stated = stated_constraints(request.query)
    if not stated:
        return filters, []
    return (
        replace(
            filters,
            country=stated.get("country"),
            wine_type=stated.get("wine_type"),
            sweetness=stated.get("sweetness"),
        ),
        sorted(stated),
    )


def semantic_search(conn: psycopg.Connection, request: SemanticRequest) -> SearchResult:
    filters, read_from_query = _with_stated_constraints(request)
    conditions, params, applied = _where(filters)
    conditions.append("w.embedding_model = %(model)s")
    params["model"] = request.embedding_model
    params["query_vector"] = Vector(request.embedding)
    depth = max(filters.limit, FUSION_DEPTH) if request.hybrid else filters.limit
    params["limit"] = depth
    where = " AND ".join(conditions)
    sql = (
        # hybrid: the ids only, 30 deep; the fused few are read afterwards
        f"SELECT {'w.id' if request.hybrid else WINE_COLUMNS}, (w.embedding <=> %(query_vector)s) AS distance "  # nosec B608 - built from constant fragments; every value is a bound parameter
        # ORDER BY the output column: the same expression (the HNSW index serves it), and the 6 KB
        # query vector is sent once instead of twice.
        f"FROM wines w WHERE {where} ORDER BY distance LIMIT %(limit)s"
    )
    # Count first (bounded): a few matches are read and sorted exactly (only their vectors are read);
    # many go through the HNSW graph.
    matched = _matched(conn, where, params)
    with conn.transaction():
        if matched >= MATCH_COUNT_CAP:
            for setting in SEMANTIC_SEARCH_SETTINGS:
                conn.execute(setting)
        with conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(sql, params).fetchall() if matched else []
    if not rows:
        _refuse_model_mismatch(conn, request.embedding_model)
    rows.sort(key=lambda row: row["distance"])  # relaxed order may be slightly off
    if request.hybrid and matched:
        rows = _fused_rows(conn, rows, _word_ranked(conn, where, params, request.query), filters.limit, params)
    wines = [
        wine_for_tool(row, similarity_score=round(max(0.0, min(1.0, 1.0 - float(row["distance"]))), 4)) for row in rows
    ]
    result = _result(rows, wines, matched, applied)
    return replace(result, read_from_query=read_from_query) if read_from_query else result


def _word_ranked(conn: psycopg.Connection, where: str, params: dict[str, Any], text: str) -> list[Any]:
    """The ids of the wines that meet the filters ranked by the query's words (any of them, stemmed, in a
    name, producer, place or grapes), best first. Only the first WORD_CANDIDATES matches are ranked (a
    grape's name matches a tenth of a big catalogue); rows and vectors are read later, for the fused few."""
    sql = (
        "WITH hits AS MATERIALIZED ("  # nosec B608 - built from constant fragments; every value is a bound parameter
        f"SELECT w.id, ts_rank_cd({SEARCH_WORDS}, {ANY_WORD_QUERY}) AS rank FROM wines w "
        f"WHERE {where} AND {SEARCH_WORDS} @@ {ANY_WORD_QUERY} LIMIT {WORD_CANDIDATES}) "
        "SELECT id FROM hits ORDER BY rank DESC, id LIMIT %(limit)s"
    )
    # planned for its words each time: a generic plan cannot see how many wines they match
    words = _WINE_WORDS.remove(language.normalize(text))
    return [row[0] for row in conn.execute(sql, {**params, "text_query": words}, prepare=False).fetchall()]


# «вино», «вина»…: in a shop's legal names («Вино сортовое…») they name every wine, so they rank none.
_WINE_WORDS = language.cues("wine_words.json", "wine")


def _fused_rows(
    conn: psycopg.Connection, by_vector: list[dict[str, Any]], by_words: list[Any], limit: int, params: dict[str, Any]
) -> list[dict[str, Any]]:
    """Reciprocal rank fusion of the two rankings: a wine's score is the sum of 1 / (RRF_K + rank) over the
    rankings it is in. The first `limit` wines are read now, with their distance."""
    scores: dict[Any, float] = {}
    for ranking in ([row["id"] for row in by_vector], by_words):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
    near = {row["id"] for row in by_vector}
    first = sorted(scores, key=lambda key: (-scores[key], key not in near, str(key)))[:limit]
    sql = (
        f"SELECT {WINE_COLUMNS}, (w.embedding <=> %(query_vector)s) AS distance FROM wines w WHERE w.id = ANY(%(ids)s)"  # nosec B608 - constant column list; values are bound
    )
    with conn.cursor(row_factory=dict_row) as cur:
        rows = {row["id"]: row for row in cur.execute(sql, {"query_vector": params["query_vector"], "ids": first})}
    return [rows[key] for key in first if key in rows]


def _result(rows: list[dict[str, Any]], wines: list[Wine], matched: int, applied: dict[str, Any]) -> SearchResult:
    """Either search's answer: the wines as the model reads them, the photo keys beside them."""
    return SearchResult(
        found=len(wines),
        matched=matched,
        wines=wines,
        filters_applied=applied,
        matched_more=matched >= MATCH_COUNT_CAP,
        photos=photos_of(rows),
    )


def _refuse_model_mismatch(conn: psycopg.Connection, model: str) -> None:
    """No row matched: if the catalogue is embedded with other models only, say so. Usually some wine has
    the query's model and the first query stops at it; only a mismatch reads every row's model (listing
    them all up front cost a scan of the table for each filter that matched nothing: 124 ms at 100k)."""
    if first_row(conn.execute("SELECT EXISTS (SELECT 1 FROM wines WHERE embedding_model = %s)", (model,)))[0]:
        return
    models = [
        r[0]
        for r in conn.execute("SELECT DISTINCT embedding_model FROM wines WHERE embedding_model IS NOT NULL").fetchall()
    ]
    if models and model not in models:
        raise ModelMismatchError(
            f"the query was embedded with '{model}' but the catalogue is embedded with "
            f"{', '.join(repr(m) for m in sorted(models))}; vectors of different models are not comparable. "
            "Re-embed the catalogue (sommelier catalog reembed) or use the same EMBEDDING_PROVIDER/EMBEDDING_MODEL."
        )


def search_wines_tool(conn: psycopg.Connection, arguments: Any) -> SearchResult:
    """`search_wines` as the model calls it: its JSON arguments validated, then the search."""
    return search_wines(conn, search_filters(arguments))


def semantic_search_tool(conn: psycopg.Connection, arguments: Any) -> SearchResult:
    return semantic_search(conn, semantic_request(arguments))
