# Two commands do all the set-up (README): `make chat` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

LOCK := layers/sommelier/requirements.lock
# A shell with PYTHONDONTWRITEBYTECODE set would make every run compile the venv and rewrite every test
# module again (pytest caches its rewritten tests as bytecode): 61 s → 54 s for `make test-fast` here.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install chat dev-up dev-down test test-fast test-local lint bench eval clean lock sam-test audit

$(STAMP): pyproject.toml layers/sommelier/requirements.txt $(LOCK) scripts/bootstrap.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/bootstrap.sh
	touch $(STAMP)

install: $(STAMP)

# Creates the venv, installs, starts the embedded PostgreSQL, migrates, seeds, opens the chat.
chat: $(STAMP)
	@$(BIN)/sommelier dev up
	@$(BIN)/sommelier chat

dev-up: $(STAMP)
	$(BIN)/sommelier dev up

dev-down: $(STAMP)
	$(BIN)/sommelier dev down

# The full test suite; .ci/run calls exactly this.
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal

# The loop while you work: the service logic on the in-memory ports, on every core. No database, no
# container, no socket to a stand-in, no analyser of the whole tree (the markers: tests/conftest.py).
# tests/e2e and tests/hardening are bots over sockets throughout: not even collected.
FAST := not database and not sockets and not gate and not slow
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "$(FAST)" --ignore=tests/e2e --ignore=tests/hardening -q -n auto --dist worksteal

# Everything but the database and the containers: the fast loop, the bots over real sockets, the analysers.
test-local: $(STAMP)
	$(BIN)/python -m pytest -m "not database" -q -n auto --dist worksteal

# The analysers: ruff, mypy strict, import-linter, complexity and size, cfn-lint, checkov, bandit, the layer's imports.
lint: $(STAMP)
	$(BIN)/python -m pytest -m gate -q -n auto --dist worksteal

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(QUICK),--quick,)

eval: $(STAMP)
	$(BIN)/sommelier eval

# `sam validate --lint`, `sam build` and `sam local` for real: every function invoked on its events/
# sample and an end-to-end run (start-api -> local SQS -> agent -> tools via start-lambda -> fake Bot
# API), in podman with a locally built Lambda image (scripts/sam_test.py; README "make sam-test").
SAM_VENV := .sam-venv
SAM_CLI_VERSION := 1.170.0
SAM_STAMP := $(SAM_VENV)/.aws-sam-cli-$(SAM_CLI_VERSION)

$(SAM_STAMP):
	rm -rf $(SAM_VENV)
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check "aws-sam-cli==$(SAM_CLI_VERSION)" \
		2> >(grep -v '^WARNING: Location' >&2)
	touch $(SAM_STAMP)

sam-test: $(STAMP) $(SAM_STAMP)
	$(BIN)/python scripts/sam_test.py

# One lock for the venv and the Lambda layer: every version of pyproject.toml (with the dev extra) and
# of the layer's requirements.txt, resolved for Python 3.11+ on every platform (markers). The venv's
# installed versions (what the tests ran with) are the preferred ones: uv keeps the versions of the
# file it writes when they fit, so the lock only moves where a dependency was added or bumped.
# A few seconds; re-run after `pip install` of a new dependency, then commit the lock.
lock: $(STAMP)
	cp $(LOCK) $(LOCK).previous 2>/dev/null || true
	$(BIN)/python -m pip freeze --exclude-editable --disable-pip-version-check > $(LOCK)
	$(BIN)/uv pip compile pyproject.toml layers/sommelier/requirements.txt --extra dev --universal \
		--python-version 3.11 --custom-compile-command "make lock" --quiet -o $(LOCK) \
		|| { mv $(LOCK).previous $(LOCK); exit 1; }
	rm -f $(LOCK).previous

# Every pin of the lock against the public advisories (pip-audit): "NOT CHECKED" and exit 2 where no
# advisory source answers (these machines reach only the package registries). RELIABILITY.md, Dependencies.
audit: $(STAMP)
	$(BIN)/python -m sommelier_dev.devtools.audit $(LOCK)

clean:
	rm -rf $(VENV) $(SAM_VENV) .pytest_cache .aws-sam
