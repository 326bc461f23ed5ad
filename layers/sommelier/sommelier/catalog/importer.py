"""`sommelier catalog import`: read a shop's file (JSON, CSV, Excel, YML: catalog/reader.py), keep its wine
rows (catalog/shop_rows.py), fill what their names say (catalog/enrich.py), validate every row, embed,
upload photos, upsert.

Every good row in, every other row listed (in Russian, by the shop's column and line; `strict`: all or
nothing). Every row is validated (and every photo file found) before anything is written, and the
rows are upserted in one transaction by the tool function. Real shop exports are taken as they are:
rows that are not wine (spirits, beer, food) are skipped and counted; fields the catalogue does not model
are kept in `extra` and listed in the report; a photo address that is not on the web, or a photo that
can't be fetched, leaves the wine without a photo and is reported; a stock of 0 imports the wine
unavailable. With `replace`, the catalogue becomes exactly the file: other wines become unavailable (never
recommended; their history and feedback stay).
"""

from __future__ import annotations

import hashlib
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from sommelier import language
from sommelier.catalog.changes import CatalogChanges, StoredIndex, changes_of
from sommelier.catalog.enrich import enrich
from sommelier.catalog.limits import LimitSettingError, ReadLimits
from sommelier.catalog.photo_fetch import HOST_SKIPPED, PhotoDownloadError, PhotoFetcher
from sommelier.catalog.reader import CatalogFileError, SourceRow, read_rows
from sommelier.catalog.row_problems import KIND_WORDS, russian_reason, skip_group
from sommelier.catalog.row_text import flagged_rows
from sommelier.catalog.shop_rows import MODEL_FIELDS, SHOP_COLUMNS, RowKind, row_kind, shop_row, volume_of
from sommelier.domain.catalog import ExportedWine
from sommelier.domain.catalog_writes import WineEmbedding
from sommelier.domain.errors import PortError, Unavailable
from sommelier.domain.records import ImportRow, WineRecord
from sommelier.embeddings.port import EmbeddingProvider
from sommelier.language.name_line import volume_in
from sommelier.photos.store import PhotoStore
from sommelier.repositories.adapters import LambdaCatalog
from sommelier.repositories.ports import CatalogRepository

EMBED_BATCH = 32
# Rows per tool call through Lambda (6 MB payload limit); in-process imports use one call.
LAMBDA_IMPORT_CHUNK = 150
IN_PROCESS_IMPORT_CHUNK = 5000


class RowError(NamedTuple):
    row: int  # the row's position in the file (1 = the first row); 0: the file as a whole
    reason: str
    wine: str = ""  # «name» (producer, vintage), sku …, when the row has them
    line: int = 0  # the file's line or sheet row, when the file has lines worth naming

    def __str__(self) -> str:
        # the line the owner finds in Excel or an editor; a record's position when the file has no lines
        where = f"строка {self.line}" if self.line else (f"запись {self.row}" if self.row else "")
        return f"{where}{', ' + self.wine if self.wine else ''}: {self.reason}" if where else self.reason


class CatalogImportError(Exception):
    def __init__(self, errors: list[RowError] | str, summary: str = ""):
        self.errors = [RowError(0, errors)] if isinstance(errors, str) else errors
        if not summary:
            summary = errors if isinstance(errors, str) else f"строк с ошибками: {len(errors)}; ничего не импортировано"
        super().__init__(summary)


@dataclass
class ImportReport:
    rows: int
    inserted: int
    updated: int
    photos_uploaded: int
    embedding_model: str
    retired: int = 0  # wines made unavailable by --replace
    unknown_fields: dict[str, int] = field(default_factory=dict)  # kept in `extra`: field → rows
    photos_failed: list[str] = field(default_factory=list)  # wines imported without their image_url photo
    warnings: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # rows that are not wine, by RowKind
    skipped_rows: list[str] = field(default_factory=list)  # each skipped row: where, what, why
    inferred: dict[str, int] = field(default_factory=dict)  # field → wines it was inferred for
    unavailable: int = 0  # wines imported out of stock
    flagged_rows: list[str] = field(default_factory=list)  # text that reads like an instruction, or contacts
    problems: list[str] = field(default_factory=list)  # wine rows skipped for a bad cell, in Russian
    problem_groups: dict[str, int] = field(default_factory=dict)  # why, counted
    changes: CatalogChanges = field(default_factory=CatalogChanges)


@dataclass
class PreparedRows:
    """A file's wine rows validated, and what was left out or noted on the way."""

    records: list[WineRecord]
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_rows: list[str] = field(default_factory=list)
    photo_notes: list[str] = field(default_factory=list)
    problems: list[RowError] = field(default_factory=list)  # wine rows left out for a bad cell
    problem_groups: Counter[str] = field(default_factory=Counter)
    problem_items: list[dict[str, Any]] = field(default_factory=list)  # their rows, to keep their stored wines


def read_catalog(path: Path, limits: ReadLimits | None = None) -> list[SourceRow]:
    """The file's rows within `limits` (by default the CATALOG_MAX_* settings: catalog/limits.py)."""
    try:
        return read_rows(Path(path), limits or ReadLimits.from_environment())
    except LimitSettingError as exc:
        raise CatalogImportError(str(exc)) from exc
    except CatalogFileError as exc:
        raise CatalogImportError([RowError(0, str(exc), line=exc.line)] if exc.line else str(exc)) from exc


_SHOWN_VALUE_CHARS = 60


def _wine_label(item: dict[str, Any]) -> str:
    name = str(item.get("name") or "").strip()[:80]
    sku = str(item.get("sku") or "").strip()[:40]
    details = ", ".join(str(item[k]).strip()[:60] for k in ("producer", "vintage_year") if item.get(k))
    label = f"«{name}»" + (f" ({details})" if details else "") if name else ""
    return ", ".join(part for part in (label, f"sku {sku}" if sku else "") if part)


def split_extra(item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields the catalogue models, and the rest (kept in `extra`)."""
    # An empty cell says nothing: the field's default (None, "", []) or, for a required one, "missing".
    known = {k: v for k, v in item.items() if k in MODEL_FIELDS and v != ""}
    extra = dict(item["extra"]) if isinstance(item.get("extra"), dict) else {}
    extra.update({k: v for k, v in item.items() if k not in MODEL_FIELDS and k != "extra" and v not in ("", None, [])})
    return known, extra


def _relative_photo(item: dict[str, Any], label: str, notes: list[str]) -> dict[str, Any]:
    """A photo address that is not on the web («/static/images/…», a bare file name) is kept in `extra` as
    written and the wine is imported without a photo; the report says so."""
    url = item.get("image_url")
    if url in (None, "") or not isinstance(url, str) or url.lower().startswith(("http://", "https://")):
        return item
    out = {k: v for k, v in item.items() if k != "image_url"}
    out["image_url_as_written"] = url
    notes.append(f"{label}: {url}: не веб-адрес (http:// или https://) — фото не скачано")
    return out


# A further pass over the enriched wine rows, (row, its shop category) each, that fills empty fields in place
# and lists them in the row's `inferred`: the CLI's `--enrich-llm` (sommelier_dev/enrich_llm.py).
MoreEnrichment = Callable[[list[tuple[dict[str, Any], str]]], None]


MIN_TRUSTED_SHARE = 0.5  # fewer good wine rows than bad ones: the file was most likely misread, so refused


def prepare_rows(
    rows: list[SourceRow], base_dir: Path, more_enrichment: MoreEnrichment | None = None, *, strict: bool = False
) -> PreparedRows:
    """Every wine row read, enriched and validated; rows that are not wine are counted, never an error. A wine
    row with a bad cell is skipped and listed in Russian (its column, its cell, what to do); with `strict`, any
    such row refuses the file. The file is refused when it can't be read, has no wine, or more of its wine rows
    are bad than good (CatalogImportError, saying so with the figures)."""
    errors: list[RowError] = []
    prepared = PreparedRows([])
    wine_rows = _enriched_wine_rows(rows, prepared, errors)
    if more_enrichment is not None and wine_rows:
        more_enrichment([(row.item, row.category) for row in wine_rows])
    file_columns = {f for row in wine_rows for f in row.columns}
    seen: dict[tuple[str, str, int | None], tuple[str, Any]] = {}
    seen_sku: dict[str, str] = {}
    for row in wine_rows:
        source = row.source
        known, extra = split_extra(row.item)
        # the shop's headers, for an export in its own columns (a JSON export's row carries them on)
        before = extra.pop(SHOP_COLUMNS, None)
        own = {**(before if isinstance(before, dict) else {})}
        own.update({f: header for f, header in row.columns.items() if header != f and f in known})
        if own:
            extra[SHOP_COLUMNS] = own
        try:
            record = WineRecord.model_validate({**known, "extra": extra})
        except ValidationError as exc:
            reason, field_name = russian_reason(exc, row.columns, file_columns)
            _problem(prepared, errors, RowError(source.row, reason, row.label, source.line), field_name, row.item)
            continue
        where = f"строка {source.line}" if source.line else f"запись {source.row}"
        record, clash = _clash(record, where, seen, seen_sku)
        problem = clash or _photo_file_problem(record, base_dir)
        if problem:
            group = "sku" if clash else "image"
            _problem(prepared, errors, RowError(source.row, problem, row.label, source.line), group, row.item)
            continue
        prepared.records.append(record)
    _refuse_untrusted(rows, prepared, errors, strict=strict)
    return prepared


def _problem(
    prepared: PreparedRows, errors: list[RowError], error: RowError, field_name: str, item: dict[str, Any]
) -> None:
    errors.append(error)
    prepared.problems.append(error)
    prepared.problem_groups[skip_group(field_name)] += 1
    prepared.problem_items.append(item)


def _refuse_untrusted(rows: list[SourceRow], prepared: PreparedRows, errors: list[RowError], *, strict: bool) -> None:
    good, bad = len(prepared.records), len(prepared.problems)
    if not rows:
        raise CatalogImportError("в файле нет ни одной строки с вином: ничего не импортировано")
    if not good and not errors:
        counted = _counted(prepared.skipped)
        raise CatalogImportError(
            [RowError(0, f"ни одна из {len(rows)} строк файла не вино ({counted}): ничего не импортировано")]
        )
    structural = [e for e in errors if e not in prepared.problems]
    if structural or (strict and errors):
        raise CatalogImportError(errors)
    if good < (good + bad) * MIN_TRUSTED_SHARE:
        summary = (
            f"из {good + bad} строк с вином прочитаны только {good}, с ошибками {bad}: похоже, файл прочитан"
            " не так (колонка цены или цвета названа иначе?); ничего не импортировано"
        )
        raise CatalogImportError(errors, summary)


class _WineRow(NamedTuple):
    source: SourceRow
    item: dict[str, Any]
    category: str
    label: str
    columns: dict[str, str]


def _enriched_wine_rows(rows: list[SourceRow], prepared: PreparedRows, errors: list[RowError]) -> list[_WineRow]:
    """Each wine row enriched, with its category, label and the shop's columns; rows that are not wine counted."""
    wine_rows: list[_WineRow] = []
    for source in rows:
        item = source.item
        if not isinstance(item, dict):
            errors.append(RowError(source.row, "запись должна быть объектом с полями вина", line=source.line))
            continue
        if "__error__" in item:
            errors.append(RowError(source.row, "ячеек больше, чем колонок в заголовке", line=source.line))
            continue
        shaped = shop_row(item)
        item = shaped.item
        label = _wine_label(item)
        kind = row_kind(str(item.get("name") or ""), shaped.category, str(item.get("wine_type") or ""))
        if kind != RowKind.WINE:
            prepared.skipped[kind] += 1
            where = f"строка {source.line}" if source.line else f"запись {source.row}"
            prepared.skipped_rows.append(f"{where}, {label or 'без названия'}: {KIND_WORDS.get(kind, kind)}")
            continue
        item = enrich(_relative_photo(item, label, prepared.photo_notes), shaped.category)
        if not volume_of(item) and (size := volume_in(str(item.get("name") or ""))):
            item["volume"] = size  # «… 750мл» in the name: kept apart, so another size is another wine
        if source.group:
            item.setdefault("group", source.group)
        wine_rows.append(_WineRow(source, item, shaped.category, label, shaped.columns))
    return wine_rows


def _counted(counter: Counter[str]) -> str:
    return ", ".join(
        f"{KIND_WORDS.get(kind, kind).split(' (')[0].split(':')[0]}: {count}" for kind, count in counter.most_common()
    )


def _generated_sku(record: WineRecord, taken: dict[str, str]) -> str:
    """A stable article for a row repeating another's name without one (another colour, volume or price):
    the same row gets the same article at the next import."""
    volume = volume_of(record.extra)
    basis = "|".join(
        str(v) for v in (record.name, record.producer, record.vintage_year, record.wine_type, record.sweetness, volume)
    )
    for n in range(1, 1000):
        sku = "АВТО-" + hashlib.sha256(f"{basis}|{n}".encode()).hexdigest()[:8].upper()
        if sku not in taken:
            return sku
    raise CatalogImportError("слишком много повторов одного названия")


def _clash(
    record: WineRecord, where: str, seen: dict[tuple[str, str, int | None], tuple[str, Any]], seen_sku: dict[str, str]
) -> tuple[WineRecord, str | None]:
    """A row that repeats an earlier one's sku is a problem; one that repeats a name, producer and vintage
    without skus is another wine (another colour, volume or price) and gets a generated article."""
    if record.sku and record.sku in seen_sku:
        return (
            record,
            f"артикул «{record.sku}» уже у другого вина ({seen_sku[record.sku]}) — у каждого вина свой артикул",
        )
    key = record.natural_key()
    if not record.sku:
        same = (record.wine_type, record.sweetness, record.price_rub, volume_of(record.extra))
        if key not in seen:
            seen[key] = (where, same)
            return record, None
        if seen[key][1] == same:
            return (
                record,
                f"повтор вина ({seen[key][0]}): то же название, цвет и цена, и нет артикула, чтобы их различить",
            )
        record = record.model_copy(update={"sku": _generated_sku(record, seen_sku)})
    seen_sku[str(record.sku)] = where
    return record, None


def _photo_file_problem(record: WineRecord, base_dir: Path) -> str | None:
    if record.image and not (base_dir / record.image).is_file():
        return f"колонка «image»: файл не найден: {record.image}"
    if record.image and Path(record.image).suffix.lower() not in PHOTO_TYPES:
        suffix = Path(record.image).suffix or "без расширения"
        return f"колонка «image»: нужен PNG, JPEG или WebP, а не {suffix} («{record.image}»)"
    return None


def validate_rows(rows: list[SourceRow], base_dir: Path) -> list[WineRecord]:
    """The file's wine records (prepare_rows without the report's counts)."""
    return prepare_rows(rows, base_dir).records


PHOTO_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def photo_key(name: str, data: bytes) -> str:
    """Content-addressed (`wines/<12 hex digits of the SHA-256>-<file name>`): a changed photo gets a new key,
    which also resets the cached Telegram file_id."""
    return f"wines/{hashlib.sha256(data).hexdigest()[:12]}-{Path(name).name}"


def import_catalog(
    path: Path,
    *,
    catalog: CatalogRepository,
    embedder: EmbeddingProvider,
    photos: PhotoStore,
    replace: bool = False,
    on_progress: Callable[[str, int, int], None] | None = None,
    more_enrichment: MoreEnrichment | None = None,
    strict: bool = False,
    photo_fetcher: PhotoFetcher | None = None,
    limits: ReadLimits | None = None,
) -> ImportReport:
    path = Path(path)
    prepared = prepare_rows(read_catalog(path, limits), path.parent, more_enrichment, strict=strict)
    records = prepared.records
    stored = StoredIndex(_stored_wines(catalog))
    kept = _kept_wines(prepared, stored, records)
    changes = changes_of(records, stored, kept, replace=replace)
    progress = on_progress or (lambda stage, done, total: None)
    unknown_fields = Counter(key for record in records for key in record.extra if key != SHOP_COLUMNS)
    vectors = _embed(records, embedder, progress)

    uploads = _PhotoUploads(
        photos,
        path.parent,
        sum(1 for r in records if r.image or r.image_url),
        progress,
        photo_fetcher or PhotoFetcher(),
    )
    payload: list[ImportRow] = []
    for record, vector in zip(records, vectors, strict=True):
        image_key = uploads.image_key(record)
        written = record.model_copy(update={"image_key": image_key}) if image_key != record.image_key else record
        payload.append(ImportRow(written, [round(x, 7) for x in vector], embedder.model))
    # a stored wine whose row was skipped is written back as it was (its embedding kept): --replace leaves it
    payload.extend(ImportRow(_as_record(wine)) for wine in kept)

    inserted, updated, retired = _write(payload, catalog, replace=replace, progress=progress)
    updated -= len(kept)
    return ImportReport(
        rows=len(records),
        inserted=inserted,
        updated=updated,
        photos_uploaded=uploads.uploaded,
        embedding_model=embedder.model,
        retired=retired,
        unknown_fields=dict(sorted(unknown_fields.items())),
        photos_failed=prepared.photo_notes + uploads.failed,
        warnings=_country_warnings(records),
        skipped=dict(prepared.skipped.most_common()),
        skipped_rows=prepared.skipped_rows,
        inferred=dict(Counter(f for r in records for f in r.inferred).most_common()),
        unavailable=sum(1 for r in records if not r.available),
        flagged_rows=flagged_rows(records),  # catalog/row_text.py: listed for the owner, still imported
        problems=[str(p) for p in prepared.problems],
        problem_groups=dict(prepared.problem_groups.most_common()),
        changes=changes,
    )


def _as_record(wine: ExportedWine) -> WineRecord:
    row = {k: v for k, v in wine.as_file_row().items() if k in MODEL_FIELDS}
    return WineRecord.model_validate({**row, "extra": dict(wine.extra)})


def _stored_wines(catalog: CatalogRepository) -> list[ExportedWine]:
    try:
        return catalog.export_wines(include_unavailable=True)
    except PortError as exc:
        verb = "недоступна" if isinstance(exc, Unavailable) else "не ответила"
        raise CatalogImportError(f"база каталога {verb}: {exc}") from exc


def _kept_wines(prepared: PreparedRows, stored: StoredIndex, records: list[WineRecord]) -> list[ExportedWine]:
    """The stored wines the skipped rows name, unless a good row of the file writes them anyway."""
    written = {w.id for r in records if (w := stored.match(r)) is not None}
    kept: dict[str, ExportedWine] = {}
    for item in prepared.problem_items:
        wine = stored.named_by(item)
        if wine is not None and wine.id not in written:
            kept[wine.id] = wine
    return list(kept.values())


def _embed(
    records: list[WineRecord], embedder: EmbeddingProvider, progress: Callable[[str, int, int], None]
) -> list[list[float]]:
    """Every record's embedding, EMBED_BATCH texts per request."""
    vectors: list[list[float]] = []
    for start in range(0, len(records), EMBED_BATCH):
        batch = records[start : start + EMBED_BATCH]
        vectors.extend(embedder.embed([r.embedding_text() for r in batch]))
        progress("embeddings", len(vectors), len(records))
    return vectors


@dataclass
class _PhotoUploads:
    """The photos of one import, put in the store wine by wine. A photo on the web that can't be fetched is
    reported, not fatal; a host found unreachable is not tried again (one timeout per dead host, not per wine)."""

    photos: PhotoStore
    base_dir: Path
    total: int  # wines with a photo file or an image_url
    progress: Callable[[str, int, int], None]
    fetcher: PhotoFetcher
    uploaded: int = 0
    failed: list[str] = field(default_factory=list)
    hosts_down: set[str] = field(default_factory=set)

    def image_key(self, record: WineRecord) -> str | None:
        """The record's image_key once its photo (a file or an image_url) is in the store."""
        image_key: str | None
        if record.image:
            image_key = self._put_file(record.image)
        elif record.image_url:
            image_key = self._put_download(record.image_url, record)
        else:
            return record.image_key
        self.progress("photos", self.uploaded + len(self.failed), self.total)
        return image_key

    def _put_file(self, image: str) -> str:
        data = (self.base_dir / image).read_bytes()
        image_key = photo_key(image, data)
        self.photos.put(image_key, data, PHOTO_TYPES[Path(image).suffix.lower()])
        self.uploaded += 1
        return image_key

    def _put_download(self, url: str, record: WineRecord) -> str | None:
        """The downloaded photo's key, or the record's own image_key when the photo can't be fetched."""
        host = urllib.parse.urlsplit(url).netloc
        try:
            if host in self.hosts_down:
                raise PhotoDownloadError(HOST_SKIPPED)
            data, content_type, name = self.fetcher.fetch(url)
        except PhotoDownloadError as exc:
            if exc.host_down:
                self.hosts_down.add(host)
            self.failed.append(f"{_wine_label(record.model_dump())}: {url}: {exc}")
            return record.image_key
        image_key = photo_key(name, data)
        self.photos.put(image_key, data, content_type)
        self.uploaded += 1
        return image_key


def _write(
    payload: list[ImportRow],
    catalog: CatalogRepository,
    *,
    replace: bool,
    progress: Callable[[str, int, int], None],
) -> tuple[int, int, int]:
    """(inserted, updated, retired). In process, one transaction per IN_PROCESS_IMPORT_CHUNK rows (the tool's
    per-call limit); through Lambda, LAMBDA_IMPORT_CHUNK rows per call."""
    chunk = LAMBDA_IMPORT_CHUNK if isinstance(catalog, LambdaCatalog) else IN_PROCESS_IMPORT_CHUNK
    inserted = updated = retired = 0
    first_started_at: str | None = None
    for start in range(0, len(payload), chunk):
        part = payload[start : start + chunk]
        last = start + chunk >= len(payload)
        try:
            # with replace, the last chunk retires every wine this import did not write
            result = catalog.import_wines(part, replace=replace and last, replace_since=first_started_at)
        except PortError as exc:
            verb = "недоступна" if isinstance(exc, Unavailable) else "не приняла импорт"
            raise CatalogImportError(f"база каталога {verb}: {exc}") from exc
        inserted += result.inserted
        updated += result.updated
        retired += result.retired
        first_started_at = first_started_at or result.started_at
        progress("database", start + len(part), len(payload))
    return inserted, updated, retired


def _country_warnings(records: list[WineRecord]) -> list[str]:
    """Countries the language layer does not know: filters by country match them only as written."""
    return [
        f"страна «{country}» не известна словарю: фильтр по стране найдёт её только написанной так же"
        for country in sorted(
            {r.country for r in records if r.country and language.country(r.country, fuzzy=False) is None}
        )
    ]


def export_catalog(catalog: CatalogRepository, *, include_unavailable: bool = False) -> dict[str, Any]:
    """The catalogue as a file: {"wines": [rows]}, each row as an import reads it."""
    try:
        return {"wines": [w.as_file_row() for w in catalog.export_wines(include_unavailable=include_unavailable)]}
    except PortError as exc:
        raise CatalogImportError(f"выгрузка не выполнена: {exc}") from exc


def reembed_catalog(
    *,
    catalog: CatalogRepository,
    embedder: EmbeddingProvider,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> int:
    """Recompute every wine's embedding with `embedder` (after a change of embedding model)."""
    try:
        entries = catalog.embedding_texts()
    except PortError as exc:
        raise CatalogImportError(str(exc)) from exc
    progress = on_progress or (lambda stage, done, total: None)
    done = 0
    for start in range(0, len(entries), EMBED_BATCH):
        batch = entries[start : start + EMBED_BATCH]
        vectors = embedder.embed([e.text for e in batch])
        items = [WineEmbedding(id=e.id, embedding=v) for e, v in zip(batch, vectors, strict=True)]
        try:
            catalog.update_embeddings(embedder.model, items)
        except PortError as exc:
            raise CatalogImportError(str(exc)) from exc
        done += len(batch)
        progress("embeddings", done, len(entries))
    return done
