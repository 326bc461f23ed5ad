"""`sommelier doctor`: one line per check; non-zero exit when something required is missing."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.text import Text

MARKS = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red"), "skip": ("-", "dim")}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("doctor", help="проверить настройки и связь: база, модель, Telegram, каталог")
    parser.set_defaults(run=run, tolerates_bad_settings=True)


def run(args: argparse.Namespace) -> int:
    from sommelier_dev.doctor import run_checks

    console = Console(highlight=False, soft_wrap=True)
    if args.context is None:  # main could not build the settings (SOMMELIER_SECRETS_ARN: the deployed bot's)
        console.print(Text(f"✗ configuration  {args.settings_error}", style="red"))
        return 1
    checks = run_checks(args.context.settings)
    for check in checks:
        mark, colour = MARKS[check.status]
        line = Text(f"{mark} {check.name:<11}", style=colour)
        line.append(check.detail, style="default")
        console.print(line)
        if check.fix and (check.status in ("fail", "warn") or check.name == "catalogue"):
            console.print(Text(f"  → {check.fix}", style="dim"))
    blocking = [c.name for c in checks if c.blocking]
    if blocking:
        console.print(
            Text(f"\nне пройдено обязательных проверок: {len(blocking)} ({', '.join(blocking)})", style="bold red")
        )
        return 1
    console.print(Text("\nвсе обязательные проверки пройдены", style="bold green"))
    return 0
