"""The catalogue port in memory (`CatalogRepository`): toolfn/search.py and toolfn/catalog_sql.py on a
`MemoryStore`. Arguments are checked by the same domain functions the tool function checks the JSON with
(sommelier.domain.search), so a call the SQL refuses is refused here with the same port error.
"""

from __future__ import annotations

import datetime as dt
import uuid
from array import array
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any, NamedTuple

from sommelier.domain import wire
from sommelier.domain.catalog import CatalogStats, ExportedWine, FieldCoverage, PriceRange
from sommelier.domain.catalog_writes import EMBEDDED_FIELDS, EmbeddingText, ImportSummary, WineEmbedding
from sommelier.domain.errors import ArgumentError, NotFound, PortError
from sommelier.domain.search import (
    SearchFilters,
    SearchResult,
    SemanticRequest,
    ToolRequest,
    WineList,
    finite_vector,
    optional_limit,
    optional_text,
    search_filters,
    semantic_request,
    single_uuid,
    uuid_list,
)
from sommelier.domain.wine import Wine, WineListing
from sommelier.repositories.ports import InvocationCounter
from sommelier.toolfn.search import full_wine, money, photos_of, wine_for_tool

from sommelier_dev.memory import search
from sommelier_dev.memory.store import MemoryStore, WineRow

if TYPE_CHECKING:
    from sommelier.domain.records import ImportRow, WineRecord

MAX_IMPORT_ROWS = 5000  # toolfn/catalog_sql.py


class _Prepared(NamedTuple):
    """A row validated and ready to write."""

    record: WineRecord
    embedding: list[float] | None
    model: str | None


def llm_tool(memory: MemoryStore, call: ToolRequest) -> SearchResult:
    """One LLM tool call on the store (run_tools' and open_turn's searches)."""
    with memory.transaction() as store:
        if call.tool == wire.SEARCH_WINES.name:
            return search.search_wines(store, search_filters(call.arguments))
        if call.tool == wire.SEMANTIC_SEARCH.name:
            return search.semantic_search(store, semantic_request(call.arguments))
    raise NotFound(f"run_tools runs only {', '.join(wire.LLM_TOOLS)}")


class MemoryCatalog:
    """The catalogue of a `MemoryStore`; each call counts as one tool-function invocation, as in process."""

    def __init__(self, store: MemoryStore, counter: InvocationCounter):
        self.store = store
        self.counter = counter

    # ------------------------------------------------------------------ the two LLM tools

    def run_llm_tools(self, calls: Sequence[ToolRequest]) -> list[SearchResult | PortError]:
        self.counter.count += 1  # one invocation for the batch, as the Lambda adapter sends it
        results: list[SearchResult | PortError] = []
        for call in calls:
            try:
                results.append(self._llm_tool(call))
            except PortError as exc:
                results.append(exc)
        return results

    def _llm_tool(self, call: ToolRequest) -> SearchResult:
        return llm_tool(self.store, call)

    def search_wines(self, filters: SearchFilters) -> SearchResult:
        self.counter.count += 1
        checked = search_filters(wire.to_wire(filters))  # what the tool function reads from the JSON
        with self.store.transaction() as store:
            return search.search_wines(store, checked)

    def semantic_search(self, request: SemanticRequest) -> SearchResult:
        self.counter.count += 1
        checked = semantic_request(request.as_arguments())
        with self.store.transaction() as store:
            return search.semantic_search(store, checked)

    # ------------------------------------------------------------------ reads

    def get_wines(self, ids: Sequence[str]) -> WineList:
        self.counter.count += 1
        with self.store.transaction() as store:
            return wines_by_id(store, list(ids))

    def fallback_list(self, *, limit: int, exclude_ids: Sequence[str] = ()) -> list[Wine]:
        self.counter.count += 1
        arguments: dict[str, Any] = {"limit": limit, "exclude_ids": list(exclude_ids)}
        bounded = optional_limit(arguments, default=20, maximum=50)
        filters = search_filters({"exclude_ids": arguments["exclude_ids"]})
        with self.store.transaction() as store:
            rows = search.fallback_rows(store, filters, bounded)
            wines = [wine_for_tool(row.columns()) for row in rows]
            photos = photos_of([row.columns() for row in rows])
        return SearchResult(found=len(wines), matched=len(wines), wines=wines, photos=photos).wines_with_photos()

    def stats(self) -> CatalogStats:
        self.counter.count += 1
        with self.store.transaction() as store:
            return catalog_stats(list(store.wines.values()))

    def export_wines(self, *, include_unavailable: bool = False) -> list[ExportedWine]:
        self.counter.count += 1
        with self.store.transaction() as store:
            return exported(store, include_unavailable=include_unavailable)

    def list_wines(self, *, include_unavailable: bool = False, limit: int = 1000) -> list[WineListing]:
        self.counter.count += 1
        bounded = optional_limit({"limit": limit}, default=1000, maximum=MAX_IMPORT_ROWS)
        with self.store.transaction() as store:
            rows = [w for w in store.wines.values() if w.available or include_unavailable]
        rows.sort(key=lambda w: (w.producer, w.name, _nulls_last(w.vintage_year)))
        return [
            WineListing(
                id=w.id,
                sku=w.sku,
                name=w.name,
                producer=w.producer,
                vintage_year=w.vintage_year,
                wine_type=w.wine_type,
                sweetness=w.sweetness,
                country=w.country,
                price_rub=money(w.price_rub),
                available=w.available,
            )
            for w in rows[:bounded]
        ]

    # ------------------------------------------------------------------ writes

    def import_wines(
        self, rows: Sequence[ImportRow], *, replace: bool = False, replace_since: str | None = None
    ) -> ImportSummary:
        self.counter.count += 1
        if not rows:
            raise ArgumentError("wines must be a non-empty list")
        if len(rows) > MAX_IMPORT_ROWS:
            raise ArgumentError(f"at most {MAX_IMPORT_ROWS} wines per import call")
        since = _instant(replace_since) if replace and replace_since else None
        prepared = _prepared_rows([row.as_arguments() for row in rows])
        with self.store.transaction() as store:
            return _import(store, prepared, replace=replace, since=since)

    def embedding_texts(self) -> list[EmbeddingText]:
        self.counter.count += 1
        from sommelier.domain.records import WineRecord  # pydantic: only this operation pays for it

        with self.store.transaction() as store:
            wines = exported(store, include_unavailable=True)
        items = []
        for wine in wines:
            row = {k: v for k, v in wine.as_file_row().items() if k in EMBEDDED_FIELDS}
            items.append(EmbeddingText(id=wine.id, text=WineRecord.model_validate(row).embedding_text()))
        return items

    def update_embeddings(self, model: str, items: Sequence[WineEmbedding]) -> int:
        self.counter.count += 1
        arguments: dict[str, Any] = {"embedding_model": model, "items": wire.to_wire(list(items))}
        checked = optional_text(arguments, "embedding_model")
        if not checked or not items:
            raise ArgumentError("embedding_model and a non-empty items list are required")
        vectors = [
            (single_uuid(item, "id"), array("f", finite_vector(item.get("embedding")))) for item in arguments["items"]
        ]
        with self.store.transaction() as store:
            now = store.clock.now()
            for wine_id, vector in vectors:
                wine = store.wines.get(str(wine_id))
                if wine is not None:
                    _write(store, _copy_with(wine, embedding=vector, embedding_model=checked, updated_at=now))
        return len(vectors)


# ---------------------------------------------------------------------------- reads, shared with the other ports


def wines_by_id(store: MemoryStore, ids: list[str]) -> WineList:
    """get_wines: by id, in the order asked; unknown ids in `missing`."""
    checked = uuid_list({"ids": ids}, "ids", required=True)
    return WineList(
        wines=[full_wine(store.wines[i].columns()) for i in checked if i in store.wines],
        missing=[i for i in checked if i not in store.wines],
    )


def _nulls_last(year: int | None) -> tuple[bool, int]:
    return (year is None, year or 0)


def exported(store: MemoryStore, *, include_unavailable: bool) -> list[ExportedWine]:
    rows = [w for w in store.wines.values() if w.available or include_unavailable]
    rows.sort(key=lambda w: (w.producer, w.name, _nulls_last(w.vintage_year), w.id))
    return [
        ExportedWine(
            id=w.id,
            sku=w.sku,
            name=w.name,
            producer=w.producer,
            country=w.country,
            region=w.region,
            appellation=w.appellation,
            vintage_year=w.vintage_year,
            grape_varieties=_grapes_with_shares(w.grape_varieties, w.grape_shares),
            wine_type=w.wine_type,
            sweetness=w.sweetness,
            body=w.body,
            tannins=w.tannins,
            acidity=w.acidity,
            price_rub=money(w.price_rub),
            description=w.description,
            tasting_notes=w.tasting_notes,
            food_pairings=list(w.food_pairings),
            image_key=w.image_key,
            image_url=w.image_url or None,
            available=w.available if include_unavailable else None,
            inferred=list(w.inferred),
            extra=dict(w.extra),
        )
        for w in rows
    ]


def _grapes_with_shares(names: list[str], shares: list[Decimal | None]) -> list[str]:
    if not shares:
        return list(names)
    padded = [*shares, *[None] * len(names)]
    return [
        f"{name} {money(share)}%" if share is not None else name for name, share in zip(names, padded, strict=False)
    ]


# Each field `catalog stats` counts, with what says "no value" (catalog_sql._COVERAGE_EMPTY).
_COVERAGE_EMPTY: dict[str, Any] = {
    "producer": lambda w: w.producer == "",
    "country": lambda w: w.country == "",
    "region": lambda w: w.region == "",
    "appellation": lambda w: (w.appellation or "") == "",
    "grape_varieties": lambda w: not w.grape_varieties,
    "wine_type": lambda w: False,
    "sweetness": lambda w: False,
    "vintage_year": lambda w: w.vintage_year is None,
    "description": lambda w: w.description == "",
    "food_pairings": lambda w: not w.food_pairings,
    "photo": lambda w: w.image_key is None,
}


def catalog_stats(wines: list[WineRow]) -> CatalogStats:
    available = [w for w in wines if w.available]
    models: dict[str, int] = {}
    for wine in wines:
        key = wine.embedding_model or "none"
        models[key] = models.get(key, 0) + 1
    by_type = _counted(w.wine_type for w in available)
    by_country = dict(sorted(_counted(w.country for w in available).items(), key=lambda item: (-item[1], item[0])))
    coverage = {}
    for name, empty in _COVERAGE_EMPTY.items():
        inferred = sum(1 for w in available if name in w.inferred)
        unknown = sum(1 for w in available if empty(w) and name not in w.inferred)
        coverage[name] = FieldCoverage(given=len(available) - inferred - unknown, inferred=inferred, unknown=unknown)
    prices = sorted(float(w.price_rub) for w in available)
    return CatalogStats(
        coverage=coverage,
        wines=len(wines),
        available=len(available),
        unavailable=len(wines) - len(available),
        with_photo=sum(1 for w in available if w.image_key is not None),
        unknown_country=sum(1 for w in available if w.country_code is None),
        by_type=dict(sorted(by_type.items(), key=lambda item: -item[1])),
        by_country=by_country,
        price_rub=PriceRange(money(prices[0]), money(_median(prices)), money(prices[-1])) if prices else None,
        embedding_models=models,
    )


def _counted(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def _median(values: list[float]) -> float:
    """percentile_cont(0.5): the middle value, or between the two middle ones."""
    position = 0.5 * (len(values) - 1)
    low = int(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


# ---------------------------------------------------------------------------- import


def _instant(value: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise ArgumentError("replace_since must be an ISO timestamp (import_wines' started_at)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)  # the session's time zone: UTC


def _prepared_rows(rows: list[dict[str, Any]]) -> list[_Prepared]:
    """Every row checked before anything is written, so one error names all the bad rows (the first 20)."""
    prepared: list[_Prepared] = []
    errors: list[str] = []
    for index, raw in enumerate(rows):
        try:
            prepared.append(_prepared_row(raw))
        except ArgumentError as exc:
            errors.append(f"row {index + 1}: {exc}")
    if errors:
        raise ArgumentError("nothing imported; " + "; ".join(errors[:20]))
    return prepared


def _prepared_row(raw: dict[str, Any]) -> _Prepared:
    from pydantic import ValidationError
    from sommelier.domain.records import WineRecord

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
    return _Prepared(record, embedding, model if embedding is not None else None)


_CENT = Decimal("0.01")


def _numeric(value: Decimal | float, places: Decimal = _CENT) -> Decimal:
    """A value as numeric(p, 2) keeps it."""
    return Decimal(str(value)).quantize(places, rounding=ROUND_HALF_UP)


def _import(
    store: MemoryStore, prepared: list[_Prepared], *, replace: bool, since: dt.datetime | None
) -> ImportSummary:
    """All or nothing: the rows are written to a copy of the wines, which replaces them at the end."""
    started_at = store.clock.now()
    wines = dict(store.wines)
    inserted = updated = 0
    ids: list[str] = []
    for index, (record, embedding, model) in enumerate(prepared):
        existing = _existing(wines, record)
        row = _row(record, embedding, model, existing, started_at)
        clash = _clash(wines, row)
        if clash:
            raise ArgumentError(
                f"nothing imported; row {index + 1} ({record.name}, {record.producer}): another wine"
                f" already has the same {clash}"
            )
        wines[row.id] = row
        ids.append(row.id)
        if existing is None:
            inserted += 1
        else:
            updated += 1
    retired = 0
    if replace:
        cutoff = since or started_at
        written = set(ids)
        for key, wine in list(wines.items()):
            if wine.available and wine.updated_at < cutoff and key not in written:
                wines[key] = _copy_with(wine, available=False, updated_at=started_at)
                retired += 1
    store.wines = wines
    return ImportSummary(
        inserted=inserted,
        updated=updated,
        total=inserted + updated,
        retired=retired,
        ids=ids,
        started_at=started_at.isoformat(),
    )


def _existing(wines: dict[str, WineRow], record: WineRecord) -> WineRow | None:
    """The wine a row updates: by its id, else by the shop's sku, else by name, producer and vintage among
    the wines without a sku."""
    if record.id and record.id in wines:
        return wines[record.id]
    if record.sku:
        for wine in wines.values():
            if wine.sku == record.sku:
                return wine
    for wine in wines.values():
        if wine.sku is None and (wine.name, wine.producer, wine.vintage_year) == record.natural_key():
            return wine
    return None


def _clash(wines: dict[str, WineRow], row: WineRow) -> str | None:
    """The unique index another wine already holds the row's value of (uq_wines_sku, or the name, producer
    and vintage of the wines without a sku)."""
    for other in wines.values():
        if other.id == row.id:
            continue
        if row.sku is not None and other.sku == row.sku:
            return "sku"
        if (
            row.sku is None
            and other.sku is None
            and (other.name, other.producer, other.vintage_year) == (row.name, row.producer, row.vintage_year)
        ):
            return "name, producer and vintage"
    return None


def _row(
    record: WineRecord,
    embedding: list[float] | None,
    model: str | None,
    existing: WineRow | None,
    now: dt.datetime,
) -> WineRow:
    """The row an INSERT or an UPDATE of catalog_sql writes."""
    from sommelier.language.matching import normalised_columns

    columns = normalised_columns(record.country, record.grape_varieties, record.food_pairings)
    vector = array("f", embedding) if embedding is not None else None
    new_photo = record.image_key is not None and (existing is None or record.image_key != existing.image_key)
    return WineRow(
        id=existing.id if existing else (record.id or str(uuid.uuid4())),
        sku=record.sku,
        name=record.name,
        producer=record.producer,
        country=record.country,
        region=record.region,
        appellation=record.appellation,
        vintage_year=record.vintage_year,
        grape_varieties=list(columns["grape_varieties"]),
        grape_shares=[None if s is None else _numeric(s) for s in columns["grape_shares"]],
        grape_keys=list(columns["grape_keys"]),
        wine_type=record.wine_type,
        sweetness=record.sweetness,
        body=record.body,
        tannins=record.tannins,
        acidity=record.acidity,
        price_rub=_numeric(record.price_rub),
        description=record.description,
        tasting_notes=record.tasting_notes,
        food_pairings=list(record.food_pairings),
        food_categories=list(columns["food_categories"]),
        country_code=columns["country_code"],
        lexicon_version=columns["lexicon_version"],
        extra=dict(record.extra),
        image_url=record.image_url,
        available=record.available,
        inferred=list(record.inferred),
        image_key=record.image_key if record.image_key is not None else (existing.image_key if existing else None),
        telegram_file_id=None if new_photo or existing is None else existing.telegram_file_id,
        embedding=vector if vector is not None else (existing.embedding if existing else None),
        embedding_model=model if vector is not None else (existing.embedding_model if existing else None),
        created_at=existing.created_at if existing else now,
        updated_at=now,
    )


def _copy_with(wine: WineRow, **changes: Any) -> WineRow:
    """The row with some columns written (a new row: the words computed from it are computed again)."""
    from dataclasses import replace

    return replace(wine.copy(), **changes)


def _write(store: MemoryStore, row: WineRow) -> None:
    store.wines[row.id] = row
