"""The provider matrix: every documented provider behaviour × three Russian queries, through the real agent.

Each behaviour (tests/fakes/provider_behaviours.py) runs on the OpenAI-compatible fake, talked to by the
real openai SDK through the agent's own LLM adapter (one adapter per behaviour, so what it learns on the
first query serves the next two, as in a warm Lambda), the real tools and a real PostgreSQL with the
shipped catalogue. For each turn it records the outcome, the HTTP requests the fake received, the turn's
own accounting and the wall time, and checks the answer independently of the agent's code: grounded
(every wine is in the catalogue and of the kind asked for) and clean (no Markdown marks, fences, raw
JSON, reasoning or English).

    python reliability/provider_matrix.py                       # a fresh database in the embedded server
    python reliability/provider_matrix.py --markdown table.md   # …and write the RELIABILITY.md table

Latency behaviours are scaled (``--time-scale``, default 0.05): a 35 s generation takes 1.75 s, and the
turn budget and LLM_TIMEOUT_S shrink in proportion; the table shows both measured and real-time seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

QUERIES: tuple[tuple[str, str], ...] = (
    ("красное сухое к стейку до 3000", "red"),
    ("белое вино к рыбе", "white"),
    ("игристое на праздник до 5000", "sparkling"),
)
DEFAULT_TIME_SCALE = 0.05
# Scaling shrinks the model's seconds, not ours: the offline fallback after a timed-out answer (SQL, wording)
# takes real time, which a scaled reserve (0.05 × 2 s) does not cover on a loaded machine. A scaled turn may
# end this much past its scaled budget (`slack_s`); a real one has the whole reserve.
UNSCALED_OWN_WORK_S = 1.0
MAX_RETRIES = 2  # the adapter's retries per logical call (LLM_MAX_RETRIES default)

# The oracle's own checks (no code shared with the agent's parsing or hygiene).
_MARKS = (
    ("Markdown", re.compile(r"\*\*|__|(?<![\w*])\*\w|```|^#{1,6} ", re.MULTILINE)),
    ("raw JSON", re.compile(r'[{\[]\s*"|"\s*:\s*[\["{]|\bwine_id\b|\bresponse_type\b')),
    ("reasoning", re.compile(r"</?think>|step by step|Let me think", re.IGNORECASE)),
)
_CYR = re.compile(r"[а-яё]", re.IGNORECASE)
_LAT = re.compile(r"[a-z]", re.IGNORECASE)


@dataclass
class TurnFigures:
    behaviour: str
    query: str
    outcome: str  # "answer" (clean, grounded, from the model), "offline", or the agent's mode
    mode: str
    http_requests: int  # chat requests the fake received during the turn
    reported_http_requests: int  # the turn metadata's own count
    llm_calls: int
    generations: int
    wall_s: float
    budget_s: float
    time_scale: float
    slack_s: float = 0.0  # real seconds of our own work a scaled turn may add (UNSCALED_OWN_WORK_S)
    problems: list[str] = field(default_factory=list)
    wines: list[str] = field(default_factory=list)
    learned: list[str] = field(default_factory=list)
    text: str = ""


def visible_problems(text: str, wine_names: list[str]) -> list[str]:
    """What would make the customer's text unclean: marks, raw JSON, reasoning, a language other than Russian."""
    problems = [label for label, pattern in _MARKS if pattern.search(text)]
    stripped = text
    for name in sorted(wine_names, key=len, reverse=True):
        stripped = stripped.replace(name, " ")
    cyrillic, latin = len(_CYR.findall(stripped)), len(_LAT.findall(stripped))
    if cyrillic + latin and cyrillic / (cyrillic + latin) < 0.6:
        problems.append("not Russian")
    return problems


class ShownPieces:
    """Keeps every piece a streamed answer yields (drafts included), as a chat would show them."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def take(self, piece) -> None:
        from sommelier.agent.streaming import WinePiece

        if isinstance(piece, WinePiece):
            self.texts.append(f"{piece.recommendation.wine_name}: {piece.recommendation.description}")
        else:
            self.texts.append(piece.text)


def run_turn(agent, request, shown: ShownPieces, streaming: bool):
    """One turn: streamed (each piece shown, as Telegram's progressive reply would) or whole."""
    if not streaming:
        return agent.run(request)
    from sommelier.agent.streaming import Shown

    request.shown = Shown()
    turn = agent.stream_turn(request)
    while True:
        try:
            shown.take(next(turn))
        except StopIteration as done:
            return done.value


def catalogue_rows(database, ids: list[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    with database.connection() as conn:
        rows = conn.execute(
            "SELECT id::text, name, producer, region, wine_type FROM wines WHERE id = ANY(%s::uuid[])", (ids,)
        ).fetchall()
    return {r[0]: {"name": r[1], "producer": r[2], "region": r[3], "wine_type": r[4]} for r in rows}


def answer_problems(result: Any, rows: dict[str, dict[str, Any]], shown: ShownPieces, wine_type: str) -> list[str]:
    """What is wrong with a turn's answer (`rows`: its wines in the catalogue): text a customer should not
    see, a wine not in the catalogue or of another colour, or no recommendation at all."""
    ids = result.response.wine_ids()
    names = [n for row in rows.values() for n in (row["name"], row["producer"], row["region"]) if n]
    problems = visible_problems("\n\n".join([*shown.texts, result.text]), names)
    if len(rows) != len(ids) or len(ids) != len(result.response.wines):
        problems.append("a wine not in the catalogue")
    if result.response.response_type != "recommendation" or not ids:
        problems.append("no recommendation")
    if any(row["wine_type"] != wine_type for row in rows.values()):
        problems.append(f"a wine that is not {wine_type}")
    return problems


def outcome_of(mode: str, problems: list[str]) -> str:
    """The matrix's word for a turn: a clean answer, the offline fallback, or what went wrong."""
    if mode in ("llm", "catalog_fallback") and not problems:
        return "answer"
    if mode == "offline_fallback":
        return "offline"
    if mode == "llm":
        return "unclean: " + ", ".join(problems)
    return mode if problems == [] else f"{mode}: {', '.join(problems)}"


def run_behaviour(
    database,
    name: str,
    *,
    time_scale: float = DEFAULT_TIME_SCALE,
    queries: tuple[tuple[str, str], ...] = QUERIES,
    chat_base: int = 8_800_000,
    streaming: bool = False,
    save: bool = True,
) -> tuple[list[TurnFigures], dict[str, int]]:
    """Run the queries against one behaviour; returns each turn's figures and the simulated model's stats.

    It also runs an older agent (one without a turn deadline or streaming switch), for before/after figures.
    """
    import dataclasses
    import inspect

    from sommelier.agent.llm.client import OpenAIChat
    from sommelier.agent.loop import TurnRequest
    from sommelier.app import build_agent
    from sommelier.embeddings.local import LocalHashingEmbeddings
    from sommelier.repositories.adapters import in_process_repositories

    from tests.fakes.openai_server import FakeOpenAI
    from tests.fakes.provider_behaviours import BEHAVIOURS

    behaviour = BEHAVIOURS[name]
    scale = time_scale if behaviour.scaled else 1.0
    figures: list[TurnFigures] = []
    with FakeOpenAI() as fake:
        model = fake.behave(name, time_scale=scale)
        options: dict[str, Any] = {"stream": streaming, "stall_timeout": behaviour.stall_s * scale}
        accepted = inspect.signature(OpenAIChat).parameters
        llm = OpenAIChat(
            api_key="test",
            base_url=fake.base_url,
            model="provider/model",
            timeout=behaviour.timeout_s * scale,
            max_retries=MAX_RETRIES,
            **{k: v for k, v in options.items() if k in accepted},
        )
        has_deadline = "deadline" in {f.name for f in dataclasses.fields(TurnRequest)}
        agent = build_agent(in_process_repositories(database), LocalHashingEmbeddings(), llm)
        for index, (query, wine_type) in enumerate(queries):
            before = len(fake.chat_requests)
            budget = behaviour.budget_s * scale
            started = time.monotonic()
            request = TurnRequest(text=query, chat_id=chat_base + index, save=save)
            shown = ShownPieces()
            if has_deadline:
                from sommelier.domain.conversation import Deadline

                request.deadline = Deadline.after(budget)
            try:
                result = run_turn(agent, request, shown, streaming)
            except Exception as exc:  # an older agent could crash; the matrix records it
                figures.append(
                    TurnFigures(
                        behaviour=name,
                        query=query,
                        outcome=f"crash ({type(exc).__name__})",
                        mode="crash",
                        http_requests=len(fake.chat_requests) - before,
                        reported_http_requests=-1,
                        llm_calls=-1,
                        generations=-1,
                        wall_s=round(time.monotonic() - started, 3),
                        budget_s=round(budget, 3),
                        time_scale=scale,
                        slack_s=UNSCALED_OWN_WORK_S if scale != 1.0 else 0.0,
                    )
                )
                continue
            wall = time.monotonic() - started
            metadata = result.metadata
            ids = result.response.wine_ids()
            rows = catalogue_rows(database, ids)
            problems = answer_problems(result, rows, shown, wine_type)
            mode = metadata["mode"]
            outcome = outcome_of(mode, problems)
            figures.append(
                TurnFigures(
                    behaviour=name,
                    query=query,
                    outcome=outcome,
                    mode=mode,
                    http_requests=len(fake.chat_requests) - before,
                    reported_http_requests=metadata.get("llm_http_requests", -1),
                    llm_calls=metadata["llm_calls"],
                    generations=metadata.get("llm_generations", -1),
                    wall_s=round(wall, 3),
                    budget_s=round(budget, 3),
                    time_scale=scale,
                    slack_s=UNSCALED_OWN_WORK_S if scale != 1.0 else 0.0,
                    problems=problems,
                    wines=[rows.get(i, {}).get("name", "?") for i in ids],
                    learned=list(metadata.get("capabilities_learned") or []),
                    text=result.text,
                )
            )
    return figures, dict(model.stats)


def markdown_table(results: dict[str, list[TurnFigures]]) -> str:
    from tests.fakes.provider_behaviours import BEHAVIOURS

    lines = [
        "| behaviour | provider | what it does | outcome (3 queries) | HTTP requests | LLM calls | wall time, s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, turns in results.items():
        behaviour = BEHAVIOURS[name]
        outcomes = sorted({t.outcome for t in turns})
        outcome = ", ".join(f"{o} ×{sum(t.outcome == o for t in turns)}" for o in outcomes)
        via = sorted({t.mode for t in turns if t.outcome == "answer" and t.mode != "llm"})
        if via:
            outcome += f" via {', '.join(via)}"
        learned = sorted({lesson for t in turns for lesson in t.learned})
        if learned:
            outcome += f" (learned {'; '.join(learned)})"
        requests = " / ".join(str(t.http_requests) for t in turns)
        calls = " / ".join(str(t.llm_calls) for t in turns)
        walls = " / ".join(f"{t.wall_s:.2f}" for t in turns)
        if turns and turns[0].time_scale != 1.0:
            real = " / ".join(f"{t.wall_s / t.time_scale:.0f}" for t in turns)
            walls += (
                f" (×1/{turns[0].time_scale:g}: {real} s of a {turns[0].budget_s / turns[0].time_scale:.0f} s budget)"
            )
        lines.append(
            f"| `{name}` | {behaviour.provider} | {behaviour.documented} | {outcome} | {requests} | {calls} | {walls} |"
        )
    return "\n".join(lines)


def summary(results: dict[str, list[TurnFigures]]) -> dict[str, Any]:
    """Counts over every turn: clean model answers, offline answers, other endings; budget overruns."""
    turns = [t for group in results.values() for t in group]
    return {
        "behaviours": len(results),
        "turns": len(turns),
        "answers": sum(t.outcome == "answer" for t in turns),
        "behaviours_all_answers": sum(all(t.outcome == "answer" for t in group) for group in results.values()),
        "offline": sum(t.outcome == "offline" for t in turns),
        "other": sum(t.outcome not in ("answer", "offline") for t in turns),
        "over_budget": sum(t.wall_s > t.budget_s + t.slack_s for t in turns),
        "accounting_mismatches": sum(t.http_requests != t.reported_http_requests for t in turns),
    }


def run_all(
    database, *, time_scale: float = DEFAULT_TIME_SCALE, names: list[str] | None = None, streaming: bool = False
) -> dict[str, Any]:
    from tests.fakes.provider_behaviours import BEHAVIOURS

    results: dict[str, list[TurnFigures]] = {}
    stats: dict[str, dict[str, int]] = {}
    for offset, name in enumerate(names or list(BEHAVIOURS)):
        results[name], stats[name] = run_behaviour(
            database, name, time_scale=time_scale, chat_base=8_800_000 + offset * 10, streaming=streaming
        )
    return {"results": results, "stats": stats}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time-scale", type=float, default=DEFAULT_TIME_SCALE)
    parser.add_argument("--behaviour", action="append", help="only these behaviours (repeatable)")
    parser.add_argument("--streaming", action="store_true", help="stream every call and show the pieces as they come")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or None)
    parser.add_argument("--output", help="write every turn's figures as JSON here")
    parser.add_argument("--markdown", help="write the RELIABILITY.md table here")
    args = parser.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    from reliability.load_test import fresh_embedded_database

    def run(url: str) -> dict[str, Any]:
        from sommelier.catalog.importer import import_catalog
        from sommelier.db.pool import Database
        from sommelier.embeddings.local import LocalHashingEmbeddings
        from sommelier.photos.store import LocalPhotoStore
        from sommelier.repositories.adapters import in_process_repositories

        database = Database(url)
        import tempfile

        with tempfile.TemporaryDirectory() as photos:
            import_catalog(
                ROOT / "data" / "catalog" / "wines.json",
                catalog=in_process_repositories(database).catalog,
                embedder=LocalHashingEmbeddings(),
                photos=LocalPhotoStore(Path(photos)),
            )
        try:
            return run_all(database, time_scale=args.time_scale, names=args.behaviour, streaming=args.streaming)
        finally:
            database.close()

    if args.database_url:
        from sommelier.db.migrations import apply_migrations

        apply_migrations(args.database_url)
        matrix = run(args.database_url)
    else:
        with fresh_embedded_database() as url:
            matrix = run(url)
    table = markdown_table(matrix["results"])
    print(table)
    print(json.dumps(summary(matrix["results"])))
    if args.output:
        data = {name: [asdict(t) for t in turns] for name, turns in matrix["results"].items()}
        Path(args.output).write_text(
            json.dumps(
                {"summary": summary(matrix["results"]), "turns": data, "stats": matrix["stats"]},
                ensure_ascii=False,
                indent=1,
            )
        )
    if args.markdown:
        Path(args.markdown).write_text(table + "\n", "utf-8")
    turns = [t for turns in matrix["results"].values() for t in turns]
    return 0 if all(t.http_requests == t.reported_http_requests for t in turns) else 1


if __name__ == "__main__":
    sys.exit(main())
