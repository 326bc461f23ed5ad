"""`webhook_ack`: warm in-process latency of the webhook function as deployed (Mangum -> Starlette -> Ingress).

A realistic private-chat text update as API Gateway (HTTP API, payload 2.0) delivers it, with the
secret header: constant-time secret check, JSON parsing, Update parsing and routing, duplicate
filter, enqueue, the 200 response. Each call has a new update_id (a duplicate would short-cut).

Sinks:
- no-op: the function's own cost;
- SQS FIFO under moto's `mock_aws` (the real SqsSink and boto3 client; moto emulates SQS in-process,
  so a real queue adds its network round trip, typically a few ms inside a region);
- SQS FIFO + the DynamoDB idempotency table through Powertools idempotency (both under moto),
  which is what the deployed function does (IDEMPOTENCY_TABLE set).

The function is put together as functions/webhook/ingress.py does it: a `SettingsSource` over the
function's environment (here a dict: the webhook secret, and the idempotency table in the last series)
asked for the settings at every invocation, and `LambdaWebhook` building the app (an `Ingress` on the
series' sink) from them. Outside it, as before: the HandlerShell (logging, metrics, correlation id).
"""

from __future__ import annotations

import gc
import json
import time
from typing import Any

from bench.common import Context, Figure, TemporaryEnvironment, figure, log, median, p50s, p95s

NAME = "webhook_ack"
SECRET = "bench-webhook-secret-0123456789"
ACK_TARGET_MS = 20.0
CHAT = 5551001


def update(update_id: int) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 1763800000,
            "chat": {"id": CHAT, "type": "private", "first_name": "Анна", "username": "anna"},
            "from": {"id": CHAT, "is_bot": False, "first_name": "Анна", "username": "anna", "language_code": "ru"},
            "text": "Посоветуй красное сухое к стейку до 3000 рублей, пожалуйста",
        },
    }


def event(update_id: int) -> dict[str, Any]:
    body = json.dumps(update(update_id), ensure_ascii=False)
    return {
        "version": "2.0",
        "routeKey": "POST /telegram/webhook",
        "rawPath": "/telegram/webhook",
        "rawQueryString": "",
        "headers": {
            "content-type": "application/json",
            "content-length": str(len(body.encode())),
            "host": "abc123.execute-api.eu-central-1.amazonaws.com",
            "user-agent": "",
            "x-forwarded-for": "91.108.6.1",
            "x-forwarded-port": "443",
            "x-forwarded-proto": "https",
            "x-telegram-bot-api-secret-token": SECRET,
        },
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "domainName": "abc123.execute-api.eu-central-1.amazonaws.com",
            "http": {
                "method": "POST",
                "path": "/telegram/webhook",
                "protocol": "HTTP/1.1",
                "sourceIp": "91.108.6.1",
                "userAgent": "",
            },
            "requestId": f"req-{update_id}",
            "routeKey": "POST /telegram/webhook",
            "stage": "$default",
            "time": "22/Nov/2025:03:00:00 +0000",
            "timeEpoch": 1763780400000,
        },
        "body": body,
        "isBase64Encoded": False,
    }


class NoopSink:
    def enqueue(self, update: dict[str, Any], chat_id: int) -> None:
        return None


class LambdaContext:
    """What the Powertools idempotency utility reads from the Lambda context."""

    function_name = "WebhookFunction"
    aws_request_id = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


class MotoTimer:
    """Time spent inside moto's in-process AWS emulation (its botocore stub), to report it apart."""

    def __init__(self) -> None:
        self.ns = 0
        self._original = None

    def __enter__(self) -> MotoTimer:
        from moto.core.botocore_stubber import BotocoreStubber

        self._original = original = BotocoreStubber.__call__
        timer = self

        def timed(stub, *args: Any, **kwargs: Any):
            started = time.perf_counter_ns()
            try:
                return original(stub, *args, **kwargs)
            finally:
                timer.ns += time.perf_counter_ns() - started

        BotocoreStubber.__call__ = timed
        return self

    def __exit__(self, *exc: Any) -> None:
        from moto.core.botocore_stubber import BotocoreStubber

        BotocoreStubber.__call__ = self._original


def function_environment(**more: str) -> dict[str, str]:
    """The webhook function's configuration: the secret (no bot token, no queue URL: the sink is given)."""
    return {"TELEGRAM_WEBHOOK_SECRET": SECRET, **more}


def settings(ctx: Context) -> dict[str, int]:
    if ctx.smoke:
        return {"calls": 10, "warmup": 2}
    return {"calls": 100, "warmup": 20} if ctx.quick else {"calls": 300, "warmup": 50}


DRAIN_EVERY = 50  # moto's FIFO emulation slows down as the queue grows; a consumer keeps it short


def run(ctx: Context) -> list[Figure]:
    import boto3
    import sommelier.edge.ingress as ingress
    from moto import mock_aws
    from sommelier.edge.app import LambdaWebhook, create_app
    from sommelier.secrets import SettingsSource

    cfg = settings(ctx)
    figures: list[Figure] = []
    counter = iter(range(10_000_000, 99_000_000))
    context = LambdaContext()
    environment = TemporaryEnvironment(  # for boto3 and moto only: the function reads its own environment dict
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_SESSION_TOKEN="testing",
        AWS_DEFAULT_REGION="eu-central-1",
    )

    def measure(
        sink: Any,
        label: str,
        *,
        environ: dict[str, str],
        drain=None,
        moto: MotoTimer | None = None,
        note: str = "",
        judged: bool = True,
    ) -> None:
        # a fresh container per series: its settings source, and the app built on the first invocation
        source = SettingsSource(environ)
        webhook = LambdaWebhook(lambda settings: create_app(ingress.Ingress(settings, sink)), source.current)
        totals: list[list[float]] = []
        own: list[list[float]] = []
        statuses: list[int] = []

        def one() -> tuple[float, float]:
            emulated = moto.ns if moto else 0
            started = time.perf_counter_ns()
            response = webhook(event(next(counter)), context)
            elapsed = time.perf_counter_ns() - started
            statuses.append(response["statusCode"])
            emulated = (moto.ns - emulated) if moto else 0
            return elapsed / 1e6, (elapsed - emulated) / 1e6

        if drain:
            drain()
        for _ in range(cfg["warmup"]):
            one()
        for _ in range(ctx.runs):
            if drain:
                drain()
            gc.collect()
            run_totals, run_own = [], []
            for i in range(cfg["calls"]):
                if drain and i and i % DRAIN_EVERY == 0:
                    drain()
                total, mine = one()
                run_totals.append(total)
                run_own.append(mine)
            totals.append(run_totals)
            own.append(run_own)
        bad = [s for s in statuses if s != 200]
        if bad:
            raise RuntimeError(f"{label}: non-200 answers {bad[:5]}")
        p50, p95 = p50s(totals), p95s(totals)
        target = ACK_TARGET_MS if judged else None
        figures.append(
            figure(
                NAME, f"ack p50, {label}", "ms", p50, at_most=target, note=note, details={"calls_per_run": cfg["calls"]}
            )
        )
        figures.append(figure(NAME, f"ack p95, {label}", "ms", p95, at_most=target))
        if moto:
            figures.append(figure(NAME, f"ack p50, {label}, without moto's emulation time", "ms", p50s(own)))
        log(
            f"webhook_ack: {label}: p50 {median(p50):.2f} ms, p95 {median(p95):.2f} ms"
            + (f", without moto {median(p50s(own)):.2f} ms" if moto else "")
        )

    with environment:
        measure(NoopSink(), "no-op sink", environ=function_environment())
        with mock_aws(), MotoTimer() as moto:
            sqs = boto3.client("sqs", region_name="eu-central-1")
            sink = ingress.SqsSink("", client=sqs)
            queues: list[str] = []

            def drain() -> None:
                """A fresh, empty queue (as a consumer would keep it); moto allows one purge a minute."""
                sink.queue_url = sqs.create_queue(
                    QueueName=f"turns-{len(queues)}.fifo",
                    Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "false"},
                )["QueueUrl"]
                queues.append(sink.queue_url)

            measure(sink, "SQS FIFO sink (moto)", environ=function_environment(), drain=drain, moto=moto)
            enqueued = sum(
                int(
                    sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])[
                        "Attributes"
                    ]["ApproximateNumberOfMessages"]
                )
                for url in queues
            )
            if enqueued == 0:
                raise RuntimeError("the SQS sink enqueued nothing")

            if ctx.quick:
                ctx.note(NAME, "quick mode: the SQS + DynamoDB idempotency variant is measured in full mode only")
                return figures
            dynamodb = boto3.client("dynamodb", region_name="eu-central-1")
            dynamodb.create_table(
                TableName="bench-idempotency",
                BillingMode="PAY_PER_REQUEST",
                KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            )
            measure(
                sink,
                "SQS FIFO + DynamoDB idempotency (moto)",
                environ=function_environment(IDEMPOTENCY_TABLE="bench-idempotency"),
                drain=drain,
                moto=moto,
                judged=False,
                note="the deployed configuration; moto's DynamoDB emulation dominates, so no verdict",
            )
    return figures
