"""`catalog_import`: `sommelier catalog import` at 1k and 10k wines (quick mode: 1k), through the real importer.

Each size is a JSON file of synthetic shop rows (bench.common.synthetic_rows: the shipped catalogue's
joint distribution, unique names, a sku and an extra field each), imported into a freshly migrated
database in process with the local embedder: validation, embeddings, the upserts with their
normalised columns, all in one transaction. Then the same file again with --replace (every row an
update, nothing retired). Wall time per run; the figure is wines per second.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.common import COPY_COLUMNS, Context, Figure, figure, log, size_label, synthetic_rows

NAME = "catalog_import"
SIZES = (1_000, 10_000)
# The fields a shop's file carries: the synthetic row's leading columns (the rest the importer derives).
COLUMNS = COPY_COLUMNS[: COPY_COLUMNS.index("food_pairings") + 1]


def write_file(path: Path, rows: int, seed: int) -> None:
    wines = []
    for i, row in enumerate(synthetic_rows(rows, seed)):
        wine = dict(zip(COLUMNS, row[: len(COLUMNS)], strict=True))
        wine["sku"] = f"BENCH-{i:06d}"
        wine["price_range"] = "bench"  # an extra field, kept in `extra`
        wines.append(wine)
    path.write_text(json.dumps({"wines": wines}, ensure_ascii=False), encoding="utf-8")


def run(ctx: Context) -> list[Figure]:
    from sommelier.catalog.importer import import_catalog
    from sommelier.db.migrations import apply_migrations
    from sommelier.db.pool import Database
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.photos.store import LocalPhotoStore
    from sommelier.repositories.adapters import in_process_repositories

    postgres = ctx.db().postgres
    figures: list[Figure] = []
    runs = 1 if ctx.quick else max(1, min(ctx.runs, 3))
    # Quick mode imports 1k only (10k takes minutes on 2 cores); a smoke run 100.
    sizes = (100,) if ctx.smoke else SIZES[:1] if ctx.quick else SIZES
    for rows in sizes:
        label = size_label(rows)
        path = ctx.workdir / f"import-{label}.json"
        write_file(path, rows, seed=rows)
        fresh: list[float] = []
        again: list[float] = []
        for _ in range(runs):
            name, url = postgres.create_database(f"bench_import_{label}")
            apply_migrations(url)
            database = Database(url)
            catalog = in_process_repositories(database).catalog
            photos = LocalPhotoStore(ctx.workdir / "import-photos")
            started = time.perf_counter()
            report = import_catalog(path, catalog=catalog, embedder=LocalHashingEmbeddings(), photos=photos)
            fresh.append(rows / (time.perf_counter() - started))
            assert report.inserted == rows, report
            started = time.perf_counter()
            report = import_catalog(
                path, catalog=catalog, embedder=LocalHashingEmbeddings(), photos=photos, replace=True
            )
            again.append(rows / (time.perf_counter() - started))
            assert report.updated == rows and report.retired == 0, report
            database.close()
        figures.append(figure(NAME, f"import wines/s @{label} (new)", "wines/s", fresh, details={"wines": rows}))
        figures.append(figure(NAME, f"import wines/s @{label} (again, --replace)", "wines/s", again))
        log(f"catalog_import @{label}: {min(fresh):.0f}-{max(fresh):.0f} wines/s new, {max(again):.0f} again")
    return figures
