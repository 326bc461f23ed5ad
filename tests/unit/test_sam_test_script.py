"""scripts/sam_test.py (`make sam-test`) without containers: the environment file it derives from
events/env.json, the SQS event it hands the agent, and the stale SAM build locks it clears."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sam_test():
    spec = importlib.util.spec_from_file_location("sam_test_under_test", ROOT / "scripts" / "sam_test.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Telegram:
    base_url = "http://10.89.77.1:41234"
    token = "123456:TEST-TOKEN"


def test_the_environment_file_points_every_function_at_this_runs_stand_ins(sam_test, tmp_path):
    target = tmp_path / "env.json"
    sam_test.environment_file(
        target,
        moto="http://10.89.77.1:40001",
        queue_url="http://10.89.77.1:40001/123456789012/sommelier-turns.fifo",
        telegram=_Telegram(),
        database_url="postgresql://postgres@10.89.77.1:40002/sommelier",
        lambda_endpoint="http://10.89.77.1:40003",
    )
    written = json.loads(target.read_text(encoding="utf-8"))
    shipped = json.loads((ROOT / "events" / "env.json").read_text(encoding="utf-8"))
    assert set(written) == set(shipped)
    assert written["WebhookFunction"]["QUEUE_URL"].startswith("http://10.89.77.1:40001/")
    assert written["AgentFunction"]["AWS_ENDPOINT_URL_LAMBDA"] == "http://10.89.77.1:40003"
    assert written["AgentFunction"]["TELEGRAM_API_BASE_URL"] == "http://10.89.77.1:41234"
    assert written["WineToolsFunction"]["DATABASE_URL"].endswith(":40002/sommelier")
    # no default port of the shipped file is left behind
    for variables in written.values():
        for name, value in variables.items():
            assert not any(f":{port}" in value for port in (5000, 3001, 8081, 5432)), (name, value)


def test_the_agent_gets_the_event_source_mappings_shape(sam_test):
    message = {
        "MessageId": "m-1",
        "ReceiptHandle": "r-1",
        "Body": '{"update_id": 1}',
        "MD5OfBody": "x",
        "Attributes": {"MessageGroupId": "42", "ApproximateReceiveCount": "1"},
    }
    event = sam_test.sqs_event(message, "arn:aws:sqs:eu-central-1:123456789012:sommelier-turns.fifo")
    (record,) = event["Records"]
    assert record["eventSource"] == "aws:sqs" and record["body"] == '{"update_id": 1}'
    assert record["attributes"]["MessageGroupId"] == "42"
    assert record["eventSourceARN"].endswith(".fifo")


def test_stale_sam_build_locks_are_removed_and_live_ones_kept(sam_test, tmp_path, monkeypatch):
    monkeypatch.setattr(sam_test.tempfile, "gettempdir", lambda: str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "samcli_lambda-python_3.12-x86_64-aaa.building.lock"
    stale.write_text(f"{dead.pid}\n1.0\n")
    (tmp_path / "samcli_lambda-python_3.12-x86_64-aaa.building.status").write_text("in_progress\n1.0\n")
    live = tmp_path / "samcli_lambda-python_3.12-x86_64-bbb.building.lock"
    live.write_text(f"{os.getpid()}\n1.0\n")
    sam_test.remove_stale_sam_build_locks()
    assert not stale.exists()
    assert not (tmp_path / "samcli_lambda-python_3.12-x86_64-aaa.building.status").exists()
    assert live.exists()


def test_the_make_target_installs_a_pinned_sam_cli_and_runs_the_script():
    plan = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "sam-test", "VENV=/nonexistent-venv", "SAM_VENV=/nonexistent-sam-venv"],
        capture_output=True,
        text=True,
    ).stdout
    assert '"aws-sam-cli==' in plan and "/nonexistent-sam-venv/bin/python -m pip install" in plan
    assert "scripts/sam_test.py" in plan


def test_the_x86_64_copy_of_the_template_names_no_arm64_and_finds_the_code(sam_test):
    """The template deploys arm64 only; the copy `make sam-test` builds runs in x86_64 containers."""
    import cfnlint.decode

    text = (ROOT / "template.yaml").read_text("utf-8")
    copy, matches = cfnlint.decode.decode_str(sam_test.x86_64_template(text))
    assert not matches
    assert copy["Globals"]["Function"]["Architectures"] == ["x86_64"]
    layer = copy["Resources"]["SommelierLayer"]
    assert layer["Metadata"]["BuildArchitecture"] == "x86_64"
    assert layer["Properties"]["CompatibleArchitectures"] == ["x86_64"]
    assert Path(layer["Properties"]["ContentUri"]).is_dir()
    functions = [r for r in copy["Resources"].values() if r["Type"] == "AWS::Serverless::Function"]
    assert functions and all(Path(f["Properties"]["CodeUri"]).is_absolute() for f in functions)
    assert all(Path(f["Properties"]["CodeUri"]).is_dir() for f in functions)
    with pytest.raises(sam_test.Failure, match="arm64"):
        sam_test.x86_64_template(text + "\n  Extra:\n    Architectures: [x86_64, arm64]\n")


def test_the_x86_64_copy_can_be_written_for_a_build_by_hand(tmp_path):
    target = tmp_path / "x86.yaml"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "sam_test.py"), "--x86-template", str(target)],
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "layers" / "sommelier")])},
    )
    assert "Architectures: [x86_64]" in target.read_text("utf-8")


def test_the_yml_catalogue_it_drops_reads_as_the_same_wines_as_its_json(sam_test, tmp_path):
    """`make sam-test` drops the same two wines as JSON, Excel and YML on the catalogue-drop function; the
    YML one must read (defusedxml, which that function ships) as those wines."""
    from sommelier.catalog.importer import prepare_rows, read_catalog

    shipped = json.loads((ROOT / "data" / "catalog" / "shop-export-example.json").read_text(encoding="utf-8"))
    rows = [{k: v for k, v in w.items() if k != "image_url"} for w in shipped["wines"][:2]]
    (tmp_path / "drop.json").write_text(json.dumps({"wines": rows}), encoding="utf-8")
    (tmp_path / "drop.yml").write_bytes(sam_test.yml_catalogue(rows))
    from_json = prepare_rows(read_catalog(tmp_path / "drop.json"), tmp_path).records
    from_yml = prepare_rows(read_catalog(tmp_path / "drop.yml"), tmp_path).records
    assert len(from_yml) == 2
    same = ("sku", "name", "producer", "country", "region", "vintage_year", "wine_type", "sweetness", "price_rub")
    assert [[getattr(r, f) for f in same] for r in from_yml] == [[getattr(r, f) for f in same] for r in from_json]
    assert [r.grape_varieties for r in from_yml] == [r.grape_varieties for r in from_json]
    script = (ROOT / "scripts" / "sam_test.py").read_text(encoding="utf-8")
    assert 'f"CatalogDropFunction on a .yml: {answer}"' in script  # the drop is checked, not only made
