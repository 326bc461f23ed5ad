"""A shop's catalogue file as rows, whatever it was exported from: JSON (a bare list, or the rows under any
top-level key), CSV (`,`, `;` or tab), Excel (.xlsx) and Yandex Market YML. Each row keeps its position in the
file (and its line, when the file has lines worth naming), so an error can point at it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from sommelier.catalog.limits import MIB, ReadLimits

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element  # nosec B405 - a type for mypy only, never imported; defusedxml parses

# Top-level keys shops put their rows under, in the order they are tried; any other key holding a list of
# objects is taken too (the rows of a file are the list of objects, whatever its key).
ROW_KEYS = ("wines", "items", "products", "offers", "data", "rows", "records", "goods", "catalog", "catalogue")
HEADER_SCAN_ROWS = 20  # an Excel price list may have a title and a date above its header
TEXT_TYPES = {".json", ".csv", ".tsv", ".txt"}
YML_TYPES = {".yml", ".xml"}
EXCEL_TYPES = {".xlsx", ".xlsm"}
FILE_TYPES = TEXT_TYPES | YML_TYPES | EXCEL_TYPES


class CatalogFileError(Exception):
    """The file as a whole cannot be read (not a row's fault)."""

    def __init__(self, reason: str, line: int = 0):
        super().__init__(reason)
        self.line = line


class SourceRow(NamedTuple):
    row: int  # 1-based position among the file's rows
    line: int  # the file's line where the row starts; 0 when lines say nothing (minified JSON, Excel, YML)
    item: Any
    group: str = ""  # the key a grouped JSON file files the row under («rotweine»): the shop's own category


def read_rows(path: Path, limits: ReadLimits | None = None) -> list[SourceRow]:
    """The file's rows, read within `limits` (CatalogFileError naming the limit a file goes past)."""
    limits = limits or ReadLimits()
    try:
        size = path.stat().st_size
        if size > limits.max_file_bytes:
            raise CatalogFileError(limits.refused("max_file_bytes", f"{size / MIB:.1f} МБ".replace(".", ",")))
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogFileError(f"не удалось прочитать {path}: {exc.strerror}") from exc
    suffix = path.suffix.lower()
    if suffix in EXCEL_TYPES:
        return _excel_rows(raw, limits)
    if suffix == ".xls":
        raise CatalogFileError(
            "старый формат Excel .xls: сохраните файл как .xlsx (книга Excel) или CSV и импортируйте его"
        )
    if suffix in YML_TYPES:
        return _checked(_yml_rows(raw, limits), limits)
    if suffix not in TEXT_TYPES:
        raise CatalogFileError(
            f"неподдерживаемый тип файла {suffix or '(без расширения)'}: нужен .json, .csv, .xlsx или .yml"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if suffix == ".json":
            raise CatalogFileError(f"{path}: не текст в UTF-8") from exc
        text = raw.decode("cp1251")  # Excel's Russian default; every byte decodes
    if suffix == ".json" or text.lstrip()[:1] in ("[", "{"):
        return _checked(_json_rows(text, limits), limits)
    return list(_csv_rows(text, limits))


def _checked(rows: list[SourceRow], limits: ReadLimits) -> list[SourceRow]:
    """A parsed file's rows within the column and cell limits (a JSON or YML file is parsed whole, within
    the file-size limit, and its rows counted as they are taken)."""
    for source in rows:
        if isinstance(source.item, dict):
            _check_row(list(source.item.values()), limits)
    return rows


def _check_row(values: list[Any], limits: ReadLimits) -> None:
    if len(values) > limits.max_columns:
        raise CatalogFileError(limits.refused("max_columns", f"{len(values):,}".replace(",", " ")))
    for value in values:
        if isinstance(value, str) and len(value) > limits.max_cell_chars:
            raise CatalogFileError(limits.refused("max_cell_chars", f"{len(value):,}".replace(",", " ")))
        if isinstance(value, dict):
            _check_row(list(value.values()), limits)
        elif isinstance(value, list):
            _check_row(value, limits)


def _too_many_rows(limits: ReadLimits) -> CatalogFileError:
    return CatalogFileError(limits.refused("max_rows", f"больше {limits.max_rows:,}".replace(",", " ")))


# ---------------------------------------------------------------- JSON


def _row_lists(document: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """The lists of rows in a JSON object: under a known key, else every key holding a list of objects
    (a file grouped by category, {"rotweine": [...], "weißweine": [...]}), one level down at most."""
    for key in ROW_KEYS:
        for actual, value in document.items():
            if str(actual).lower() == key and isinstance(value, list):
                return [(actual, value)]
            if str(actual).lower() == key and isinstance(value, dict):
                inner = _row_lists(value)
                if inner:
                    return inner
    lists = [
        (k, v) for k, v in document.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v[:50])
    ]
    if not lists:
        for value in document.values():
            if isinstance(value, dict) and (inner := _row_lists(value)):
                return inner
    return lists


def _json_rows(text: str, limits: ReadLimits) -> list[SourceRow]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogFileError(
            f"файл JSON повреждён: {exc.msg} (строка {exc.lineno}, позиция {exc.colno})", exc.lineno
        ) from exc
    if isinstance(document, list):
        groups: list[tuple[str, list[Any]]] = [("", document)]
    elif isinstance(document, dict):
        groups = _row_lists(document)
        if not groups:
            raise CatalogFileError(
                "в файле нет строк: каталог JSON — это список вин или объект со списком под ключом"
                f" вроде {', '.join(ROW_KEYS[:5])}"
            )
    else:
        raise CatalogFileError("каталог JSON должен быть списком вин или объектом, который его содержит")
    if sum(len(items) for _, items in groups) > limits.max_rows:
        raise _too_many_rows(limits)
    lines = _element_lines(text, groups[0][1]) if len(groups) == 1 and "\n" in text.strip() else []
    rows: list[SourceRow] = []
    for key, items in groups:
        group = key if len(groups) > 1 else ""
        for item in items:
            line = lines[len(rows)] if len(rows) < len(lines) else 0
            rows.append(SourceRow(len(rows) + 1, line, item, group))
    return rows


def _element_lines(text: str, items: list[Any]) -> list[int]:
    """The line each element of the rows array starts on, found by decoding the array again from its "["
    (the one whose elements decode to the rows); [] when it cannot be found."""
    decoder = json.JSONDecoder()
    for start in (m.end() for m in re.finditer(r"\[", text)):
        position, lines = start, []
        try:
            for expected in items:
                while text[position] in " \t\r\n,":
                    position += 1
                found, end = decoder.raw_decode(text, position)
                if found != expected:
                    break
                lines.append(text.count("\n", 0, position) + 1)
                position = end
            else:
                return lines
        except (json.JSONDecodeError, IndexError):
            continue
    return []


# ---------------------------------------------------------------- CSV


def _csv_rows(text: str, limits: ReadLimits) -> Iterator[SourceRow]:
    header = text.split("\n", 1)[0]
    # Russian Excel saves CSV with ";"; lists inside a cell then need quotes, as Excel writes them.
    delimiter = max((",", ";", "\t"), key=header.count)
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    try:
        if not reader.fieldnames:
            raise CatalogFileError("в файле CSV нет строки заголовков")
        _check_row(list(reader.fieldnames), limits)
        for index, row in enumerate(reader, start=1):
            if index > limits.max_rows:
                raise _too_many_rows(limits)
            if None in row:
                yield SourceRow(index, reader.line_num, {"__error__": "more cells than header columns"})
                continue
            _check_row(list(row.values()), limits)
            item = {(k or "").strip(): (v or "").strip() for k, v in row.items() if (k or "").strip()}
            if any(item.values()):  # a blank line in the middle of a price list is not a row
                yield SourceRow(index, reader.line_num, item)
    except csv.Error as exc:  # a cell past the csv module's own limit (131 072 characters), a broken quote
        if "field larger than field limit" in str(exc):
            raise CatalogFileError(limits.refused("max_cell_chars", "больше 131 072")) from None
        raise CatalogFileError(f"файл CSV не читается: {exc} (строка {reader.line_num})", reader.line_num) from None


# ---------------------------------------------------------------- Excel


def _cell(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, float) and value.is_integer():
        return int(value)  # an article or a stock typed as a number comes back as 25084.0
    return value


def _excel_rows(raw: bytes, limits: ReadLimits) -> list[SourceRow]:
    """The first sheet's rows under its header: the first of its top rows naming at least two known columns
    (a price list may have a title, a date or a logo above it). Read streaming (openpyxl's read-only mode):
    the parts' unpacked sizes are checked before any is read, the sheet's declared size before its rows,
    and the row, column and cell limits as each row is read, so a small file of a huge sheet stops at once."""
    from openpyxl import load_workbook

    _check_parts(raw, limits)
    counted = _rows_in_sheets(raw, limits.max_rows + HEADER_SCAN_ROWS)  # before openpyxl scans for a size
    if counted > limits.max_rows + HEADER_SCAN_ROWS:
        raise _too_many_rows(limits)
    try:
        book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged or non-Excel file
        raise CatalogFileError(f"файл не читается как Excel .xlsx ({type(exc).__name__})") from exc
    try:
        sheet = book.worksheets[0]
        declared_rows, declared_columns = sheet.max_row or 0, sheet.max_column or 0  # the <dimension> it declares
        if declared_rows > limits.max_rows + HEADER_SCAN_ROWS:
            raise _too_many_rows(limits)
        if declared_columns > limits.max_columns:
            raise CatalogFileError(limits.refused("max_columns", f"{declared_columns:,}".replace(",", " ")))
        if counted > declared_rows:
            sheet.reset_dimensions()  # a <dimension> smaller than the sheet: openpyxl would stop at it, rows lost
        return _sheet_rows(sheet.iter_rows(values_only=True), limits)
    finally:
        book.close()


def _check_parts(raw: bytes, limits: ReadLimits) -> None:
    """An .xlsx is a ZIP: its parts' unpacked sizes (which bound what reading them yields) within the limit."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except zipfile.BadZipFile as exc:
        raise CatalogFileError("файл не читается как Excel .xlsx (это не ZIP-архив книги Excel)") from exc
    if unpacked > limits.max_unzipped_bytes:
        raise CatalogFileError(limits.refused("max_unzipped_bytes", f"{unpacked / MIB:.0f} МБ"))


_ROW_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?row[\s/>]")


def _rows_in_sheets(raw: bytes, most: int) -> int:
    """The rows of the workbook's longest sheet (counting stops past `most`), on its unpacked XML as it streams
    (a byte scan: 300 000 rows in a fraction of a second, where parsing them, or openpyxl's search for the
    size of a sheet that declares none, takes many seconds)."""
    import zipfile

    longest = 0
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        for part in archive.namelist():
            if not (part.startswith("xl/worksheets/") and part.endswith(".xml")):
                continue
            count, tail = 0, b""
            with archive.open(part) as source:
                while count <= most and (chunk := source.read(1 << 20)):
                    window = tail + chunk
                    count += len(_ROW_TAG.findall(window)) - len(_ROW_TAG.findall(tail))
                    tail = window[-32:]
            longest = max(longest, count)
    return longest


def _sheet_rows(values: Iterator[tuple[Any, ...]], limits: ReadLimits) -> list[SourceRow]:
    from sommelier import language

    head: list[list[Any]] = []
    header_at: int | None = None
    rows: list[SourceRow] = []
    header: list[str] = []
    for number, raw_row in enumerate(values, start=1):
        row = _sheet_row(raw_row, limits)
        if header_at is None:
            head.append(row)
            if sum(1 for v in row if isinstance(v, str) and language.catalog_column(v)) >= 2:
                header_at, header = number, [str(v).strip() if v is not None else "" for v in row]
            elif number >= HEADER_SCAN_ROWS:
                break
            continue
        if number - header_at > limits.max_rows:
            raise _too_many_rows(limits)
        item = {h: v for h, v in zip(header, row, strict=False) if h and v not in (None, "")}
        if item:
            rows.append(SourceRow(number - header_at, number, item))  # line: the sheet's row number
    if header_at is None:
        raise CatalogFileError(
            f"в первых {HEADER_SCAN_ROWS} строках листа нет строки заголовков: назовите колонки"
            " (Наименование, Цена, Артикул…)"
        )
    return rows


def _sheet_row(raw_row: tuple[Any, ...], limits: ReadLimits) -> list[Any]:
    row = list(raw_row)
    while row and row[-1] in (None, ""):
        row.pop()  # a sheet's rows come padded to its widest
    if len(row) > limits.max_columns:
        raise CatalogFileError(limits.refused("max_columns", f"{len(row):,}".replace(",", " ")))
    cells = [_cell(v) for v in row]
    for value in cells:
        if isinstance(value, str) and len(value) > limits.max_cell_chars:
            raise CatalogFileError(limits.refused("max_cell_chars", f"{len(value):,}".replace(",", " ")))
    return cells


# ---------------------------------------------------------------- Yandex Market YML

# <offer> children read as the catalogue's fields; <param name="…"> are read by their name like any column.
_YML_FIELDS = {
    "name": "name",
    "price": "price",
    "vendor": "producer",
    "country_of_origin": "country",
    "description": "description",
    "picture": "image_url",
    "vendorCode": "vendor_code",
    "url": "url",
    "barcode": "barcode",
    "typePrefix": "type_prefix",
    "model": "model",
    "currencyId": "currency",
    "count": "stock",
}


def _yml_rows(raw: bytes, limits: ReadLimits) -> list[SourceRow]:
    from defusedxml import ElementTree  # the stdlib parser expands entities; a shop's file is not trusted

    try:
        root = ElementTree.fromstring(raw)
    except Exception as exc:  # ParseError and defusedxml's refusals of entities and DTDs
        raise CatalogFileError(f"файл не читается как YML/XML: {exc}") from exc
    shop = root.find("shop") if root.tag == "yml_catalog" else root
    if shop is None or shop.find("offers") is None:
        raise CatalogFileError("в каталоге YML нужны <yml_catalog><shop><offers><offer>…")
    categories = {c.get("id"): ((c.text or "").strip(), c.get("parentId")) for c in shop.iter("category")}
    rows: list[SourceRow] = []
    for position, offer in enumerate(shop.iter("offer"), 1):
        if position > limits.max_rows:
            raise _too_many_rows(limits)
        rows.append(SourceRow(position, 0, _yml_offer(offer, categories)))
    return rows


def _yml_offer(offer: Element, categories: dict[Any, tuple[str, Any]]) -> dict[str, Any]:
    """One <offer> as a row: its id (the sku), availability, fields, <param>s and category path."""
    item: dict[str, Any] = {}
    if offer.get("id"):
        item["sku"] = offer.get("id")
    if offer.get("available") is not None:
        item["available"] = offer.get("available")
    for child in offer:
        text = (child.text or "").strip()
        if child.tag == "param" and child.get("name"):
            unit = child.get("unit")
            item.setdefault(str(child.get("name")), f"{text} {unit}" if unit else text)
        elif child.tag == "categoryId":
            item["category"] = _category_path(categories, text)
        elif child.tag in _YML_FIELDS and text:
            item.setdefault(_YML_FIELDS[child.tag], text)  # the first <picture> is the photo
    if "name" not in item and "model" in item:  # a vendor.model offer: type prefix, vendor and model
        item["name"] = " ".join(str(item[k]) for k in ("type_prefix", "producer", "model") if item.get(k))
    return item


def _category_path(categories: dict[Any, tuple[str, Any]], category_id: str) -> str:
    """«Вино / Вино тихое»: the offer's category with its parents, so a parent's word counts too."""
    names: list[str] = []
    seen: set[str] = set()
    current: Any = category_id
    while current in categories and current not in seen:
        seen.add(current)
        name, current = categories[current]
        names.insert(0, name)
    return " / ".join(n for n in names if n) or category_id
