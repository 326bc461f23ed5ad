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


def read_rows(path: Path) -> list[SourceRow]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogFileError(f"не удалось прочитать {path}: {exc.strerror}") from exc
    suffix = path.suffix.lower()
    if suffix in EXCEL_TYPES:
        return _excel_rows(raw)
    if suffix == ".xls":
        raise CatalogFileError(
            "старый формат Excel .xls: сохраните файл как .xlsx (книга Excel) или CSV и импортируйте его"
        )
    if suffix in YML_TYPES:
        return _yml_rows(raw)
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
        return _json_rows(text)
    return list(_csv_rows(text))


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


def _json_rows(text: str) -> list[SourceRow]:
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


def _csv_rows(text: str) -> Iterator[SourceRow]:
    header = text.split("\n", 1)[0]
    # Russian Excel saves CSV with ";"; lists inside a cell then need quotes, as Excel writes them.
    delimiter = max((",", ";", "\t"), key=header.count)
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    if not reader.fieldnames:
        raise CatalogFileError("в файле CSV нет строки заголовков")
    for index, row in enumerate(reader, start=1):
        if None in row:
            yield SourceRow(index, reader.line_num, {"__error__": "more cells than header columns"})
            continue
        item = {(k or "").strip(): (v or "").strip() for k, v in row.items() if (k or "").strip()}
        if any(item.values()):  # a blank line in the middle of a price list is not a row
            yield SourceRow(index, reader.line_num, item)


# ---------------------------------------------------------------- Excel


def _cell(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, float) and value.is_integer():
        return int(value)  # an article or a stock typed as a number comes back as 25084.0
    return value


def _excel_rows(raw: bytes) -> list[SourceRow]:
    """The first sheet's rows under its header: the first of its top rows naming at least two known columns
    (a price list may have a title, a date or a logo above it)."""
    from openpyxl import load_workbook

    from sommelier import language

    try:
        book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged or non-Excel file
        raise CatalogFileError(f"файл не читается как Excel .xlsx ({type(exc).__name__})") from exc
    try:
        table = [[_cell(v) for v in row] for row in book.worksheets[0].iter_rows(values_only=True)]
    finally:
        book.close()
    header_at = next(
        (
            i
            for i, row in enumerate(table[:HEADER_SCAN_ROWS])
            if sum(1 for v in row if isinstance(v, str) and language.catalog_column(v)) >= 2
        ),
        None,
    )
    if header_at is None:
        raise CatalogFileError(
            f"в первых {HEADER_SCAN_ROWS} строках листа нет строки заголовков: назовите колонки"
            " (Наименование, Цена, Артикул…)"
        )
    header = [str(v).strip() if v is not None else "" for v in table[header_at]]
    rows: list[SourceRow] = []
    for offset, values in enumerate(table[header_at + 1 :], start=header_at + 2):
        item = {h: v for h, v in zip(header, values, strict=False) if h and v not in (None, "")}
        if item:
            rows.append(SourceRow(offset - header_at - 1, offset, item))  # line: the sheet's row number
    return rows


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


def _yml_rows(raw: bytes) -> list[SourceRow]:
    from defusedxml import ElementTree  # the stdlib parser expands entities; a shop's file is not trusted

    try:
        root = ElementTree.fromstring(raw)
    except Exception as exc:  # ParseError and defusedxml's refusals of entities and DTDs
        raise CatalogFileError(f"файл не читается как YML/XML: {exc}") from exc
    shop = root.find("shop") if root.tag == "yml_catalog" else root
    if shop is None or shop.find("offers") is None:
        raise CatalogFileError("в каталоге YML нужны <yml_catalog><shop><offers><offer>…")
    categories = {c.get("id"): ((c.text or "").strip(), c.get("parentId")) for c in shop.iter("category")}
    return [
        SourceRow(position, 0, _yml_offer(offer, categories)) for position, offer in enumerate(shop.iter("offer"), 1)
    ]


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
