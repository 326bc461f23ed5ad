"""docs/deploy.md against template.yaml: the figures an operator reads (the parameter count and table, the
retries, the timeouts, the alarms, the canary, the capacity table, the first deploy's questions and
commands) are read from the guide and compared with the template, so a change to one fails until the
other follows. The template is parsed with cfn-lint's decoder; the guide with regular expressions on
its own wording, nothing shared with the template's code."""

from __future__ import annotations

import re
from pathlib import Path

import cfnlint.decode as cfnlint_decode
import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "ten": 10}


@pytest.fixture(scope="module")
def template() -> dict:
    parsed, matches = cfnlint_decode.decode_str((ROOT / "template.yaml").read_text(encoding="utf-8"))
    assert not matches
    return parsed


@pytest.fixture(scope="module")
def resources(template) -> dict:
    return template["Resources"]


def section(title_start: str) -> str:
    """The guide's text from a heading that starts with `title_start` to the next heading of its level."""
    match = re.search(rf"^(#+) {re.escape(title_start)}.*$", GUIDE, re.M)
    assert match, title_start
    level = len(match[1])
    rest = GUIDE[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the markdown tables in `text`, as lists of cells."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.fullmatch(r"\|[-| ]+\|", line.strip()):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word.lower()]


def test_the_parameter_count_and_table_match_the_template(template):
    parameters = template["Parameters"]
    counts = [int(n) for n in re.findall(r"All (\d+) parameters of `template.yaml`", GUIDE)]
    counts += [int(n) for n in re.findall(r"every parameter of the template \((\d+)\)", GUIDE)]
    assert counts and set(counts) == {len(parameters)}, counts
    rows = [r for r in table_rows(section("4. Template parameters")) if re.fullmatch(r"`\w+`", r[0])]
    documented = {row[0].strip("`"): row[1] for row in rows}
    assert set(documented) == set(parameters)
    for name, default_cell in documented.items():
        if "Default" not in parameters[name]:
            assert "required" in default_cell, name
            continue
        shown = re.match(r"`([^`]*)`", default_cell)
        assert shown, (name, default_cell)
        assert shown[1].strip('"') == str(parameters[name]["Default"]).strip('"'), (name, shown[1])


def test_retries_timeouts_and_limits_match_the_template(resources, template):
    queue = resources["TurnQueue"]["Properties"]
    receives = int(queue["RedrivePolicy"]["maxReceiveCount"])
    said = [number(n) for n in re.findall(r"\bfail(?:s|ed)? (\w+) times", GUIDE, re.I)]
    said += [number(n) for n in re.findall(r"after (\w+) receives", GUIDE)]
    said += [int(n) for n in re.findall(r"`maxReceiveCount: (\d+)`", GUIDE)]
    assert said and set(said) == {receives}, said
    visibility = {int(n) for n in re.findall(r"visibility timeout (?:is a fixed |\()?(\d+)(?: s|-second)", GUIDE)}
    visibility |= {int(n) for n in re.findall(r"the (\d+)-second visibility timeout", GUIDE)}
    assert visibility == {int(queue["VisibilityTimeout"])}
    dlq_days = int(resources["TurnDeadLetterQueue"]["Properties"]["MessageRetentionPeriod"]) // 86400
    assert re.search(rf"kept {dlq_days} days", GUIDE) and f"SQS FIFO, {dlq_days} days" in GUIDE
    agent_timeout = template["Parameters"]["AgentTimeoutSeconds"]
    assert f"{agent_timeout['MinValue']}–{agent_timeout['MaxValue']}" in GUIDE
    tools = resources["WineToolsFunction"]["Properties"]
    assert set(re.findall(r"(\d+) s timeout", GUIDE)) == {str(tools["Timeout"])}
    connect = tools["Environment"]["Variables"]["DATABASE_CONNECT_TIMEOUT_S"]
    assert set(re.findall(r"(\d+) s database connect timeout|waits up to (\d+) s for a connection", GUIDE)) <= {
        (connect, ""),
        ("", connect),
    }
    throttling = resources["WebhookApi"]["Properties"]["DefaultRouteSettings"]
    for rate, burst in re.findall(r"(\d+) requests/s,? \(?burst (\d+)", GUIDE):
        assert (int(rate), int(burst)) == (throttling["ThrottlingRateLimit"], throttling["ThrottlingBurstLimit"])
    for name, memory in re.findall(r"(\w+Function)<br/>(\d+) MB", GUIDE):
        assert resources[name]["Properties"]["MemorySize"] == int(memory), name


def test_the_alarm_table_is_the_templates_alarms(resources):
    alarms = {n: r["Properties"] for n, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    rows = table_rows(section("8.2 Metrics and alarms"))
    documented = {row[0].strip("`"): row[1] for row in rows if row[0].strip("`").endswith("Alarm")}
    assert set(documented) == set(alarms)
    age = alarms["OldestTurnAgeAlarm"]
    assert f"older than {age['Threshold'] // 60} minutes" in documented["OldestTurnAgeAlarm"]
    check = resources["WebhookCheckFunction"]["Properties"]["Events"]["EveryQuarterHour"]["Properties"]
    minutes = re.fullmatch(r"rate\((\d+) minutes\)", check["Schedule"])[1]
    assert f"every {minutes} minutes" in documented["WebhookUnsetAlarm"]
    retries = resources["WineToolsFunction"]["Properties"]["EventInvokeConfig"]["MaximumRetryAttempts"]
    assert f"Lambda's {retries} retries" in documented["JobFailuresAlarm"]
    metrics = sum(
        1 if "MetricName" in a else len([q for q in a["Metrics"] if "MetricStat" in q]) for a in alarms.values()
    )
    assert f"{len(alarms)} alarms reading {metrics} metrics" in GUIDE
    secrets = [r for r in resources.values() if r["Type"] == "AWS::SecretsManager::Secret"]
    assert f"{len(secrets) + 1} × $0.40" in GUIDE  # and the RDS-managed master secret
    rollback = {
        alarm["Ref"]
        for f in ("WebhookFunction", "AgentFunction")
        for alarm in resources[f]["Properties"]["DeploymentPreference"]["Alarms"]
    }
    paragraph = section("7. Updating").split("**Gradual deploys.**")[1].split("**Going back")[0]
    assert set(re.findall(r"`(\w+Alarm)`", paragraph)) == rollback
    assert f"are {NUMBER_WORDS_BY_VALUE[len(rollback)]} of" in GUIDE


NUMBER_WORDS_BY_VALUE = {value: word for word, value in NUMBER_WORDS.items()}


def test_the_canary_and_the_lifecycle_match_the_template(resources):
    types = {resources[f]["Properties"]["DeploymentPreference"]["Type"] for f in ("WebhookFunction", "AgentFunction")}
    assert set(re.findall(r"`(Canary\w+|Linear\w+|AllAtOnce)`", GUIDE)) == types
    (canary,) = types
    percent, minutes = re.fullmatch(r"Canary(\d+)Percent(\d+)Minutes", canary).groups()
    assert f"sends {percent} % of the\ntraffic to the new version for {minutes} minutes" in GUIDE
    rules = resources["ImagesBucket"]["Properties"]["LifecycleConfiguration"]["Rules"]
    uploads = next(r for r in rules if r.get("Prefix") == "catalog/incoming/")
    assert f"expire after {uploads['ExpirationInDays']}\n  days" in GUIDE


def test_the_capacity_table_follows_its_own_formula_and_the_default(template):
    rows = [r for r in table_rows(section("4.1 Capacity")) if re.fullmatch(r"[\d,]+", r[0])]
    assert [int(r[0].replace(",", "")) for r in rows] == sorted(int(r[0].replace(",", "")) for r in rows)
    assert int(rows[0][0].replace(",", "")) == 1_000 and int(rows[-1][0].replace(",", "")) == 100_000
    default = int(template["Parameters"]["AgentMaxConcurrency"]["Default"])
    defaults = [r for r in rows if "(the default)" in r[2]]
    assert len(defaults) == 1 and int(defaults[0][2].split()[0]) == default
    allowed = [float(v) for v in template["Parameters"]["AuroraMaxCapacity"]["AllowedValues"]]
    minimum = int(template["Parameters"]["AgentMaxConcurrency"]["MinValue"])
    for turns, at_once, concurrency, aurora, *_ in rows:
        expected = int(turns.replace(",", "")) / 86_400 * 3 * 9  # the formula the section gives
        assert abs(float(at_once) - expected) <= 0.5 + 0.05 * expected, (turns, at_once, expected)
        chosen = int(concurrency.split()[0])
        assert chosen >= max(minimum, expected), (turns, chosen)
        assert float(aurora) in allowed
    assert "L-B99A9384" in section("4.1 Capacity")  # the quota to request, by its code


def test_the_first_deploy_takes_three_commands_and_at_most_eight_answers(template):
    first = section("3. First deploy")
    questions = [r for r in table_rows(first.split("```")[0]) if r[0].isdigit()]
    assert 1 <= len(questions) <= 8
    commands = [line for line in first.split("```bash")[1].split("```")[0].splitlines() if line.strip()]
    assert len(commands) == 3, commands
    given = dict(re.findall(r"(\w+)=(\S+)", commands[1]))
    parameters = template["Parameters"]
    assert set(given) <= set(parameters)
    asked = {m for q in questions for m in re.findall(r"`(\w+)`", q[1]) if m in parameters}
    assert asked == set(given)
    for name, parameter in parameters.items():  # everything not asked has a default
        assert name in given or "Default" in parameter, name
    assert parameters["SetWebhookOnDeploy"]["Default"] == "true"  # the first deploy registers the webhook
    assert commands[2].strip() == "sommelier deploy check"
