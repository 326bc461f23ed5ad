"""The `sommelier` command (docs/architecture.md). Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import os
import sys

from sommelier_dev.cli import (
    catalog_cmd,
    chat_cmd,
    dev_cmd,
    doctor_cmd,
    eval_cmd,
    invoke_cmd,
    maintenance_cmd,
    qr_cmd,
    report_cmd,
    serve_cmd,
    telegram_cmd,
    tool_cmd,
)

COMMANDS = (
    dev_cmd,
    tool_cmd,
    catalog_cmd,
    chat_cmd,
    serve_cmd,
    telegram_cmd,
    doctor_cmd,
    invoke_cmd,
    eval_cmd,
    qr_cmd,
    report_cmd,
    maintenance_cmd,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sommelier", description="AI wine sommelier: local tools and operations")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # EMF metrics are for Lambda; printed in a terminal they would garble the chat.
    if not os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
