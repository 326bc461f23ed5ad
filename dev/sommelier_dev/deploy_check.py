"""`sommelier deploy check`: a deployed stack, checked from its outputs after a deploy.

In order: Telegram's webhook (getWebhookInfo names the stack's WebhookUrl, without a delivery error),
the webhook function's health answer (HealthUrl), the catalogue the tool function serves (a new stack's
is empty until one is imported), one synthetic turn through the turn queue (`/stats`
from the admin chat, which the agent answers there from the database: the queue, the agent, the tool
function, Aurora and the Bot API in one pass, without an LLM call), and the state of every alarm of the
stack. Each check is one line with a fix; nothing here changes the stack.

AWS through boto3 (a session the caller gives: moto in the tests), Telegram through the package's Bot
API client, the health URL through urllib.
"""

from __future__ import annotations

import json
import random
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sommelier.settings import Settings

from sommelier_dev.doctor import FAIL, OK, SKIP, Check  # one check, one status vocabulary with `doctor`

TURN_TIMEOUT_S = 180.0  # an Aurora resume (up to ~50 s) and a cold agent fit well inside
POLL_S = 5.0


@dataclass
class Stack:
    name: str
    outputs: dict[str, str]
    alarm_names: list[str] = field(default_factory=list)

    def output(self, key: str) -> str:
        value = self.outputs.get(key, "")
        if not value:
            raise LookupError(f"the stack {self.name} has no {key} output: deploy the current template.yaml")
        return value


def read_stack(session: Any, stack_name: str) -> Stack:
    described = session.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
    outputs = {o["OutputKey"]: o.get("OutputValue", "") for o in described.get("Outputs", [])}
    # The template lists its alarms in one output (AlarmNames), so the check needs no resource listing.
    alarms = [name.strip() for name in outputs.get("AlarmNames", "").split(",") if name.strip()]
    return Stack(stack_name, outputs, sorted(alarms))


def bot_token(session: Any, settings: Settings, stack: Stack) -> str:
    """TELEGRAM_BOT_TOKEN when set, else the stack's BotSecrets (your identity needs GetSecretValue)."""
    if settings.telegram.bot_token:
        return settings.telegram.bot_token
    secret = session.client("secretsmanager").get_secret_value(SecretId=stack.output("BotSecretsArn"))
    token = json.loads(secret["SecretString"]).get("telegram_bot_token")
    if not isinstance(token, str) or not token:
        raise LookupError("BotSecrets holds no telegram_bot_token")
    return token


def check_webhook(stack: Stack, client: Any) -> Check:
    expected = stack.output("WebhookUrl")
    info = client.get_webhook_info()
    if info.url != expected:
        shown = info.url or "no webhook"
        return Check(
            "webhook", FAIL, f"Telegram has {shown}, the stack is {expected}", f'sommelier webhook set "{expected}"'
        )
    detail = f"{expected}; {info.pending_update_count} updates pending"
    if info.last_error_message:
        age = time.time() - (info.last_error_date or 0)
        if age < 600:
            return Check(
                "webhook",
                FAIL,
                f"{detail}; Telegram's last delivery failed: {info.last_error_message}",
                "a 401 means the secret tokens differ: redeploy, or `sommelier webhook set` with the "
                "stack's secrets; otherwise read the webhook function's log",
            )
        detail += f" (an older delivery error: {info.last_error_message})"
    return Check("webhook", OK, detail)


def check_health(stack: Stack, opener: Callable[..., Any] = urllib.request.urlopen) -> Check:
    url = stack.output("HealthUrl")
    with opener(url, timeout=15) as response:
        status, body = response.status, response.read()
    answer = json.loads(body) if status == 200 else {}
    if status != 200 or answer.get("ok") is not True or not answer.get("queue"):
        return Check("health", FAIL, f"{url} answered {status}: {body[:200]!r}", "read the webhook function's log")
    return Check("health", OK, f"version {answer.get('version')}, revision {answer.get('revision') or '-'}")


def check_catalogue(stack: Stack, lambda_client: Any) -> Check:
    """What the agent will search: catalog_stats through the deployed tool function (only it reaches Aurora)."""
    from sommelier.repositories.adapters import lambda_repositories

    stats = lambda_repositories(stack.output("WineToolsFunctionName"), client=lambda_client).catalog.stats()
    detail = f"{stats.wines} wines; embeddings {dict(stats.embedding_models) or 'none'}"
    if stats.wines == 0:
        return Check(
            "catalog",
            FAIL,
            "the catalogue is empty: the bot answers, but has no wine to show",
            "import one (docs/deploy.md section 5.2), or upload the shop's file to the CatalogDropPrefix output",
        )
    return Check("catalog", OK, detail)


def synthetic_update(chat_id: int, username: str | None) -> dict[str, Any]:
    """`/stats` from the admin chat, as Telegram would deliver it (an update id no real update has)."""
    update_id = 900_000_000_000 + random.randrange(100_000_000)  # noqa: S311 - an id, not a secret
    private = chat_id > 0
    command = "/stats" if private or not username else f"/stats@{username}"
    sender = {"id": chat_id if private else 777_000, "is_bot": False, "first_name": "deploy check"}
    chat = {"id": chat_id, "type": "private"} if private else {"id": chat_id, "type": "supergroup", "title": "admin"}
    message = {"message_id": update_id % 1_000_000, "date": int(time.time()), "chat": chat, "from": sender}
    message |= {"text": command, "entities": [{"type": "bot_command", "offset": 0, "length": len(command)}]}
    return {"update_id": update_id, "message": message}


def _queued(sqs: Any, url: str) -> int:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return sum(int(attributes.get(name, 0)) for name in names)


def check_turn(
    session: Any,
    stack: Stack,
    username: str | None,
    *,
    timeout_s: float = TURN_TIMEOUT_S,
    poll_s: float = POLL_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Check:
    admin = stack.outputs.get("AdminChatId", "")
    if not admin:
        return Check(
            "turn",
            SKIP,
            "no AdminChatId: no chat to send the synthetic turn's answer to",
            "sam deploy --parameter-overrides AdminChatId=<the staff group's id>",
        )
    sqs = session.client("sqs")
    queue, dead = stack.output("TurnQueueUrl"), stack.output("DeadLetterQueueUrl")
    dead_before = _queued(sqs, dead)
    update = synthetic_update(int(admin), username)
    sqs.send_message(
        QueueUrl=queue,
        MessageBody=json.dumps(update, ensure_ascii=False),
        MessageGroupId=admin,
        MessageDeduplicationId=str(update["update_id"]),
    )
    started = clock()
    empty_polls = 0
    while clock() - started < timeout_s:
        sleep(poll_s)
        # SQS's counts are approximate: two empty looks in a row before calling the turn done.
        empty_polls = empty_polls + 1 if _queued(sqs, queue) == 0 else 0
        if empty_polls >= 2:
            if _queued(sqs, dead) > dead_before:
                return Check(
                    "turn",
                    FAIL,
                    "the synthetic turn reached the dead-letter queue",
                    "read the agent's log (sam logs -n AgentFunction)",
                )
            waited = clock() - started
            return Check(
                "turn",
                OK,
                f"/stats from the admin chat left the queue in {waited:.0f} s; its answer is in the admin chat",
            )
    return Check(
        "turn",
        FAIL,
        f"the turn queue still holds messages after {timeout_s:.0f} s",
        "the agent isn't consuming: its trigger, its log, the account's Lambda concurrency "
        "(docs/deploy.md section 4.1); or the queue is busy with real turns",
    )


def check_alarms(session: Any, stack: Stack) -> Check:
    if not stack.alarm_names:
        return Check("alarms", FAIL, "the stack has no alarms", "deploy the current template.yaml")
    cloudwatch = session.client("cloudwatch")
    states: dict[str, str] = {}
    for start in range(0, len(stack.alarm_names), 100):  # describe_alarms takes at most 100 names
        for alarm in cloudwatch.describe_alarms(AlarmNames=stack.alarm_names[start : start + 100])["MetricAlarms"]:
            states[alarm["AlarmName"]] = alarm["StateValue"]
    firing = sorted(name for name, state in states.items() if state == "ALARM")
    counts = {state: list(states.values()).count(state) for state in sorted(set(states.values()))}
    summary = ", ".join(f"{n} {state}" for state, n in counts.items())
    if firing:
        return Check(
            "alarms", FAIL, f"{summary}: {', '.join(firing)}", "docs/deploy.md section 8.2 says what each means"
        )
    return Check("alarms", OK, f"{len(states)} alarms: {summary}")


def _tool_client(session: Any) -> Any:
    from botocore.config import Config

    # The tool function may wait up to 50 s for Aurora to resume from 0 ACU (its timeout is 60 s).
    return session.client("lambda", config=Config(read_timeout=70, retries={"max_attempts": 1}))


def _safe(name: str, probe: Callable[[], Check]) -> Check:
    try:
        return probe()
    except Exception as exc:  # a probe that crashes is itself a finding; the client masks the token
        first_line = (str(exc).strip().splitlines() or [""])[0][:200]
        return Check(name, FAIL, f"{type(exc).__name__}: {first_line}", "see the message above")


def run_checks(
    session: Any,
    settings: Settings,
    stack_name: str,
    *,
    turn: bool = True,
    turn_timeout_s: float = TURN_TIMEOUT_S,
    poll_s: float = POLL_S,
    opener: Callable[..., Any] = urllib.request.urlopen,
    lambda_client: Any = None,
) -> list[Check]:
    from sommelier.telegram.client import TelegramClient

    try:
        stack = read_stack(session, stack_name)
    except Exception as exc:
        return [Check("stack", FAIL, f"{stack_name}: {type(exc).__name__}: {exc}", "check the stack name and region")]
    checks = [Check("stack", OK, f"{stack_name}: {len(stack.outputs)} outputs, {len(stack.alarm_names)} alarms")]
    username: str | None = None
    try:
        client = TelegramClient(bot_token(session, settings, stack), settings.telegram.api_base_url)
    except Exception as exc:
        checks.append(
            Check(
                "webhook",
                FAIL,
                f"no bot token: {type(exc).__name__}: {exc}",
                "set TELEGRAM_BOT_TOKEN, or allow secretsmanager:GetSecretValue on BotSecretsArn",
            )
        )
    else:
        with client:
            checks.append(_safe("webhook", lambda: check_webhook(stack, client)))
            try:
                username = client.get_me().username
            except Exception:  # the group command works without the @name too; this only makes it explicit
                username = None
    checks.append(_safe("health", lambda: check_health(stack, opener)))
    checks.append(_safe("catalog", lambda: check_catalogue(stack, lambda_client or _tool_client(session))))
    if turn:
        checks.append(
            _safe("turn", lambda: check_turn(session, stack, username, timeout_s=turn_timeout_s, poll_s=poll_s))
        )
    checks.append(_safe("alarms", lambda: check_alarms(session, stack)))
    return checks
