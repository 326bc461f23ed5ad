"""`sommelier maintenance`: what the scheduled job does in AWS — delete messages older than the retention period."""

from __future__ import annotations

import argparse

from sommelier_dev.cli.output import console, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("maintenance", help="delete conversation messages older than the retention period")
    parser.add_argument(
        "--retention-days", type=int, help="keep this many days (default: MESSAGE_RETENTION_DAYS, else 180)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        days = args.retention_days if args.retention_days is not None else args.context.settings.shop.retention_days()
        deleted = args.context.repositories().shop.purge_old_messages(days)
    except Exception as exc:  # a port error or an unreachable database: one clear line
        return fail(f"maintenance failed: {exc}")
    console.print(f"deleted {deleted} messages older than {days} days")
    return 0
