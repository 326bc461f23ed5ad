"""The `sommelier` command (docs/architecture.md). Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import os
import sys

from sommelier.secrets import SettingsSource

from sommelier_dev.cli import (
    catalog_cmd,
    chat_cmd,
    deploy_cmd,
    dev_cmd,
    doctor_cmd,
    eval_cmd,
    invoke_cmd,
    maintenance_cmd,
    qr_cmd,
    report_cmd,
    serve_cmd,
    shop_cmd,
    telegram_cmd,
    tool_cmd,
)
from sommelier_dev.cli.context import CliContext
from sommelier_dev.cli.output import fail

COMMANDS = (
    dev_cmd,
    tool_cmd,
    catalog_cmd,
    chat_cmd,
    serve_cmd,
    telegram_cmd,
    doctor_cmd,
    deploy_cmd,
    invoke_cmd,
    eval_cmd,
    qr_cmd,
    report_cmd,
    maintenance_cmd,
    shop_cmd,
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
        # The one settings object of this run (SOMMELIER_SECRETS_ARN: the deployed bot's secrets).
        settings, _ = SettingsSource().current()
        args.context = CliContext(settings)
    except Exception as exc:  # an unreadable setting (SettingError) or secret: one clear line
        if not getattr(args, "tolerates_bad_settings", False):
            return fail(f"configuration: {exc}")
        args.context, args.settings_error = None, exc
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    finally:
        if args.context is not None:
            args.context.close()


if __name__ == "__main__":
    sys.exit(main())
