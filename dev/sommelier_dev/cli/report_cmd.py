"""`sommelier report --since 7d --out report.png`: the weekly report locally (the chart, and the text on stdout)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sommelier_dev.cli.output import console, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("report", help="the shop owner's report: demand, votes, unmet demand, LLM cost")
    parser.add_argument("--since", default="7d", help="the period: 7d (default), 24h, 2w")
    parser.add_argument("--out", type=Path, default=Path("report.png"), help="where to write the PNG chart")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from sommelier.shop.report import ReportError, fetch_report, llm_prices, parse_since, report_chart, report_text

    try:
        since = parse_since(args.since)
        settings = args.context.settings
        report = fetch_report(args.context.repositories().shop, since, llm_prices(settings.llm))
        chart = report_chart(report)
    except ReportError as exc:
        return fail(str(exc))
    except Exception as exc:
        return fail(f"report failed: {exc}")
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_bytes(chart)
    except OSError as exc:
        return fail(f"could not write {args.out}: {exc.strerror}")
    sys.stdout.write(report_text(report) + "\n")
    console.print(f"chart written to {args.out}")
    return 0
