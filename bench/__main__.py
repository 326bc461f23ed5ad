"""`python -m bench [--quick] [--only NAME ...] [--runs N] [--output FILE]`.

Runs the benchmarks in a fixed order, prints one table of every figure (median/min/max over
repeated runs, target and verdict) and writes the results as JSON. A benchmark that fails is
reported and the others still run; the exit code is 1 when any benchmark failed (a missed
target is a finding, not a failure).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from bench.common import ROOT, SCRUBBED_VARIABLES, Context, Figure, log, machine_info

# name -> module, in the order they run (cheap and DB-free first; the LangChain comparison after ours).
BENCHMARKS: dict[str, str] = {
    "imports": "bench.imports",
    "sizes": "bench.sizes",
    "webhook_ack": "bench.webhook_ack",
    "serve_concurrency": "bench.serve_concurrency",
    "tools": "bench.tools",
    "catalog_import": "bench.catalog_import",
    "catalog_import_thin": "bench.catalog_import_thin",
    "spreadsheet_bomb": "bench.spreadsheet_bomb",
    "offline_reader": "bench.offline_reader",
    "hybrid_search": "bench.hybrid_search",
    "turn_overhead": "bench.turn_overhead",
    "e2e_local": "bench.e2e_local",
    "streaming": "bench.streaming",
    "answer_shape": "bench.answer_shape",
    "prefetch": "bench.prefetch",
    "langchain": "bench.langchain_compare",
}
DEFAULT_OUTPUT = ROOT / "bench" / "results" / "latest.json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip 100k wines, fewer repetitions (< 150 s)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="every section on tiny sizes, one run, no network (the test suite's check that the bench runs)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(BENCHMARKS),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="repeated runs per figure (default: 3 quick, 5 full; imports: at least 5 / 10)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"JSON results (default: {DEFAULT_OUTPUT.relative_to(ROOT)})",
    )
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def fmt(value: float) -> str:
    if value != value:  # NaN
        return "–"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def print_table(figures: list[Figure], failures: dict[str, str], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False, header_style="bold")
    for column, justify in (
        ("benchmark", "left"),
        ("metric", "left"),
        ("median", "right"),
        ("min", "right"),
        ("max", "right"),
        ("unit", "left"),
        ("runs", "right"),
        ("target", "left"),
        ("verdict", "left"),
    ):
        table.add_column(column, justify=justify, no_wrap=column in ("median", "min", "max"))
    previous = None
    for fig in figures:
        if previous is not None and fig.benchmark != previous:
            table.add_section()
        previous = fig.benchmark
        verdict = "" if fig.met is None else ("[green]met[/green]" if fig.met else "[red]NOT met[/red]")
        table.add_row(
            fig.benchmark,
            fig.metric,
            fmt(fig.median),
            fmt(fig.min),
            fmt(fig.max),
            fig.unit,
            str(len(fig.runs)),
            fig.target or "",
            verdict,
        )
    for name, error in failures.items():
        table.add_section()
        table.add_row(name, f"[red]failed: {error}[/red]", "", "", "", "", "", "", "")
    Console(width=max(120, min(180, os.get_terminal_size(2).columns if sys.stderr.isatty() else 160))).print(table)


def run_benchmark(
    name: str, ctx: Context, figures: list[Figure], failures: dict[str, str], seconds: dict[str, float]
) -> None:
    """One benchmark: skipped with its reason, or run; its figures (or its failure) and its seconds recorded."""
    module = importlib.import_module(BENCHMARKS[name])
    skip = getattr(module, "skip_reason", lambda: None)()
    if ctx.smoke and getattr(module, "NEEDS_NETWORK", False):
        skip = "needs the package index (a smoke run has no network)"
    if skip:
        log(f"[yellow]{name}: skipped: {skip}[/yellow]")
        ctx.note(name, f"skipped: {skip}")
        return
    log(f"[bold]{name}[/bold]")
    begun = time.perf_counter()
    try:
        figures.extend(module.run(ctx))
    except Exception as exc:  # one failing benchmark must not hide the others
        failures[name] = f"{type(exc).__name__}: {exc}"[:300]
        log(f"[red]{name} failed:[/red]\n{traceback.format_exc()}")
    seconds[name] = round(time.perf_counter() - begun, 1)
    log(f"{name}: {seconds[name]} s")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    selected = args.only or list(BENCHMARKS)
    selected = [name for name in BENCHMARKS if name in selected]
    args.quick = args.quick or args.smoke
    runs = args.runs or (1 if args.smoke else 3 if args.quick else 5)
    for name in SCRUBBED_VARIABLES:
        os.environ.pop(name, None)
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")

    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="sommelier-bench-"))
    ctx = Context(quick=args.quick, runs=runs, workdir=workdir, smoke=args.smoke, runs_explicit=args.runs is not None)
    figures: list[Figure] = []
    failures: dict[str, str] = {}
    seconds: dict[str, float] = {}
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    log(f"sommelier benchmarks ({mode}, {runs} runs per figure): {', '.join(selected)}")
    try:
        for name in selected:
            run_benchmark(name, ctx, figures, failures, seconds)
        versions = ctx.postgres.versions() if ctx.postgres is not None else None
    finally:
        ctx.close()
    wall = round(time.perf_counter() - started, 1)

    title = f"sommelier benchmarks — {mode} mode, {runs} runs/figure, {wall} s"
    print_table(figures, failures, title)
    result = {
        "command": "python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "mode": mode,
        "runs": runs,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_seconds": wall,
        "benchmark_seconds": seconds,
        "machine": machine_info(),
        "database": versions,
        "figures": [fig.as_json() for fig in figures],
        "failures": failures,
        "notes": ctx.notes,
        "shared": ctx.shared,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, ensure_ascii=False, indent=2, default=str) + "\n", "utf-8")
    missed = [f"{f.benchmark}: {f.metric}" for f in figures if f.met is False]
    log(f"results: {args.output} ({wall} s); targets missed: {', '.join(missed) if missed else 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
