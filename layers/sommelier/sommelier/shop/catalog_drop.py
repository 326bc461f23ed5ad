"""Catalogue drops: a JSON, CSV, Excel .xlsx, YML or ZIP (a catalogue file plus its photos) uploaded to the photo bucket under
``catalog/incoming/`` is imported with the importer's own rules (all or nothing), and a report is written next
to the file (``<file>.report.txt``) and sent to the admin chat when ADMIN_CHAT_ID is set.

A bad file changes nothing: the importer validates every row and photo before it writes.
"""

from __future__ import annotations

import logging
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from sommelier.catalog.importer import CatalogImportError, import_catalog
from sommelier.embeddings.port import EmbeddingProvider
from sommelier.photos.store import PhotoStore
from sommelier.repositories.ports import CatalogRepository

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)

INCOMING_PREFIX = "catalog/incoming/"
REPORT_SUFFIX = ".report.txt"
CATALOG_TYPES = {".json", ".csv", ".xlsx", ".yml", ".xml"}
MAX_DROP_BYTES = 200 * 1024 * 1024  # a catalogue of thousands of wines with photos fits easily
MAX_ZIP_MEMBERS = 20_000
MAX_UNZIPPED_BYTES = 1024 * 1024 * 1024
MAX_MEMBER_BYTES = 100 * 1024 * 1024  # one file of the archive unpacked: a photo or the catalogue file
COPY_CHUNK = 1024 * 1024


@dataclass
class DropResult:
    key: str
    ok: bool
    text: str  # the report, in Russian, for the shop

    @property
    def report_key(self) -> str:
        return self.key + REPORT_SUFFIX


class DropError(ValueError):
    pass


def is_catalog_drop(key: str) -> bool:
    """A file to import: under catalog/incoming/, not a report, not a folder marker."""
    return key.startswith(INCOMING_PREFIX) and not key.endswith(("/", REPORT_SUFFIX))


def replace_mode(mode: str) -> bool:
    """CATALOG_DROP_MODE: `merge` (default: add and update wines) or `replace` (the file becomes the catalogue)."""
    if mode not in {"merge", "replace"}:
        raise DropError(f"CATALOG_DROP_MODE must be merge or replace, not {mode!r}")
    return mode == "replace"


def _safe_extract(archive: Path, target: Path) -> None:
    """Unzip without leaving `target` (no absolute paths or ..), within member-count and size limits."""
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = [m for m in bundle.infolist() if not m.is_dir()]
            if len(members) > MAX_ZIP_MEMBERS:
                raise DropError(f"в архиве больше {MAX_ZIP_MEMBERS} файлов")
            if sum(m.file_size for m in members) > MAX_UNZIPPED_BYTES:
                raise DropError("архив слишком велик в распакованном виде (больше 1 ГБ)")
            written = 0
            for member in members:
                name = PurePosixPath(member.filename)
                if name.is_absolute() or ".." in name.parts or "\\" in member.filename:
                    raise DropError(f"недопустимый путь в архиве: {member.filename}")
                if name.parts[0] in {"__MACOSX"} or name.name.startswith("._"):
                    continue  # macOS resource forks, not photos
                destination = target.joinpath(*name.parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                written += _copy_member(bundle, member, destination, MAX_UNZIPPED_BYTES - written)
    except zipfile.BadZipFile as exc:
        raise DropError("файл .zip повреждён или это не ZIP-архив") from exc


def _copy_member(bundle: zipfile.ZipFile, member: zipfile.ZipInfo, destination: Path, room: int) -> int:
    """One member unpacked in chunks (never whole in memory), within MAX_MEMBER_BYTES and the archive's room
    left; the bytes written."""
    written = 0
    with bundle.open(member) as source, destination.open("wb") as out:
        while chunk := source.read(COPY_CHUNK):
            written += len(chunk)
            if written > MAX_MEMBER_BYTES:
                raise DropError(
                    f"файл архива «{member.filename[:80]}» больше {MAX_MEMBER_BYTES // (1024 * 1024)} МБ"
                    " в распакованном виде (предел одного файла архива): ничего не импортировано"
                )
            if written > room:
                raise DropError("архив слишком велик в распакованном виде (больше 1 ГБ): ничего не импортировано")
            out.write(chunk)
    return written


def _catalog_in(folder: Path) -> Path:
    found = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in CATALOG_TYPES)
    if len(found) != 1:
        names = ", ".join(str(p.relative_to(folder)) for p in found) or "нет ни одного"
        raise DropError(f"в архиве должен быть ровно один файл каталога .json, .csv, .xlsx или .yml (найдено: {names})")
    return found[0]


def _failure_text(name: str, exc: Exception) -> str:
    lines = [f"❌ Каталог «{name}» не загружен — в каталоге ничего не изменилось.", f"Причина: {exc}"]
    for error in getattr(exc, "errors", [])[:30]:
        row, line = getattr(error, "row", 0), getattr(error, "line", 0)
        if row or line:
            where = ", ".join(p for p in (f"запись {row}" if row else "", f"строка {line}" if line else "") if p)
            wine = f" {error.wine}" if getattr(error, "wine", "") else ""
            lines.append(f"• {where}{wine}: {error.reason}")
    return "\n".join(lines)


def process_drop(
    key: str,
    fetch: Callable[[Path], None],
    *,
    size: int | None,
    catalog: CatalogRepository,
    embedder: EmbeddingProvider,
    photos: PhotoStore,
    mode: str = "merge",
) -> DropResult:
    """Import one dropped file. `fetch(path)` writes the object's bytes to `path`. Never raises on bad input."""
    name = PurePosixPath(key).name
    suffix = PurePosixPath(name).suffix.lower()
    with tempfile.TemporaryDirectory(prefix="catalog-drop-") as work:
        folder = Path(work)
        try:
            if suffix not in CATALOG_TYPES | {".zip"}:
                raise DropError(
                    f"неподдерживаемый тип файла {suffix or '(без расширения)'}:"
                    " нужен .json, .csv, .xlsx, .yml или .zip"
                )
            if size is not None and size > MAX_DROP_BYTES:
                raise DropError(f"файл больше {MAX_DROP_BYTES // (1024 * 1024)} МБ")
            replace = replace_mode(mode)
            downloaded = folder / ("drop" + suffix)
            fetch(downloaded)
            if suffix == ".zip":
                unpacked = folder / "unpacked"
                _safe_extract(downloaded, unpacked)
                catalog_file = _catalog_in(unpacked)
            else:
                catalog_file = downloaded
            # an unattended drop keeps all or nothing: its report does not list skipped rows yet
            report = import_catalog(
                catalog_file, catalog=catalog, embedder=embedder, photos=photos, replace=replace, strict=True
            )
        except (DropError, CatalogImportError) as exc:
            # The importer names files by their path: show the shop its own file name, not our temp folder.
            text = _failure_text(name, exc).replace(f"{folder}/drop{suffix}", name).replace(f"{folder}/unpacked/", "")
            return DropResult(key, False, text)
        except Exception as exc:  # an outage (S3, embeddings, the database): reported, nothing half-written
            logger.exception("catalogue drop %s failed", key)
            reason = Exception(f"техническая ошибка: {type(exc).__name__}")
            return DropResult(key, False, _failure_text(name, reason))
    mode = "замена каталога" if replace else "добавление и обновление"
    lines = [
        f"✅ Каталог «{name}» загружен ({mode}): {report.rows} вин — {report.inserted} новых, "
        f"{report.updated} обновлено, фото: {report.photos_uploaded}; эмбеддинги: {report.embedding_model}."
    ]
    if report.unavailable:
        lines.append(f"Нет в наличии (загружены, но не предлагаются): {report.unavailable}.")
    if report.retired:
        lines.append(f"Сняты с продажи (их нет в файле): {report.retired}.")
    if report.skipped:
        kinds = ", ".join(f"{_SKIPPED_RU.get(kind, kind)}: {count}" for kind, count in report.skipped.items())
        lines.append(f"Пропущены строки, которые не вино ({kinds}).")
    if report.inferred:
        fields = ", ".join(f"{field} ({count})" for field, count in report.inferred.items())
        lines.append(f"Дополнено по названиям (помечено в выгрузке): {fields}.")
    if report.unknown_fields:
        fields = ", ".join(f"{field} ({count})" for field, count in sorted(report.unknown_fields.items()))
        lines.append(f"Поля, которых нет в каталоге, сохранены как дополнительные: {fields}.")
    if report.photos_failed:
        lines.append("Без фото (не удалось скачать): " + ", ".join(report.photos_failed[:20]) + ".")
    lines += _flagged(report.flagged_rows)
    lines += [f"• {warning}" for warning in report.warnings[:20]]
    return DropResult(key, True, "\n".join(lines))


def _flagged(rows: list[str]) -> list[str]:
    """The rows whose text reads like an instruction or carries contacts (catalog/row_text.py)."""
    if not rows:
        return []
    return [
        "Проверьте тексты (загружены; ассистент читает их только как описание вина):",
        *(f"• {r}" for r in rows[:20]),
    ]


_SKIPPED_RU = {
    "not wine": "крепкое, пиво, еда, аксессуары",
    "fortified": "креплёные вина (не загружаются)",
    "not recognisably wine": "не удалось понять, что это вино",
}


def dropped_objects(event: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    """(bucket, key, size) of each object in an EventBridge "Object Created" event or an S3 notification."""
    from urllib.parse import unquote_plus

    found: list[tuple[str, str, int | None]] = []
    detail = event.get("detail") if isinstance(event, dict) else None
    if isinstance(detail, dict) and "object" in detail:
        found.append((detail["bucket"]["name"], detail["object"]["key"], detail["object"].get("size")))
    for record in (event or {}).get("Records", []) if isinstance(event, dict) else []:
        s3 = record.get("s3") or {}
        # S3 notifications URL-encode the key (a space arrives as "+").
        found.append((s3["bucket"]["name"], unquote_plus(s3["object"]["key"]), s3["object"].get("size")))
    return found


def handle_drop_event(
    event: dict[str, Any],
    *,
    s3: S3Client,
    catalog: CatalogRepository,
    embedder: EmbeddingProvider,
    photos_for: Callable[[str], PhotoStore],
    notify: Callable[[str], object],
    mode: str = "merge",
) -> list[DropResult]:
    """Import every dropped catalogue in the event; write each report next to its file and tell the admin chat."""
    results = []
    for bucket, key, size in dropped_objects(event):
        if not is_catalog_drop(key):
            continue

        def fetch(path: Path, bucket: str = bucket, key: str = key) -> None:
            s3.download_file(bucket, key, str(path))

        result = process_drop(
            key,
            fetch,
            size=size,
            catalog=catalog,
            embedder=embedder,
            photos=photos_for(bucket),
            mode=mode,
        )
        logger.info("catalogue drop %s: %s", key, "imported" if result.ok else "refused")
        _write_report(s3, bucket, result)
        notify(result.text)
        results.append(result)
    return results


def refuse_drop_event(event: dict[str, Any], *, s3: S3Client, reason: Exception) -> list[DropResult]:
    """The function cannot import at all (a bad setting): each dropped file gets a report saying why."""
    results = []
    for bucket, key, _ in dropped_objects(event):
        if is_catalog_drop(key):
            name = PurePosixPath(key).name
            result = DropResult(key, False, _failure_text(name, DropError(f"настройка функции неверна: {reason}")))
            _write_report(s3, bucket, result)
            results.append(result)
    return results


def _write_report(s3: S3Client, bucket: str, result: DropResult) -> None:
    s3.put_object(
        Bucket=bucket, Key=result.report_key, Body=result.text.encode("utf-8"), ContentType="text/plain; charset=utf-8"
    )
