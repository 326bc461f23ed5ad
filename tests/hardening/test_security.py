"""Security: the webhook secret, secrets in logs, input size limits, IAM and the database's runtime rights.

* The secret token is compared in constant time (hmac.compare_digest) and a request without it, or
  with a wrong one, does no work at all: no enqueue, no database, no Telegram.
* No secret reaches a log line (sommelier/observability/redaction.py): turns run end to end through the
  Lambda handlers with known secret values, every log record and everything written to stdout/stderr
  is scanned for them.
* Input size limits hold at and past each limit.
* IAM least privilege: checkov on template.yaml (every finding fixed or skipped with a written
  reason), bandit on layers/ and functions/, SAM's own transform shows no SQS action on "*", and the
  photo bucket is private with TLS enforced. (cfn-lint: tests/unit/test_template.py.)
* The tool function's database user (member of sommelier_app, migration 0002) can run every tool but
  gets "insufficient privilege" for any DDL.
"""

from __future__ import annotations

import base64
import hmac
import importlib.util
import json
import logging
import os
import re
import secrets as token_generator
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
import sommelier.edge.ingress as ingress
from sommelier.db.pool import Database
from sommelier.edge.ingress import MAX_BODY_BYTES
from sommelier.settings import load_settings
from sommelier.toolfn.handler import MAX_EVENT_BYTES, OPERATIONS, handle

from tests.fakes.openai_server import FakeOpenAI, error, reply, tool_calls
from tests.fakes.telegram_server import FakeTelegram
from tests.hardening.support import (
    BOT,
    CHAT,
    SECRET,
    ListSink,
    make_bot,
    record_figure,
    text_update,
    webhook_event,
    webhook_function,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


# ====================================================================== the webhook secret
def test_secret_is_compared_in_constant_time(environment, monkeypatch):
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(ingress.hmac, "compare_digest", spy)
    sink = ListSink()
    assert webhook_function(sink)(webhook_event(text_update(1, "привет")), None)["statusCode"] == 200
    assert webhook_function(sink)(webhook_event(text_update(2, "привет"), secret="wrong"), None)["statusCode"] == 401
    assert calls == [(SECRET.encode(), SECRET.encode()), (b"wrong", SECRET.encode())]
    source = Path(ingress.__file__).read_text("utf-8")
    assert not re.search(r"(==|!=)\s*expected\b|\bexpected\s*(==|!=)", source), "no plain comparison of the secret"


BAD_SECRETS = {
    "missing": None,
    "empty": "",
    "wrong": "wrong-secret",
    "one char more": SECRET + "x",
    "prefix": SECRET[:-1],
    "other case": SECRET.upper(),
    "padded": f" {SECRET} ",
    "lookalike": SECRET.replace("e", "е"),
    "huge": "a" * 1_000_000,
}


@pytest.mark.parametrize("name", list(BAD_SECRETS))
def test_wrong_or_missing_secret_does_no_work(name, environment, telegram, monkeypatch):
    """The default sink (inline processing, no queue) would run a turn: none must start."""
    work: list[str] = []
    import sommelier.telegram.consumer as consumer
    import sommelier.toolfn.handler as handler_module

    monkeypatch.setattr(handler_module, "handle", lambda *a, **k: work.append("tool") or {"error": "x"})
    monkeypatch.setattr(consumer.AgentContainer, "process_update", lambda *a, **k: work.append("turn"))
    monkeypatch.setattr(Database, "connection", lambda *a, **k: work.append("db"))
    response = webhook_function()(webhook_event(text_update(10, "красное к пицце"), secret=BAD_SECRETS[name]), None)
    assert response["statusCode"] == 401 and json.loads(response["body"]) == {"ok": False, "error": "unauthorized"}
    assert work == [] and telegram.calls == []


def test_no_configured_secret_refuses_everything(environment, monkeypatch, telegram):
    monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET")
    sink = ListSink()
    for secret in (None, "", SECRET):
        assert (
            webhook_function(sink)(webhook_event(text_update(11, "привет"), secret=secret), None)["statusCode"] == 401
        )
    assert sink.items == [] and telegram.calls == []


# ====================================================================== no secret in any log
TOKEN = "7777777777:AAH-hardening-bot-token-0123456789abcdefXYZ"
WEBHOOK_SECRET = "whsec_Hardening_S3cret_Value_0123456789"
OPENAI_KEY = "sk-hardening-SECRET-openai-key-0123456789abcdef"
EMBEDDING_KEY = "emb-hardening-SECRET-key-0123456789abcdef"
DB_PASSWORD = "DbPassw0rd-hardening-SECRET-42"
ALL_SECRETS = (TOKEN, WEBHOOK_SECRET, OPENAI_KEY, EMBEDDING_KEY, DB_PASSWORD)


def _load(relative: str, name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Context:
    function_name, function_version, memory_limit_in_mb = "sommelier-fn", "$LATEST", 512
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-fn"
    aws_request_id = "00000000-0000-4000-8000-000000000001"
    log_group_name, log_stream_name = "/aws/lambda/sommelier-fn", "2025/01/01/[$LATEST]abc"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 60_000


def test_no_secret_appears_in_any_log(fresh_db, state_dir, monkeypatch, caplog, capfd):
    """Turns through the Lambda handlers (webhook → inline turn, agent over SQS, tool function) at DEBUG,
    with LLM, Telegram and database errors on the way; then every captured byte is searched for the secrets."""

    with FakeTelegram(token=TOKEN, bot_username=BOT) as telegram, FakeOpenAI() as llm, FakeOpenAI() as embeddings:
        conninfo = (
            f"{fresh_db.conninfo} password={DB_PASSWORD}"  # local trust auth ignores it; the code must not log it
        )
        for name, value in {
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET,
            "TELEGRAM_API_BASE_URL": telegram.base_url,
            "TELEGRAM_BOT_USERNAME": BOT,
            "OPENAI_API_KEY": OPENAI_KEY,
            "OPENAI_BASE_URL": llm.base_url,
            "LLM_MODEL": "test-model",
            "LLM_MAX_RETRIES": "0",
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_API_KEY": EMBEDDING_KEY,
            "EMBEDDING_BASE_URL": embeddings.base_url,
            "DATABASE_URL": conninfo,
            "POWERTOOLS_LOG_LEVEL": "DEBUG",
            "LOG_LEVEL": "DEBUG",
            "POWERTOOLS_DEV": "false",
        }.items():
            monkeypatch.setenv(name, value)
        for name in ("QUEUE_URL", "IDEMPOTENCY_TABLE", "SOMMELIER_SECRETS_ARN", "TOOL_FUNCTION_NAME", "IMAGES_BUCKET"):
            monkeypatch.delenv(name, raising=False)
        root = logging.getLogger()
        runtime_handler = logging.StreamHandler(sys.stderr)  # like the Lambda runtime's own root handler
        runtime_handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
        root.addHandler(runtime_handler)
        monkeypatch.setattr(root, "level", logging.DEBUG)
        caplog.set_level(logging.DEBUG)
        try:
            webhook = _load("functions/webhook/ingress.py", "hardening_webhook_app")
            agent = _load("functions/webhook/agent.py", "hardening_agent_app")
            tools = _load("functions/wine_tools/app.py", "hardening_tools_app")

            llm.script(tool_calls(("semantic_search", {"query": "лёгкое белое"})), error(500, "upstream " + OPENAI_KEY))
            embeddings.script_embeddings(error(401, "bad key " + EMBEDDING_KEY))
            llm.default = lambda body: reply(
                json.dumps(
                    {
                        "response_type": "informational",
                        "intro": "Танины — это вещества из кожицы.",
                        "wines": [],
                        "closing": "Ещё вопрос?",
                        "guard_type": None,
                    },
                    ensure_ascii=False,
                )
            )
            telegram.fail_next("sendMessage", status=429, retry_after=0)
            telegram.reset_after_request("sendChatAction")

            def api_event(update, secret=WEBHOOK_SECRET):
                return {**webhook_event(update, secret=secret), "requestContext": {"http": {"method": "POST"}}}

            assert webhook.handler(api_event(text_update(1, "лёгкое белое на лето")), _Context())["statusCode"] == 200
            assert webhook.handler(api_event(text_update(2, "что такое танины?")), _Context())["statusCode"] == 200
            assert webhook.handler(api_event(text_update(3, "x"), secret="wrong"), _Context())["statusCode"] == 401
            assert webhook.handler(api_event("{not json"), _Context())["statusCode"] == 400
            sqs_event = {
                "Records": [
                    {
                        "messageId": "m1",
                        "receiptHandle": "r1",
                        "body": json.dumps(text_update(4, "/start")),
                        "attributes": {
                            "ApproximateReceiveCount": "1",
                            "MessageGroupId": str(CHAT),
                            "MessageDeduplicationId": "4",
                            "SequenceNumber": "1",
                            "SentTimestamp": "1",
                            "SenderId": "x",
                            "ApproximateFirstReceiveTimestamp": "1",
                        },
                        "messageAttributes": {},
                        "md5OfBody": "x",
                        "eventSource": "aws:sqs",
                        "eventSourceARN": "arn:aws:sqs:eu-central-1:123456789012:turns.fifo",
                        "awsRegion": "eu-central-1",
                    }
                ]
            }
            agent.handler(sqs_event, _Context())
            tools.handler({"tool": "search_wines", "arguments": {"country": "\x00"}}, _Context())
            tools.handler({"tool": "nope"}, _Context())
            assert telegram.sent_messages(CHAT), "the turns ran"

            # Deliberate attempts to log secrets: the redaction must mask them all.
            logging.getLogger("sommelier.hardening").warning("token %s key %s", TOKEN, OPENAI_KEY)
            logging.getLogger("sommelier.hardening").info(
                "db", extra={"url": conninfo, "nested": {"k": [EMBEDDING_KEY]}}
            )
            agent.logger.info(f"the webhook secret is {WEBHOOK_SECRET}", extra={"password": DB_PASSWORD})
            try:
                raise RuntimeError(f"connect failed: postgresql://sommelier:{DB_PASSWORD}@db:5432/x token={TOKEN}")
            except RuntimeError:
                agent.logger.exception("crash with secrets in the exception")
                logging.getLogger("sommelier.hardening").exception("stdlib crash with secrets")
        finally:
            root.removeHandler(runtime_handler)

    captured = capfd.readouterr()
    records = caplog.records
    haystacks = [captured.out, captured.err, caplog.text]
    standard = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}
    for record in records:
        # Everything a handler can print: the message, the exception text, stack info and the extra fields.
        # (The live exception object in exc_info is not a log line: every formatter renders it through
        # the redaction, which the stdout/stderr scan above checks.)
        extras = {k: v for k, v in record.__dict__.items() if k not in standard}
        haystacks += [
            record.getMessage(),
            record.exc_text or "",
            record.stack_info or "",
            json.dumps(extras, default=str, ensure_ascii=False),
        ]
    found = {s[:12] for s in ALL_SECRETS for h in haystacks if s in h}
    leaks = [h[max(0, h.index(s) - 200) : h.index(s) + 40] for s in ALL_SECRETS for h in haystacks if s in h]
    record_figure(
        "security.log_scan",
        {
            "records": len(records),
            "stdout_bytes": len(captured.out),
            "stderr_bytes": len(captured.err),
            "secrets_found": sorted(found),
        },
    )
    assert "***" in captured.out + captured.err + caplog.text, "the deliberate attempts were masked, not dropped"
    assert len(records) > 20 and len(captured.out) > 1000
    assert found == set(), leaks[:3]


# ====================================================================== input size limits
def test_ingress_body_limit_1_mb(environment):
    sink = ListSink()

    def body(update_id: int, size: int) -> str:
        """A valid update of exactly `size` bytes (padded with an unknown field)."""
        base = json.dumps({**text_update(update_id, "привет"), "pad": ""}, ensure_ascii=False)
        return base.replace('"pad": ""', '"pad": "' + "a" * (size - len(base.encode())) + '"')

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    assert len(body(20, MAX_BODY_BYTES).encode()) == MAX_BODY_BYTES
    assert webhook_function(sink)(webhook_event(body(20, MAX_BODY_BYTES)), None)["statusCode"] == 200
    assert webhook_function(sink)(webhook_event(body(21, MAX_BODY_BYTES + 1)), None)["statusCode"] == 413
    assert (
        webhook_function(sink)(webhook_event(b64(body(22, MAX_BODY_BYTES)), base64_body=True), None)["statusCode"]
        == 200
    )
    assert (
        webhook_function(sink)(webhook_event(b64(body(23, MAX_BODY_BYTES + 1)), base64_body=True), None)["statusCode"]
        == 413
    )
    assert [u["update_id"] for u, _ in sink.items] == [20, 22]


def test_update_text_limit(environment):
    from sommelier.telegram.models import MAX_TEXT

    sink = ListSink()
    limit = MAX_TEXT * 2
    assert webhook_function(sink)(webhook_event(text_update(30, "я" * limit)), None)["statusCode"] == 200
    dropped = webhook_function(sink)(webhook_event(text_update(31, "я" * (limit + 1))), None)
    assert dropped["statusCode"] == 200 and json.loads(dropped["body"])["ignored"] == "unreadable update"
    assert [u["update_id"] for u, _ in sink.items] == [30]


def test_longest_text_gets_an_answer_and_a_bounded_history(environment, fresh_memory, telegram, llm, monkeypatch):
    from sommelier.telegram.models import MAX_TEXT

    bot = make_bot(fresh_memory, telegram, llm=llm, monkeypatch=monkeypatch)
    llm.default = lambda body: reply(
        json.dumps(
            {
                "response_type": "informational",
                "intro": "Длинно! " * 120,
                "wines": [],
                "closing": "Коротко?",
                "guard_type": None,
            },
            ensure_ascii=False,
        )
    )
    text = ("Расскажи про вино. " * 500)[: MAX_TEXT * 2]
    bot.process(text_update(32, text), attempt=1)
    assert telegram.sent_messages(CHAT)
    prompt = llm.chat_requests[0]["messages"][1]["content"]
    assert len(prompt.rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]) <= 4000, "the model sees at most 4000 characters"
    history = bot.chat.history(CHAT)
    assert [m.role for m in history] == ["user", "assistant"]
    assert all(len(m.content) <= 2000 for m in history)


@pytest.mark.parametrize(
    "tool,key,limit",
    [
        ("search_wines", "grape_variety", 200),
        ("search_wines", "country", 200),
        ("search_wines", "food_pairing", 200),
        ("semantic_search", "query", 1000),
        ("upsert_user", "first_name", 256),
        ("cache_photo", "file_id", 256),
    ],
)
def test_tool_text_argument_limits(tool, key, limit, catalog_db):
    wine_id = handle({"tool": "search_wines", "arguments": {}}, catalog_db)["wines"][0]["id"]
    base = {
        "semantic_search": {"embedding": [0.1] * 1536, "embedding_model": "local-ngram-hash-v4"},
        "upsert_user": {"telegram_user_id": 1, "chat_id": 1},
        "cache_photo": {"wine_id": wine_id},
    }.get(tool, {})
    at = handle({"tool": tool, "arguments": {**base, key: "а" * limit}}, catalog_db)
    past = handle({"tool": tool, "arguments": {**base, key: "а" * (limit + 1)}}, catalog_db)
    assert "error" not in at, at
    assert "too long" in past.get("error", ""), past
    if tool in ("upsert_user", "cache_photo"):  # undo the writes on the shared read-only catalogue database
        with catalog_db.connection() as conn:
            conn.execute("DELETE FROM users WHERE telegram_user_id = 1")
            conn.execute("UPDATE wines SET telegram_file_id = NULL WHERE id = %s", (wine_id,))
            conn.commit()


def test_tool_list_and_count_limits(catalog_db, fresh_db):
    from sommelier.domain.search import MAX_IDS

    ids = [str(uuid.uuid4()) for _ in range(MAX_IDS + 1)]
    assert "error" not in handle({"tool": "get_wines", "arguments": {"ids": ids[:MAX_IDS]}}, catalog_db)
    assert "too many" in handle({"tool": "get_wines", "arguments": {"ids": ids}}, catalog_db)["error"]
    assert handle({"tool": "search_wines", "arguments": {"limit": 10**9}}, catalog_db)["found"] <= 20
    for n in range(60):
        handle(
            {
                "tool": "save_turn",
                "arguments": {"chat_id": 5, "update_id": n, "user_text": f"q{n}", "answer_text": f"a{n}"},
            },
            fresh_db,
        )
    assert (
        len(handle({"tool": "load_history", "arguments": {"chat_id": 5, "limit": 10**6}}, fresh_db)["messages"]) == 50
    )


def test_history_content_limit_2000(fresh_db):
    ok = handle(
        {
            "tool": "save_turn",
            "arguments": {"chat_id": 6, "update_id": 1, "user_text": "q" * 2000, "answer_text": "a" * 2000},
        },
        fresh_db,
    )
    assert ok.get("saved") is True, ok
    past = handle(
        {"tool": "save_turn", "arguments": {"chat_id": 6, "update_id": 2, "user_text": "q", "answer_text": "a" * 2001}},
        fresh_db,
    )
    assert "error" in past
    with fresh_db.connection() as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("INSERT INTO messages (chat_id, role, content) VALUES (6, 'user', %s)", ("x" * 2001,))


def test_import_row_limit(fresh_db):
    from sommelier.toolfn.catalog_sql import MAX_IMPORT_ROWS

    at = handle({"tool": "import_wines", "arguments": {"wines": [{}] * MAX_IMPORT_ROWS}}, fresh_db)
    assert at["error"].startswith("nothing imported"), "at the limit the rows are validated"
    past = handle({"tool": "import_wines", "arguments": {"wines": [{}] * (MAX_IMPORT_ROWS + 1)}}, fresh_db)
    assert f"at most {MAX_IMPORT_ROWS}" in past["error"]


def test_tool_event_size_limit(catalog_db):
    shell = json.dumps({"tool": "catalog_stats", "arguments": {"pad": ""}})
    at = shell.replace('"pad": ""', '"pad": "' + "x" * (MAX_EVENT_BYTES - len(shell)) + '"')
    assert len(at) == MAX_EVENT_BYTES
    assert "error" not in handle(at, catalog_db)
    assert handle(at.replace('"x', '"xx'), catalog_db) == {"error": "the request is too large"}


def test_serve_body_limit(environment):
    import httpx2
    from sommelier_dev.cli.serve_cmd import build_local_server

    sink = ListSink()
    api, workers = build_local_server(load_settings(), process=lambda update, attempt: sink.enqueue(update, 0))
    api.start()
    try:
        response = httpx2.post(
            f"{api.url}/telegram/webhook",
            content=b"x" * (MAX_BODY_BYTES + 1),
            headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
            timeout=30,
        )
        assert response.status_code == 413 and response.json() == {"ok": False, "error": "body too large"}
        unauthorized = httpx2.post(f"{api.url}/telegram/webhook", content=b"x" * (MAX_BODY_BYTES + 1), timeout=30)
        assert unauthorized.status_code == 401, "the secret is checked before the body is read"
    finally:
        api.stop()
        workers.shutdown()
    assert sink.items == []


# ====================================================================== IAM, template and code scanners
def _tool(name: str) -> list[str]:
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed: it is a dev dependency (pip install -e '.[dev]')")
    return [found]


@pytest.mark.gate
def test_checkov_template_has_no_unexplained_findings():
    result = subprocess.run(
        [
            *_tool("checkov"),
            "-f",
            str(TEMPLATE),
            "--framework",
            "cloudformation",
            "-o",
            "json",
            "--compact",
            "--skip-download",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
    )
    report = json.loads(result.stdout)
    report = report[0] if isinstance(report, list) else report
    summary = report["summary"]
    failed = [(c["check_id"], c["resource"]) for c in report["results"]["failed_checks"]]
    skipped = report["results"]["skipped_checks"]
    unexplained = [
        (c["check_id"], c["resource"])
        for c in skipped
        if len((c.get("check_result") or {}).get("suppress_comment") or "") < 30
    ]
    record_figure(
        "security.checkov",
        {
            "passed": summary["passed"],
            "failed": summary["failed"],
            "skipped": summary["skipped"],
            "version": summary.get("checkov_version"),
            "skipped_ids": sorted({c["check_id"] for c in skipped}),
        },
    )
    assert failed == [], failed
    assert unexplained == [], "every skip needs a written reason"
    assert summary["passed"] >= 30


@pytest.mark.gate
def test_bandit_finds_nothing_unexplained():
    result = subprocess.run(
        [*_tool("bandit"), "-r", "layers", "functions", "-f", "json", "-q", "-x", "*/sommelier.egg-info/*"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    report = json.loads(result.stdout)
    issues = [(r["test_id"], r["filename"], r["line_number"], r["issue_text"]) for r in report["results"]]
    totals = report["metrics"]["_totals"]
    record_figure(
        "security.bandit",
        {
            "issues": len(issues),
            "nosec": totals.get("nosec"),
            "skipped_tests": totals.get("skipped_tests"),
            "lines": totals.get("loc"),
        },
    )
    assert issues == [], issues
    nosec_lines = []
    for path in [*ROOT.joinpath("layers").rglob("*.py"), *ROOT.joinpath("functions").rglob("*.py")]:
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if "# nosec" in line:
                nosec_lines.append((str(path.relative_to(ROOT)), number, line))
    for where, number, line in nosec_lines:
        assert re.search(r"# nosec B\d{3}(,\s*B\d{3})* - \S.{10,}", line), (
            f"{where}:{number}: a nosec needs an id and a reason"
        )


def _sam_transform() -> dict:
    import samtranslator.translator.transform as translator
    from cfnlint.decode import decode_str

    template, _ = decode_str(TEMPLATE.read_text("utf-8"))
    template = json.loads(json.dumps(template, default=str))
    for name, resource in template["Resources"].items():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://artifacts/{name}.zip"  # what `sam package` would put there

    class NoManagedPolicies:
        def load(self):
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-central-1")
    return translator.transform(template, {}, NoManagedPolicies())


def test_no_function_role_allows_sqs_actions_on_every_queue():
    """What SAM generates: the agent polls the turn queue only (no AWSLambdaSQSQueueExecutionRole)."""
    output = _sam_transform()
    roles = {name: r for name, r in output["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    assert "AgentFunctionRole" in roles
    wildcard = []
    for name, role in roles.items():
        managed = [str(arn) for arn in role["Properties"].get("ManagedPolicyArns", [])]
        assert not any("SQSQueueExecutionRole" in arn for arn in managed), (name, managed)
        for policy in role["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                resources = (
                    statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
                )
                if "*" in resources or any(a.endswith(":*") or a == "*" for a in actions):
                    wildcard.append((name, actions, resources))
    assert wildcard == []
    agent = roles["AgentFunctionRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    sqs = [s for s in agent if any(str(a).startswith("sqs:") for a in s["Action"])]
    assert sqs and all(s["Resource"] == {"Fn::GetAtt": ["TurnQueue", "Arn"]} for s in sqs)
    mappings = [r for r in output["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert len(mappings) == 1 and mappings[0]["Properties"]["FunctionName"] == {"Ref": "AgentFunctionAliaslive"}
    record_figure(
        "security.iam",
        {"roles": len(roles), "statements_on_*": 0, "agent_sqs_actions": sorted(a for s in sqs for a in s["Action"])},
    )


def test_photo_bucket_is_private_and_enforces_tls():
    from cfnlint.decode import decode_str

    template, _ = decode_str(TEMPLATE.read_text("utf-8"))
    bucket = template["Resources"]["ImagesBucket"]["Properties"]
    assert all(
        bucket["PublicAccessBlockConfiguration"][flag] is True
        for flag in ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets")
    )
    assert (
        "AccessControl" not in bucket
        and bucket["OwnershipControls"]["Rules"][0]["ObjectOwnership"] == "BucketOwnerEnforced"
    )
    statements = template["Resources"]["ImagesBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert any(
        s["Effect"] == "Deny" and s["Condition"]["Bool"]["aws:SecureTransport"] in ("false", False) for s in statements
    )
    assert not [s for s in statements if s["Effect"] == "Allow"]


# ====================================================================== the database's runtime rights
@pytest.fixture
def app_user(fresh_db):
    from sommelier.db.roles import ensure_app_user

    name = f"sommelier_app_user_{uuid.uuid4().hex[:8]}"
    password = token_generator.token_urlsafe(32)
    assert ensure_app_user(fresh_db.conninfo, name, password) is True
    assert ensure_app_user(fresh_db.conninfo, name, password + "rotated") is False  # re-runs update it
    info = psycopg.conninfo.conninfo_to_dict(fresh_db.conninfo)
    info.update(user=name, password=password + "rotated")
    database = Database(psycopg.conninfo.make_conninfo(**info))
    yield name, database
    database.close()
    with psycopg.connect(fresh_db.conninfo, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("DROP ROLE IF EXISTS {}").format(psycopg.sql.Identifier(name)))


def test_scram_verifier_matches_postgres(fresh_db):
    from sommelier.db.roles import scram_sha256_verifier

    name = f"scram_check_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(fresh_db.conninfo, autocommit=True) as conn:
        conn.execute("SET password_encryption = 'scram-sha-256'")
        conn.execute(
            psycopg.sql.SQL("CREATE ROLE {} PASSWORD 'Correct-Horse-Battery-Staple'").format(
                psycopg.sql.Identifier(name)
            )
        )
        stored = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (name,)).fetchone()[0]
        conn.execute(psycopg.sql.SQL("DROP ROLE {}").format(psycopg.sql.Identifier(name)))
    iterations, salt = re.match(r"SCRAM-SHA-256\$(\d+):([^$]+)\$", stored).groups()
    ours = scram_sha256_verifier(
        "Correct-Horse-Battery-Staple", salt=base64.b64decode(salt), iterations=int(iterations)
    )
    assert ours == stored


def test_app_user_runs_every_tool_but_no_ddl(app_user, fresh_db):
    name, database = app_user
    with database.connection() as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == name
        wine_ids = [str(r[0]) for r in conn.execute("SELECT id FROM wines ORDER BY name LIMIT 2").fetchall()]
    vector = [((i * 7919) % 100) / 100 - 0.5 for i in range(1536)]
    catalog = json.loads((ROOT / "data/catalog/wines.json").read_text("utf-8"))["wines"][0]
    row = {k: (v if v is not None else "") for k, v in catalog.items() if k != "image"}
    calls = {
        "search_wines": {"wine_type": "red", "food_pairing": "стейк"},
        "semantic_search": {"query": "лёгкое белое", "embedding": vector, "embedding_model": "local-ngram-hash-v4"},
        "get_wines": {"ids": wine_ids},
        "get_list": {"limit": 5},
        "load_history": {"chat_id": 1},
        "save_turn": {
            "chat_id": 1,
            "user_id": 1,
            "update_id": 1,
            "user_text": "q",
            "answer_text": "a",
            "wine_ids": wine_ids[:1],
            "response_type": "recommendation",
            "stats": {"mode": "llm", "llm_calls": 2, "prompt_tokens": 10, "completion_tokens": 5},
        },
        "upsert_user": {"telegram_user_id": 1, "chat_id": 1, "first_name": "А"},
        "set_user_active": {"chat_id": 1, "active": False},
        "chat_state": {"telegram_user_id": 1},
        "cache_photo": {"wine_id": wine_ids[0], "file_id": "AgAD-app-user"},
        "save_feedback": {"chat_id": 1, "user_id": 1, "rating": 1, "wine_id": wine_ids[0]},
        "reset_history": {"chat_id": 1},
        "move_chat": {"from_chat_id": -4001, "to_chat_id": -1004001},
        "catalog_stats": {},
        "export_wines": {},
        "embedding_texts": {},
        "import_wines": {"wines": [{**row, "name": "App User Import"}]},
        "update_embeddings": {
            "items": [{"id": wine_ids[0], "embedding": vector}],
            "embedding_model": "local-ngram-hash-v4",
        },
        "list_wines": {"include_unavailable": True},
        # The shop's duties (migration 0006 tables through the default privileges of 0002).
        "get_age_answer": {"telegram_user_id": 1},
        "save_age_answer": {"telegram_user_id": 1, "is_adult": True},
        "find_wines": {"refs": wine_ids[:1]},
        "wine_card": {"ref": wine_ids[0]},
        "report_data": {"since": "2020-01-01T00:00:00+00:00", "until": "2020-12-31T00:00:00+00:00"},
        "admin_stats": {},
        "purge_old_messages": {"days": 180},
        "forget_user": {"telegram_user_id": 1},
        "taste_profile": {"telegram_user_id": 1},  # migration 0013
        # The owner's shop file (migration 0012).
        "put_shop_facts": {
            "facts": {
                "name": "Винный погреб",
                "stores": [
                    {"id": "main", "name": "На Ленина", "address": "ул. Ленина, 1", "hours": "пн–вс 10:00–22:00"}
                ],
            }
        },
        "get_shop_facts": {},
        "begin_turn": {"chat_id": 2, "history_limit": 5, "user": {"telegram_user_id": 2, "chat_id": 2}},
        "open_turn": {
            "chat_id": 2,
            "history_limit": 5,
            "user": {"telegram_user_id": 2, "chat_id": 2},
            "calls": [{"tool": "search_wines", "arguments": {"wine_type": "red"}}],
        },
        "end_turn": {
            "turn": {"chat_id": 2, "update_id": 2, "user_text": "q", "answer_text": "a", "wine_ids": wine_ids[:1]},
            "wine_ids": wine_ids,
            "photos": [{"wine_id": wine_ids[1], "file_id": "AgAD-app-user-2"}],
        },
    }
    assert set(calls) == set(OPERATIONS)
    answers = {tool: handle({"tool": tool, "arguments": args}, database) for tool, args in calls.items()}
    assert {tool: a["error"] for tool, a in answers.items() if "error" in a} == {}

    refused = {}
    for statement in (
        "CREATE TABLE evil (id int)",
        "DROP TABLE wines",
        "ALTER TABLE wines ADD COLUMN evil int",
        "TRUNCATE wines",
        "CREATE INDEX evil ON wines (name)",
        "CREATE SCHEMA evil",
        "DROP TABLE messages",
        "ALTER TABLE users OWNER TO CURRENT_USER",
        "SELECT * FROM schema_migrations",
        "COMMENT ON TABLE wines IS 'owned'",
        "CREATE FUNCTION evil() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "SET ROLE postgres",
    ):
        with database.connection() as conn:
            try:
                conn.execute(statement)
            except (psycopg.errors.InsufficientPrivilege, psycopg.errors.InvalidSchemaName) as exc:
                refused[statement] = type(exc).__name__
                conn.rollback()
            except psycopg.Error as exc:
                refused[statement] = f"unexpected {type(exc).__name__}: {exc}"
                conn.rollback()
    with database.connection() as conn:  # without grant options a GRANT is a no-op (a warning, not an error)
        conn.execute("GRANT ALL ON wines TO PUBLIC")
        assert conn.execute("SELECT has_table_privilege('public', 'wines', 'DELETE')").fetchone()[0] is False
    record_figure(
        "security.db_app_role",
        {"tools_ok": len(answers), "ddl_refused": f"{len(refused)}/12", "statements": sorted(refused)},
    )
    assert len(refused) == 12 and all(not v.startswith("unexpected") for v in refused.values()), refused
    with psycopg.connect(fresh_db.conninfo) as admin:
        assert (
            admin.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'evil'").fetchone()[0] == 0
        )
        member = admin.execute(
            "SELECT rolcanlogin, rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = %s", (name,)
        ).fetchone()
        assert member == (True, False, False, False)
        group = admin.execute("SELECT rolcanlogin FROM pg_roles WHERE rolname = 'sommelier_app'").fetchone()
        assert group == (False,), "the group role cannot log in"


def test_migrate_function_creates_the_app_user_from_its_secret(fresh_db, monkeypatch):
    """functions/migrate/app.py with APP_DATABASE_SECRET_ARN: the secret's user exists afterwards, in sommelier_app."""
    from moto import mock_aws

    name = f"sommelier_app_user_{uuid.uuid4().hex[:8]}"
    with mock_aws():
        import boto3

        monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
        arn = boto3.client("secretsmanager").create_secret(
            Name="app-db", SecretString=json.dumps({"username": name, "password": token_generator.token_urlsafe(24)})
        )["ARN"]
        monkeypatch.setenv("APP_DATABASE_SECRET_ARN", arn)
        monkeypatch.setenv("DATABASE_URL", fresh_db.conninfo)
        app = _load("functions/migrate/app.py", "hardening_migrate_app")
        from sommelier.deploy.custom_resource import Budget

        from tests.fakes.cloudformation import BudgetedContext

        assert app._migrate(Budget(BudgetedContext(60))) == []  # already migrated; the user is created anyway
    try:
        with psycopg.connect(fresh_db.conninfo) as conn:
            assert conn.execute("SELECT pg_has_role(%s, 'sommelier_app', 'MEMBER')", (name,)).fetchone()[0] is True
            verifier = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", (name,)).fetchone()[0]
            assert verifier.startswith("SCRAM-SHA-256$"), "the password was sent as a SCRAM verifier"
    finally:
        with psycopg.connect(fresh_db.conninfo, autocommit=True) as conn:
            conn.execute(psycopg.sql.SQL("DROP ROLE IF EXISTS {}").format(psycopg.sql.Identifier(name)))
