"""The built Lambda layer must hold exactly the versions of requirements.lock, the lock the
development venv installs from: what was tested is what ships.

`python -m sommelier_dev.devtools.layer_lock LAYER_PYTHON_DIR [LOCK]` (run by `make sam-test` on the
layer `sam build` made) prints each difference and exits non-zero when there is one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from packaging.markers import Marker
from packaging.utils import canonicalize_name

DEFAULT_LOCK = Path(__file__).resolve().parents[2] / "requirements.lock"
# The Lambda python3.12 runtime, for the lock's environment markers.
LAMBDA_ENVIRONMENT = {
    "python_version": "3.12",
    "python_full_version": "3.12.0",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)\s*(?:;\s*(.+))?$")


def locked_versions(lock_text: str, environment: dict[str, str] | None = None) -> dict[str, str]:
    """Package -> version for the lines of a `uv pip compile` lock that apply to `environment`."""
    environment = {**LAMBDA_ENVIRONMENT, **(environment or {})}
    versions: dict[str, str] = {}
    for line in lock_text.splitlines():
        match = _PIN.match(line.strip())
        if not match:
            continue
        name, version, marker = match.groups()
        if marker and not Marker(marker).evaluate(environment):
            continue
        versions[canonicalize_name(name)] = version
    return versions


def installed_versions(site_dir: Path) -> dict[str, str]:
    """Package -> version of every distribution installed in a `pip install --target` folder."""
    versions: dict[str, str] = {}
    for metadata in site_dir.glob("*.dist-info/METADATA"):
        fields = dict(
            line.split(": ", 1) for line in metadata.read_text(encoding="utf-8").splitlines()[:20] if ": " in line
        )
        versions[canonicalize_name(fields["Name"])] = fields["Version"]
    return versions


def differences(installed: dict[str, str], locked: dict[str, str]) -> list[str]:
    problems = []
    for name, version in sorted(installed.items()):
        if name not in locked:
            problems.append(f"{name} {version} is in the layer but not in the lock (run `make lock`)")
        elif locked[name] != version:
            problems.append(f"{name}: the layer has {version}, the lock {locked[name]}")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m sommelier_dev.devtools.layer_lock LAYER_PYTHON_DIR [LOCK]", file=sys.stderr)
        return 2
    site_dir = Path(args[0])
    lock = Path(args[1]) if len(args) > 1 else DEFAULT_LOCK
    installed = installed_versions(site_dir)
    if not installed:
        print(f"no installed distributions in {site_dir}", file=sys.stderr)
        return 1
    problems = differences(installed, locked_versions(lock.read_text(encoding="utf-8")))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"layer matches the lock: {len(installed)} distributions")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
