"""`sizes`: deployment artifact sizes, and whether the handlers import from the layer alone.

- The shared layer as Lambda gets it: built by `layers/sommelier/Makefile` (what `sam build` runs) for
  arm64 / python3.12 (a `python3.12` on PATH or under pyenv), without the RDS CA download; unzipped
  size with and without its bytecode, and (full mode) the zipped size.
- Each function folder (the handler code only; its dependencies come from the layer).
- Import check: the same requirements installed for this machine (x86_64, this Python), then
  each handler imported in an isolated interpreter that sees only that folder, the `sommelier`
  package and boto3 (which the Lambda runtime provides). A handler that needs a package the
  layer lacks fails here as it would in Lambda.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from bench.common import ROOT, Context, Figure, figure, log
from scripts.sam_test import python312

NAME = "sizes"
NEEDS_NETWORK = True  # it installs the layer's requirements from the package index
REQUIREMENTS = ROOT / "layers" / "sommelier" / "requirements.txt"
LAYER_DIR = ROOT / "layers" / "sommelier"
PACKAGE = LAYER_DIR / "sommelier"
FUNCTIONS = ROOT / "functions"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sommelier-bench"
LAYER_TARGET_MB = 60.0
MB = 1024 * 1024


def tree_size(path: Path, *, bytecode: bool = True) -> int:
    total = 0
    for file in path.rglob("*"):
        if not file.is_file():
            continue
        if not bytecode and ("__pycache__" in file.parts or file.suffix == ".pyc"):
            continue
        total += file.stat().st_size
    return total


def pip_target(requirements: list[str], platform_args: tuple[str, ...], label: str) -> tuple[Path, bool]:
    """pip install --target into a cached folder; (folder, reused)."""
    key = hashlib.sha256(("\n".join(requirements) + "\n" + " ".join(platform_args)).encode()).hexdigest()[:16]
    folder = CACHE / f"{label}-{key}"
    if (folder / ".complete").exists():
        return folder, True
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--quiet",
        "--no-warn-conflicts",
        "--target",
        str(folder / "python"),
        *platform_args,
        *requirements,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        errors = "\n".join(line for line in result.stderr.splitlines() if "is ignored" not in line)
        raise RuntimeError(f"pip install --target failed: {errors[-600:]}")
    (folder / ".complete").write_text("ok")
    return folder, False


def host_layer_label() -> str:
    return f"layer-host-py{sys.version_info[0]}{sys.version_info[1]}"


def requirement_lines() -> list[str]:
    lines = []
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def zipped_size(site: Path) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(site.rglob("*")):
            if file.is_file():
                archive.write(file, "python/" + str(file.relative_to(site)))
    return buffer.tell()


def built_layer(workdir: Path, layer_dir: Path = LAYER_DIR) -> Path:
    """The layer's python/ folder as `sam build` makes it from layer_dir's Makefile (which drops what the
    runtime provides); another tree's layers/sommelier builds that tree's layer."""
    target = workdir / "layer-arm64"
    shutil.rmtree(target, ignore_errors=True)
    command = ["make", "-s", "-C", str(layer_dir), "build-SommelierLayer", f"ARTIFACTS_DIR={target}"]
    command += ["LAYER_ARCH=arm64", "RDS_CA_BUNDLE_URL=", f"PYTHON={python312()}"]  # the one `make sam-test` uses
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise RuntimeError(f"building the layer failed: {result.stderr[-600:]}")
    return target / "python"


def largest_packages(root: Path, limit: int = 8) -> list[dict[str, float]]:
    sizes = []
    for entry in root.iterdir():
        if entry.name.endswith(".dist-info") or entry.name in ("bin", "__pycache__"):
            continue
        size = tree_size(entry) if entry.is_dir() else entry.stat().st_size
        sizes.append((entry.name, size))
    sizes.sort(key=lambda item: -item[1])
    return [{"package": name, "mb": round(size / MB, 2)} for name, size in sizes[:limit]]


_IMPORT_CHECK = r"""
import sys, importlib.util
sys.path[:0] = sys.argv[3:] + [sys.argv[2]]
spec = importlib.util.spec_from_file_location("handler_under_test", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("IMPORT_OK")
"""


def boto3_folder(workdir: Path) -> Path:
    """A folder with only boto3 and its dependencies (the Lambda runtime ships them), as symlinks."""
    import boto3
    import botocore
    import dateutil
    import jmespath
    import s3transfer
    import six
    import urllib3

    folder = workdir / "lambda-runtime-packages"
    folder.mkdir(parents=True, exist_ok=True)
    for module in (boto3, botocore, dateutil, jmespath, s3transfer, urllib3):
        source = Path(module.__file__).resolve().parent
        link = folder / source.name
        if not link.exists():
            link.symlink_to(source, target_is_directory=True)
    six_file = Path(six.__file__).resolve()
    if not (folder / six_file.name).exists():
        (folder / six_file.name).symlink_to(six_file)
    return folder


def import_check(layer: Path, workdir: Path) -> dict[str, str]:
    """handler → "ok" or the error, importing with only the layer (+ boto3) on the path."""
    results = {}
    extra = [str(layer), str(PACKAGE.parent), str(boto3_folder(workdir))]
    for handler in sorted(FUNCTIONS.glob("*/*.py")):
        label = f"{handler.parent.name}/{handler.name}"
        # -I: no user site, no PYTHONPATH; -S: no site-packages (only the stdlib and what we add)
        command = [sys.executable, "-I", "-S", "-c", _IMPORT_CHECK, str(handler), str(handler.parent), *extra]
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": os.environ.get("PATH", ""), "AWS_DEFAULT_REGION": "eu-central-1"},
        )
        if "IMPORT_OK" in result.stdout:
            results[label] = "ok"
        else:
            last = [line for line in result.stderr.strip().splitlines() if line.strip()]
            results[label] = last[-1][:200] if last else f"exit {result.returncode}"
    return results


def run(ctx: Context) -> list[Figure]:
    figures: list[Figure] = []
    requirements = requirement_lines()
    site = built_layer(ctx.workdir)
    unzipped = tree_size(site)
    unzipped_no_pyc = tree_size(site, bytecode=False)
    details = {
        "built_by": "layers/sommelier/Makefile, LAYER_ARCH=arm64",
        "largest_packages": largest_packages(site),
        "sommelier_package_mb": round(tree_size(site / "sommelier", bytecode=False) / MB, 3),
        "requirements": requirements,
    }
    figures.append(
        figure(
            NAME,
            "layer unzipped (as layers/sommelier/Makefile builds it, arm64)",
            "MB",
            [unzipped / MB],
            at_most=LAYER_TARGET_MB,
            details=details,
        )
    )
    figures.append(figure(NAME, "layer unzipped without .pyc", "MB", [unzipped_no_pyc / MB]))
    if not ctx.quick:
        figures.append(figure(NAME, "layer zipped (deflate)", "MB", [zipped_size(site) / MB]))
    log(f"sizes: layer {unzipped / MB:.1f} MB unzipped ({unzipped_no_pyc / MB:.1f} MB without .pyc)")

    host_layer, _ = pip_target(requirements, (), host_layer_label())
    checks = import_check(host_layer / "python", ctx.workdir)
    failed = {k: v for k, v in checks.items() if v != "ok"}
    figures.append(
        figure(
            NAME,
            "handlers importable from the layer alone (+ boto3)",
            "handlers",
            [len(checks) - len(failed)],
            at_least=len(checks),
            details={"results": checks},
        )
    )
    for handler, error in failed.items():
        ctx.note(NAME, f"{handler} does not import from the layer alone: {error}")
        log(f"[yellow]sizes: {handler} does not import from the layer alone: {error}[/yellow]")

    for folder in sorted(p for p in FUNCTIONS.iterdir() if p.is_dir()):
        figures.append(
            figure(NAME, f"function folder {folder.name}/", "KB", [tree_size(folder, bytecode=False) / 1024])
        )
    return figures
