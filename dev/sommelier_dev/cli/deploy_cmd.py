"""`sommelier deploy check`: the deployed stack, checked from its outputs (sommelier_dev.deploy_check)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.text import Text

MARKS = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red"), "skip": ("-", "dim")}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    deploy = sub.add_parser("deploy", help="check a deployed stack")
    actions = deploy.add_subparsers(dest="action", required=True)
    check = actions.add_parser(
        "check", help="webhook, health, one synthetic turn through the queue, the alarms (after `sam deploy`)"
    )
    check.add_argument("--stack", default="sommelier", help="the stack name (samconfig.toml: sommelier)")
    check.add_argument("--region", help="default: AWS_DEFAULT_REGION or the profile's region")
    check.add_argument("--no-turn", action="store_true", help="skip the synthetic /stats turn")
    check.add_argument("--timeout", type=float, default=180, help="seconds to wait for the synthetic turn")
    check.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    import boto3

    from sommelier_dev.deploy_check import run_checks
    from sommelier_dev.doctor import FAIL

    console = Console(highlight=False, soft_wrap=True)
    session = boto3.session.Session(region_name=args.region) if args.region else boto3.session.Session()
    checks = run_checks(session, args.context.settings, args.stack, turn=not args.no_turn, turn_timeout_s=args.timeout)
    for check in checks:
        mark, colour = MARKS[check.status]
        line = Text(f"{mark} {check.name:<8}", style=colour)
        line.append(check.detail, style="default")
        console.print(line)
        if check.status in (FAIL, "warn", "skip") and check.fix:
            console.print(Text(f"  → {check.fix}", style="dim"))
    failed = [c.name for c in checks if c.blocking]
    if failed:
        console.print(Text(f"\n{len(failed)} check(s) failed: {', '.join(failed)}", style="bold red"))
        return 1
    console.print(Text(f"\nthe stack {args.stack} answers", style="bold green"))
    return 0
