"""`sommelier doctor`'s shop line: the age gate, the health warning, retention, drops and the admin chat."""

from __future__ import annotations

from sommelier.settings import load_settings
from sommelier_dev.doctor import FAIL, OK, WARN
from sommelier_dev.doctor import shop_check as check_shop


def shop_check():
    return check_shop(load_settings())  # the settings of `sommelier doctor` started now


def test_defaults_warn_about_the_missing_admin_chat(monkeypatch):
    for name in ("ADMIN_CHAT_ID", "MESSAGE_RETENTION_DAYS", "CATALOG_DROP_MODE", "LLM_PRICE_PER_MTOK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SOMMELIER_AGE_GATE")
    check = shop_check()
    assert check.status == WARN and not check.blocking
    assert (
        check.detail == "вопрос о возрасте вкл.; предупреждение о вреде вкл.; переписка хранится 180 дней;"
        " файлы каталога добавляются; чат администратора не задан"
    )
    assert "ADMIN_CHAT_ID" in check.fix


def test_configured(monkeypatch):
    monkeypatch.setenv("ADMIN_CHAT_ID", "-100123")
    monkeypatch.setenv("MESSAGE_RETENTION_DAYS", "90")
    monkeypatch.setenv("SOMMELIER_HEALTH_WARNING", "")
    check = shop_check()  # the test suite runs with SOMMELIER_AGE_GATE=0
    assert check.status == OK
    assert (
        check.detail == "вопрос о возрасте ВЫКЛ.; предупреждение о вреде ВЫКЛ.; переписка хранится 90 дней;"
        " файлы каталога добавляются; чат администратора -100123"
    )


def test_every_unreadable_setting_is_named(monkeypatch):
    monkeypatch.setenv("ADMIN_CHAT_ID", "shop")
    monkeypatch.setenv("MESSAGE_RETENTION_DAYS", "0")
    monkeypatch.setenv("CATALOG_DROP_MODE", "append")
    monkeypatch.setenv("LLM_PRICE_PER_MTOK", "3")
    check = shop_check()
    assert check.status == FAIL and not check.blocking
    for name in ("ADMIN_CHAT_ID", "MESSAGE_RETENTION_DAYS", "CATALOG_DROP_MODE", "LLM_PRICE_PER_MTOK"):
        assert name in check.detail
