"""`sommelier dev up|down`: the embedded database, migrations and the shipped catalogue."""

from __future__ import annotations

import argparse

from sommelier.domain.catalog import CatalogStats
from sommelier.embeddings.port import EmbeddingProvider
from sommelier.settings import project_root

from sommelier_dev.cli.context import CliContext
from sommelier_dev.cli.output import console, fail

SHIPPED_CATALOG = "data/catalog/wines.json"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("dev", help="local environment: embedded PostgreSQL, migrations, shipped catalogue")
    actions = parser.add_subparsers(dest="action", required=True)
    up = actions.add_parser("up", help="start (or reuse) the database, migrate, seed the catalogue if empty")
    up.set_defaults(run=run_up)
    down = actions.add_parser("down", help="stop the embedded database")
    down.set_defaults(run=run_down)


def ensure_ready(context: CliContext, quiet: bool = False) -> CatalogStats:
    """Migrate and seed; returns catalogue stats. Idempotent, used by `dev up`, `chat` and tests."""
    from sommelier.catalog.importer import import_catalog
    from sommelier.db.migrations import apply_migrations
    from sommelier.db.url import resolve_database_url
    from sommelier.embeddings import provider_from_settings
    from sommelier.photos.store import photo_store_from_settings
    from sommelier.repositories.adapters import in_process_repositories

    settings = context.settings
    applied = apply_migrations(resolve_database_url(settings))  # before the pool: it needs the vector type
    if applied and not quiet:
        console.print(f"migrations applied: {', '.join(applied)}")
    catalog = in_process_repositories(context.database).catalog
    stats = catalog.stats()  # a PortError here is shown as one line by the caller
    if stats.wines == 0:
        if not quiet:
            console.print(f"seeding the shipped catalogue from {SHIPPED_CATALOG} …")
        report = import_catalog(
            project_root() / SHIPPED_CATALOG,
            catalog=catalog,
            embedder=provider_from_settings(settings),
            photos=photo_store_from_settings(settings),
        )
        if not quiet:
            console.print(f"imported {report.inserted} wines (embeddings: {report.embedding_model})")
        stats = catalog.stats()
    elif _stale_local_models(stats, embedder := provider_from_settings(settings, strict=False)):
        # The local embedder's text or vectors changed (its name carries the version): queries made with the new
        # one cannot be compared with rows of the old, so re-embed now, offline and in seconds.
        from sommelier.catalog.importer import reembed_catalog

        if not quiet:
            console.print(f"re-embedding the catalogue with {embedder.model} (it was embedded with an older version) …")
        reembed_catalog(catalog=catalog, embedder=embedder)
        stats = catalog.stats()
    return stats


def _stale_local_models(stats: CatalogStats, embedder: EmbeddingProvider) -> list[str]:
    """Models of the local embedder's family, other than the current one, that rows are embedded with."""
    from sommelier.settings import LOCAL_MODEL_NAME

    if embedder.model != LOCAL_MODEL_NAME:
        return []  # another provider: `doctor` reports a mismatch; re-embedding would cost API calls
    family = LOCAL_MODEL_NAME.rsplit("-", 1)[0] + "-"
    return sorted(m for m in stats.embedding_models if m.startswith(family) and m != LOCAL_MODEL_NAME)


def run_up(args: argparse.Namespace) -> int:
    try:
        stats = ensure_ready(args.context)
    except Exception as exc:  # shown as one clear line, not a traceback
        return fail(f"dev up failed: {exc}")
    settings = args.context.settings
    where = "DATABASE_URL" if settings.database.url else f"embedded PostgreSQL in {settings.state_dir / 'pgdata'}"
    console.print(f"[green]ready[/]: {where}; {stats.wines} wines; embeddings {stats.embedding_models}")
    return 0


def run_down(args: argparse.Namespace) -> int:
    from sommelier.db.embedded import stop_embedded_database

    settings = args.context.settings
    if settings.database.url:
        console.print("DATABASE_URL is set: nothing embedded to stop")
        return 0
    stopped = stop_embedded_database(settings.state_dir / "pgdata")
    console.print("embedded PostgreSQL stopped" if stopped else "embedded PostgreSQL was not running")
    return 0
