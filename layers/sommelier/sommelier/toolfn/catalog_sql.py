"""Catalogue data in PostgreSQL besides the two LLM tools: wines by id, the fallback list, stats,
import/export and embeddings. Same shape as chat_sql: (connection, JSON arguments) -> JSON-ready dict.
"""

from __future__ import annotations

from typing import Any

import psycopg
from pgvector import Vector
from psycopg.rows import dict_row

from sommelier.domain.search import (
    ArgumentError,
    finite_vector,
    optional_limit,
    optional_text,
    require_object,
    search_filters,
    single_uuid,
    uuid_list,
)
from sommelier.toolfn.search import TYPICAL_PRICE_ORDER, WINE_COLUMNS, money, photos_of, wine_for_tool

MAX_IMPORT_ROWS = 5000


def _full_wine(row: dict[str, Any]) -> dict[str, Any]:
    wine = wine_for_tool(row)
    wine.update(
        country=row["country"],
        region_name=row["region"],
        appellation=row["appellation"],
        image_key=row["image_key"],
        telegram_file_id=row["telegram_file_id"],
        available=row["available"],
    )
    return wine


def get_wines(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
    """Wines by id, in the order asked; unknown ids are listed in `missing`."""
    ids = uuid_list(require_object(arguments), "ids", required=True)
    if not ids:
        return {"wines": [], "missing": []}
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(f"SELECT {WINE_COLUMNS} FROM wines w WHERE w.id = ANY(%s::uuid[])", (ids,)).fetchall()  # nosec B608 - constant column list; values are bound parameters
    by_id = {str(row["id"]): row for row in rows}
    return {
        "wines": [_full_wine(by_id[i]) for i in ids if i in by_id],
        "missing": [i for i in ids if i not in by_id],
    }


def get_list(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
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
    result: dict[str, Any] = {"found": len(wines), "wines": wines}
    photos = photos_of(rows)
    if photos:
        result["photos"] = photos
    return result


def catalog_stats(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
    require_object(arguments)
    total, available, with_photo, unknown_country = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE available),"
        " count(*) FILTER (WHERE available AND image_key IS NOT NULL),"
        " count(*) FILTER (WHERE available AND country_code IS NULL) FROM wines"
    ).fetchone()
    models = {
        (model or "none"): count
        for model, count in conn.execute("SELECT embedding_model, count(*) FROM wines GROUP BY 1").fetchall()
    }
    by_type = dict(
        conn.execute("SELECT wine_type, count(*) FROM wines WHERE available GROUP BY 1 ORDER BY 2 DESC").fetchall()
    )
    by_country = dict(
        conn.execute("SELECT country, count(*) FROM wines WHERE available GROUP BY 1 ORDER BY 2 DESC, 1").fetchall()
    )
    prices = conn.execute(
        "SELECT min(price_rub), percentile_cont(0.5) WITHIN GROUP (ORDER BY price_rub), max(price_rub)"
        " FROM wines WHERE available"
    ).fetchone()
    return {
        "wines": total,
        "available": available,
        "unavailable": total - available,
        "with_photo": with_photo,
        "unknown_country": unknown_country,
        "by_type": by_type,
        "by_country": by_country,
        "price_rub": {"min": money(prices[0]), "median": money(prices[1]), "max": money(prices[2])}
        if prices[0] is not None
        else None,
        "embedding_models": models,
    }


def list_wines(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
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
    return {
        "wines": [{**row, "id": str(row["id"]), "price_rub": money(row["price_rub"])} for row in rows],
    }


def _grapes_with_shares(names: list[str], shares: list[Any]) -> list[str]:
    if not shares:
        return list(names)
    return [
        f"{name} {money(share)}%" if share is not None else name
        for name, share in zip(names, [*shares, *[None] * len(names)], strict=False)
    ]


def export_wines(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
    """Every available wine as an import row (the `sommelier catalog export` format), with its id and sku
    and the file's extra fields back at the top level, so export → edit → import round-trips."""
    args = require_object(arguments)
    include_unavailable = args.get("include_unavailable", False) is True
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            f"SELECT {WINE_COLUMNS}, w.country, w.sku, w.extra, w.grape_shares, w.image_url, w.available"  # nosec B608 - a constant query
            " FROM wines w WHERE w.available OR %s ORDER BY w.producer, w.name, w.vintage_year, w.id",
            (include_unavailable,),
        ).fetchall()
    wines = []
    for row in rows:
        wine = {
            "id": str(row["id"]),
            "sku": row["sku"],
            "name": row["name"],
            "producer": row["producer"],
            "country": row["country"],
            "region": row["region"],
            "appellation": row["appellation"],
            "vintage_year": row["vintage_year"],
            "grape_varieties": _grapes_with_shares(list(row["grape_varieties"]), list(row["grape_shares"] or [])),
            "wine_type": row["wine_type"],
            "sweetness": row["sweetness"],
            "body": row["body"],
            "tannins": row["tannins"],
            "acidity": row["acidity"],
            "price_rub": money(row["price_rub"]),
            "description": row["description"],
            "tasting_notes": row["tasting_notes"],
            "food_pairings": list(row["food_pairings"]),
            "image_key": row["image_key"],
        }
        if row["image_url"]:
            wine["image_url"] = row["image_url"]
        for key, value in (row["extra"] or {}).items():
            wine.setdefault(key, value)
        if include_unavailable:
            wine["available"] = row["available"]
        wines.append(wine)
    return {"wines": wines}


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
)


def _existing_id(cur: psycopg.Cursor, record: Any) -> str | None:
    """The wine a row updates: by its id (an export), else by the shop's sku, else by name, producer and vintage."""
    if record.id:
        row = cur.execute("SELECT id FROM wines WHERE id = %s", (record.id,)).fetchone()
        if row:
            return str(row[0])
    if record.sku:
        row = cur.execute("SELECT id FROM wines WHERE sku = %s", (record.sku,)).fetchone()
        if row:
            return str(row[0])
    row = cur.execute(
        "SELECT id FROM wines WHERE name = %s AND producer = %s AND vintage_year IS NOT DISTINCT FROM %s",
        (record.name, record.producer, record.vintage_year),
    ).fetchone()
    return str(row[0]) if row else None


def import_wines(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
    """Upsert validated rows with their embeddings, all or nothing. A row updates the wine with its id,
    its sku, or its name, producer and vintage; every imported wine is available. With `replace`, every
    other wine not written since `replace_since` (the first chunk's `started_at`) becomes unavailable: it is
    never recommended again, and its history and feedback stay."""
    # pydantic and the catalogue model cost ~80 ms of import: only an import pays for them, not every
    # cold start of the tool function.
    from psycopg.types.json import Jsonb
    from pydantic import ValidationError

    from sommelier.domain.records import WineRecord
    from sommelier.language.matching import normalised_columns

    args = require_object(arguments)
    rows = args.get("wines")
    if not isinstance(rows, list) or not rows:
        raise ArgumentError("wines must be a non-empty list")
    if len(rows) > MAX_IMPORT_ROWS:
        raise ArgumentError(f"at most {MAX_IMPORT_ROWS} wines per import call")
    replace = args.get("replace", False)
    if not isinstance(replace, bool):
        raise ArgumentError("replace must be true or false")
    replace_since = args.get("replace_since")  # when the import's first chunk began (earlier chunks kept)
    if replace_since is not None:
        import datetime as dt

        try:
            replace_since = dt.datetime.fromisoformat(str(replace_since))
        except ValueError:
            raise ArgumentError("replace_since must be an ISO timestamp (import_wines' started_at)") from None
    prepared = []
    errors = []
    for index, raw in enumerate(rows):
        if not isinstance(raw, dict):
            errors.append(f"row {index + 1}: must be an object")
            continue
        data = dict(raw)
        embedding = data.pop("embedding", None)
        model = data.pop("embedding_model", None)
        try:
            record = WineRecord.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            errors.append(f"row {index + 1}: {'.'.join(map(str, first['loc']))}: {first['msg']}")
            continue
        if embedding is not None:
            try:
                embedding = finite_vector(embedding)
            except ArgumentError as exc:
                errors.append(f"row {index + 1}: {exc}")
                continue
            if not isinstance(model, str) or not model:
                errors.append(f"row {index + 1}: embedding_model is required with an embedding")
                continue
        prepared.append((record, embedding, model))
    if errors:
        raise ArgumentError("nothing imported; " + "; ".join(errors[:20]))
    inserted = updated = 0
    ids: list[str] = []
    columns = ", ".join(_WINE_WRITE_COLUMNS)
    placeholders = ", ".join(f"%({c})s" for c in _WINE_WRITE_COLUMNS)
    assignments = ", ".join(f"{c} = %({c})s" for c in _WINE_WRITE_COLUMNS)
    with conn.transaction(), conn.cursor() as cur:
        started_at = cur.execute("SELECT now()").fetchone()[0]
        for index, (record, embedding, model) in enumerate(prepared):
            values = {
                **record.model_dump(exclude={"image", "id", "extra", "image_key"}),
                **normalised_columns(record.country, record.grape_varieties, record.food_pairings),
                "extra": Jsonb(record.extra),
                "image_key": record.image_key,
                "embedding": Vector(embedding) if embedding is not None else None,
                "embedding_model": model if embedding is not None else None,
            }
            wine_id = _existing_id(cur, record)
            try:
                with conn.transaction():  # a savepoint: a clash is reported by row, then everything rolls back
                    if wine_id is None:
                        values["id"] = record.id
                        row = cur.execute(
                            f"INSERT INTO wines (id, {columns}, image_key, embedding, embedding_model, available)"  # nosec B608 - constant column names; values are bound
                            f" VALUES (coalesce(%(id)s::uuid, gen_random_uuid()), {placeholders}, %(image_key)s,"
                            " %(embedding)s, %(embedding_model)s, true) RETURNING id",
                            values,
                        ).fetchone()
                        inserted += 1
                    else:
                        values["id"] = wine_id
                        row = cur.execute(
                            f"UPDATE wines SET {assignments}, available = true,"  # nosec B608 - constant column names; values are bound
                            " image_key = COALESCE(%(image_key)s, image_key),"
                            # a new photo invalidates the cached Telegram file_id
                            " telegram_file_id = CASE WHEN %(image_key)s::text IS DISTINCT FROM image_key"
                            "   AND %(image_key)s::text IS NOT NULL THEN NULL ELSE telegram_file_id END,"
                            " embedding = COALESCE(%(embedding)s, embedding),"
                            " embedding_model = CASE WHEN %(embedding)s::vector IS NULL THEN embedding_model"
                            "   ELSE %(embedding_model)s END,"
                            " updated_at = now() WHERE id = %(id)s RETURNING id",
                            values,
                        ).fetchone()
                        updated += 1
            except psycopg.errors.UniqueViolation as exc:
                what = "sku" if "sku" in (exc.diag.constraint_name or "") else "name, producer and vintage"
                raise ArgumentError(
                    f"nothing imported; row {index + 1} ({record.name}, {record.producer}): another wine"
                    f" already has the same {what}"
                ) from None
            ids.append(str(row[0]))
        retired = 0
        if replace:
            # Every wine this import wrote has updated_at ≥ the first chunk's start; the rest retire.
            retired = cur.execute(
                "UPDATE wines SET available = false, updated_at = now()"
                " WHERE available AND updated_at < %s AND NOT (id = ANY(%s::uuid[]))",
                (replace_since or started_at, ids),
            ).rowcount
    return {
        "inserted": inserted,
        "updated": updated,
        "total": inserted + updated,
        "retired": retired,
        "ids": ids,
        "started_at": started_at.isoformat(),
    }


def update_embeddings(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
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
    return {"updated": len(rows)}


def embedding_texts(conn: psycopg.Connection, arguments: Any) -> dict[str, Any]:
    """Ids and catalogue rows needed to recompute embeddings."""
    export = export_wines(conn, {"include_unavailable": True})
    items = []
    for wine in export["wines"]:
        wine_id = wine.pop("id")
        for key in ("sku", "available"):
            wine.pop(key, None)
        items.append({"id": wine_id, "wine": {k: v for k, v in wine.items() if k in _EMBEDDING_FIELDS}})
    return {"items": items}


_EMBEDDING_FIELDS = frozenset(
    {
        "name",
        "producer",
        "country",
        "region",
        "appellation",
        "vintage_year",
        "grape_varieties",
        "wine_type",
        "sweetness",
        "body",
        "tannins",
        "acidity",
        "price_rub",
        "description",
        "tasting_notes",
        "food_pairings",
        "image_key",
    }
)
