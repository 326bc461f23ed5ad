"""What is wrong with a shop's row, said to the owner in Russian: the shop's own column, the cell as written,
and what to do («колонка «Цена, руб.»: «по запросу» — не цена; впишите цену числом»). The importer skips such a
row and lists it; `--strict` refuses the file instead.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from sommelier import language

_SHOWN_CHARS = 60


def _messages() -> dict[str, Any]:
    messages: dict[str, Any] = language.data("catalog_messages.json")  # the language layer caches its data files
    return messages


def _field_words(field: str) -> tuple[str, str]:
    words = _messages()["fields"].get(field)
    return (words[0], words[1]) if words else (field, str(_messages()["field_fallback_advice"]))


class _KindWords:
    """Why a row that is not a grape wine was left out, by its RowKind (catalog_messages.json `kinds`)."""

    def get(self, kind: str, default: str) -> str:
        return str(_messages()["kinds"].get(kind, default))


KIND_WORDS = _KindWords()


def _count(number: int) -> str:
    return f"{number:,}".replace(",", " ")


def shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return "«" + (text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…") + "»"


def _column(field: str, columns: dict[str, str]) -> str:
    header = columns.get(field)
    return f"колонка «{header}»" if header else f"колонка «{_field_words(field)[0]}»"


def _missing(field: str, columns: dict[str, str], file_columns: set[str]) -> str:
    words, todo = _field_words(field)
    if field in ("wine_type", "sweetness"):
        said = "и название не говорит" + (" цвет" if field == "wine_type" else ", сухое оно или сладкое")
    else:
        said = ""
    if field in file_columns or field in columns:
        return f"{_column(field, columns)}: пусто{', ' + said if said else ''} — {todo}"
    return f"в файле нет колонки «{words}»{', ' + said if said else ''} — {todo}"


def _bad_value(field: str, value: Any, columns: dict[str, str], error: Any) -> str:
    words, todo = _field_words(field)
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


def skip_group(field: str) -> str:
    """What a skipped row is counted under in the summary, by the first field that failed."""
    groups = _messages()["skip_groups"]
    return str(groups.get(field, groups["*"]))
