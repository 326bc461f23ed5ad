"""`sommelier webhook set` registers exactly the handled update kinds and the Russian command menu."""

from __future__ import annotations

from sommelier.shop import routes as shop_routes
from sommelier.shop.age_gate import AgeGate
from sommelier.telegram.registration import ALLOWED_UPDATES, MENU, menu_commands
from sommelier.telegram.router import customer_router
from sommelier_dev.cli.main import main

from tests.fakes.telegram_server import FakeTelegram

URL = "https://example.execute-api.eu-central-1.amazonaws.com/telegram/webhook"


def test_webhook_set_registers_the_update_kinds_and_the_menu(monkeypatch):
    with FakeTelegram() as telegram:
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", telegram.token)
        monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
        monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "secret-token-for-tests")
        monkeypatch.delenv("SOMMELIER_SECRETS_ARN", raising=False)

        assert main(["webhook", "set", URL]) == 0

        assert telegram.webhook["allowed_updates"] == list(ALLOWED_UPDATES)
        commands = telegram.calls_of("setMyCommands")
        assert len(commands) == 1 and commands[0].delivered  # the fake checks Telegram's command rules
        assert commands[0].params["commands"] == menu_commands()
        assert [c["command"] for c in menu_commands()] == ["start", "help", "reset", "profile", "privacy", "forget"]


def test_every_menu_command_has_a_route():
    router = shop_routes.register(customer_router(), AgeGate(shop=None))  # the table sommelier.app builds
    assert {f"/{name}" for name in MENU} <= set(router.command_names())


def test_the_update_kinds_registered_are_the_ones_routed():
    from sommelier.telegram.models import Update

    handled = {name for name in Update.model_fields if name != "update_id"}
    assert set(ALLOWED_UPDATES) == handled
