"""The dependency audit: every pin of requirements.lock checked against a public advisory source, or the run
says plainly that it could not check. It never passes by skipping.

`python -m sommelier_dev.devtools.audit [LOCK]` (`make audit`) runs pip-audit on the lock (no resolution:
the pinned versions as they are) and compares what pip-audit checked with every pin of the lock that applies
to this machine:

- exit 0 and "all N pins checked": each pin was looked up, and no advisory names any;
- exit 1: advisories name some pins (each listed, with the versions that fix it);
- exit 2 and "NOT CHECKED": pip-audit is not installed, the advisory source could not be reached, or some
  pins were skipped (named). Never "no known vulnerabilities" then.

Where the real check runs is in RELIABILITY.md (Dependencies): a machine that reaches the advisory sources (these machines
reach only the package registries).
"""

from __future__ import annotations

import json
import shutil
import subprocess  # nosec B404 - runs pip-audit, a fixed tool, with fixed arguments
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from packaging.markers import Marker
from packaging.utils import canonicalize_name

from sommelier_dev.devtools.layer_lock import _PIN

DEFAULT_LOCK = Path(__file__).resolve().parents[3] / "layers" / "sommelier" / "requirements.lock"
NOT_CHECKED, FOUND, CLEAN = 2, 1, 0
TIMEOUT_S = 900


class Verdict(NamedTuple):
    code: int
    lines: list[str]


def lock_pins(lock_text: str) -> dict[str, str]:
    """Package -> version for every pin of the lock whose marker applies to this machine."""
    pins: dict[str, str] = {}
    for line in lock_text.splitlines():
        match = _PIN.match(line.strip())
        if not match:
            continue
        name, version, marker = match.groups()
        if marker and not Marker(marker).evaluate():
            continue
        pins[canonicalize_name(name)] = version
    return pins


def find_pip_audit() -> str | None:
    beside = Path(sys.executable).with_name("pip-audit")
    return str(beside) if beside.exists() else shutil.which("pip-audit")


def verdict(pins: dict[str, str], report: dict[str, Any]) -> Verdict:
    """What pip-audit's JSON report says about these pins."""
    checked: dict[str, str] = {}
    skipped: dict[str, str] = {}
    vulnerable: list[str] = []
    for dependency in report.get("dependencies") or []:
        name = canonicalize_name(str(dependency.get("name", "")))
        version = str(dependency.get("version", ""))
        if dependency.get("skip_reason"):
            skipped[name] = str(dependency["skip_reason"])
            continue
        checked[name] = version
        for vuln in dependency.get("vulns") or []:
            fixes = ", ".join(vuln.get("fix_versions") or []) or "no fixed version yet"
            aliases = ", ".join(vuln.get("aliases") or [])
            vulnerable.append(
                f"{name}=={version}: {vuln.get('id')}" + (f" ({aliases})" if aliases else "") + f"; fixed in {fixes}"
            )
    missing = sorted(name for name, version in pins.items() if checked.get(name) != version)
    if missing:
        shown = [f"{name}=={pins[name]}" + (f" ({skipped[name]})" if name in skipped else "") for name in missing[:10]]
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        return Verdict(
            NOT_CHECKED,
            [f"NOT CHECKED: {len(missing)} of {len(pins)} pins were not looked up: " + "; ".join(shown) + more],
        )
    if vulnerable:
        return Verdict(FOUND, [f"{len(vulnerable)} known vulnerabilities in {len(pins)} pins:", *vulnerable])
    return Verdict(CLEAN, [f"all {len(pins)} pins checked: no known vulnerabilities"])


def audit(lock: Path = DEFAULT_LOCK, tool: str | None = None, run: Callable[..., Any] = subprocess.run) -> Verdict:
    pins = lock_pins(lock.read_text(encoding="utf-8"))
    tool = tool or find_pip_audit()
    if tool is None:
        return Verdict(
            NOT_CHECKED, ["NOT CHECKED: pip-audit is not installed (pip install pip-audit, or pipx run pip-audit)"]
        )
    command = [tool, "-r", str(lock), "--no-deps", "--disable-pip", "--format", "json", "--progress-spinner", "off"]
    try:
        result = run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)  # nosec B603
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Verdict(NOT_CHECKED, [f"NOT CHECKED: pip-audit did not run: {exc}"])
    try:
        report = json.loads(result.stdout)
    except ValueError:
        said = (result.stderr or result.stdout or "").strip().splitlines()
        reason = said[-1] if said else f"exit code {result.returncode}"
        return Verdict(NOT_CHECKED, [f"NOT CHECKED: no advisory source answered: {reason}"])
    return verdict(pins, report if isinstance(report, dict) else {})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    found = audit(Path(args[0]) if args else DEFAULT_LOCK)
    for line in found.lines:
        print(line)
    return found.code


if __name__ == "__main__":
    raise SystemExit(main())
