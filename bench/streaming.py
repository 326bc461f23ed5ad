"""`streaming`: when the customer sees what, with a latency model, for three ways of answering.

The same update goes end to end through the `sommelier serve` machinery (local HTTP API, per-chat
ordered workers, the real bot the composition root builds from each mode's settings) to the fake Bot API,
in one run for:

- streaming: the model streams (LLM_STREAM on) and the reply is delivered progressively (a draft,
  the intro, each wine card as it is complete, the closing);
- non-streaming: today's path (LLM_STREAM=off): the whole answer, then every message;
- LangChain: the turn's answer comes from the LangChain tool-calling agent of bench/langchain_agent.py
  (`agent.invoke`) on the same fake LLM, rendered and delivered by the same code (typing while it runs).

Latency model: FakeOpenAI answers every call after ~1 s to the first token and then 30 tokens a
second (3 characters a token, Russian in JSON); a non-streamed request gets the whole body when the
same generation would have ended. The answer is a realistic one: two sentences of intro, three wines
with two or three sentences each, a closing question. FakeTelegram holds every call for a round trip of
80 ms (the Bot API from eu-central-1), recorded when the call arrives.

Figures per mode, from the webhook POST: the first visible sign (the draft; typing where there is no
draft), the first persisted message, the first wine card and the last message (the closing with the
buttons). The ratios against non-streaming are the issue's targets: first message ≤ 35 %, first wine
card ≤ 60 %, last message ≤ 100 %.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import time
from collections.abc import Iterator
from typing import Any

from bench.agent_harness import TOOL_CALL, TURN_TEXT, found_wines, tool_results
from bench.common import Context, Figure, figure, log, median
from bench.e2e_local import BOT, SECRET, bot_environment, text_update

NAME = "streaming"
FIRST_TOKEN_S = 1.0
TOKENS_PER_S = 30.0
CHARS_PER_TOKEN = 3
TELEGRAM_ROUND_TRIP_S = 0.08
MODES = ("streaming", "non-streaming", "langchain")

INTRO = (
    "К стейку из говядины лучше всего подойдут плотные сухие красные вина с выразительными танинами. "
    "Я выбрал три бутылки в вашем бюджете — от сочной классики до более пряного варианта."
)
DESCRIPTIONS = (
    "Насыщенное вино с ароматами спелой вишни, сливы и лёгкой ванили от выдержки в дубе. "
    "Мягкие, но ощутимые танины хорошо держат жирность мраморного мяса, а долгое послевкусие "
    "подчеркнёт корочку стейка на гриле.",
    "Более пряный и плотный вариант: чёрная смородина, перец и нотки табака. Хорошая кислотность "
    "освежает после каждого куска, а структура выдержит даже соус из зелёного перца. "
    "Откройте за полчаса до ужина.",
    "Самое мягкое из трёх: красные ягоды, фиалка и немного специй. Подойдёт, если стейк средней "
    "прожарки и за столом есть те, кто не любит слишком терпкие вина. Подавайте слегка охлаждённым, "
    "около 16 градусов.",
)
CLOSING = "Рассказать подробнее о каком-нибудь из них или подобрать вино подешевле?"


def answer_json(wines: list[dict]) -> str:
    """A full-length answer about these wines (up to three), as a model would write it; none: a short reply."""
    return json.dumps(
        {
            "response_type": "recommendation" if wines else "informational",
            "intro": INTRO if wines else "Подходящих вин сейчас не нашлось.",
            "wines": [
                {"wine_id": w["id"], "wine_name": w["name"], "description": text}
                for w, text in zip(wines[:3], DESCRIPTIONS, strict=False)
            ],
            "closing": CLOSING,
            "guard_type": None,
        },
        ensure_ascii=False,
    )


def realistic_answer(body: dict) -> str:
    return answer_json(found_wines(body)[:3])


class PacedLLM:
    """The fake LLM's script: a search, then the answer; paced by the latency model when `on`."""

    def __init__(self) -> None:
        self.on = False
        self.pace = 1.0  # a smoke run plays the latency model ten times faster

    def __call__(self, body: dict):
        from tests.fakes.openai_server import reply, streamed, tool_calls

        step = tool_calls(TOOL_CALL) if body.get("tools") and not tool_results(body) else reply(realistic_answer(body))
        if not self.on:
            return streamed(step, chars_per_token=CHARS_PER_TOKEN)
        return streamed(
            step,
            first_token_s=FIRST_TOKEN_S * self.pace,
            tokens_per_s=TOKENS_PER_S / self.pace,
            chars_per_token=CHARS_PER_TOKEN,
        )


class LangChainDialog:
    """The bot's Dialog with its text turns answered by the LangChain agent (everything else as ours)."""

    def __init__(self, dialog: Any, agent: Any):
        self._dialog = dialog
        self._agent = agent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dialog, name)

    def message(self, sender, text, *, update_id=None, exclude_ids=None, deadline=None, invocations_at_start=None):
        from sommelier.domain.answer import SommelierResponse
        from sommelier.telegram.dialog import Reply

        from bench.langchain_agent import run_turn

        answer = SommelierResponse.model_validate(run_turn(self._agent, text))
        return Reply(parts=self._dialog._render(answer, answer_ref=str(update_id or 0)))

    def message_stream(self, sender, text, *, update_id=None, shown=None, **_options):
        """The LangChain agent shows nothing while it thinks: no pieces, then the whole reply."""
        yield from ()
        return self.message(sender, text, update_id=update_id)


def _langchain_agent(base_url: str, database: Any) -> Any:
    """bench/langchain_agent.py's agent, with a timeout that lets a 15-second generation finish."""
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ProviderStrategy
    from langchain_openai import ChatOpenAI
    from sommelier.agent.prompts import SYSTEM_PROMPT

    from bench.langchain_agent import ANSWER_SCHEMA, build_tools

    chat = ChatOpenAI(
        base_url=base_url, api_key="test", model="test-model", timeout=90, max_retries=0, temperature=0.6,
        max_tokens=1500,
    )  # fmt: skip
    return create_agent(
        chat,
        tools=build_tools(database),
        system_prompt=SYSTEM_PROMPT,
        response_format=ProviderStrategy(ANSWER_SCHEMA, strict=True),
    )


def langchain_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("langchain", "langchain_core", "langchain_openai"))


def moments(calls: list, started: float) -> dict[str, float | None]:
    """Milliseconds from the POST to each moment the customer sees, from the fake Bot API's arrival times."""

    def first(predicate) -> float | None:
        hit = next((c for c in calls if predicate(c)), None)
        return None if hit is None else (hit.time - started) * 1000

    def message(c) -> bool:
        return c.delivered and c.method in ("sendMessage", "sendPhoto")

    def card(c) -> bool:
        return message(c) and (c.method == "sendPhoto" or "₽" in str(c.params.get("text", "")))

    closing = [c for c in calls if message(c) and (c.params.get("reply_markup") or {}).get("inline_keyboard")]
    return {
        "first visible sign": first(lambda c: c.delivered and c.method in ("sendMessageDraft", "sendChatAction")),
        "first draft": first(lambda c: c.delivered and c.method == "sendMessageDraft"),
        "first message": first(message),
        "first wine card": first(card),
        "last message": (closing[-1].time - started) * 1000 if closing else None,
    }


def run(ctx: Context) -> list[Figure]:
    modes = [m for m in MODES if m != "langchain" or langchain_available()]
    if "langchain" not in modes:
        log("streaming: LangChain not installed (pip install -r bench/requirements.txt): its line is skipped")
    turns = 1 if ctx.quick else 3
    paced = PacedLLM()
    paced.pace = 0.1 if ctx.smoke else 1.0
    results: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    details: dict[str, Any] = {m: {"drafts_per_turn": [], "telegram_calls_per_turn": []} for m in modes}
    with shipped_rig(ctx, paced, details) as rig:
        # Each run is ~16 s a mode in real time: quick mode makes one unless --runs asks for more.
        for _ in range(ctx.runs if ctx.runs_explicit or not ctx.quick else 1):
            for mode in modes:  # the modes alternate within each run
                for metric, value in rig.run_mode(mode, turns).items():
                    results[mode].setdefault(metric, []).append(value)
    return _figures(results, details)


@contextlib.contextmanager
def shipped_rig(ctx: Context, paced: PacedLLM, details: dict[str, Any]) -> Iterator[Rig]:
    """A rig on a copy of the shipped catalogue, with the fake model answering by ``paced``; all torn down after."""
    from tests.fakes.openai_server import FakeOpenAI
    from tests.fakes.telegram_server import FakeTelegram

    databases = ctx.db()
    wdb = databases.shipped_copy()
    fake_llm = FakeOpenAI().start()
    fake_llm.default = paced
    telegram = FakeTelegram(bot_username=BOT).start()
    try:
        yield Rig(
            environ={
                **bot_environment(telegram, fake_llm.base_url, wdb.url, str(databases.photos_dir.parent)),
                "LLM_TIMEOUT_S": "60",
            },
            database=wdb.database,
            paced=paced,
            telegram=telegram,
            llm_base_url=fake_llm.base_url,
            details=details,
        )
    finally:
        telegram.stop()
        fake_llm.stop()
        wdb.close()
        databases.postgres.drop_database(wdb.name)


class Rig:
    """What every mode shares: the fakes, the database (one pool, as one `sommelier serve` process has) and the
    settings' environment; each mode builds its own bot and server from it (LLM_STREAM on or off)."""

    def __init__(
        self,
        *,
        environ: dict[str, str],
        database: Any,
        paced: PacedLLM,
        telegram: Any,
        llm_base_url: str,
        details: dict[str, Any],
    ):
        self.environ = environ
        self.database = database
        self.paced = paced
        self.telegram = telegram
        self.llm_base_url = llm_base_url
        self.details = details
        self.update_ids = iter(range(900_000, 1_000_000))

    def run_mode(self, mode: str, turns: int) -> dict[str, float]:
        """One run of a mode: a warm-up turn, then `turns` timed ones; the median of each moment."""
        import httpx2
        from sommelier.app import build_bot, build_runtime
        from sommelier.repositories.adapters import in_process_repositories
        from sommelier.settings import load_settings
        from sommelier.telegram.state import ledger_from_settings
        from sommelier_dev.cli.serve_cmd import build_local_server, webhook_path

        settings = load_settings({**self.environ, "LLM_STREAM": "on" if mode == "streaming" else "off"})
        runtime = build_runtime(settings, repositories=in_process_repositories(self.database))
        ledger = ledger_from_settings(settings)
        bot = build_bot(settings, runtime=runtime, ledger=ledger)  # this mode's bot, built from its settings
        if mode == "langchain":
            bot.dialog = LangChainDialog(bot.dialog, _langchain_agent(self.llm_base_url, self.database))
        server, workers = build_local_server(settings, workers=2, process=bot.process, ledger=ledger)
        server.start()
        url = f"{server.url}{webhook_path()}"
        samples: dict[str, list[float]] = {}
        try:
            with httpx2.Client(timeout=90) as http:
                self.turn(mode, http, url, workers, timed=False)  # warm-up: imports, connections, file_ids
                for _ in range(turns):
                    for metric, value in self.turn(mode, http, url, workers, timed=True).items():
                        if value is not None:
                            samples.setdefault(metric, []).append(value)
        finally:
            server.stop()
            workers.shutdown()
        figures = {metric: median(values) for metric, values in samples.items()}
        log(f"streaming: {mode}: " + ", ".join(f"{k} {v / 1000:.2f} s" for k, v in figures.items()))
        return figures

    def turn(self, mode: str, http: Any, url: str, workers: Any, *, timed: bool) -> dict[str, float | None]:
        from sommelier.observability.telemetry import metrics

        telegram = self.telegram
        self.paced.on = timed
        telegram.network_latency = TELEGRAM_ROUND_TRIP_S if timed else 0.0
        before = len(telegram.calls)
        started = time.monotonic()
        response = http.post(
            url,
            json=text_update(next(self.update_ids), TURN_TEXT),
            headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
        )
        if response.status_code != 200:
            raise RuntimeError(f"the webhook answered {response.status_code}: {response.text[:200]}")
        if not workers.wait_idle(timeout=90):
            raise RuntimeError("the turn did not finish within 90 s")
        if workers.dead_letters:
            raise RuntimeError(f"a turn failed: {workers.dead_letters[-1]}")
        new = telegram.calls[before:]
        seen = moments(new, started)
        if seen["last message"] is None or seen["first wine card"] is None:
            raise RuntimeError(f"{mode}: no wine card or closing; calls: {[c.method for c in new]}")
        if timed:
            details = self.details[mode]
            details["drafts_per_turn"].append(sum(c.method == "sendMessageDraft" for c in new))
            details["telegram_calls_per_turn"].append(len(new))
            details["timeline_ms"] = [(c.method, round((c.time - started) * 1000)) for c in new if c.delivered]
        metrics.clear_metrics()
        return seen


def _figures(results: dict[str, dict[str, list[float]]], details: dict[str, Any]) -> list[Figure]:
    out: list[Figure] = []
    for mode, metrics in results.items():
        info = {k: median(v) if k.endswith("_per_turn") else v for k, v in details[mode].items() if v}
        for metric, runs in metrics.items():
            out.append(
                figure(NAME, f"{mode}: POST → {metric}", "ms", runs, details=info if metric == "last message" else None)
            )
    today = results.get("non-streaming", {})
    ours = results.get("streaming", {})
    targets = {"first message": 0.35, "first wine card": 0.60, "last message": 1.0}
    for metric, limit in targets.items():
        if metric in today and metric in ours:
            ratios = [s / t for s, t in zip(ours[metric], today[metric], strict=False)]
            out.append(figure(NAME, f"streaming / non-streaming: {metric}", "ratio", ratios, at_most=limit))
    lc = results.get("langchain", {})
    for metric in ("first message", "last message"):
        if metric in lc and metric in ours:
            ratios = [s / t for s, t in zip(ours[metric], lc[metric], strict=False)]
            out.append(figure(NAME, f"streaming / LangChain: {metric}", "ratio", ratios))
    return out
