"""`sommelier catalog import FILE [--replace] | export [FILE] | list | stats | reembed`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from sommelier.domain.wire import to_wire

from sommelier_dev.cli.output import console, fail, print_json

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID
    from sommelier.catalog.importer import ImportReport
    from sommelier.embeddings.port import EmbeddingProvider
    from sommelier.photos.store import PhotoStore
    from sommelier.repositories.ports import CatalogRepository
    from sommelier.settings import Settings

    from sommelier_dev.enrich_llm import LlmEnrichment, LlmEnrichmentReport


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "catalog", help="каталог вин магазина: импорт, выгрузка, список, статистика, пересчёт эмбеддингов"
    )
    actions = parser.add_subparsers(dest="action", required=True)
    imp = actions.add_parser(
        "import",
        help="импорт файла магазина как он выгружен: JSON, CSV, Excel .xlsx или YML Яндекс Маркета; каждая"
        " хорошая строка загружается, остальные перечисляются с причиной; недостающее выводится из названий",
    )
    imp.add_argument("file", type=Path)
    imp.add_argument(
        "--replace",
        action="store_true",
        help="каталог становится ровно этим файлом: вина не из файла снимаются с продажи (история и отзывы остаются)",
    )
    imp.add_argument(
        "--strict",
        action="store_true",
        help="всё или ничего: любая строка вина с ошибкой отклоняет весь файл (по умолчанию она пропускается)",
    )
    imp.add_argument(
        "--enrich-llm",
        action="store_true",
        help="после правил спросить модель (OPENAI_API_KEY) о стране, регионе, апелласьоне, сортах, цвете и"
        " сахаре, которых не сказали названия; ответы проверяются, кэшируются, стоимость показывается",
    )
    imp.set_defaults(run=run_import)
    exp = actions.add_parser(
        "export",
        help="выгрузить каталог в FILE.xlsx или FILE.csv (в колонках магазина, импортируется обратно) или FILE.json;"
        " без FILE: JSON в stdout",
    )
    exp.add_argument("file", type=Path, nargs="?")
    exp.add_argument("--all", action="store_true", help="и вина не в продаже (с available: нет)")
    exp.set_defaults(run=run_export)
    listing = actions.add_parser(
        "list", help="по строке на вино: короткий id (его принимают `qr` и другие команды), артикул, название, цена"
    )
    listing.add_argument("--all", action="store_true", help="и вина не в продаже")
    listing.add_argument("--json", action="store_true", help="JSON вместо таблицы")
    listing.set_defaults(run=run_list)
    stats = actions.add_parser(
        "stats",
        help="вина в продаже и нет, по цвету и странам; цены; эмбеддинги; по каждому полю: из файла, выведено"
        " или неизвестно; и что улучшить первым",
    )
    stats.add_argument("--json", action="store_true", help="JSON вместо текста")
    stats.set_defaults(run=run_stats)
    reembed = actions.add_parser("reembed", help="пересчитать эмбеддинги всех вин заданной моделью")
    reembed.set_defaults(run=run_reembed)


def _context(args: argparse.Namespace) -> tuple[Settings, CatalogRepository, EmbeddingProvider, PhotoStore]:
    from sommelier.embeddings import provider_from_settings
    from sommelier.photos.store import photo_store_from_settings

    settings = args.context.settings
    return (
        settings,
        args.context.repositories().catalog,  # a fresh local database is migrated first
        provider_from_settings(settings),
        photo_store_from_settings(settings),
    )


def _progress() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    return Progress(
        TextColumn("{task.description:12}"), BarColumn(), MofNCompleteColumn(), console=console, transient=False
    )


def run_import(args: argparse.Namespace) -> int:
    from sommelier.catalog.importer import CatalogImportError, import_catalog

    llm_pass: LlmEnrichment | None = None
    try:
        settings, catalog, embedder, photos = _context(args)
        llm_pass = _llm_enrichment(settings) if args.enrich_llm else None
        with _progress() as progress:
            tasks: dict[str, TaskID] = {}

            def on_progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    tasks[stage] = progress.add_task(stage, total=total)
                progress.update(tasks[stage], completed=done)

            if llm_pass is not None:
                llm_pass.on_progress = on_progress

            report = import_catalog(
                args.file,
                catalog=catalog,
                embedder=embedder,
                photos=photos,
                replace=args.replace,
                on_progress=on_progress,
                more_enrichment=llm_pass,
                strict=args.strict,
            )
    except CatalogImportError as exc:
        if llm_pass is not None:
            _print_llm_report(llm_pass.report)
        console.print(f"[bold red]импорт не выполнен:[/] {escape(str(exc))}")
        for error in exc.errors[:SHOWN_PROBLEMS]:
            if error.row or error.line:  # row text comes from the operator's file: never read it as rich markup
                console.print(f"  {error}", markup=False)
        if len(exc.errors) > SHOWN_PROBLEMS:
            console.print(f"  … и ещё {len(exc.errors) - SHOWN_PROBLEMS} строк с ошибками", markup=False)
        return 1
    except Exception as exc:
        return fail(f"импорт не выполнен: {exc}")
    _print_import_report(report, llm_pass, replaced=args.replace)
    return 0


def _print_import_report(report: ImportReport, llm_pass: LlmEnrichment | None, *, replaced: bool) -> None:
    """What an import did, in Russian: the counts, what was skipped and why, what changed, what was inferred."""
    console.print(
        f"[green]импортировано вин:[/] {report.rows} (новых {report.inserted}, обновлено {report.updated});"
        f" фото: {report.photos_uploaded}; эмбеддинги: {report.embedding_model}"
    )
    if report.unavailable:
        console.print(f"из них нет в наличии: {report.unavailable} (в каталоге, но не предлагаются)")
    _print_problems(report)
    _print_skipped(report)
    _print_changes(report, replaced=replaced)
    if llm_pass is not None:
        _print_llm_report(llm_pass.report)
    if report.inferred:
        fields = ", ".join(f"{name} ({count})" for name, count in report.inferred.items())
        console.print(f"выведено из названий (помечено в выгрузке и в stats): {fields}", markup=False)
    if report.unknown_fields:
        fields = ", ".join(f"{name} ({count})" for name, count in report.unknown_fields.items())
        console.print(f"сохранено как есть (колонки, которые каталог не использует): {fields}", markup=False)
    from sommelier.catalog.photo_fetch import HOST_SKIPPED

    skipped = [f for f in report.photos_failed if HOST_SKIPPED in f]
    for failure in report.photos_failed:
        if failure not in skipped:
            console.print(f"  без фото: {failure}", markup=False)
    if skipped:
        console.print(f"  без фото: ещё {len(skipped)}, их сервер недоступен", markup=False)
    for warning in report.warnings:
        console.print(f"  внимание: {warning}", markup=False)
    for row in report.flagged_rows:
        console.print(f"  проверьте текст (загружен): {row}", markup=False)


SHOWN_PROBLEMS = 30
SHOWN_CHANGES = 10


def _print_problems(report: ImportReport) -> None:
    """Wine rows left out for a bad cell: counted by reason, each listed with its row, column and what to do."""
    if not report.problems:
        return
    groups = ", ".join(f"{why} — {count}" for why, count in report.problem_groups.items())
    console.print(
        f"[yellow]пропущено строк с ошибками:[/] {len(report.problems)} ({escape(groups)}); исправьте и импортируйте снова"
    )
    for problem in report.problems[:SHOWN_PROBLEMS]:
        console.print(f"  {problem}", markup=False)
    if len(report.problems) > SHOWN_PROBLEMS:
        console.print(f"  … и ещё {len(report.problems) - SHOWN_PROBLEMS}", markup=False)
    if report.changes.kept:
        console.print(
            f"  {len(report.changes.kept)} из них уже были в каталоге: оставлены как были (цена, наличие)", markup=False
        )


def _print_changes(report: ImportReport, *, replaced: bool) -> None:
    changes = report.changes
    lines = [
        ("новые", changes.new),
        ("сняты с продажи (нет в файле)", changes.delisted),
        ("цена изменилась", changes.price),
        ("снова в наличии", changes.back_in_stock),
        ("закончились", changes.out_of_stock),
    ]
    if any(items for _, items in lines[1:]):
        console.print(
            "изменения: " + "; ".join(f"{what} — {len(items)}" for what, items in lines if items), markup=False
        )
        for what, items in lines[1:]:
            for item in items[:SHOWN_CHANGES]:
                console.print(f"  {what}: {item}", markup=False)
            if len(items) > SHOWN_CHANGES:
                console.print(f"  {what}: … и ещё {len(items) - SHOWN_CHANGES}", markup=False)
    if changes.still_in and not replaced:
        console.print(
            f"[yellow]в каталоге остаются в продаже ещё {len(changes.still_in)} вин не из этого файла[/]"
            " (например, демонстрационные): чтобы каталог стал ровно этим файлом, импортируйте с --replace"
        )


SHOWN_SKIPPED_ROWS = 20
SHOWN_DROPPED_VALUES = 10


def _llm_enrichment(settings: Settings) -> LlmEnrichment | None:
    """The --enrich-llm pass, or None (said on the console) when no LLM key is set."""
    from sommelier.agent.llm.client import llm_from_settings
    from sommelier.domain.pricing import parse_price

    from sommelier_dev.enrich_llm import LlmEnrichment

    llm = llm_from_settings(settings)
    if llm is None:
        console.print(
            "[yellow]для --enrich-llm нужен OPENAI_API_KEY (и SOMMELIER_OFFLINE не задан):[/] импорт только по правилам"
        )
        return None
    return LlmEnrichment(llm, parse_price(settings.llm.price_per_mtok), settings.state_dir)


def _print_llm_report(report: LlmEnrichmentReport) -> None:
    filled = ", ".join(f"{name} ({count})" for name, count in report.filled.most_common()) or "ничего"
    console.print(
        f"дополнение моделью: отправлено строк {report.rows_sent} за {report.calls} запросов, из кэша"
        f" {report.cache_hits}; заполнено: {filled}; отброшено значений (нет в словарях): {len(report.dropped)};"
        f" токенов {report.prompt_tokens} запроса + {report.completion_tokens} ответа, ${report.cost_usd:.4f}",
        markup=False,
    )
    for value in report.dropped[:SHOWN_DROPPED_VALUES]:
        console.print(f"  отброшено: {value}", markup=False)
    if len(report.dropped) > SHOWN_DROPPED_VALUES:
        console.print(f"  … и ещё {len(report.dropped) - SHOWN_DROPPED_VALUES} отброшено", markup=False)
    if report.cache_error:
        console.print(
            f"  кэш модели не записан (при следующем импорте она будет спрошена снова): {report.cache_error}",
            markup=False,
        )
    for failure in report.failed_calls:
        console.print(f"  запрос к модели не удался (у его строк значения по правилам): {failure}", markup=False)


def _print_skipped(report: ImportReport) -> None:
    """Rows left out because they are not wine: counted by kind, and each listed (the first SHOWN_SKIPPED_ROWS),
    so the owner sees no wine was lost."""
    from sommelier.catalog.row_problems import KIND_WORDS

    if not report.skipped:
        return
    kinds = "; ".join(f"{KIND_WORDS.get(kind, kind)} — {count}" for kind, count in report.skipped.items())
    console.print(f"пропущено строк не с вином: {sum(report.skipped.values())} ({kinds})", markup=False)
    for row in report.skipped_rows[:SHOWN_SKIPPED_ROWS]:
        console.print(f"  {row}", markup=False)
    if len(report.skipped_rows) > SHOWN_SKIPPED_ROWS:
        console.print(f"  … и ещё {len(report.skipped_rows) - SHOWN_SKIPPED_ROWS}", markup=False)


def run_export(args: argparse.Namespace) -> int:
    """The catalogue as FILE.xlsx, FILE.csv (the owner's own columns) or FILE.json; JSON to stdout without FILE."""
    from sommelier.catalog.importer import CatalogImportError, export_catalog

    from sommelier_dev.catalog_export import ExportTypeError, check_type, write_table

    try:
        suffix = check_type(args.file) if args.file else ".json"
        _, catalog, _, _ = _context(args)
        wines = catalog.export_wines(include_unavailable=args.all) if suffix != ".json" else []
        data = export_catalog(catalog, include_unavailable=args.all) if suffix == ".json" else {}
    except ExportTypeError as exc:
        return fail(str(exc))
    except (CatalogImportError, Exception) as exc:
        return fail(f"выгрузка не выполнена: {exc}")
    if not args.file:
        print_json(data)
        return 0
    try:
        if suffix == ".json":
            args.file.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        else:
            write_table(args.file, wines)
    except OSError as exc:
        return fail(f"не удалось записать {args.file}: {exc.strerror or exc}")
    count = len(data["wines"]) if suffix == ".json" else len(wines)
    console.print(f"выгружено вин: {count} → {escape(str(args.file))}")
    return 0


def run_reembed(args: argparse.Namespace) -> int:
    from sommelier.catalog.importer import reembed_catalog

    try:
        _, catalog, embedder, _ = _context(args)
        count = reembed_catalog(catalog=catalog, embedder=embedder)
    except Exception as exc:
        return fail(f"пересчёт эмбеддингов не выполнен: {exc}")
    console.print(f"эмбеддинги пересчитаны для {count} вин моделью {embedder.model}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from sommelier_dev.cli.wine_refs import short_id

    try:
        _, catalog, _, _ = _context(args)
        wines = catalog.list_wines(include_unavailable=args.all, limit=5000)
    except Exception as exc:  # a port error or an unreachable database: one clear line
        return fail(f"список не получен: {exc}")
    if args.json:
        print_json({"wines": to_wire(wines)})
        return 0
    from rich.table import Table

    columns = ("id", "артикул", "производитель", "название", "год", "цвет/сахар", "цена ₽")
    table = Table(*columns, *(["в продаже"] if args.all else []))
    for wine in wines:
        table.add_row(
            short_id(wine.id),
            escape(wine.sku or ""),
            escape(wine.producer),
            escape(wine.name),
            str(wine.vintage_year or "NV"),
            f"{wine.wine_type}/{wine.sweetness}",
            f"{wine.price_rub:,}".replace(",", " "),
            *(["да" if wine.available else "нет"] if args.all else []),
        )
    console.print(table)
    console.print(f"вин: {len(wines)}")
    return 0


def run_stats(args: argparse.Namespace) -> int:
    from sommelier_dev.catalog_advice import stats_lines

    try:
        _, catalog, _, _ = _context(args)
        result = catalog.stats()
    except Exception as exc:  # a port error or an unreachable database: one clear line
        return fail(f"статистика не получена: {exc}")
    if args.json:
        print_json(to_wire(result))
        return 0
    for line in stats_lines(result):
        console.print(line, markup=False)
    return 0
