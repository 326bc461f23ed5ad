"""`sommelier doctor` against real local services and the stand-ins."""

from __future__ import annotations

import pytest
from sommelier_dev.cli.main import main

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram


@pytest.fixture
def doctor(monkeypatch, capsys):
    def run(**env) -> tuple[int, str]:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        code = main(["doctor"])
        return code, capsys.readouterr().out

    yield run


def test_all_required_checks_pass_offline(doctor, catalog_db):
    code, out = doctor(DATABASE_URL=catalog_db.conninfo, EMBEDDING_PROVIDER="local")
    assert code == 0, out
    for line in (
        "✓ database",
        "✓ pgvector   pgvector 0.8",
        "✓ migrations",
        "✓ catalogue  64 вин: в продаже 64, нет в продаже 0",
    ):
        assert line in out
    assert "! llm" in out and "офлайн" in out
    assert "→ улучшить первым: " in out  # the catalogue's largest gap, said even when it passes
    assert "все обязательные проверки пройдены" in out


def test_unreachable_database_fails_with_a_fix(doctor):
    code, out = doctor(DATABASE_URL="postgresql://nobody@127.0.0.1:1/nothing?connect_timeout=2")
    assert code == 1
    assert "✗ database" in out and "→ задайте DATABASE_URL" in out


def test_missing_catalogue_and_model_mismatch(doctor, empty_db, catalog_db):
    code, out = doctor(DATABASE_URL=empty_db.conninfo, EMBEDDING_PROVIDER="local")
    assert code == 1 and "✗ catalogue  нет ни одного вина" in out
    code, out = doctor(DATABASE_URL=catalog_db.conninfo, EMBEDDING_PROVIDER="local", EMBEDDING_MODEL="other-model")
    assert code == 1 and "catalog reembed" in out


def test_llm_endpoint_and_telegram_are_checked(doctor, catalog_db):
    with FakeOpenAI() as llm, FakeTelegram() as telegram:
        code, out = doctor(
            DATABASE_URL=catalog_db.conninfo,
            EMBEDDING_PROVIDER="local",
            OPENAI_API_KEY="test",
            OPENAI_BASE_URL=llm.base_url,
            TELEGRAM_BOT_TOKEN=telegram.token,
            TELEGRAM_API_BASE_URL=telegram.base_url,
        )
    assert code == 0, out
    assert "✓ llm" in out and "отвечает" in out
    assert "✓ telegram   бот @sommelier_test_bot; вебхук: нет" in out


def test_a_never_set_up_state_folder_is_reported_and_nothing_is_started(doctor, monkeypatch, tmp_path):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("DATABASE_SECRET_ARN", raising=False)
    code, out = doctor(SOMMELIER_STATE_DIR=str(tmp_path / "state"), EMBEDDING_PROVIDER="local")
    assert code == 1
    assert "✗ database   встроенной базы в" in out and "→ запустите `sommelier dev up`" in out
    assert not (tmp_path / "state" / "pgdata").exists()  # a doctor only looks


def test_a_stopped_embedded_server_is_reported_without_starting_it(doctor, monkeypatch, tmp_path):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("DATABASE_SECRET_ARN", raising=False)
    pgdata = tmp_path / "state" / "pgdata"
    pgdata.mkdir(parents=True)
    (pgdata / "PG_VERSION").write_text("16\n")  # initialised once, no postmaster.pid: not running
    code, out = doctor(SOMMELIER_STATE_DIR=str(tmp_path / "state"), EMBEDDING_PROVIDER="local")
    assert code == 1 and "встроенный сервер в" in out and "остановлен" in out
    assert not (pgdata / "postmaster.pid").exists()
