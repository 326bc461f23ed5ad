"""One lock for the venv and the layer (layers/sommelier/requirements.lock): the layer's versions are
compared with it (sommelier_dev.devtools.layer_lock, run by `make sam-test` on the layer `sam build`
made), and both installs read it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from sommelier_dev.devtools.layer_lock import differences, installed_versions, locked_versions, main

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "sommelier"
LOCK_TEXT = (LAYER / "requirements.lock").read_text(encoding="utf-8")


def _install(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")


def test_markers_are_evaluated_for_the_lambda_runtime():
    lock = "numpy==2.4.6 ; python_full_version < '3.12'\nnumpy==2.5.5 ; python_full_version >= '3.12'\n"
    lock += "pywin32==312 ; sys_platform == 'win32'\nPsycopg_Binary==3.3.9 ; implementation_name != 'pypy'\n"
    lock += "    # via sommelier\n"
    assert locked_versions(lock) == {"numpy": "2.5.5", "psycopg-binary": "3.3.9"}


def test_a_layer_that_differs_from_the_lock_is_reported(tmp_path, capsys):
    _install(tmp_path, "psycopg", "3.3.9")
    _install(tmp_path, "psycopg-binary", "3.2.13")  # what a manylinux2014-only aarch64 build used to get
    _install(tmp_path, "left-pad", "1.0")
    lock = tmp_path / "requirements.lock"
    lock.write_text("psycopg==3.3.9\npsycopg-binary==3.3.9\n", encoding="utf-8")
    assert main([str(tmp_path), str(lock)]) == 1
    err = capsys.readouterr().err
    assert "psycopg-binary: the layer has 3.2.13, the lock 3.3.9" in err
    assert "left-pad 1.0 is in the layer but not in the lock" in err
    assert "psycopg:" not in err
    assert differences(installed_versions(tmp_path), {"psycopg": "3.3.9"}) != []


def test_a_matching_layer_passes(tmp_path, capsys):
    _install(tmp_path, "pydantic", "2.13.5")
    lock = tmp_path / "requirements.lock"
    lock.write_text("pydantic==2.13.5\n    # via -r requirements.txt\n", encoding="utf-8")
    assert main([str(tmp_path), str(lock)]) == 0
    assert "layer matches the lock: 1 distributions" in capsys.readouterr().out


def test_every_runtime_requirement_is_locked():
    """A dependency added to the layer or to pyproject needs `make lock` (the lock pins it for both)."""
    locked = locked_versions(LOCK_TEXT)
    for line in (LAYER / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            name = canonicalize_name(requirement.name)
            assert name in locked, f"{name} is not in requirements.lock: run `make lock`"
            assert requirement.specifier.contains(locked[name], prereleases=True), (name, locked[name])


def test_the_venv_and_the_layer_install_from_the_lock():
    bootstrap = (ROOT / "scripts" / "bootstrap.sh").read_text(encoding="utf-8")
    assert "-c layers/sommelier/requirements.lock" in bootstrap
    plan = subprocess.run(
        ["make", "-n", "-C", str(LAYER), "build-SommelierLayer", "ARTIFACTS_DIR=/nonexistent"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "-r requirements.txt -c requirements.lock" in plan


@pytest.mark.parametrize(("arch", "machine"), [("arm64", "aarch64"), ("x86_64", "x86_64")])
def test_the_layer_gets_every_wheel_tag_the_runtime_accepts(arch, machine):
    plan = subprocess.run(
        ["make", "-n", "-C", str(LAYER), "build-SommelierLayer", "ARTIFACTS_DIR=/nonexistent", f"LAYER_ARCH={arch}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for tag in ("manylinux_2_28", "manylinux2014", "manylinux_2_17", "manylinux_2_34"):
        assert f"--platform {tag}_{machine}" in plan, tag
    other = "x86_64" if machine == "aarch64" else "aarch64"
    assert other not in plan
    wrong = subprocess.run(
        ["make", "-n", "-C", str(LAYER), "build-SommelierLayer", "LAYER_ARCH=sparc"], capture_output=True, text=True
    )
    assert wrong.returncode != 0 and "LAYER_ARCH must be arm64 or x86_64" in wrong.stderr


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            requirement = Requirement(line)
            specifiers = list(requirement.specifier)
            assert len(specifiers) == 1 and specifiers[0].operator == "==", f"{path}: {line!r} is not pinned with =="
            pins[canonicalize_name(requirement.name)] = specifiers[0].version
    return pins


@pytest.mark.parametrize(
    "requirements", sorted((ROOT / "functions").glob("*/requirements.txt")), ids=lambda p: p.parent.name
)
def test_every_function_dependency_is_pinned_to_the_lock_with_its_dependencies(requirements):
    """SAM's builder installs a function's requirements.txt as written (it never sees the lock): each line
    pins the lock's version, and every dependency of a pinned package is pinned too, so nothing floats."""
    import importlib.metadata

    from packaging.markers import default_environment

    locked = locked_versions(LOCK_TEXT)
    pins = _pins(requirements)
    for name, version in pins.items():
        assert locked.get(name) == version, f"{requirements}: {name}=={version}, the lock has {locked.get(name)}"
    runtime = {**default_environment(), "python_version": "3.12", "python_full_version": "3.12.0"}
    runtime |= {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"}
    for name in pins:
        for line in importlib.metadata.requires(name) or []:
            dependency = Requirement(line)
            if dependency.marker is None or dependency.marker.evaluate({**runtime, "extra": ""}):
                assert canonicalize_name(dependency.name) in pins, f"{requirements}: {name} needs {dependency.name}"
