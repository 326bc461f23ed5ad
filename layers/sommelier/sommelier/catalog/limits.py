"""The limits a shop's catalogue file is read within, so that no file (a spreadsheet of 300 000 rows packed
into 100 KiB, a cell of a million characters, a ZIP that unpacks to gigabytes) can take the import down.
Each is checked as the file is read, before anything is written, and refuses the file with a message naming
the limit and the setting that changes it (RELIABILITY.md lists them)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

MIB = 1024 * 1024


class LimitSettingError(ValueError):
    """A limit's setting is not a positive whole number."""


@dataclass(frozen=True)
class ReadLimits:
    max_file_bytes: int = 50 * MIB  # CATALOG_MAX_FILE_MB: the file as uploaded (an .xlsx packed)
    max_unzipped_bytes: int = 300 * MIB  # CATALOG_MAX_UNZIPPED_MB: an .xlsx's parts unpacked, or a drop's ZIP
    max_rows: int = 20_000  # CATALOG_MAX_ROWS: rows of the file (a sheet's rows, a JSON list, YML offers)
    max_columns: int = 300  # CATALOG_MAX_COLUMNS: columns of a row
    max_cell_chars: int = 100_000  # CATALOG_MAX_CELL_CHARS: characters in one cell

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> ReadLimits:
        """The defaults, with each CATALOG_MAX_* set in the environment instead."""
        env = os.environ if env is None else env
        values = {}
        for field, (name, unit) in SETTINGS.items():
            raw = (env.get(name) or "").strip()
            if not raw:
                continue
            if not raw.isdigit() or int(raw) <= 0:
                raise LimitSettingError(f"{name} должен быть целым числом больше нуля, а не «{raw[:40]}»")
            values[field] = int(raw) * unit
        return cls(**values)

    def refused(self, field: str, found: str) -> str:
        """The owner's message for a file past the limit `field` (`found`: what the file has)."""
        name, unit = SETTINGS[field]
        limit = f"{getattr(self, field) // unit:,}".replace(",", " ") + (" МБ" if unit == MIB else "")
        return (
            f"{_WORDS[field]} {found}, а предел — {limit} ({name}): ничего не импортировано;"
            f" разделите файл или увеличьте {name}"
        )


SETTINGS = {
    "max_file_bytes": ("CATALOG_MAX_FILE_MB", MIB),
    "max_unzipped_bytes": ("CATALOG_MAX_UNZIPPED_MB", MIB),
    "max_rows": ("CATALOG_MAX_ROWS", 1),
    "max_columns": ("CATALOG_MAX_COLUMNS", 1),
    "max_cell_chars": ("CATALOG_MAX_CELL_CHARS", 1),
}
_WORDS = {
    "max_file_bytes": "файл весит",
    "max_unzipped_bytes": "в распакованном виде файл занимает",
    "max_rows": "в файле строк:",
    "max_columns": "в строке колонок:",
    "max_cell_chars": "в ячейке символов:",
}
