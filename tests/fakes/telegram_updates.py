"""Telegram update and API Gateway event builders shared by the end-to-end and hardening tests."""

from __future__ import annotations

import json

TEST_CHAT = 5551001  # a private chat: its id is the user's id
TEST_WEBHOOK_SECRET = "test-webhook-secret-0123456789abcdef"
TEST_BOT = "sommelier_test_bot"


def user(uid: int = TEST_CHAT) -> dict:
    return {"id": uid, "is_bot": False, "first_name": "Анна", "username": "anna", "language_code": "ru"}


def private_chat(cid: int = TEST_CHAT) -> dict:
    return {"id": cid, "type": "private", "first_name": "Анна"}


def text_update(update_id: int, text: str, chat_id: int = TEST_CHAT, **extra) -> dict:
    message = {
        "message_id": update_id,
        "date": 1763800000,
        "chat": private_chat(chat_id),
        "from": user(chat_id),
        "text": text,
    }
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    message.update(extra)
    return {"update_id": update_id, "message": message}


def webhook_event(body: dict | str, secret: str | None = TEST_WEBHOOK_SECRET, *, base64_body: bool = False) -> dict:
    """An HTTP API (payload 2.0) POST of `body` to the webhook route, as API Gateway hands it over."""
    headers = {"content-type": "application/json"}
    if secret is not None:
        headers["x-telegram-bot-api-secret-token"] = secret
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return {
        "version": "2.0",
        "routeKey": "POST /telegram/webhook",
        "rawPath": "/telegram/webhook",
        "headers": headers,
        "body": text,
        "isBase64Encoded": base64_body,
        "requestContext": {"http": {"method": "POST", "path": "/telegram/webhook"}},
    }


class ListSink:
    """A turn sink that keeps what the webhook enqueued."""

    def __init__(self):
        self.items: list[tuple[dict, int]] = []

    def enqueue(self, update, chat_id):
        self.items.append((update, chat_id))


def webhook_function(sink=None, settings=None, **ingress_options):
    """The webhook Lambda handler's core: Mangum around a fresh webhook app (with its own duplicate filter),
    on ``settings`` (default: the test's environment, read now).

    `sink=None` is the deployed default (SQS when QUEUE_URL is set, else the turn runs inline)."""
    from sommelier.edge.app import LambdaWebhook, create_app
    from sommelier.edge.ingress import Ingress, InlineSink, SqsSink
    from sommelier.settings import load_settings

    settings = settings or load_settings()
    if sink is None:
        if settings.aws.queue_url:
            sink = SqsSink(settings.aws.queue_url)
        else:

            def inline_turns():
                from sommelier.app import build_bot

                return build_bot(settings).process

            sink = InlineSink(inline_turns)
    if "bot_username" not in ingress_options:  # as functions/webhook/ingress.py names the bot
        from sommelier.telegram.identity import webhook_bot_username

        ingress_options["bot_username"] = webhook_bot_username(settings.telegram)
    webhook = LambdaWebhook(lambda s: create_app(Ingress(s, sink, **ingress_options)), lambda: (settings, False))
    return webhook
