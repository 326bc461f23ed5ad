"""`sommelier catalog import FILE --enrich-llm` end to end: the CLI, the OpenAI-compatible fake over a real
socket, the database. The pass itself is tested in tests/unit/test_enrich_llm.py."""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.unit.test_enrich_llm import THIN, answer


@pytest.fixture
def cli(monkeypatch, tmp_path, capsys):
    from sommelier_dev.cli.main import main

    def run(db, *args: str, llm: FakeOpenAI | None = None) -> tuple[int, str]:
        monkeypatch.setenv("DATABASE_URL", db.conninfo)
        monkeypatch.setenv("SOMMELIER_STATE_DIR", str(tmp_path / "state"))
        monkeypatch.setenv("EMBEDDING_PROVIDER", "local")
        monkeypatch.setenv("LLM_PRICE_PER_MTOK", "3,15")
        if llm is not None:
            monkeypatch.setenv("OPENAI_API_KEY", "test")
            monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        else:
            monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, " ".join((captured.out + captured.err).split())

    return run


def inferred_of(db, sku: str) -> tuple[str, list[str]]:
    with db.connection() as conn:
        country, inferred = conn.execute("SELECT country, inferred FROM wines WHERE sku = %s", (sku,)).fetchone()
    return country, list(inferred)


def test_enrich_llm_fills_reports_its_cost_and_a_second_import_costs_nothing(empty_db, cli, tmp_path):
    path = tmp_path / "thin.csv"
    path.write_text(THIN, encoding="utf-8")
    with FakeOpenAI() as fake:
        fake.default = answer
        code, output = cli(empty_db, "catalog", "import", path, "--enrich-llm", llm=fake)
        assert code == 0, output
        assert "дополнение моделью: отправлено строк 3 за 1 запросов, из кэша 0" in output
        assert "отброшено значений (нет в словарях): 4" in output and "отброшено: country 'Атлантида'" in output
        assert "токенов 1000 запроса + 200 ответа, $0.0060" in output
        assert inferred_of(empty_db, "A-1")[0] == "Ливан" and "country" in inferred_of(empty_db, "A-1")[1]

        code, output = cli(empty_db, "catalog", "import", path, "--enrich-llm", llm=fake)
        assert code == 0, output
        assert len(fake.chat_requests) == 1  # the second import asked nothing
        assert "отправлено строк 0 за 0 запросов, из кэша 3" in output and "$0.0000" in output
        assert "country" in inferred_of(empty_db, "A-1")[1]


def test_without_a_key_enrich_llm_says_so_and_imports_with_the_rules(empty_db, cli, tmp_path):
    path = tmp_path / "coloured.csv"
    path.write_text("\n".join(THIN.splitlines()[:3]) + "\n", encoding="utf-8")
    code, output = cli(empty_db, "catalog", "import", path, "--enrich-llm")
    assert code == 0, output
    assert "для --enrich-llm нужен OPENAI_API_KEY" in output and "импорт только по правилам" in output
    assert "импортировано вин: 2" in output and "дополнение моделью" not in output
    assert inferred_of(empty_db, "A-1") == ("", ["wine_type", "sweetness"])
