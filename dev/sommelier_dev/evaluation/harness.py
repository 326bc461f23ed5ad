"""Play golden cases through a real `SommelierAgent` and record what each turn did.

Each case runs in its own chat. Its `history` turns are played first through the same agent,
so they are saved and loaded exactly as in production; then the evaluated turn runs. The
tool port and the LLM are wrapped by the recorders, so every tool call (with arguments and
results) and every LLM reply of the evaluated turn is kept for scoring.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.llm.port import ChatLLM
from sommelier.agent.loop import SommelierAgent, TurnRequest
from sommelier.app import build_agent
from sommelier.domain.errors import PortError
from sommelier.embeddings import EmbeddingProvider
from sommelier.repositories.adapters import Repositories

from sommelier_dev.evaluation.golden import GoldenCase
from sommelier_dev.evaluation.recording import LLMCallRecord, RecordingCatalog, RecordingLLM, ToolCallRecord

logger = logging.getLogger(__name__)

# Eval chats are negative (group-style) ids far from real ones, fresh for every run, so a
# rerun against the same database never sees an earlier run's history.
_CHAT_BASE = 5 * 10**15
_CASE_STRIDE = 1000


@dataclass
class TurnRecord:
    text: str
    response: dict[str, Any] | None
    metadata: dict[str, Any]
    tool_calls: list[ToolCallRecord]
    llm_calls: list[LLMCallRecord]
    wall_ms: float
    error: str | None = None

    @property
    def recommended(self) -> list[dict[str, Any]]:
        return list((self.response or {}).get("wines") or [])

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "response": self.response,
            "metadata": self.metadata,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "llm_calls": [c.to_json() for c in self.llm_calls],
            "wall_ms": self.wall_ms,
            **({"error": self.error} if self.error else {}),
        }


@dataclass
class CaseRun:
    case: GoldenCase
    chat_id: int
    history: list[TurnRecord] = field(default_factory=list)
    turn: TurnRecord | None = None


class EvalHarness:
    def __init__(
        self,
        agent: SommelierAgent,
        tools: RecordingCatalog,
        llm: RecordingLLM | None = None,
        *,
        run_seed: int | None = None,
    ):
        if agent.catalog is not tools:
            raise ValueError("the agent must call tools through the harness's RecordingCatalog")
        self.agent = agent
        self.tools = tools
        self.llm = llm
        seed = secrets.randbelow(10**12) if run_seed is None else run_seed % 10**12
        self.chat_base = -(_CHAT_BASE + seed * _CASE_STRIDE)

    @classmethod
    def build(
        cls,
        repositories: Repositories,
        embedder: EmbeddingProvider,
        llm: ChatLLM | None = None,
        *,
        run_seed: int | None = None,
        **agent_options: Any,
    ) -> EvalHarness:
        """Wrap the tool port (and the LLM, if any) in recorders and build the agent on them."""
        catalog = repositories.catalog
        recording_tools = catalog if isinstance(catalog, RecordingCatalog) else RecordingCatalog(catalog)
        recorded = Repositories(recording_tools, repositories.chat, repositories.shop, repositories.counter)
        recording_llm = None
        if llm is not None:
            recording_llm = llm if isinstance(llm, RecordingLLM) else RecordingLLM(llm)
        agent = build_agent(recorded, embedder, recording_llm, **agent_options)
        return cls(agent, recording_tools, recording_llm, run_seed=run_seed)

    @property
    def mode(self) -> str:
        return "offline" if self.agent.llm is None else "llm"

    @property
    def model(self) -> str:
        return self.agent.llm.model if self.agent.llm is not None else "offline-rules"

    # ------------------------------------------------------------------ running

    def run(
        self, cases: Iterable[GoldenCase], *, progress: Callable[[int, GoldenCase, CaseRun], None] | None = None
    ) -> list[CaseRun]:
        runs = []
        for index, case in enumerate(cases):
            run = self.run_case(case, index)
            runs.append(run)
            if progress is not None:
                progress(index, case, run)
        return runs

    def run_case(self, case: GoldenCase, index: int = 0) -> CaseRun:
        chat_id = self.chat_base - index
        self._reset(chat_id)
        run = CaseRun(case=case, chat_id=chat_id)
        for text in case.history:
            run.history.append(self._turn(text, chat_id))
        run.turn = self._turn(case.query, chat_id)
        self._reset(chat_id)  # archive the eval chat: it never shows up as anyone's history
        return run

    def _turn(self, text: str, chat_id: int) -> TurnRecord:
        self.tools.start_turn()
        if self.llm is not None:
            self.llm.start_turn()
        started = time.perf_counter()
        try:
            result = self.agent.run(TurnRequest(text=text, chat_id=chat_id, save=True))
        except Exception as exc:  # the agent promises never to raise; record it if it does
            logger.exception("the agent raised on %r", text[:80])
            return TurnRecord(
                text,
                None,
                {},
                list(self.tools.calls),
                self._llm_calls(),
                round((time.perf_counter() - started) * 1000, 2),
                error=f"{type(exc).__name__}: {exc}",
            )
        wall_ms = round((time.perf_counter() - started) * 1000, 2)
        _drop_buffered_metrics()
        return TurnRecord(
            text=text,
            response=result.response.model_dump(),
            metadata=result.metadata,
            tool_calls=list(self.tools.calls),
            llm_calls=self._llm_calls(),
            wall_ms=wall_ms,
        )

    def _llm_calls(self) -> list[LLMCallRecord]:
        return list(self.llm.calls) if self.llm is not None else []

    def _reset(self, chat_id: int) -> None:
        try:
            self.agent.chat.reset_history(chat_id)
        except PortError as exc:
            logger.warning("could not reset eval chat %s: %s", chat_id, exc)


def _drop_buffered_metrics() -> None:
    """Outside Lambda nobody flushes the per-turn EMF metrics, and Powertools prints the buffer to
    stdout once a metric holds 100 values, even with POWERTOOLS_METRICS_DISABLED. An eval plays
    hundreds of turns, so the buffer is dropped after each one."""
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        return
    try:
        from sommelier.observability.telemetry import metrics

        metrics.clear_metrics()
    except Exception:  # observability must never break the evaluation
        logger.debug("could not clear the metrics buffer", exc_info=True)
