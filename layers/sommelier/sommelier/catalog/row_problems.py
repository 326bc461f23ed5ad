"""What is wrong with a shop's row, said to the owner in Russian: the shop's own column, the cell as written,
and what to do («колонка «Цена, руб.»: «по запросу» — не цена; впишите цену числом»). The importer skips such a
row and lists it; `--strict` refuses the file instead.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from sommelier.catalog.shop_rows import RowKind

_SHOWN_CHARS = 60

# The catalogue's field → what the owner calls it (when the file has no column for it) and what to write.
_FIELD_WORDS: dict[str, tuple[str, str]] = {
    "name": ("название", "впишите название вина"),
    "price_rub": ("цена", "впишите цену в рублях числом (1290 или 1 290 ₽)"),
    "wine_type": ("цвет", "впишите цвет: красное, белое, розовое или игристое"),
    "sweetness": ("сахар", "впишите сахар: сухое, полусухое, полусладкое, сладкое или брют"),
    "vintage_year": ("год урожая", "впишите год четырьмя цифрами или оставьте пустым для NV"),
    "grape_varieties": ("сорт винограда", "перечислите сорта через запятую"),
    "body": ("тело", "впишите число от 1 до 5 или оставьте пустым"),
    "tannins": ("танины", "впишите число от 1 до 5 или оставьте пустым"),
    "acidity": ("кислотность", "впишите число от 1 до 5 или оставьте пустым"),
    "image_url": ("фото", "ссылка должна начинаться с http:// или https://"),
    "sku": ("артикул", "у каждого вина свой артикул"),
}

# Why a row that is not a wine was left out, as the owner reads it.
KIND_WORDS = {
    RowKind.NOT_WINE: "не вино (крепкий алкоголь, пиво, еда, аксессуары, подарки)",
    RowKind.FORTIFIED: "креплёное или десертное вино (портвейн, херес, кагор, вермут…): каталог их не предлагает",
    RowKind.UNKNOWN: "не понятно, вино ли это: ни название, ни категория не говорят",
    RowKind.FRUIT: "плодовое или ягодное «вино» (не виноградное): как вино не предлагается",
    RowKind.ALCOHOL_FREE: "безалкогольное: как вино не предлагается",
}


def _count(number: int) -> str:
    return f"{number:,}".replace(",", " ")


def shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return "«" + (text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…") + "»"


def _column(field: str, columns: dict[str, str]) -> str:
    header = columns.get(field)
    return f"колонка «{header}»" if header else f"колонка «{_FIELD_WORDS.get(field, (field, ''))[0]}»"


def _missing(field: str, columns: dict[str, str], file_columns: set[str]) -> str:
    words, todo = _FIELD_WORDS.get(field, (field, "заполните"))
    if field in ("wine_type", "sweetness"):
        said = "и название не говорит" + (" цвет" if field == "wine_type" else ", сухое оно или сладкое")
    else:
        said = ""
    if field in file_columns or field in columns:
        return f"{_column(field, columns)}: пусто{', ' + said if said else ''} — {todo}"
    return f"в файле нет колонки «{words}»{', ' + said if said else ''} — {todo}"


def _bad_value(field: str, value: Any, columns: dict[str, str], error: Any) -> str:
    words, todo = _FIELD_WORDS.get(field, (field, "исправьте значение"))
    where = _column(field, columns)
    if error["type"] in ("string_too_long", "too_long") and hasattr(value, "__len__"):
        limit = (error.get("ctx") or {}).get("max_length")
        return f"{where}: слишком длинно ({_count(len(value))} символов, можно {_count(limit or 0)})"
    if field == "price_rub" and error["type"] in ("greater_than", "less_than_equal"):
        return f"{where}: {shown(value)} — цена должна быть больше нуля и не больше 10 000 000 ₽"
    return f"{where}: {shown(value)} — не {words}; {todo}"


def russian_reason(exc: ValidationError, columns: dict[str, str], file_columns: set[str]) -> tuple[str, str]:
    """(each problem of a row: the shop's column, its cell as written, what to do; the field it is counted
    under in the summary: the first one that failed)."""
    parts: list[str] = []
    fields: list[str] = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        fields.append(field)
        if error["type"] == "missing":
            parts.append(_missing(field, columns, file_columns))
        elif field:
            parts.append(_bad_value(field, error.get("input"), columns, error))
        else:
            parts.append(str(error["msg"]).removeprefix("Value error, "))
    first = next(
        (f for f in ("price_rub", "wine_type", "sweetness", "name") if f in fields), fields[0] if fields else ""
    )
    return "; ".join(dict.fromkeys(parts)), first


# What a skipped row is counted under in the summary, by the first field that failed.
SKIP_GROUPS = {
    "price_rub": "нет цены или цена не читается",
    "wine_type": "цвет не понятен",
    "sweetness": "сахар не понятен",
    "name": "нет названия",
    "sku": "повтор артикула",
    "image": "нет файла фото",
    "": "строка не читается",
}


def skip_group(field: str) -> str:
    return SKIP_GROUPS.get(field, "ошибки в других ячейках")
