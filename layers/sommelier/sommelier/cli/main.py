"""The `sommelier` command (DESIGN.md §12). Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import sys

from sommelier.cli import catalog_cmd, dev_cmd, tool_cmd

COMMANDS = (dev_cmd, tool_cmd, catalog_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sommelier", description="AI wine sommelier: local tools and operations")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
