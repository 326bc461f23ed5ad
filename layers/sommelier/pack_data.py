"""Gzip the language layer's tables in a built copy of the package: `python pack_data.py <package folder>`.

The layer build runs it (Makefile, build-SommelierLayer) on the copy under python/sommelier, never on the
repository, where the tables stay JSON that people read and review. `sommelier.language` reads a table as
JSON when it is there and gzipped otherwise; the bytes, and so the vocabulary's version digest, are the
same either way. The tables are a fifth of their size gzipped (0.49 → 0.09 MB).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path


def pack(package: Path) -> int:
    """Replace each language/data/*.json by name.json.gz; the number of files packed."""
    tables = sorted((package / "language" / "data").glob("*.json"))
    if not tables:
        raise SystemExit(f"{package}: no language/data/*.json to pack (is it the sommelier package?)")
    for table in tables:
        # mtime=0: the same tables give the same bytes, so an unchanged layer builds to the same zip
        table.with_name(table.name + ".gz").write_bytes(gzip.compress(table.read_bytes(), 9, mtime=0))
        table.unlink()
    return len(tables)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python pack_data.py <the sommelier package folder of a built layer>")
    print(f"language tables gzipped: {pack(Path(sys.argv[1]))}")
