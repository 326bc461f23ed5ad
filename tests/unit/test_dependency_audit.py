"""The dependency audit (sommelier_dev.devtools.audit) passes only when every pin was looked up: pip-audit's
report is stood in for by a small script, as pip-audit prints it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sommelier_dev.devtools.audit import CLEAN, DEFAULT_LOCK, FOUND, NOT_CHECKED, audit, lock_pins

LOCK = "boto3==1.44.8\n    # via x\nurllib3==2.8.0\ntzdata==2026.6 ; sys_platform == 'win32'\n"


def tool(tmp_path: Path, *, stdout: str = "", stderr: str = "", code: int = 0) -> str:
    """A stand-in pip-audit: prints what it is given and exits with ``code``."""
    script = tmp_path / "pip-audit"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdout.write({stdout!r})\nsys.stderr.write({stderr!r})\nsys.exit({code})\n"
    )
    script.chmod(0o755)
    return str(script)


def lock(tmp_path: Path) -> Path:
    path = tmp_path / "requirements.lock"
    path.write_text(LOCK)
    return path


def report(*dependencies: dict) -> str:
    return json.dumps({"dependencies": list(dependencies), "fixes": []})


def test_the_lock_pins_that_apply_here_are_the_ones_to_check():
    assert lock_pins(LOCK) == {"boto3": "1.44.8", "urllib3": "2.8.0"}  # tzdata is Windows only
    pins = lock_pins(DEFAULT_LOCK.read_text())
    assert len(pins) > 100 and pins["urllib3"].split(".")[0] == "2", "the lock is past urllib3 1.26.20"


def test_every_pin_looked_up_and_none_named_is_clean(tmp_path):
    found = report(
        {"name": "boto3", "version": "1.44.8", "vulns": []}, {"name": "urllib3", "version": "2.8.0", "vulns": []}
    )
    result = audit(lock(tmp_path), tool(tmp_path, stdout=found))
    assert result.code == CLEAN and result.lines == ["all 2 pins checked: no known vulnerabilities"]


def test_skipped_pins_are_not_checked_never_clean(tmp_path):
    found = report(
        {"name": "boto3", "version": "1.44.8", "skip_reason": "Dependency not found on PyPI"},
        {"name": "urllib3", "version": "2.8.0", "vulns": []},
    )
    result = audit(lock(tmp_path), tool(tmp_path, stdout=found))
    assert result.code == NOT_CHECKED
    assert result.lines == ["NOT CHECKED: 1 of 2 pins were not looked up: boto3==1.44.8 (Dependency not found on PyPI)"]
    every_skipped = report()  # pip-audit said nothing about any pin
    assert audit(lock(tmp_path), tool(tmp_path, stdout=every_skipped)).code == NOT_CHECKED


def test_an_unreachable_source_or_no_tool_is_said_plainly(tmp_path):
    down = tool(
        tmp_path, stderr="ConnectionError: HTTPSConnectionPool(host='pypi.org'): Max retries exceeded\n", code=1
    )
    result = audit(lock(tmp_path), down)
    assert result.code == NOT_CHECKED and result.lines[0].startswith("NOT CHECKED: no advisory source answered:")
    assert "no known vulnerabilities" not in " ".join(result.lines)
    import sommelier_dev.devtools.audit as module

    missing = module.find_pip_audit
    module.find_pip_audit = lambda: None
    try:
        assert audit(lock(tmp_path)).code == NOT_CHECKED
    finally:
        module.find_pip_audit = missing


def test_advisories_are_listed_with_their_fixes(tmp_path):
    vuln = {"id": "GHSA-pq67-6m6q-mj2v", "fix_versions": ["2.5.0"], "aliases": ["CVE-2025-50181"]}
    found = report(
        {"name": "boto3", "version": "1.44.8", "vulns": []}, {"name": "urllib3", "version": "2.8.0", "vulns": [vuln]}
    )
    result = audit(lock(tmp_path), tool(tmp_path, stdout=found, code=1))
    assert result.code == FOUND
    assert result.lines[1] == "urllib3==2.8.0: GHSA-pq67-6m6q-mj2v (CVE-2025-50181); fixed in 2.5.0"
