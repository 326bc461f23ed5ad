"""`catalog_import_thin`: a 10k-row thin shop export imported raw, with enrichment (issue 24).

The file is built from the committed 1C stock list (tests/data/catalogues/vinoteka34_inventory.json): its
rows (legal names, prices, stock, categories, a colour column; wine, spirits and food alike) repeated
under new article codes up to 10 000 rows, minified as shops export it. Each run imports it into a
freshly migrated database in process with the local embedder: reading, telling wine from the rest,
inferring country, region, appellation, grapes, sweetness and vintage from the names, validation,
embeddings and the upserts. Wall time per run; the target is under 2 minutes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.common import ROOT, Context, Figure, figure, log

NAME = "catalog_import_thin"
ROWS = 10_000
SOURCE = ROOT / "tests" / "data" / "catalogues" / "vinoteka34_inventory.json"
TARGET_S = 120


def write_file(path: Path, rows: int) -> None:
    items = json.loads(SOURCE.read_text("utf-8"))["items"]
    out = []
    for i in range(rows):
        item = dict(items[i % len(items)])
        item["id"] = f"BENCH-{i:06d}"
        out.append(item)
    path.write_text(json.dumps({"items": out}, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def run(ctx: Context) -> list[Figure]:
    from sommelier.catalog.importer import import_catalog
    from sommelier.db.migrations import apply_migrations
    from sommelier.db.pool import Database
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.photos.store import LocalPhotoStore
    from sommelier.repositories.adapters import in_process_repositories

    postgres = ctx.db().postgres
    rows = 300 if ctx.smoke else ROWS  # a smoke run: the suite's check that the benchmark still runs
    path = ctx.workdir / "import-thin.json"
    write_file(path, rows)
    seconds: list[float] = []
    enrich_only: list[float] = []
    runs = 1 if ctx.quick or ctx.smoke else max(1, min(ctx.runs, 3))
    for _ in range(runs):
        from sommelier.catalog.importer import prepare_rows, read_catalog

        started = time.perf_counter()
        prepared = prepare_rows(read_catalog(path), path.parent)
        enrich_only.append(time.perf_counter() - started)
        name, url = postgres.create_database("bench_import_thin")
        apply_migrations(url)
        database = Database(url)
        catalog = in_process_repositories(database).catalog
        started = time.perf_counter()
        report = import_catalog(
            path,
            catalog=catalog,
            embedder=LocalHashingEmbeddings(),
            photos=LocalPhotoStore(ctx.workdir / "import-photos"),
            replace=True,
        )
        seconds.append(time.perf_counter() - started)
        assert report.rows == len(prepared.records) and sum(report.skipped.values()) == rows - report.rows, report
        database.close()
        log(f"{NAME}: {report.rows} wines of {rows} rows in {seconds[-1]:.1f} s (read+enrich {enrich_only[-1]:.1f} s)")
    return [
        figure(NAME, "thin 10k rows: import with enrichment", "s", seconds, at_most=TARGET_S, details={"rows": rows}),
        figure(NAME, "thin 10k rows: read, sort out and enrich only", "s", enrich_only, details={"rows": rows}),
    ]
