"""`sommelier catalog import FILE | export [FILE] | reembed`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.markup import escape

from sommelier.cli.output import console, fail, print_json


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("catalog", help="import, export or re-embed the shop's wine catalogue")
    actions = parser.add_subparsers(dest="action", required=True)
    imp = actions.add_parser("import", help="validated, all-or-nothing import of a JSON or CSV catalogue")
    imp.add_argument("file", type=Path)
    imp.set_defaults(run=run_import)
    exp = actions.add_parser("export", help='write {"wines": [...]} to FILE, or to stdout')
    exp.add_argument("file", type=Path, nargs="?")
    exp.set_defaults(run=run_export)
    reembed = actions.add_parser("reembed", help="recompute every embedding with the configured provider")
    reembed.set_defaults(run=run_reembed)


def _context():
    from sommelier.config import load_settings
    from sommelier.db.migrations import apply_migrations
    from sommelier.embeddings import provider_from_settings
    from sommelier.storage.photos import photo_store_from_settings
    from sommelier.tools.client import tools_from_settings

    settings = load_settings()
    if not settings.tool_function_name:
        from sommelier.db.pool import default_database

        apply_migrations(default_database().conninfo)  # a fresh local database works at once
    return (
        settings,
        tools_from_settings(settings),
        provider_from_settings(settings),
        photo_store_from_settings(settings),
    )


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    return Progress(
        TextColumn("{task.description:12}"), BarColumn(), MofNCompleteColumn(), console=console, transient=False
    )


def run_import(args: argparse.Namespace) -> int:
    from sommelier.catalog.importer import CatalogImportError, import_catalog

    try:
        _, tools, embedder, photos = _context()
        with _progress() as progress:
            tasks: dict[str, int] = {}

            def on_progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    tasks[stage] = progress.add_task(stage, total=total)
                progress.update(tasks[stage], completed=done)

            report = import_catalog(args.file, tools=tools, embedder=embedder, photos=photos, on_progress=on_progress)
    except CatalogImportError as exc:
        console.print(f"[bold red]import failed:[/] {escape(str(exc))}")
        for error in exc.errors:
            if error.line:  # row text comes from the operator's file: never read it as rich markup
                console.print(f"  {error}", markup=False)
        return 1
    except Exception as exc:
        return fail(f"import failed: {exc}")
    console.print(
        f"[green]imported[/] {report.rows} wines: {report.inserted} new, {report.updated} updated, "
        f"{report.photos_uploaded} photos, embeddings by {report.embedding_model}"
    )
    return 0


def run_export(args: argparse.Namespace) -> int:
    from sommelier.catalog.importer import CatalogImportError, export_catalog

    try:
        _, tools, _, _ = _context()
        data = export_catalog(tools)
    except (CatalogImportError, Exception) as exc:
        return fail(str(exc))
    if args.file:
        args.file.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        console.print(f"exported {len(data['wines'])} wines to {args.file}")
    else:
        print_json(data)
    return 0


def run_reembed(args: argparse.Namespace) -> int:
    from sommelier.catalog.importer import reembed_catalog

    try:
        _, tools, embedder, _ = _context()
        count = reembed_catalog(tools=tools, embedder=embedder)
    except Exception as exc:
        return fail(f"re-embedding failed: {exc}")
    console.print(f"re-embedded {count} wines with {embedder.model}")
    return 0
