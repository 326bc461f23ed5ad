"""A shop's row in the catalogue's terms: its own column names read as fields, nested records flattened, an
article code as the sku, the stock as availability, and the decision whether the row is a wine at all.

What is wine is read from the legal name first, then the shop's category: the category is a clerk's choice
(a port filed under «Другое», a snack under «Вино»), while the legal name («Вино … сухое красное»,
«Шампанское…», «Виски…») is the product's official one. Fortified wines (port, sherry, madeira, vermouth)
are skipped and counted apart: the catalogue's styles (red, white, rose, sparkling; dry to sweet) do not
describe them, and a customer asking for «красное сладкое» must not be offered a 20% port.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from sommelier import language
from sommelier.domain.records import WineRecord

MODEL_FIELDS = frozenset(WineRecord.model_fields) - {"extra"}
# Fields of a shop's row that are not the catalogue's but are read at import (kept in `extra` too).
STOCK, CATEGORY, VOLUME = "stock", "category", "volume"
# In `extra`: each catalogue field → the shop's own header it came under, so an export writes the shop's columns.
SHOP_COLUMNS = "shop_columns"
FLATTEN_DEPTH = 2  # {"metadata": {"Страна": …}}, {"stock": {"in_stock": …}}: a scraper's nested record
PLACEHOLDERS = {"-", "—", "–", "n/a", "N/A", "нет данных", "?"}
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


class RowKind:
    WINE = "wine"
    NOT_WINE = "not wine"  # spirits, beer, cider, food, accessories
    FORTIFIED = "fortified"  # port, sherry, madeira, vermouth: skipped, counted apart
    UNKNOWN = "not recognisably wine"  # the category and the name both say nothing about wine
    FRUIT = "fruit wine"  # pomegranate, plum, blackberry «вино»: not grape wine, never offered as one
    ALCOHOL_FREE = "alcohol-free"  # an alcohol-free «вино»


@dataclass
class ShopRow:
    """A row with the catalogue's field names; `category` and `available` as read from the shop's columns."""

    item: dict[str, Any]
    category: str
    available: bool
    columns: dict[str, str] = field(default_factory=dict)  # a catalogue field → the shop's own column name


def flatten(item: dict[str, Any], depth: int = FLATTEN_DEPTH) -> dict[str, Any]:
    """Nested objects' keys at the top (a key the row already has stays the row's); lists of words joined."""
    out: dict[str, Any] = {}
    nested: list[dict[str, Any]] = []
    for raw_key, value in item.items():
        key = str(raw_key).strip()  # «  Цена  »: a header padded to a fixed width
        if isinstance(value, dict) and key not in ("extra", SHOP_COLUMNS) and depth > 0:
            nested.append(flatten(value, depth - 1))
        elif isinstance(value, str) and value.strip() in PLACEHOLDERS:
            out[key] = ""  # «—» or «-» in a price list's cell: nothing said
        elif isinstance(value, str):
            out[key] = value.strip()  # a cell padded with spaces (no-break ones too)
        else:
            out[key] = value
    for inner in nested:
        for key, value in inner.items():
            out.setdefault(key, value)
    return out


def canonical_keys(item: dict[str, Any]) -> dict[str, Any]:
    """A shop's own column names («Наименование», «Сорт винограда», «wineColor», «Цена, руб.») as the
    catalogue's fields, from the language layer's table; a name it does not know, or a field the row also
    fills under its own name, stays as written (and so in `extra`)."""
    # `stock` and `category` are read where they are (_read_as): the shop's own column stays in `extra`.
    meant = {k: language.catalog_column(str(k)) for k in item if k not in MODEL_FIELDS and k != "extra"}
    meant = {k: target if target in MODEL_FIELDS else None for k, target in meant.items()}
    out = {k: v for k, v in item.items() if meant.get(k) is None}
    taken: set[str] = set()
    for key, target in meant.items():
        if target is None:
            continue
        if target not in taken and out.get(target) in (None, "", []):  # an empty own-name column does not count
            out[target] = item[key]
            taken.add(target)
        else:
            out[key] = item[key]
    return out


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " / ".join(str(v) for v in value if v not in (None, ""))
    return "" if value is None else str(value).strip()


def in_stock(value: Any) -> bool | None:
    """What a stock cell says: a count (0 or less: none), yes/no, «в наличии»; None when it is empty."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value > 0
    said = language.stock_word(str(value))
    if said is not None:
        return said
    number = _NUMBER.search(str(value))
    return float(number.group().replace(",", ".")) > 0 if number else None


def shop_columns(flat: dict[str, Any]) -> dict[str, str]:
    """Each catalogue field a row fills → the shop's own column it came from («price_rub» → «Цена, руб.»), so a
    message names the column the owner sees."""
    columns: dict[str, str] = {}
    for key in flat:
        target = key if key in MODEL_FIELDS else language.catalog_column(str(key))
        if target in MODEL_FIELDS:
            columns.setdefault(target, str(key))
    if "id" in columns:
        columns.setdefault("sku", columns["id"])
    return columns


def shop_row(raw: dict[str, Any]) -> ShopRow:
    flat = flatten(raw)
    columns = shop_columns(flat)
    item = canonical_keys(flat)
    # A shop's own id (a 1C code «РТ-00000455», a number) is its article: the sku. A UUID is ours (an export).
    if item.get("id") not in (None, "") and not _is_uuid(item["id"]):
        shop_id = _text(item.pop("id"))
        if item.get("sku") in (None, ""):
            item["sku"] = shop_id
        else:
            item["shop_id"] = shop_id
    if isinstance(item.get("sku"), int | float) and not isinstance(item.get("sku"), bool):
        item["sku"] = _text(item["sku"])
    if isinstance(item.get("sku"), str):
        item["sku"] = item["sku"].strip()
    if isinstance(item.get("inferred"), str):  # «wine_type, sweetness»: an exported table's cell
        item["inferred"] = [f.strip() for f in item["inferred"].split(",") if f.strip()]
    image = item.get("image")
    if isinstance(image, str) and image.lower().startswith(("http://", "https://")) and not item.get("image_url"):
        item["image_url"] = item.pop("image")  # a web address in the shop's «image» column is a photo to fetch
    available = item.get("available")
    stocked = in_stock(_read_as(item, STOCK))
    if isinstance(available, str):
        available = in_stock(available)
    item["available"] = (available is not False) and (stocked is not False)
    return ShopRow(item, _categories(item), item["available"], columns)


def _categories(item: dict[str, Any]) -> str:
    """Every cell of a column that means the shop's category («section», «Вид»), joined: a scraped card files
    «Вино / Вино тихое» in one and «Вино тихое безалкогольное» in another."""
    cells = [
        _text(value)
        for key, value in item.items()
        if value not in (None, "", []) and key not in MODEL_FIELDS and language.catalog_column(str(key)) == CATEGORY
    ]
    return " / ".join(dict.fromkeys(c for c in cells if c))


def volume_of(extra: dict[str, Any]) -> str:
    """The bottle's size as the shop wrote it («0,75», «1,5 л», «750»), from a column meaning `volume`."""
    return _text(_read_as(extra, VOLUME))


def _read_as(item: dict[str, Any], meaning: str) -> Any:
    """The first non-empty cell of a column that means `meaning` («Остаток-1», «qty»; «Категория», «section»)."""
    for key, value in item.items():
        if value not in (None, "", []) and key not in MODEL_FIELDS and language.catalog_column(str(key)) == meaning:
            return value
    return None


def row_kind(name: str, category: str, colour_cell: str) -> str:
    """Whether a row is a wine the catalogue takes (RowKind), from its legal name, then its category, then
    its colour cell. A file without categories (a wine list) is all wine unless a name says otherwise."""
    reading = language.legal_reading(name)
    apart = language.wine_apart(name)
    if apart is None and category and reading.is_wine is not True:
        apart = language.wine_apart(category)  # «Вид: Вино тихое безалкогольное»; a legal name «Вино …» decides
    if apart == "alcohol_free":
        return RowKind.ALCOHOL_FREE
    if apart == "drink":
        return RowKind.NOT_WINE
    if apart == "fruit" and reading.is_wine is not False:
        return RowKind.FRUIT
    # A legal name states two of colour, sugar and sparkle («сухое красное»); one word alone may be a
    # snack's («Чипсы … розовый перец»). The shop's own colour cell is enough.
    said_of_style = sum(1 for v in (reading.colour, reading.sweetness, reading.sparkling) if v)
    styled = said_of_style >= 2 or _names_a_style(colour_cell)
    said = language.legal_reading(category) if category else None
    category_not_wine = said is not None and (said.is_wine is False or language.non_wine(category))
    by_name = _kind_by_name(reading, colour_cell, category_not_wine=category_not_wine, styled=styled)
    if by_name is not None:
        return by_name
    if said is None:
        return RowKind.WINE
    return _kind_by_category(said, reading, name, category, category_not_wine=category_not_wine, styled=styled)


def _kind_by_name(
    reading: language.LegalReading, colour_cell: str, *, category_not_wine: bool, styled: bool
) -> str | None:
    """The kind the legal name decides (None: it leaves it to the category)."""
    if reading.is_wine and category_not_wine and not styled:
        # a wine word in a spirit's name («… Шерри Каск», «… Вино Баррик Сингл Молт»: a cask), filed as one
        return RowKind.NOT_WINE
    if reading.fortified and reading.is_wine is not False:
        return RowKind.FORTIFIED  # «ликёрное …», «Kagor …»: the name says fortified, with or without «вино»
    if reading.is_wine:
        return RowKind.WINE
    if reading.is_wine is False and not _names_a_style(colour_cell):
        return RowKind.NOT_WINE  # «в подарочной упаковке» with the shop's own colour is still a wine
    return None


def _kind_by_category(
    said: language.LegalReading,
    reading: language.LegalReading,
    name: str,
    category: str,
    *,
    category_not_wine: bool,
    styled: bool,
) -> str:
    """The kind of a row whose name says neither wine nor not: what its category says."""
    if said.fortified or (reading.fortified and not category_not_wine):
        return RowKind.FORTIFIED  # «Ароматизированный напиток … Вермут»: filed under food or not
    if category_not_wine:
        return RowKind.NOT_WINE
    if styled or _names_a_style(category) or language.style_cues("sweetness").find(language.normalize(category)):
        return RowKind.WINE  # a shop's section «Белое», «Sladko» (sweet), «Cabernet»
    if said.is_wine and (language.appellations_in(name) or language.grapes_in(name)):
        return RowKind.WINE
    return RowKind.UNKNOWN  # «Другое», or «Вино / Прочее» holding a smoking gun: listed in the report


def _names_a_style(text: str) -> bool:
    """«Other Red», «Sparkling», «Cabernet», «Белое»: a wine's colour, style or grape."""
    if not text:
        return False
    return bool(
        language.style_cues("wine_types").find(language.normalize(text))
        or language.grapes_in(text)
        or language.blend_word(text)
    )
