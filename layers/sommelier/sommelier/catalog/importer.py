"""`sommelier catalog import`: read a JSON or CSV catalogue, validate every row, embed, upload photos, upsert.

All or nothing: every row is validated (and every photo file found) before anything is written, and the
rows are upserted in one transaction by the tool function. Real shop exports are taken as they are:
fields the catalogue does not model are kept in `extra` and listed in the report; a photo on the web
(`image_url`) that can't be fetched leaves the wine without a photo and is reported. With `replace`,
the catalogue becomes exactly the file: other wines become unavailable (never recommended; their
history and feedback stay).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sommelier import language
from sommelier.domain.errors import PortError, Unavailable
from sommelier.domain.records import ImportRow, WineRecord
from sommelier.domain.shop import WineEmbedding
from sommelier.embeddings.port import EmbeddingProvider
from sommelier.storage.photos import PhotoStore
from sommelier.store.adapters import LambdaCatalog
from sommelier.store.ports import CatalogRepository

EMBED_BATCH = 32
# Rows per tool call through Lambda (6 MB payload limit); in-process imports use one call.
LAMBDA_IMPORT_CHUNK = 150
IN_PROCESS_IMPORT_CHUNK = 5000
CSV_LIST_FIELDS = ("grape_varieties", "food_pairings")
CSV_INT_FIELDS = ("vintage_year", "body", "tannins", "acidity")
CSV_OPTIONAL_FIELDS = ("appellation", "image", "image_key", "image_url", "sku", "id")


PHOTO_DOWNLOAD_TIMEOUT_S = 10
PHOTO_MAX_BYTES = 5 * 1024 * 1024  # Telegram's limit for photos it fetches by URL


@dataclass(frozen=True)
class RowError:
    line: int
    reason: str
    wine: str = ""  # «name» (producer, vintage), when the row has them

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", {self.wine}" if self.wine else "")
        return f"{where}: {self.reason}"


class CatalogImportError(Exception):
    def __init__(self, errors: list[RowError] | str):
        self.errors = [RowError(0, errors)] if isinstance(errors, str) else errors
        summary = errors if isinstance(errors, str) else f"{len(errors)} bad row(s); nothing was imported"
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


def _json_rows(text: str) -> Iterator[tuple[int, Any]]:
    """Each element of the wines array with the line it starts on."""
    decoder = json.JSONDecoder()
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogImportError([RowError(exc.lineno, f"invalid JSON: {exc.msg}")]) from exc
    if isinstance(document, dict):
        # Other top-level keys (a shop name, an export date) are an export's wrapping, not wines.
        if not isinstance(document.get("wines"), list):
            raise CatalogImportError('a JSON catalogue must be {"wines": [...]} or a list of wines')
        match = re.search(r'"wines"\s*:\s*\[', text)
        position = match.end() if match else None
    elif isinstance(document, list):
        position = text.index("[") + 1
    else:
        raise CatalogImportError('a JSON catalogue must be {"wines": [...]} or a list of wines')
    items = document["wines"] if isinstance(document, dict) else document
    # Walk the array again with raw_decode to learn where each element starts.
    lines: list[int] = []
    if position is not None:
        for _ in items:
            while text[position] in " \t\r\n,":
                position += 1
            lines.append(text.count("\n", 0, position) + 1)
            _, position = decoder.raw_decode(text, position)
    for index, item in enumerate(items):
        yield (lines[index] if index < len(lines) else index + 1), item


def _csv_rows(text: str) -> Iterator[tuple[int, Any]]:
    header = text.split("\n", 1)[0]
    # Russian Excel saves CSV with ";"; lists inside a cell then need quotes, as Excel writes them.
    delimiter = ";" if header.count(";") > header.count(",") else ","
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    if not reader.fieldnames:
        raise CatalogImportError("the CSV file has no header row")
    for row in reader:
        if None in row:
            yield reader.line_num, {"__error__": "more cells than header columns"}
            continue
        item: dict[str, Any] = {}
        for key, value in row.items():
            key = (key or "").strip()
            value = (value or "").strip()
            if not key or (not value and key not in MODEL_FIELDS):
                continue  # an unnamed or empty extra column carries nothing
            if key in CSV_LIST_FIELDS:
                item[key] = value or []  # the cell's text: WineRecord splits it, by one rule for CSV and JSON
            elif key in CSV_INT_FIELDS or key in CSV_OPTIONAL_FIELDS:
                item[key] = value or None
            else:
                item[key] = value
        yield reader.line_num, item


def read_catalog(path: Path) -> list[tuple[int, Any]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogImportError(f"cannot read {path}: {exc.strerror}") from exc
    suffix = path.suffix.lower()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if suffix != ".csv":
            raise CatalogImportError(f"{path} is not UTF-8 text") from exc
        text = raw.decode("cp1251")  # Excel's Russian default; every byte decodes
    if suffix == ".csv":
        return list(_csv_rows(text))
    if suffix == ".json":
        return list(_json_rows(text))
    raise CatalogImportError(f"unsupported file type {suffix or '(none)'}: use .json or .csv")


MODEL_FIELDS = frozenset(WineRecord.model_fields) - {"extra"}
_SHOWN_VALUE_CHARS = 60


def _wine_label(item: dict[str, Any]) -> str:
    name = str(item.get("name") or "").strip()[:80]
    if not name:
        return ""
    details = ", ".join(str(item[k]).strip()[:60] for k in ("producer", "vintage_year") if item.get(k))
    return f"«{name}»" + (f" ({details})" if details else "")


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return repr(text if len(text) <= _SHOWN_VALUE_CHARS else text[:_SHOWN_VALUE_CHARS] + "…")


def _reason(exc: ValidationError) -> str:
    """Each problem with its field and the offending value, or its length when the value is too long."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "row"
        value = error.get("input")
        if error["type"] in ("string_too_long", "too_long") and hasattr(value, "__len__"):
            limit = (error.get("ctx") or {}).get("max_length")
            unit = "characters" if isinstance(value, str) else "items"
            parts.append(f"{where}: {len(value):,} {unit}, at most {limit:,}" if limit else f"{where}: too long")
        elif error["type"] == "missing":
            parts.append(f"{where}: required, missing")
        else:
            message = error["msg"].removeprefix("Value error, ")
            parts.append(f"{where}: {message} (value: {_shown(value)})")
    return "; ".join(parts)


def canonical_keys(item: dict[str, Any]) -> dict[str, Any]:
    """A shop's own column names («Наименование», «Сорт винограда», «Цена, руб.») as the catalogue's fields,
    from the language layer's table; a name it does not know, or a field the row also fills under its own
    name, stays as written (and so in `extra`)."""
    from sommelier import language

    meant = {k: language.catalog_column(str(k)) for k in item if k not in MODEL_FIELDS and k != "extra"}
    out = {k: v for k, v in item.items() if meant.get(k) is None}
    taken: set[str] = set()
    for key, target in meant.items():
        if target is None:
            continue
        if target not in taken and out.get(target) in (None, ""):  # an empty own-name column does not count
            out[target] = item[key]
            taken.add(target)
        else:
            out[key] = item[key]
    return out


def split_extra(item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields the catalogue models, and the rest (kept in `extra`)."""
    known = {k: v for k, v in item.items() if k in MODEL_FIELDS}
    extra = dict(item["extra"]) if isinstance(item.get("extra"), dict) else {}
    extra.update({k: v for k, v in item.items() if k not in MODEL_FIELDS and k != "extra"})
    return known, extra


def validate_rows(rows: list[tuple[int, Any]], base_dir: Path) -> list[WineRecord]:
    """Every row validated; raises CatalogImportError naming every bad row, its wine, field and value."""
    errors: list[RowError] = []
    records: list[WineRecord] = []
    seen: dict[tuple, int] = {}
    seen_sku: dict[str, int] = {}
    for line, item in rows:
        if not isinstance(item, dict):
            errors.append(RowError(line, "a wine must be an object"))
            continue
        if "__error__" in item:
            errors.append(RowError(line, item["__error__"]))
            continue
        item = canonical_keys(item)
        label = _wine_label(item)
        known, extra = split_extra(item)
        try:
            record = WineRecord.model_validate({**known, "extra": extra})
        except ValidationError as exc:
            errors.append(RowError(line, _reason(exc), label))
            continue
        key = record.natural_key()
        if key in seen:
            errors.append(RowError(line, f"duplicate of line {seen[key]} (same name, producer and vintage)", label))
            continue
        if record.sku and record.sku in seen_sku:
            errors.append(RowError(line, f"sku: {record.sku!r} is also on line {seen_sku[record.sku]}", label))
            continue
        seen[key] = line
        if record.sku:
            seen_sku[record.sku] = line
        if record.image and not (base_dir / record.image).is_file():
            errors.append(RowError(line, f"image: file not found: {record.image}", label))
            continue
        if record.image and Path(record.image).suffix.lower() not in PHOTO_TYPES:
            suffix = Path(record.image).suffix or "no extension"
            errors.append(
                RowError(line, f"image: use PNG, JPEG or WebP, not {suffix} (value: {record.image!r})", label)
            )
            continue
        records.append(record)
    if not rows:
        errors.append(RowError(1, "the catalogue has no wines"))
    if errors:
        raise CatalogImportError(errors)
    return records


PHOTO_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def photo_key(name: str, data: bytes) -> str:
    """Content-addressed (`wines/<12 hex digits of the SHA-256>-<file name>`): a changed photo gets a new key,
    which also resets the cached Telegram file_id."""
    return f"wines/{hashlib.sha256(data).hexdigest()[:12]}-{Path(name).name}"


_CONTENT_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}


class PhotoDownloadError(Exception):
    def __init__(self, reason: str, *, host_down: bool = False):
        super().__init__(reason)
        self.host_down = host_down  # the host itself can't be reached: skip its other photos


def download_photo(url: str) -> tuple[bytes, str, str]:
    """(bytes, content type, file name) of a photo on the web, within a timeout and a size limit."""
    request = urllib.request.Request(url, headers={"User-Agent": "sommelier-catalog-import"})
    try:
        with urllib.request.urlopen(request, timeout=PHOTO_DOWNLOAD_TIMEOUT_S) as response:  # nosec B310 - http(s) only, checked by the model
            content_type = (response.headers.get_content_type() or "").lower()
            if content_type not in _CONTENT_TYPES:
                raise PhotoDownloadError(f"not a PNG, JPEG or WebP image ({content_type or 'no content type'})")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > PHOTO_MAX_BYTES:
                raise PhotoDownloadError(f"larger than {PHOTO_MAX_BYTES // (1024 * 1024)} MB")
            data = response.read(PHOTO_MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise PhotoDownloadError(f"HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PhotoDownloadError(f"unreachable ({reason})", host_down=True) from None
    if len(data) > PHOTO_MAX_BYTES:
        raise PhotoDownloadError(f"larger than {PHOTO_MAX_BYTES // (1024 * 1024)} MB")
    if not data:
        raise PhotoDownloadError("empty response")
    stem = Path(urllib.parse.urlsplit(url).path).stem or "photo"
    return data, content_type, re.sub(r"[^A-Za-z0-9._-]+", "-", stem)[:80] + _CONTENT_TYPES[content_type]


def import_catalog(
    path: Path,
    *,
    catalog: CatalogRepository,
    embedder: EmbeddingProvider,
    photos: PhotoStore,
    replace: bool = False,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> ImportReport:
    path = Path(path)
    rows = read_catalog(path)
    records = validate_rows(rows, path.parent)
    progress = on_progress or (lambda stage, done, total: None)
    unknown_fields = Counter(key for record in records for key in record.extra)
    vectors = _embed(records, embedder, progress)

    uploads = _PhotoUploads(photos, path.parent, sum(1 for r in records if r.image or r.image_url), progress)
    payload: list[ImportRow] = []
    for record, vector in zip(records, vectors, strict=True):
        image_key = uploads.image_key(record)
        written = record.model_copy(update={"image_key": image_key}) if image_key != record.image_key else record
        payload.append(ImportRow(written, [round(x, 7) for x in vector], embedder.model))

    inserted, updated, retired = _write(payload, catalog, replace=replace, progress=progress)
    return ImportReport(
        rows=len(records),
        inserted=inserted,
        updated=updated,
        photos_uploaded=uploads.uploaded,
        embedding_model=embedder.model,
        retired=retired,
        unknown_fields=dict(sorted(unknown_fields.items())),
        photos_failed=uploads.failed,
        warnings=_country_warnings(records),
    )


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
                raise PhotoDownloadError("skipped: the host was unreachable for an earlier photo")
            data, content_type, name = download_photo(url)
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
            verb = "could not be reached" if isinstance(exc, Unavailable) else "refused the import"
            raise CatalogImportError(f"the catalogue database {verb}: {exc}") from exc
        inserted += result.inserted
        updated += result.updated
        retired += result.retired
        first_started_at = first_started_at or result.started_at
        progress("database", start + len(part), len(payload))
    return inserted, updated, retired


def _country_warnings(records: list[WineRecord]) -> list[str]:
    """Countries the language layer does not know: filters by country match them only as written."""
    return [
        f"country {country!r} is not in the language layer: country filters match it only as written"
        for country in sorted({r.country for r in records if language.country(r.country, fuzzy=False) is None})
    ]


def export_catalog(catalog: CatalogRepository, *, include_unavailable: bool = False) -> dict[str, Any]:
    """The catalogue as a file: {"wines": [rows]}, each row as an import reads it."""
    try:
        return {"wines": [w.as_file_row() for w in catalog.export_wines(include_unavailable=include_unavailable)]}
    except PortError as exc:
        raise CatalogImportError(f"export failed: {exc}") from exc


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
