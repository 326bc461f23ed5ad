"""Catalogue data in PostgreSQL besides the two LLM tools: wines by id, the fallback list, stats,
import/export and embeddings. Same shape as chat_sql: (connection, JSON arguments) -> a domain object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
from pgvector import Vector
from psycopg.rows import dict_row

from sommelier.db.pool import first_row
from sommelier.domain.catalog import CatalogStats, ExportedWine, ExportedWines, FieldCoverage, PriceRange
from sommelier.domain.catalog_writes import EMBEDDED_FIELDS, EmbeddingText, EmbeddingTexts, ImportSummary
from sommelier.domain.search import (
    ArgumentError,
    SearchResult,
    WineList,
    finite_vector,
    optional_limit,
    optional_text,
    require_object,
    search_filters,
    single_uuid,
    uuid_list,
)
from sommelier.domain.shop import Listing
from sommelier.domain.wine import WineListing
from sommelier.domain.wire import Updated
from sommelier.toolfn.search import TYPICAL_PRICE_ORDER, WINE_COLUMNS, full_wine, money, photos_of, wine_for_tool

if TYPE_CHECKING:
    from sommelier.domain.records import WineRecord

    # (record, embedding, embedding model): a row validated and ready to write.
    _PreparedRow = tuple[WineRecord, list[float] | None, str | None]

MAX_IMPORT_ROWS = 5000


def get_wines(conn: psycopg.Connection, arguments: Any) -> WineList:
    """Wines by id, in the order asked; unknown ids are listed in `missing`."""
    ids = uuid_list(require_object(arguments), "ids", required=True)
    if not ids:
        return WineList(wines=[], missing=[])
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"SELECT {WINE_COLUMNS} FROM wines w WHERE w.id = ANY(%s::uuid[])", (ids,)).fetchall()  # nosec B608 - constant column list; values are bound parameters
    by_id = {str(row["id"]): row for row in rows}
    return WineList(
        wines=[full_wine(by_id[i]) for i in ids if i in by_id],
        missing=[i for i in ids if i not in by_id],
    )


def get_list(conn: psycopg.Connection, arguments: Any) -> SearchResult:
    """A varied slice of the catalogue for the no-tools fallback prompt: types interleaved, typical prices first."""
    args = require_object(arguments)
    limit = optional_limit(args, default=20, maximum=50)
    filters = search_filters({k: v for k, v in args.items() if k in ("wine_type", "price_max", "exclude_ids")})
    conditions = ["w.available"]
    params: dict[str, Any] = {"limit": limit}
    if filters.wine_type:
        conditions.append("w.wine_type = %(wine_type)s")
        params["wine_type"] = filters.wine_type
    if filters.price_max is not None:
        conditions.append("w.price_rub <= %(price_max)s::numeric")
        params["price_max"] = filters.price_max
    if filters.exclude_ids:
        conditions.append("NOT (w.id = ANY(%(exclude_ids)s::uuid[]))")
        params["exclude_ids"] = filters.exclude_ids
    sql = (
        f"SELECT * FROM (SELECT {WINE_COLUMNS}, row_number() OVER ("  # nosec B608 - constants and fixed conditions; values are bound parameters
        f" PARTITION BY w.wine_type ORDER BY {TYPICAL_PRICE_ORDER}, w.id) AS rank_in_type"
        f" FROM wines w WHERE {' AND '.join(conditions)}) ranked"
        " ORDER BY rank_in_type, wine_type, id LIMIT %(limit)s"
    )
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(sql, params).fetchall()
    wines = [wine_for_tool(row) for row in rows]
    return SearchResult(found=len(wines), matched=len(wines), wines=wines, photos=photos_of(rows))


def catalog_stats(conn: psycopg.Connection, arguments: Any) -> CatalogStats:
    require_object(arguments)
    total, available, with_photo, unknown_country = first_row(
        conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE available),"
            " count(*) FILTER (WHERE available AND image_key IS NOT NULL),"
            " count(*) FILTER (WHERE available AND country_code IS NULL) FROM wines"
        )
    )
    models = {
        (model or "none"): count
        for model, count in conn.execute("SELECT embedding_model, count(*) FROM wines GROUP BY 1").fetchall()
    }
    by_type: dict[str, int] = dict(
        conn.execute("SELECT wine_type, count(*) FROM wines WHERE available GROUP BY 1 ORDER BY 2 DESC").fetchall()
    )
    by_country: dict[str, int] = dict(
        conn.execute("SELECT country, count(*) FROM wines WHERE available GROUP BY 1 ORDER BY 2 DESC, 1").fetchall()
    )
    prices = first_row(
        conn.execute(
            "SELECT min(price_rub), percentile_cont(0.5) WITHIN GROUP (ORDER BY price_rub), max(price_rub)"
            " FROM wines WHERE available"
        )
    )
    return CatalogStats(
        coverage=_coverage(conn),
        wines=total,
        available=available,
        unavailable=total - available,
        with_photo=with_photo,
        unknown_country=unknown_country,
        by_type=by_type,
        by_country=by_country,
        price_rub=PriceRange(money(prices[0]), money(prices[1]), money(prices[2])) if prices[0] is not None else None,
        embedding_models=models,
    )


# Each field `catalog stats` counts, with the SQL that says "no value".
_COVERAGE_EMPTY = {
    "producer": "producer = ''",
    "country": "country = ''",
    "region": "region = ''",
    "appellation": "coalesce(appellation, '') = ''",
    "grape_varieties": "cardinality(grape_varieties) = 0",
    "wine_type": "false",
    "sweetness": "false",
    "vintage_year": "vintage_year IS NULL",
    "description": "description = ''",
    "food_pairings": "cardinality(food_pairings) = 0",
    "photo": "image_key IS NULL",
}


def _coverage(conn: psycopg.Connection) -> dict[str, FieldCoverage]:
    """Per field, of the available wines: given by the shop, inferred at import, unknown."""
    parts = []
    for name, empty in _COVERAGE_EMPTY.items():
        inferred = f"'{name}' = ANY(inferred)"
        parts += [f"count(*) FILTER (WHERE {inferred})", f"count(*) FILTER (WHERE ({empty}) AND NOT {inferred})"]
    counts = first_row(conn.execute(f"SELECT count(*), {', '.join(parts)} FROM wines WHERE available"))  # nosec B608 - constant SQL
    total, values = counts[0], counts[1:]
    coverage = {}
    for index, name in enumerate(_COVERAGE_EMPTY):
        inferred, unknown = values[2 * index], values[2 * index + 1]
        coverage[name] = FieldCoverage(given=total - inferred - unknown, inferred=inferred, unknown=unknown)
    return coverage


def list_wines(conn: psycopg.Connection, arguments: Any) -> Listing:
    """A short line per wine for `sommelier catalog list`: available ones, or all with `include_unavailable`."""
    args = require_object(arguments)
    include_unavailable = args.get("include_unavailable", False) is True
    limit = optional_limit(args, default=1000, maximum=MAX_IMPORT_ROWS)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT id, sku, name, producer, vintage_year, wine_type, sweetness, country, price_rub, available"
            " FROM wines WHERE available OR %s ORDER BY producer, name, vintage_year LIMIT %s",
            (include_unavailable, limit),
        ).fetchall()
    return Listing([WineListing(**{**row, "id": str(row["id"]), "price_rub": money(row["price_rub"])}) for row in rows])


def _grapes_with_shares(names: list[str], shares: list[Any]) -> list[str]:
    if not shares:
        return list(names)
    return [
        f"{name} {money(share)}%" if share is not None else name
        for name, share in zip(names, [*shares, *[None] * len(names)], strict=False)
    ]


def export_wines(conn: psycopg.Connection, arguments: Any) -> ExportedWines:
    """Every available wine as an import row (the `sommelier catalog export` format), with its id and sku
    and the file's extra fields back at the top level, so export → edit → import round-trips."""
    args = require_object(arguments)
    include_unavailable = args.get("include_unavailable", False) is True
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            f"SELECT {WINE_COLUMNS}, w.country, w.sku, w.extra, w.grape_shares, w.image_url, w.available,"  # nosec B608 - a constant query
            " w.inferred"
            " FROM wines w WHERE w.available OR %s ORDER BY w.producer, w.name, w.vintage_year, w.id",
            (include_unavailable,),
        ).fetchall()
    wines = [
        ExportedWine(
            id=str(row["id"]),
            sku=row["sku"],
            name=row["name"],
            producer=row["producer"],
            country=row["country"],
            region=row["region"],
            appellation=row["appellation"],
            vintage_year=row["vintage_year"],
            grape_varieties=_grapes_with_shares(list(row["grape_varieties"]), list(row["grape_shares"] or [])),
            wine_type=row["wine_type"],
            sweetness=row["sweetness"],
            body=row["body"],
            tannins=row["tannins"],
            acidity=row["acidity"],
            price_rub=money(row["price_rub"]),
            description=row["description"],
            tasting_notes=row["tasting_notes"],
            food_pairings=list(row["food_pairings"]),
            image_key=row["image_key"],
            image_url=row["image_url"] or None,
            available=row["available"] if include_unavailable else None,
            inferred=list(row["inferred"] or []),
            extra=dict(row["extra"] or {}),
        )
        for row in rows
    ]
    return ExportedWines(wines)


_WINE_WRITE_COLUMNS = (
    "sku",
    "name",
    "producer",
    "country",
    "region",
    "appellation",
    "vintage_year",
    "grape_varieties",
    "grape_shares",
    "grape_keys",
    "wine_type",
    "sweetness",
    "body",
    "tannins",
    "acidity",
    "price_rub",
    "description",
    "tasting_notes",
    "food_pairings",
    "food_categories",
    "country_code",
    "lexicon_version",
    "extra",
    "image_url",
    "available",
    "inferred",
)


_WRITE_COLUMNS_SQL = ", ".join(_WINE_WRITE_COLUMNS)
_WRITE_PLACEHOLDERS_SQL = ", ".join(f"%({c})s" for c in _WINE_WRITE_COLUMNS)
_WRITE_ASSIGNMENTS_SQL = ", ".join(f"{c} = %({c})s" for c in _WINE_WRITE_COLUMNS)
_INSERT_WINE = (
    f"INSERT INTO wines (id, {_WRITE_COLUMNS_SQL}, image_key, embedding, embedding_model)"  # nosec B608 - constant column names; values are bound
    f" VALUES (coalesce(%(id)s::uuid, gen_random_uuid()), {_WRITE_PLACEHOLDERS_SQL}, %(image_key)s,"
    " %(embedding)s, %(embedding_model)s) RETURNING id"
)
_UPDATE_WINE = (
    f"UPDATE wines SET {_WRITE_ASSIGNMENTS_SQL},"  # nosec B608 - constant column names; values are bound
    " image_key = COALESCE(%(image_key)s, image_key),"
    # a new photo invalidates the cached Telegram file_id
    " telegram_file_id = CASE WHEN %(image_key)s::text IS DISTINCT FROM image_key"
    "   AND %(image_key)s::text IS NOT NULL THEN NULL ELSE telegram_file_id END,"
    " embedding = COALESCE(%(embedding)s, embedding),"
    " embedding_model = CASE WHEN %(embedding)s::vector IS NULL THEN embedding_model"
    "   ELSE %(embedding_model)s END,"
    " updated_at = now() WHERE id = %(id)s RETURNING id"
)


def _existing_id(cur: psycopg.Cursor, record: Any) -> str | None:
    """The wine a row updates: by its id (an export), else by the shop's sku, else by name, producer and vintage
    among the wines without a sku (one name under two skus is two wines: two volumes or vintages)."""
    if record.id:
        row = cur.execute("SELECT id FROM wines WHERE id = %s", (record.id,)).fetchone()
        if row:
            return str(row[0])
    if record.sku:
        row = cur.execute("SELECT id FROM wines WHERE sku = %s", (record.sku,)).fetchone()
        if row:
            return str(row[0])
    row = cur.execute(
        "SELECT id FROM wines WHERE name = %s AND producer = %s AND vintage_year IS NOT DISTINCT FROM %s"
        " AND sku IS NULL",
        (record.name, record.producer, record.vintage_year),
    ).fetchone()
    return str(row[0]) if row else None


def import_wines(conn: psycopg.Connection, arguments: Any) -> ImportSummary:
    """Upsert validated rows with their embeddings, all or nothing. A row updates the wine with its id,
    its sku, or its name, producer and vintage; an imported wine is available unless its row says not (no stock). With `replace`, every
    other wine not written since `replace_since` (the first chunk's `started_at`) becomes unavailable: it is
    never recommended again, and its history and feedback stay."""
    rows, replace, replace_since = _import_arguments(require_object(arguments))
    prepared = _prepared_rows(rows)
    inserted = updated = 0
    ids: list[str] = []
    with conn.transaction(), conn.cursor() as cur:
        started_at = first_row(cur.execute("SELECT now()"))[0]
        for index, (record, embedding, model) in enumerate(prepared):
            values = _write_values(record, embedding, model)
            wine_id = _existing_id(cur, record)
            try:
                with conn.transaction():  # a savepoint: a clash is reported by row, then everything rolls back
                    if wine_id is None:
                        row = first_row(cur.execute(_INSERT_WINE, {**values, "id": record.id}))
                        inserted += 1
                    else:
                        row = first_row(cur.execute(_UPDATE_WINE, {**values, "id": wine_id}))
                        updated += 1
            except psycopg.errors.UniqueViolation as exc:
                what = "sku" if "sku" in (exc.diag.constraint_name or "") else "name, producer and vintage"
                raise ArgumentError(
                    f"nothing imported; row {index + 1} ({record.name}, {record.producer}): another wine"
                    f" already has the same {what}"
                ) from None
            ids.append(str(row[0]))
        retired = _retire_unwritten(cur, replace_since or started_at, ids) if replace else 0
    return ImportSummary(
        inserted=inserted,
        updated=updated,
        total=inserted + updated,
        retired=retired,
        ids=ids,
        started_at=started_at.isoformat(),
    )


def _import_arguments(args: dict[str, Any]) -> tuple[list[Any], bool, Any]:
    """(rows, replace, replace_since) checked; replace_since, when given, is when the import's first chunk
    began (the wines earlier chunks wrote are kept)."""
    rows = args.get("wines")
    if not isinstance(rows, list) or not rows:
        raise ArgumentError("wines must be a non-empty list")
    if len(rows) > MAX_IMPORT_ROWS:
        raise ArgumentError(f"at most {MAX_IMPORT_ROWS} wines per import call")
    replace = args.get("replace", False)
    if not isinstance(replace, bool):
        raise ArgumentError("replace must be true or false")
    replace_since = args.get("replace_since")
    if replace_since is not None:
        import datetime as dt

        try:
            replace_since = dt.datetime.fromisoformat(str(replace_since))
        except ValueError:
            raise ArgumentError("replace_since must be an ISO timestamp (import_wines' started_at)") from None
    return rows, replace, replace_since


def _prepared_rows(rows: list[Any]) -> list[_PreparedRow]:
    """Every row checked before anything is written, so one error names all the bad rows (the first 20)."""
    prepared = []
    errors = []
    for index, raw in enumerate(rows):
        try:
            prepared.append(_prepared_row(raw))
        except ArgumentError as exc:
            errors.append(f"row {index + 1}: {exc}")
    if errors:
        raise ArgumentError("nothing imported; " + "; ".join(errors[:20]))
    return prepared


def _prepared_row(raw: Any) -> _PreparedRow:
    """One row validated as a WineRecord, with its embedding and model; an ArgumentError says what is wrong."""
    # pydantic and the catalogue model cost ~80 ms of import: only an import pays for them, not every
    # cold start of the tool function.
    from pydantic import ValidationError

    from sommelier.domain.records import WineRecord

    if not isinstance(raw, dict):
        raise ArgumentError("must be an object")
    data = dict(raw)
    embedding = data.pop("embedding", None)
    model = data.pop("embedding_model", None)
    try:
        record = WineRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ArgumentError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    if embedding is not None:
        embedding = finite_vector(embedding)
        if not isinstance(model, str) or not model:
            raise ArgumentError("embedding_model is required with an embedding")
    return record, embedding, model


def _write_values(record: WineRecord, embedding: list[float] | None, model: str | None) -> dict[str, Any]:
    """The row's query parameters except its id, which the INSERT and the UPDATE each bind their own way."""
    from psycopg.types.json import Jsonb

    from sommelier.language.matching import normalised_columns

    return {
        **record.model_dump(exclude={"image", "id", "extra", "image_key"}),
        **normalised_columns(record.country, record.grape_varieties, record.food_pairings),
        "extra": Jsonb(record.extra),
        "image_key": record.image_key,
        "embedding": Vector(embedding) if embedding is not None else None,
        "embedding_model": model if embedding is not None else None,
    }


def _retire_unwritten(cur: psycopg.Cursor, since: Any, ids: list[str]) -> int:
    """Make unavailable every wine this import did not write: each one it wrote has updated_at ≥ ``since``,
    the first chunk's start."""
    return cur.execute(
        "UPDATE wines SET available = false, updated_at = now()"
        " WHERE available AND updated_at < %s AND NOT (id = ANY(%s::uuid[]))",
        (since, ids),
    ).rowcount


def update_embeddings(conn: psycopg.Connection, arguments: Any) -> Updated:
    """Store new vectors for existing wines (re-embedding after a change of model)."""
    args = require_object(arguments)
    items = args.get("items")
    model = optional_text(args, "embedding_model")
    if not model or not isinstance(items, list) or not items:
        raise ArgumentError("embedding_model and a non-empty items list are required")
    rows = []
    for item in items:
        if not isinstance(item, dict):
            raise ArgumentError("each item must be {id, embedding}")
        wine_id = single_uuid(item, "id")
        embedding = item.get("embedding")
        rows.append((Vector(finite_vector(embedding)), model, wine_id))
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany("UPDATE wines SET embedding = %s, embedding_model = %s, updated_at = now() WHERE id = %s", rows)
    return Updated(len(rows))


def embedding_texts(conn: psycopg.Connection, arguments: Any) -> EmbeddingTexts:
    """Each wine's id and the text its embedding is made from (as at import), to recompute embeddings."""
    from sommelier.domain.records import WineRecord  # pydantic: only this operation pays for it

    items = []
    for wine in export_wines(conn, {"include_unavailable": True}).wines:
        row = {k: v for k, v in wine.as_file_row().items() if k in EMBEDDED_FIELDS}
        items.append(EmbeddingText(id=wine.id, text=WineRecord.model_validate(row).embedding_text()))
    return EmbeddingTexts(items)
