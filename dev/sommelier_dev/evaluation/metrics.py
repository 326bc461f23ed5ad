"""Scoring one evaluated turn against its golden case, and summarising a run.

Definitions (also in eval/README.md):

- **response-type accuracy**: the answer's response_type is one the case accepts.
- **tool choice**: among the search tools called in the evaluated turn (search_wines,
  semantic_search), at least one is an expected tool; for `"tool": null`, none was called.
- **filter accuracy**: some search call of the turn sent every expected filter (expected ⊆ sent),
  after normalising both sides: enum synonyms, country aliases (the language layer),
  grape aliases, region aliases, food words by stem, prices as numbers (or inside [low, high]).
- **constraint satisfaction**: per recommended wine, the catalogue row (looked up by id) meets
  every hard constraint of the case; a wine that is not in the catalogue meets none.
- **groundedness**: per recommended wine, it exists in the catalogue AND a candidate tool
  (search_wines, semantic_search, get_list) returned it in this very turn.
- **model groundedness** (LLM runs): the same check on the model's first final answer, before
  the agent validated it (the agent rejects invented wines and asks again).
- **recall@5** (cases with relevance labels): candidates = the union of the wines that the turn's
  candidate tools returned, ranked by relevance: wines with a similarity score first (best score
  seen this turn, descending), then wines without one (structured search) in the order the tools
  returned them. recall@5 = |relevant ∩ top 5| / min(|relevant|, 5); the uncapped variant divides
  by |relevant|.
- **guard accuracy**: on cases that expect a guard, response_type off_topic with the expected
  guard_type. **Guard false positives**: on all other cases, any guard_type at all.
- LLM calls, tokens (prompt + completion) and wall-clock latency of the evaluated turn.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from sommelier.agent.answer import extract_json, wine_key
from sommelier.domain.errors import PortError
from sommelier.repositories.ports import CatalogRepository

from sommelier_dev.evaluation.constraints import constraint_violations
from sommelier_dev.evaluation.filters import missing_filters, normalise_filters
from sommelier_dev.evaluation.golden import SEARCH_TOOLS, Expectation, GoldenCase
from sommelier_dev.evaluation.harness import CaseRun, TurnRecord
from sommelier_dev.evaluation.recording import CANDIDATE_TOOLS, ToolCallRecord
from sommelier_dev.evaluation.summary import RATIO_METRICS, percentile, summarize, value

# The filter and constraint checks (`filters`, `constraints`) and the summaries (`summary`) live in their own
# modules; their public names are importable from here too.
__all__ = [
    "RATIO_METRICS",
    "RECALL_K",
    "CaseScore",
    "Catalog",
    "WineCheck",
    "constraint_violations",
    "label_key",
    "missing_filters",
    "normalise_filters",
    "percentile",
    "score_case",
    "summarize",
    "value",
]

RECALL_K = 5

# --------------------------------------------------------------------------- the catalogue


class Catalog:
    """The wines for sale by id, read once through the tool port (`export_wines`). A wine that an import
    with --replace made unavailable is not in it, so recommending one counts as not in the catalogue."""

    def __init__(self, rows: dict[str, dict[str, Any]]):
        self.rows = rows
        self._by_name: dict[str, list[str]] = {}
        self._by_label: dict[tuple[str, str], list[str]] = {}
        for wine_id, row in rows.items():
            self._by_name.setdefault(wine_key(row["name"]), []).append(wine_id)
            self._by_label.setdefault(label_key(row["name"], row["producer"]), []).append(wine_id)

    @classmethod
    def load(cls, catalog: CatalogRepository) -> Catalog:
        try:
            wines = catalog.export_wines(include_unavailable=False)
        except PortError as exc:
            raise RuntimeError(f"could not read the catalogue: {exc}") from exc
        return cls({wine.id: wine.as_file_row() for wine in wines})

    def get(self, wine_id: str | None) -> dict[str, Any] | None:
        return self.rows.get(str(wine_id)) if wine_id else None

    def find_by_name(self, name: str) -> str | None:
        ids = self._by_name.get(wine_key(name or ""), [])
        return ids[0] if len(ids) == 1 else None

    def ids_for_label(self, name: str, producer: str) -> list[str]:
        return list(self._by_label.get(label_key(name, producer), []))

    def __len__(self) -> int:
        return len(self.rows)


def label_key(name: str, producer: str) -> tuple[str, str]:
    return wine_key(name or ""), wine_key(producer or "")


# --------------------------------------------------------------------------- per-case score


@dataclass
class WineCheck:
    wine_id: str | None
    wine_name: str
    in_catalog: bool
    returned_by_tool: bool
    violations: list[str] = field(default_factory=list)
    relevant: bool | None = None

    @property
    def grounded(self) -> bool:
        return self.in_catalog and self.returned_by_tool


@dataclass
class CaseScore:
    id: str
    category: str
    query: str
    history: list[str]
    response_type: str | None
    guard_type: str | None
    response_type_ok: bool
    guard_expected: bool
    guard_ok: bool | None  # guard cases only
    guard_false_positive: bool  # non-guard cases only
    tool_ok: bool | None
    tools_called: list[str]
    filters_ok: bool | None
    filters_missing: list[str] | None  # of the best-matching search call
    wines: list[WineCheck]
    constraints_checked: bool
    recall_at_5: float | None
    recall_at_5_uncapped: float | None
    top5: list[str]
    relevant_found: list[str]
    relevant_missed: list[str]
    mood_precision: float | None
    model_recommended: int | None
    model_grounded: int | None
    model_answer_parsed: bool | None
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    mode: str | None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def constraint_pairs(self) -> tuple[int, int]:
        """(wines meeting every constraint, wines checked)."""
        if not self.constraints_checked:
            return 0, 0
        return sum(1 for w in self.wines if not w.violations), len(self.wines)

    @property
    def grounded_pairs(self) -> tuple[int, int]:
        return sum(1 for w in self.wines if w.grounded), len(self.wines)

    @property
    def passed(self) -> bool:
        """Every check that applies to this case passed."""
        checks = [self.response_type_ok, not self.guard_false_positive]
        checks += [v for v in (self.guard_ok, self.tool_ok, self.filters_ok) if v is not None]
        ok, total = self.constraint_pairs
        grounded, recommended = self.grounded_pairs
        checks += [ok == total, grounded == recommended]
        if self.recall_at_5 is not None:
            checks.append(self.recall_at_5 >= 0.6)
        return all(checks) and not self.errors

    def failures(self) -> list[str]:
        out = []
        if self.errors:
            out += self.errors
        if not self.response_type_ok:
            out.append(f"response_type={self.response_type}")
        if self.guard_ok is False:
            out.append(f"guard: got {self.response_type}/{self.guard_type}")
        if self.guard_false_positive:
            out.append(f"guard fired on a normal query ({self.guard_type})")
        if self.tool_ok is False:
            out.append(f"tools called: {', '.join(self.tools_called) or 'none'}")
        if self.filters_ok is False:
            out.append(f"filters missing: {', '.join(self.filters_missing or [])}")
        for wine in self.wines:
            if not wine.grounded:
                out.append(
                    f"ungrounded wine «{wine.wine_name}»" + ("" if wine.in_catalog else " (not in the catalogue)")
                )
            if self.constraints_checked and wine.violations:
                out.append(f"«{wine.wine_name}» breaks: {'; '.join(wine.violations)}")
        if self.recall_at_5 is not None and self.recall_at_5 < 0.6:
            out.append(f"recall@5={self.recall_at_5:.2f}; missed: {', '.join(self.relevant_missed)}")
        return out

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["passed"] = self.passed
        data["failures"] = self.failures()
        for wine, raw in zip(self.wines, data["wines"], strict=True):
            raw["grounded"] = wine.grounded
        return data


def _candidates(turn: TurnRecord) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The turn's candidate wines, ranked for recall@5, and all of them by id."""
    by_id: dict[str, dict[str, Any]] = {}
    order = 0
    for call in turn.tool_calls:
        if call.name not in CANDIDATE_TOOLS or call.error:
            continue
        for wine in call.wines:
            wine_id = str(wine["id"])
            score = wine.get("similarity_score")
            known = by_id.get(wine_id)
            if known is None:
                by_id[wine_id] = {**wine, "_order": order, "_score": score}
                order += 1
            elif score is not None and (known["_score"] is None or score > known["_score"]):
                known["_score"] = score
    scored = sorted((w for w in by_id.values() if w["_score"] is not None), key=lambda w: (-w["_score"], w["_order"]))
    unscored = sorted((w for w in by_id.values() if w["_score"] is None), key=lambda w: w["_order"])
    return scored + unscored, by_id


def _model_answer(turn: TurnRecord) -> dict[str, Any] | None:
    """The model's first final answer of the turn (a reply without tool calls), parsed, or {} if unreadable."""
    for call in turn.llm_calls:
        if call.tool_calls or call.error:
            continue
        try:
            data = extract_json(call.content or "")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}
    return None


def _guard_ok(expect: Expectation, response_type: str | None, guard_type: str | None) -> bool | None:
    """Guard accuracy: on a case that expects a guard, an off_topic answer with that guard_type."""
    if expect.guard_type is None:
        return None
    return response_type == "off_topic" and guard_type == expect.guard_type


def _tool_ok(expect: Expectation, tools_called: list[str]) -> bool | None:
    """Tool choice: an expected search tool was called (none at all for `"tool": null`); None when not scored."""
    if not expect.tool_scored:
        return None
    if not expect.tools:
        return not tools_called
    return bool(set(tools_called) & set(expect.tools))


def _model_searches(turn: TurnRecord) -> list[ToolCallRecord]:
    """The searches as the model wrote them: the agent holds their arguments to the request (agent.fitting),
    so what the tool received is not the model's choice. [] when the model called none (the prefetch's)."""
    calls: list[ToolCallRecord] = []
    for llm_call in turn.llm_calls:
        for call in llm_call.tool_calls:
            if call.get("name") not in SEARCH_TOOLS:
                continue
            raw = call.get("arguments")
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                arguments = None
            if isinstance(arguments, dict):
                calls.append(ToolCallRecord(name=str(call["name"]), arguments=arguments, duration_ms=0.0))
    return calls


def _missing_filters(expected: dict[str, Any] | None, search_calls: list[ToolCallRecord]) -> list[str] | None:
    """Filter accuracy: the expected filters that the best-matching search call did not send (all of them when
    no search call was made); None when the case expects no filters."""
    if not expected:
        return None
    best: list[str] | None = None
    for call in search_calls:
        missing = missing_filters(expected, call.arguments)
        if best is None or len(missing) < len(best):
            best = missing
    return best if best is not None else sorted(expected)


def _previous_picks(run: CaseRun, catalog: Catalog) -> tuple[set[str], list[float]]:
    """The ids every earlier turn of the case recommended, and the catalogue prices of the last turn's picks
    (what the price-direction constraints compare against)."""
    previous_ids: set[str] = set()
    for earlier in run.history:
        previous_ids.update(str(w.get("wine_id")) for w in earlier.recommended if w.get("wine_id"))
    previous_prices: list[float] = []
    if run.history:
        for rec in run.history[-1].recommended:
            row = catalog.get(rec.get("wine_id"))
            if row is not None:
                previous_prices.append(float(row["price_rub"]))
    return previous_ids, previous_prices


def _price_direction_warnings(expect: Expectation, turn: TurnRecord, previous_prices: list[float]) -> list[str]:
    """A warning when a price-direction constraint could not be checked: the previous turn recommended nothing."""
    needs_previous = any(expect.constraints.get(k) for k in ("cheaper_than_previous", "pricier_than_previous"))
    if needs_previous and not previous_prices and turn.recommended:
        return ["the previous turn recommended nothing: the price-direction constraint was not checked"]
    return []


def _relevant_ids(expect: Expectation, catalog: Catalog) -> tuple[set[str], list[str]]:
    """The catalogue ids of the case's relevance labels, and a warning for each label the catalogue lacks."""
    relevant_ids: set[str] = set()
    warnings: list[str] = []
    for name, producer in expect.relevant:
        ids = catalog.ids_for_label(name, producer)
        if not ids:
            warnings.append(f"relevance label not in the catalogue: {name} / {producer}")
        relevant_ids.update(ids)
    return relevant_ids, warnings


def _check_wine(
    rec: dict[str, Any],
    catalog: Catalog,
    constraints: dict[str, Any],
    *,
    candidates: dict[str, dict[str, Any]],
    candidate_names: dict[str, str],
    previous_ids: set[str],
    previous_prices: list[float],
    relevant_ids: set[str],
) -> WineCheck:
    """One recommended wine: in the catalogue, returned by a candidate tool this turn (by id, or by name when
    the answer gave no id), the constraints it breaks, and whether it is relevant (labelled cases)."""
    wine_id = rec.get("wine_id") or catalog.find_by_name(rec.get("wine_name") or "")
    row = catalog.get(wine_id)
    returned = bool(wine_id and wine_id in candidates) or (
        not rec.get("wine_id") and wine_key(rec.get("wine_name") or "") in candidate_names
    )
    check = WineCheck(
        wine_id=wine_id, wine_name=rec.get("wine_name") or "", in_catalog=row is not None, returned_by_tool=returned
    )
    if row is None:
        check.violations = ["not in the catalogue"]
    else:
        check.violations = constraint_violations(
            row, constraints, previous_ids=previous_ids, previous_prices=previous_prices, wine_id=str(wine_id)
        )
    if relevant_ids:
        check.relevant = bool(wine_id and wine_id in relevant_ids)
    return check


@dataclass
class _Recall:
    """recall@5 of a labelled (mood) case, with what it was computed from; all empty for other cases."""

    at_5: float | None = None
    uncapped: float | None = None
    precision: float | None = None
    top5: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)


def _recall(
    expect: Expectation,
    catalog: Catalog,
    ranked: list[dict[str, Any]],
    candidates: dict[str, dict[str, Any]],
    checks: list[WineCheck],
) -> _Recall:
    """recall@5 (capped and uncapped) of the case's relevance labels among the top candidates, and the share of
    recommended wines that are relevant (mood pick precision)."""
    if not expect.relevant:
        return _Recall()
    result = _Recall()
    top_ids = [str(w["id"]) for w in ranked[:RECALL_K]]
    result.top5 = [f"{candidates[i]['name']} / {candidates[i].get('producer', '')}" for i in top_ids]
    for name, producer in expect.relevant:
        label_ids = set(catalog.ids_for_label(name, producer))
        (result.found if label_ids & set(top_ids) else result.missed).append(f"{name} / {producer}")
    hits = len(result.found)
    result.at_5 = min(hits / min(len(expect.relevant), RECALL_K), 1.0)
    result.uncapped = hits / len(expect.relevant)
    if checks:
        result.precision = sum(1 for c in checks if c.relevant) / len(checks)
    return result


def _model_groundedness(
    turn: TurnRecord,
    catalog: Catalog,
    candidates: dict[str, dict[str, Any]],
    candidate_names: dict[str, str],
) -> tuple[int | None, int | None, bool | None]:
    """The model's first final answer (LLM runs): (wines it recommended, how many of them are grounded, whether
    it parsed); all None when the turn has no such answer."""
    answer = _model_answer(turn)
    if answer is None:
        return None, None, None
    raw_wines = answer.get("wines")
    wines: list[Any] = raw_wines if isinstance(raw_wines, list) else []
    grounded = 0
    for wine in wines:
        if not isinstance(wine, dict):
            continue
        wine_id = str(wine.get("wine_id") or "")
        if wine_id in candidates and catalog.get(wine_id) is not None:
            grounded += 1
        elif wine_key(str(wine.get("wine_name") or "")) in candidate_names:
            grounded += 1
    return len(wines), grounded, bool(answer)


def score_case(run: CaseRun, catalog: Catalog) -> CaseScore:
    case: GoldenCase = run.case
    expect = case.expect
    turn = run.turn
    assert turn is not None, "the case has not been run"  # nosec B101 - a programming guard in the offline evaluation, not input validation
    response = turn.response or {}
    metadata = turn.metadata or {}
    response_type = response.get("response_type")
    guard_type = response.get("guard_type")

    search_calls = [c for c in turn.tool_calls if c.name in SEARCH_TOOLS]
    tools_called = list(dict.fromkeys(c.name for c in search_calls))
    filters_missing = _missing_filters(expect.filters, _model_searches(turn) or search_calls)

    ranked, candidates = _candidates(turn)
    candidate_names = {wine_key(w.get("name") or ""): i for i, w in candidates.items()}
    previous_ids, previous_prices = _previous_picks(run, catalog)
    relevant_ids, label_warnings = _relevant_ids(expect, catalog)
    checks = [
        _check_wine(
            rec,
            catalog,
            expect.constraints,
            candidates=candidates,
            candidate_names=candidate_names,
            previous_ids=previous_ids,
            previous_prices=previous_prices,
            relevant_ids=relevant_ids,
        )
        for rec in turn.recommended
    ]
    recall = _recall(expect, catalog, ranked, candidates, checks)
    model_recommended, model_grounded, model_parsed = _model_groundedness(turn, catalog, candidates, candidate_names)

    tokens = metadata.get("tokens") or {}
    return CaseScore(
        id=case.id,
        category=case.category,
        query=case.query,
        history=list(case.history),
        response_type=response_type,
        guard_type=guard_type,
        response_type_ok=response_type in expect.response_types,
        guard_expected=expect.guard_type is not None,
        guard_ok=_guard_ok(expect, response_type, guard_type),
        guard_false_positive=expect.guard_type is None and guard_type is not None,
        tool_ok=_tool_ok(expect, tools_called),
        tools_called=tools_called,
        filters_ok=None if filters_missing is None else not filters_missing,
        filters_missing=filters_missing,
        wines=checks,
        constraints_checked=bool(expect.constraints),
        recall_at_5=recall.at_5,
        recall_at_5_uncapped=recall.uncapped,
        top5=recall.top5,
        relevant_found=recall.found,
        relevant_missed=recall.missed,
        mood_precision=recall.precision,
        model_recommended=model_recommended,
        model_grounded=model_grounded,
        model_answer_parsed=model_parsed,
        llm_calls=int(metadata.get("llm_calls") or 0),
        prompt_tokens=int(tokens.get("prompt") or 0),
        completion_tokens=int(tokens.get("completion") or 0),
        latency_ms=float(turn.wall_ms),
        mode=metadata.get("mode"),
        errors=[f"agent error: {turn.error}"] if turn.error else [],
        warnings=_price_direction_warnings(expect, turn, previous_prices) + label_warnings,
    )
