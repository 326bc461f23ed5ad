"""The recommendation-quality evaluation (docs/architecture.md, `sommelier eval`).

- `golden`: the Russian golden set in `eval/golden_set.json` (queries, expected behaviour, labels);
- `recording`: decorators around the tool port and the chat LLM that record every call of a turn;
- `harness`: plays each golden case through a real `SommelierAgent` (offline responder or an LLM);
- `metrics`: one case's score: tool choice, filter accuracy, constraint satisfaction, groundedness,
  recall@5, guards, LLM calls, tokens and latency (`filters` and `constraints`: two of its checks);
- `summary`: the scores of a run, overall and per category;
- `report`: the JSON report, the Markdown summary, the PNG chart and the threshold check.

The metric definitions are written out in `eval/README.md`.
"""

from sommelier_dev.evaluation.golden import GoldenCase, GoldenSetError, default_golden_path, load_golden_set
from sommelier_dev.evaluation.harness import CaseRun, EvalHarness
from sommelier_dev.evaluation.metrics import CaseScore, score_case, summarize

__all__ = [
    "CaseRun",
    "CaseScore",
    "EvalHarness",
    "GoldenCase",
    "GoldenSetError",
    "default_golden_path",
    "load_golden_set",
    "score_case",
    "summarize",
]
