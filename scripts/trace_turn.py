"""Which project files one offline Telegram turn passes through, counted by a trace (docs/architecture.md).

    .venv/bin/python scripts/trace_turn.py            # the list, as docs/architecture.md shows it
    .venv/bin/python scripts/trace_turn.py --json URL # the files, as JSON, on that database

The bot is built as `sommelier serve` builds it (`sommelier.app.build_bot` on the settings), on the
embedded PostgreSQL and the loopback fake Bot API, without an LLM key: the offline responder answers.
A first turn warms the process (imports, caches); the second, a recommendation, is traced with
`sys.setprofile` in every thread. Only our deployed code counts: `layers/sommelier/sommelier/`.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python scripts/trace_turn.py` from anywhere
    sys.path.insert(0, str(ROOT))
PACKAGE = ROOT / "layers" / "sommelier"
WARM_UP = "белое к рыбе до 1500"
TRACED = "красное сухое к стейку до 2000"


@dataclass
class TurnTrace:
    calls_per_file: Counter[str] = field(default_factory=Counter)
    functions: set[tuple[str, str, int]] = field(default_factory=set)

    def record(self, frame, event, _arg) -> None:
        if event != "call":
            return
        path = frame.f_code.co_filename
        if path.startswith(str(PACKAGE) + "/"):
            name = str(Path(path).relative_to(PACKAGE))
            self.calls_per_file[name] += 1
            self.functions.add((name, frame.f_code.co_name, frame.f_code.co_firstlineno))

    @property
    def files(self) -> list[str]:
        return sorted(self.calls_per_file)


def trace_offline_turn(database_url: str) -> TurnTrace:
    """The files of one warm offline recommendation turn, from the update to the last Bot API call."""
    from sommelier.app import build_bot, build_runtime
    from sommelier.db.pool import Database
    from sommelier.repositories.adapters import in_process_repositories
    from sommelier.settings import load_settings

    from tests.fakes.telegram_server import FakeTelegram
    from tests.fakes.telegram_updates import TEST_BOT, text_update

    trace = TurnTrace()
    with FakeTelegram(bot_username=TEST_BOT) as telegram, tempfile.TemporaryDirectory() as state:
        settings = load_settings(
            {
                "DATABASE_URL": database_url,
                "TELEGRAM_BOT_TOKEN": telegram.token,
                "TELEGRAM_API_BASE_URL": telegram.base_url,
                "TELEGRAM_BOT_USERNAME": TEST_BOT,
                "EMBEDDING_PROVIDER": "local",
                "SOMMELIER_AGE_GATE": "0",
                "SOMMELIER_STATE_DIR": state,
            }
        )
        database = Database.from_settings(settings)
        try:
            bot = build_bot(settings, runtime=build_runtime(settings, repositories=in_process_repositories(database)))
            bot.process(text_update(1, WARM_UP), 1)
            sent_before = len(telegram.sent_messages())
            threading.setprofile(trace.record)
            sys.setprofile(trace.record)
            try:
                bot.process(text_update(2, TRACED), 1)
            finally:
                sys.setprofile(None)
                threading.setprofile(None)  # type: ignore[arg-type]
            if len(telegram.sent_messages()) <= sent_before:
                raise RuntimeError("the traced turn sent nothing: it is not the path of a turn")
        finally:
            database.close()
    return trace


def main(argv: list[str] | None = None) -> int:
    import json

    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "--json":  # `--json DATABASE_URL`: the files only, for the test's fresh process
        print(json.dumps(trace_offline_turn(args[1]).files))
        return 0
    from sommelier.db.url import resolve_database_url
    from sommelier.settings import load_settings
    from sommelier_dev.cli.context import CliContext
    from sommelier_dev.cli.dev_cmd import ensure_ready

    settings = load_settings()
    context = CliContext(settings)
    try:
        ensure_ready(context, quiet=True)  # the embedded server, migrated and seeded (`sommelier dev up`)
    finally:
        context.close()
    trace = trace_offline_turn(resolve_database_url(settings))
    print(f"{len(trace.functions)} functions in {len(trace.files)} files:")
    for name in trace.files:
        print(f"- `{name}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
