"""`--enrich-llm`: the chat model fills what the rules could not, over a real socket to the OpenAI-compatible
fake; its values are validated against the vocabularies, cached by the row's hash, and costed."""

from __future__ import annotations

import json
import subprocess  # nosec B404 - runs this repository's own interpreter
import sys
from pathlib import Path

import pytest
from sommelier.agent.llm.client import OpenAIChat
from sommelier.catalog.importer import CatalogImportError, prepare_rows, read_catalog
from sommelier.domain.pricing import LLMPrice
from sommelier_dev.enrich_llm import CACHE_FILE, LlmEnrichment

from tests.fakes.openai_server import FakeOpenAI, Step, error, reply

ROOT = Path(__file__).resolve().parents[2]

# What a model that knows these wines answers, by a word of the name; two values are not in the vocabularies.
KNOWN = {
    "Musar": {"country": "Ливан", "region": "Долина Кедров", "grape_varieties": ["Каберне Совиньон", "Blorpberry"]},
    "Cloudy Bay": {"country": "Новая Зеландия", "region": "Marlborough", "grape_varieties": ["Sauvignon Blanc"]},
    "Penfolds": {"country": "Атлантида", "wine_type": "красное", "sweetness": "dry", "grape_varieties": ["Shiraz"]},
}

THIN = """Артикул;Наименование;Цена;Остаток;Страна
A-1;Вино Château Musar красное сухое;5200;3;
A-2;Вино Cloudy Bay белое сухое;3900;5;Франция
A-3;Penfolds Bin 128;4100;2;
"""


def answer(body: dict) -> Step:
    """The model's reply to the rows it was sent: only the fields each row asks for."""
    rows = json.loads(body["messages"][-1]["content"])["wines"]
    wines = []
    for row in rows:
        facts = next((f for word, f in KNOWN.items() if word in row["name"]), {})
        wines.append({"id": row["id"], **{k: v for k, v in facts.items() if k in row["fill"]}})
    return reply(json.dumps({"wines": wines}, ensure_ascii=False), prompt_tokens=1000, completion_tokens=200)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def enrichment(fake: FakeOpenAI, state: Path) -> LlmEnrichment:
    llm = OpenAIChat(api_key="test", base_url=fake.base_url, model="test-model", timeout=5, max_retries=0)
    return LlmEnrichment(llm, LLMPrice(3.0, 15.0), state)


def thin_file(tmp_path: Path) -> Path:
    path = tmp_path / "thin.csv"
    path.write_text(THIN, encoding="utf-8")
    return path


def test_valid_values_fill_empty_fields_marked_inferred_and_hallucinations_are_dropped(fake, tmp_path):
    fake.default = answer
    llm_pass = enrichment(fake, tmp_path / "state")
    records = {r.sku: r for r in prepare_rows(read_catalog(thin_file(tmp_path)), tmp_path, llm_pass).records}

    musar, cloudy, penfolds = records["A-1"], records["A-2"], records["A-3"]
    assert (musar.country, musar.grape_varieties) == ("Ливан", ["Каберне Совиньон"])  # «Blorpberry» dropped
    assert {"country", "grape_varieties"} <= set(musar.inferred)
    assert musar.region == ""  # no region the language layer knows: dropped
    # The shop's «Франция» wins over the model, and a region in another country is not imported beside it.
    assert (cloudy.country, cloudy.region, cloudy.grape_varieties) == ("Франция", "", ["Совиньон Блан"])
    assert "country" not in cloudy.inferred and "grape_varieties" in cloudy.inferred
    # A row the rules could not give a colour imports, its colour and sweetness from the model, marked;
    # its invented country is not imported.
    assert (penfolds.wine_type, penfolds.sweetness, penfolds.country) == ("red", "dry", "")
    assert {"wine_type", "sweetness", "grape_varieties"} <= set(penfolds.inferred)

    report = llm_pass.report
    assert (report.rows_sent, report.calls, report.cache_hits) == (3, 1, 0)
    assert report.filled["grape_varieties"] == 3 and report.filled["country"] == 1
    assert sorted(d.split(" ")[0] for d in report.dropped) == ["country", "grape", "region", "region"]
    assert "region 'Мальборо': не в стране вина (Франция)" in report.dropped
    assert any("Атлантида" in d for d in report.dropped) and any("Blorpberry" in d for d in report.dropped)
    assert (report.prompt_tokens, report.completion_tokens) == (1000, 200)
    assert report.cost_usd == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    # The model was asked only for the empty fields, never price or stock.
    [sent] = [json.loads(b["messages"][-1]["content"])["wines"] for b in fake.chat_requests]
    assert [r["fill"] for r in sent][1] == ["region", "appellation", "grape_varieties"]
    assert all("price" not in json.dumps(r) and "5200" not in json.dumps(r) for r in sent)


def test_a_second_import_is_answered_from_the_cache(fake, tmp_path):
    fake.default = answer
    first = prepare_rows(read_catalog(thin_file(tmp_path)), tmp_path, enrichment(fake, tmp_path / "state")).records
    assert (tmp_path / "state" / CACHE_FILE).is_file()
    calls = len(fake.chat_requests)
    again = enrichment(fake, tmp_path / "state")
    second = prepare_rows(read_catalog(thin_file(tmp_path)), tmp_path, again).records
    assert len(fake.chat_requests) == calls  # no call at all
    assert (again.report.cache_hits, again.report.rows_sent, again.report.cost_usd) == (3, 0, 0.0)
    assert [r.model_dump() for r in second] == [r.model_dump() for r in first]


def test_rows_are_sent_in_batches(fake, tmp_path):
    fake.default = answer
    rows = "".join(f"B-{i};Вино Cloudy Bay белое сухое {i};3900;5;\n" for i in range(5))
    path = tmp_path / "many.csv"
    path.write_text(THIN.splitlines()[0] + "\n" + rows, encoding="utf-8")
    llm_pass = enrichment(fake, tmp_path / "state")
    llm_pass.batch_rows = 2
    prepare_rows(read_catalog(path), tmp_path, llm_pass)
    assert (llm_pass.report.calls, llm_pass.report.rows_sent) == (3, 5)


def test_an_unusable_answer_costs_its_tokens_and_leaves_the_rules_values(fake, tmp_path):
    fake.script(reply("Sorry, I cannot help with that.", prompt_tokens=900, completion_tokens=10))
    llm_pass = enrichment(fake, tmp_path / "state")
    with pytest.raises(CatalogImportError):  # Penfolds has no colour without the model: --strict refuses
        prepare_rows(read_catalog(thin_file(tmp_path)), tmp_path, llm_pass, strict=True)
    assert llm_pass.report.failed_calls and not llm_pass.report.filled
    assert llm_pass.report.prompt_tokens == 900 and llm_pass.report.cost_usd > 0
    assert not (tmp_path / "state" / CACHE_FILE).exists()  # a failed answer is not cached


def test_the_catalogue_drop_and_a_customers_turn_never_load_the_llm_pass():
    """Static: the deployed package never imports sommelier_dev (import contract); here, by loading the
    catalogue-drop handler and the agent handler as Lambda does."""
    code = (
        "import runpy, sys\n"
        "for handler in ('functions/catalog_drop/app.py', 'functions/webhook/agent.py'):\n"
        "    runpy.run_path(handler)\n"
        "print([m for m in sys.modules if m.startswith('sommelier_dev')])\n"
    )
    result = subprocess.run(  # nosec B603 - fixed arguments
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_failed_call_is_reported_and_the_import_goes_on_with_the_rules(fake, tmp_path):
    fake.script(error(500, "upstream down"))
    path = tmp_path / "coloured.csv"
    path.write_text("\n".join(THIN.splitlines()[:3]) + "\n", encoding="utf-8")  # Musar and Cloudy Bay
    llm_pass = enrichment(fake, tmp_path / "state")
    records = prepare_rows(read_catalog(path), tmp_path, llm_pass).records
    assert [r.country for r in records] == ["", "Франция"]
    assert len(llm_pass.report.failed_calls) == 1 and llm_pass.report.rows_sent == 2


def test_a_cache_that_cannot_be_written_is_reported_and_the_import_goes_on(fake, tmp_path):
    fake.default = answer
    (tmp_path / "state").write_text("a file where the state dir should be", encoding="utf-8")
    llm_pass = enrichment(fake, tmp_path / "state")
    records = prepare_rows(read_catalog(thin_file(tmp_path)), tmp_path, llm_pass).records
    assert len(records) == 3 and llm_pass.report.filled
    assert "state" in llm_pass.report.cache_error


def test_a_changed_prompt_is_not_answered_from_the_cache(monkeypatch):
    from sommelier_dev import enrich_llm

    row = {"name": "Вино красное сухое «Кьянти»"}
    before = enrich_llm.cache_key("m", row, ["country"])
    monkeypatch.setattr(enrich_llm, "_SYSTEM", enrich_llm._SYSTEM + " Отвечай кратко.")
    assert enrich_llm.cache_key("m", row, ["country"]) != before
