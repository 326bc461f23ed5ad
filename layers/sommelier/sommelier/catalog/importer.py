"""`sommelier catalog import`: read a JSON or CSV catalogue, validate every row, embed, upload photos, upsert.

All or nothing: every row is validated (and every photo found) before anything is written,
and the rows are upserted in one transaction by the tool function.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sommelier.catalog.models import WineRecord
from sommelier.embeddings.port import EmbeddingProvider
from sommelier.storage.photos import PhotoStore
from sommelier.tools.client import InProcessTools, LambdaTools, ToolClient

EMBED_BATCH = 32
# Rows per tool call through Lambda (6 MB payload limit); in-process imports use one call.
LAMBDA_IMPORT_CHUNK = 150
LIST_SEPARATOR = ";"
CSV_LIST_FIELDS = ("grape_varieties", "food_pairings")
CSV_INT_FIELDS = ("vintage_year", "body", "tannins", "acidity")


@dataclass(frozen=True)
class RowError:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


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
    warnings: list[str] = field(default_factory=list)


def _json_rows(text: str) -> Iterator[tuple[int, Any]]:
    """Each element of the wines array with the line it starts on."""
    decoder = json.JSONDecoder()
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogImportError([RowError(exc.lineno, f"invalid JSON: {exc.msg}")]) from exc
    if isinstance(document, dict):
        if set(document) != {"wines"} or not isinstance(document["wines"], list):
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
            if key in CSV_LIST_FIELDS:
                item[key] = [part for part in value.split(LIST_SEPARATOR) if part.strip()]
            elif key in CSV_INT_FIELDS or key == "appellation" or key == "image" or key == "image_key":
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


def _reason(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "row"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def validate_rows(rows: list[tuple[int, Any]], base_dir: Path) -> list[WineRecord]:
    """Every row validated; raises CatalogImportError naming every bad row."""
    errors: list[RowError] = []
    records: list[WineRecord] = []
    seen: dict[tuple, int] = {}
    for line, item in rows:
        if not isinstance(item, dict):
            errors.append(RowError(line, "a wine must be an object"))
            continue
        if "__error__" in item:
            errors.append(RowError(line, item["__error__"]))
            continue
        try:
            record = WineRecord.model_validate(item)
        except ValidationError as exc:
            errors.append(RowError(line, _reason(exc)))
            continue
        key = record.natural_key()
        if key in seen:
            errors.append(RowError(line, f"duplicate of line {seen[key]} (same name, producer and vintage)"))
            continue
        seen[key] = line
        if record.image and not (base_dir / record.image).is_file():
            errors.append(RowError(line, f"image: file not found: {record.image}"))
            continue
        if record.image and Path(record.image).suffix.lower() not in PHOTO_TYPES:
            errors.append(
                RowError(line, f"image: use PNG, JPEG or WebP, not {Path(record.image).suffix or 'no extension'}")
            )
            continue
        records.append(record)
    if not rows:
        errors.append(RowError(1, "the catalogue has no wines"))
    if errors:
        raise CatalogImportError(errors)
    return records


PHOTO_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def photo_key(record: WineRecord, data: bytes) -> str:
    """Content-addressed: a changed photo gets a new key, which also resets the cached Telegram file_id."""
    name = Path(record.image or "").name
    return f"wines/{hashlib.sha256(data).hexdigest()[:12]}-{name}"


def import_catalog(
    path: Path,
    *,
    tools: ToolClient,
    embedder: EmbeddingProvider,
    photos: PhotoStore,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> ImportReport:
    path = Path(path)
    records = validate_rows(read_catalog(path), path.parent)
    progress = on_progress or (lambda stage, done, total: None)

    vectors: list[list[float]] = []
    for start in range(0, len(records), EMBED_BATCH):
        batch = records[start : start + EMBED_BATCH]
        vectors.extend(embedder.embed([r.embedding_text() for r in batch]))
        progress("embeddings", len(vectors), len(records))

    uploaded = 0
    with_photos = sum(1 for r in records if r.image)
    payload: list[dict[str, Any]] = []
    for record, vector in zip(records, vectors, strict=True):
        row = record.model_dump(mode="json", exclude={"image"})
        if record.image:
            data = (path.parent / record.image).read_bytes()
            key = photo_key(record, data)
            photos.put(key, data, PHOTO_TYPES[Path(record.image).suffix.lower()])
            row["image_key"] = key
            uploaded += 1
            progress("photos", uploaded, with_photos)
        row["embedding"] = [round(x, 7) for x in vector]
        row["embedding_model"] = embedder.model
        payload.append(row)

    chunk = LAMBDA_IMPORT_CHUNK if isinstance(tools, LambdaTools) else len(payload)
    inserted = updated = 0
    for start in range(0, len(payload), chunk):
        result = tools.call("import_wines", {"wines": payload[start : start + chunk]})
        if "error" in result:
            verb = "could not be reached" if result.get("retryable") else "refused the import"
            raise CatalogImportError(f"the catalogue database {verb}: {result['error']}")
        inserted += result["inserted"]
        updated += result["updated"]
        progress("database", start + len(payload[start : start + chunk]), len(payload))
    return ImportReport(
        rows=len(records), inserted=inserted, updated=updated, photos_uploaded=uploaded, embedding_model=embedder.model
    )


def export_catalog(tools: ToolClient) -> dict[str, Any]:
    result = tools.call("export_wines", {})
    if "error" in result:
        raise CatalogImportError(f"export failed: {result['error']}")
    return {"wines": result["wines"]}


def reembed_catalog(
    *, tools: ToolClient, embedder: EmbeddingProvider, on_progress: Callable[[str, int, int], None] | None = None
) -> int:
    """Recompute every wine's embedding with `embedder` (after a change of embedding model)."""
    items = tools.call("embedding_texts", {})
    if "error" in items:
        raise CatalogImportError(items["error"])
    progress = on_progress or (lambda stage, done, total: None)
    done = 0
    entries = items["items"]
    for start in range(0, len(entries), EMBED_BATCH):
        batch = entries[start : start + EMBED_BATCH]
        texts = [WineRecord.model_validate(e["wine"]).embedding_text() for e in batch]
        vectors = embedder.embed(texts)
        result = tools.call(
            "update_embeddings",
            {
                "embedding_model": embedder.model,
                "items": [{"id": e["id"], "embedding": v} for e, v in zip(batch, vectors, strict=True)],
            },
        )
        if "error" in result:
            raise CatalogImportError(result["error"])
        done += len(batch)
        progress("embeddings", done, len(entries))
    return done


__all__ = [
    "CatalogImportError",
    "ImportReport",
    "InProcessTools",
    "RowError",
    "export_catalog",
    "import_catalog",
    "read_catalog",
    "reembed_catalog",
    "validate_rows",
]
