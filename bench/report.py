"""`python -m bench.report [RESULTS.json]`: the figures of a results file as Markdown tables.

Used to write BENCHMARKS.md from a real run without copying numbers by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.__main__ import DEFAULT_OUTPUT, fmt


def tables(results: dict) -> str:
    out: list[str] = []
    current = None
    for fig in results["figures"]:
        if fig["benchmark"] != current:
            current = fig["benchmark"]
            out += [
                "",
                f"#### `{current}`",
                "",
                "| metric | median | min | max | unit | runs | target | verdict |",
                "|---|---:|---:|---:|---|---:|---|---|",
            ]
        verdict = "" if fig["met"] is None else ("met" if fig["met"] else "**NOT met**")
        out.append(
            f"| {fig['metric']} | {fmt(fig['median'])} | {fmt(fig['min'])} | {fmt(fig['max'])} | "
            f"{fig['unit']} | {fig['n_runs']} | {fig['target'] or ''} | {verdict} |"
        )
    for name, error in results.get("failures", {}).items():
        out.append(f"\n**{name} failed:** {error}")
    return "\n".join(out).strip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT_OUTPUT
    results = json.loads(path.read_text("utf-8"))
    sys.stdout.write(tables(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
