"""`sommelier eval`: the recommendation-quality evaluation (docs/architecture.md, eval/README.md).

Runs the golden set through the real agent, against an OpenAI-compatible LLM (`--model`,
`--base-url`, OPENAI_API_KEY) or the offline responder (`--offline`, the default without a key),
and writes report.json, summary.md and categories.png to `--output-dir`. Exits 1 when a
threshold is missed, 2 when the run could not start.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from sommelier_dev.cli.output import console, fail

if TYPE_CHECKING:
    from sommelier.agent.llm.port import ChatLLM
    from sommelier.embeddings.port import EmbeddingProvider
    from sommelier.repositories.adapters import Repositories
    from sommelier.settings import Settings

    from sommelier_dev.cli.context import CliContext
    from sommelier_dev.evaluation.golden import GoldenCase
    from sommelier_dev.evaluation.harness import CaseRun
    from sommelier_dev.evaluation.runner import EvalResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("eval", help="recommendation-quality evaluation on the Russian golden set")
    parser.add_argument(
        "--offline", action="store_true", help="use the offline responder (the default when OPENAI_API_KEY is not set)"
    )
    parser.add_argument("--model", help="LLM model (default: LLM_MODEL or anthropic/claude-sonnet-4)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    parser.add_argument("--temperature", type=float, help="sampling temperature (default: the agent's own)")
    parser.add_argument("--golden", type=Path, help="golden set file (default: eval/golden_set.json)")
    parser.add_argument("--thresholds", type=Path, help="thresholds file (default: eval/thresholds.json)")
    parser.add_argument(
        "--output-dir", type=Path, help="where to write the reports (default: eval/reports/<timestamp>/)"
    )
    parser.add_argument("--case", action="append", dest="cases", metavar="ID", help="run only this case (repeatable)")
    parser.add_argument(
        "--category", action="append", dest="categories", metavar="NAME", help="run only this category (repeatable)"
    )
    parser.add_argument(
        "--embeddings",
        choices=("auto", "local", "configured"),
        default="auto",
        help="query embeddings: 'auto' matches the catalogue's embedding model (default)",
    )
    parser.add_argument("--quiet", action="store_true", help="no per-case progress")
    parser.set_defaults(run=run)


def _repositories(context: CliContext) -> tuple[Repositories, str]:
    settings = context.settings
    if settings.aws.tool_function_name:
        return context.repositories(), f"tool function {settings.aws.tool_function_name}"
    if settings.database.url:
        return context.repositories(), "DATABASE_URL"
    from sommelier_dev.cli.dev_cmd import ensure_ready

    ensure_ready(context, quiet=True)
    return context.repositories(), f"embedded PostgreSQL ({settings.state_dir / 'pgdata'})"


def _embedder(choice: str, repositories: Repositories, settings: Settings) -> EmbeddingProvider:
    from sommelier.embeddings import provider_from_settings
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.settings import LOCAL_MODEL_NAME

    if choice == "local":
        return LocalHashingEmbeddings()
    configured = provider_from_settings(settings, strict=False)
    if choice == "configured":
        return configured
    from sommelier.domain.errors import PortError

    try:
        models = set(repositories.catalog.stats().embedding_models)
    except PortError:
        models = set()
    if configured.model not in models and LOCAL_MODEL_NAME in models:
        console.print(f"[yellow]the catalogue is embedded with {LOCAL_MODEL_NAME}; using local query embeddings[/]")
        return LocalHashingEmbeddings()
    return configured


def _llm(args: argparse.Namespace, settings: Settings) -> ChatLLM | None:
    """The configured chat model, or None for the offline responder."""
    from sommelier.agent.llm.client import OpenAIChat

    llm = settings.llm
    if args.offline or not llm.api_key:
        return None
    options = {"temperature": args.temperature} if args.temperature is not None else {}
    return OpenAIChat(
        api_key=llm.api_key,
        base_url=args.base_url or llm.base_url,
        model=args.model or llm.model,
        timeout=llm.timeout_s or 60.0,  # an evaluation waits longer than a customer would
        max_retries=llm.max_retries,
        **options,
    )


def run(args: argparse.Namespace) -> int:
    import logging

    from sommelier.settings import project_root

    from sommelier_dev.evaluation.golden import GoldenSetError, load_golden_set
    from sommelier_dev.evaluation.harness import EvalHarness
    from sommelier_dev.evaluation.report import load_thresholds, thresholds_for, timestamp, write_outputs
    from sommelier_dev.evaluation.runner import evaluate

    logging.getLogger("sommelier").setLevel(logging.ERROR)  # the report says what went wrong, per case
    try:
        golden = load_golden_set(args.golden)
    except GoldenSetError as exc:
        return fail(str(exc), 2)
    cases = golden.select(args.cases, args.categories)
    if not cases:
        return fail("no golden cases match --case/--category", 2)
    try:
        threshold_data = load_thresholds(args.thresholds)
        for mode in ("offline", "llm"):  # a malformed golden-set bound stops the run before it starts
            thresholds_for(threshold_data, mode, golden=golden.path)
    except (OSError, ValueError) as exc:
        return fail(f"cannot read the thresholds: {exc}", 2)
    settings = args.context.settings
    if not args.offline and not settings.llm.api_key and (args.model or args.base_url):
        return fail("--model/--base-url need OPENAI_API_KEY (or use --offline)", 2)

    try:
        repositories, database = _repositories(args.context)
        try:
            stats = repositories.catalog.stats()
        except Exception as exc:  # a port error or an unreachable database: one clear line
            return fail(f"cannot read the catalogue: {exc}", 2)
        if not stats.wines:
            return fail("the catalogue is empty: run `sommelier dev up` or `sommelier catalog import FILE`", 2)
        embedder = _embedder(args.embeddings, repositories, settings)
        llm = _llm(args, settings)
    except Exception as exc:
        return fail(f"cannot start the evaluation: {exc}", 2)

    harness = EvalHarness.build(
        repositories,
        embedder,
        llm,
        max_tool_rounds=settings.agent.max_tool_rounds,
        max_retries=settings.agent.max_retries,
    )
    thresholds = thresholds_for(threshold_data, harness.mode, golden=golden.path)
    console.print(
        f"evaluating {len(cases)} cases · mode [bold]{harness.mode}[/] · model {escape(harness.model)} · "
        f"{escape(database)}"
    )

    def progress(index: int, case: GoldenCase, run: CaseRun) -> None:
        if not args.quiet:
            _print_progress(index, len(cases), case, run)

    meta = {"command": _command_line(), "golden_set": _display_path(golden.path or args.golden), "database": database}
    try:
        result = evaluate(harness, cases, thresholds=thresholds, meta=meta, progress=progress)
    except Exception as exc:
        return fail(f"the evaluation failed: {exc}", 2)

    output_dir = args.output_dir or (project_root() / "eval" / "reports" / timestamp())
    paths = write_outputs(result.report, thresholds, output_dir)
    _print_summary(result, thresholds)
    for kind, path in paths.items():
        console.print(f"{kind}: {escape(str(path))}")
    if not result.passed:
        missed = ", ".join(_missed_bound(r) for r in result.missed())
        console.print(f"[bold red]thresholds missed:[/] {escape(missed)}")
        return 1
    console.print("[green]all thresholds met[/]")
    return 0


def _print_progress(index: int, total: int, case: GoldenCase, run: CaseRun) -> None:
    """One line per played case: its answer type, guard and wines, and how long the evaluated turn took."""
    if run.turn is None:
        return
    response = run.turn.response or {}
    wines = ", ".join(w.get("wine_name", "") for w in response.get("wines") or [])
    console.print(
        f"[dim]{index + 1:>3}/{total}[/] {escape(case.id):<12} "
        f"{escape(str(response.get('response_type')))}"
        f"{' / ' + escape(str(response.get('guard_type'))) if response.get('guard_type') else ''}"
        f"{(' · ' + escape(wines)) if wines else ''} [dim]{run.turn.wall_ms:.0f} ms[/]"
    )


def _command_line() -> str:
    """The command as typed, for the report (just `sommelier eval` when run another way, e.g. from a test)."""
    if sys.argv[1:2] == ["eval"]:
        return "sommelier " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    return "sommelier eval"


def _display_path(golden_path: Path | None) -> str:
    """The golden set's path relative to the project when it is inside it, else as given."""
    from sommelier.settings import project_root

    if golden_path is None:  # a golden set read from no file
        return str(golden_path)
    try:
        return str(golden_path.resolve().relative_to(project_root()))
    except ValueError:
        return str(golden_path)


def _missed_bound(row: dict[str, Any]) -> str:
    """A missed threshold row as `metric value (needs ≥ limit)`."""
    sign = "≥" if row["bound"] == "min" else "≤"
    return f"{row['metric']} {row['value']:.3f} (needs {sign} {row['limit']:g})"


def _print_summary(result: EvalResult, thresholds: dict[str, dict[str, Any]]) -> None:
    from sommelier_dev.evaluation.metrics import RATIO_METRICS
    from sommelier_dev.evaluation.report import CHART_METRICS, COST_METRICS, LABELS, format_bound, format_value

    overall = result.summary["overall"]
    table = Table(title="overall", show_lines=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("target")
    for metric in (*RATIO_METRICS, *COST_METRICS):
        entry = overall.get(metric)
        if not entry or entry.get("value") is None:
            continue
        table.add_row(LABELS[metric], format_value(metric, entry), format_bound(thresholds.get(metric), metric))
    console.print(table)
    per_category = Table(title="per category")
    columns = CHART_METRICS  # the chart's metrics, one column each
    per_category.add_column("category")
    per_category.add_column("cases", justify="right")
    for metric in columns:
        per_category.add_column(LABELS[metric], justify="right")
    for name, block in sorted(result.summary["categories"].items()):
        cells = []
        for metric in columns:
            v = block[metric]["value"]
            cells.append("" if v is None else f"{v:.2f}")
        per_category.add_row(name, str(block["cases"]), *cells)
    console.print(per_category)
