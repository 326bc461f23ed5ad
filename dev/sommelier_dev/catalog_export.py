"""`sommelier catalog export FILE.xlsx | FILE.csv | FILE.json`: the catalogue back in the owner's format, as a table an
import reads again. The columns are the owner's own where the import kept them (the shop's header for each
field, in `extra["shop_columns"]`, and the shop's other columns as written), else a Russian header the
importer reads as that field; colours and sweetness in Russian words; lists joined as the importer splits
them. Export → edit in Excel → import round-trips: the id column keeps each wine's identity.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from sommelier import language
from sommelier.catalog.shop_rows import SHOP_COLUMNS, STOCK
from sommelier.domain.catalog import ExportedWine
from sommelier.domain.wine import SWEETNESS_RU, WINE_TYPE_RU

TABLE_TYPES = (".xlsx", ".csv", ".json")

_WORDS = {"wine_type": WINE_TYPE_RU, "sweetness": SWEETNESS_RU}
_JOINED = {"grape_varieties": ", ", "food_pairings": "; ", "inferred": ", "}  # as the importer splits them


class ExportTypeError(ValueError):
    """The file's extension is not one the export writes."""


def check_type(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in TABLE_TYPES:
        raise ExportTypeError(
            f"выгрузка пишет файлы .xlsx (Excel), .csv или .json, а не «{path.suffix or path.name}»:"
            " укажите имя файла с одним из этих расширений"
        )
    return suffix


@cache
def _default_headers() -> dict[str, str]:
    """Each exported field → the header written when the shop's file did not name it (catalog_columns.json
    `export_headers`, each read back as its field by the importer; the technical fields under their names)."""
    named: dict[str, str] = language.data("catalog_columns.json")["export_headers"]
    fields = ("id", *named, "image_key", "available", "inferred")
    return {f: named.get(f, f) for f in fields}


def _headers(wines: list[ExportedWine]) -> dict[str, str]:
    """Each field → its header: the shop's own one most wines came with, else the Russian default."""
    own: dict[str, Counter[str]] = {}
    for wine in wines:
        columns = wine.extra.get(SHOP_COLUMNS)
        for field, header in columns.items() if isinstance(columns, dict) else ():
            own.setdefault(str(field), Counter())[str(header)] += 1
    headers: dict[str, str] = {}
    for field, default in _default_headers().items():
        chosen = own[field].most_common(1)[0][0] if field in own else default
        if chosen in headers.values():  # a 1C list's «id» was its article: one header, one field
            chosen = default if default not in headers.values() else field
        headers[field] = chosen
    return headers


def _extra_columns(wines: list[ExportedWine], taken: set[str]) -> list[str]:
    seen: dict[str, None] = {}
    for wine in wines:
        for key in wine.extra:
            if key != SHOP_COLUMNS and key not in taken:
                seen.setdefault(key)
    return list(seen)


def _cell(field: str, value: Any) -> Any:
    if value is None:
        return None
    if field in _JOINED and isinstance(value, list):
        return _JOINED[field].join(str(v) for v in value)
    if field in _WORDS:
        return _WORDS[field].get(str(value), value)
    if field == "available":
        return "да" if value else "нет"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value


def table(wines: list[ExportedWine]) -> tuple[list[str], list[list[Any]]]:
    """(the header row, a row per wine)."""
    headers = _headers(wines)
    fields = [f for f in _default_headers() if f not in ("available",) or any(w.available is not None for w in wines)]
    extra = _extra_columns(wines, set(headers.values()))
    rows: list[list[Any]] = []
    stock_columns = {key for key in extra if language.catalog_column(key) == STOCK}
    for wine in wines:
        # a wine with the shop's own stock column: that column says whether it is for sale (an edit of it counts)
        own_stock = any(wine.extra.get(key) not in (None, "") for key in stock_columns)
        row = [None if f == "available" and own_stock else _cell(f, getattr(wine, f)) for f in fields]
        rows.append(row + [_cell("", wine.extra.get(key)) for key in extra])
    return [headers[f] for f in fields] + extra, rows


def write_table(path: Path, wines: list[ExportedWine]) -> None:
    """The wines as an .xlsx or .csv file (UTF-8 with a BOM and «;», as Russian Excel opens and saves it)."""
    header, rows = table(wines)
    if check_type(path) == ".xlsx":
        from openpyxl import Workbook

        book = Workbook(write_only=True)
        sheet = book.create_sheet("Каталог")
        sheet.append(header)
        for row in rows:
            sheet.append(row)
        book.save(path)
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(["" if v is None else v for v in row] for row in rows)
    path.write_text(buffer.getvalue(), encoding="utf-8-sig")
