# Two commands do all the set-up (README): `make chat` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

LOCK := layers/sommelier/requirements.lock

.PHONY: install chat dev-up dev-down test lint bench eval clean lock sam-test

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
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/cfn-lint template.yaml

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(QUICK),--quick,)

eval: $(STAMP)
	$(BIN)/sommelier eval

# One lock for the venv and the Lambda layer: every version of pyproject.toml (with the dev extra) and
# of the layer's requirements.txt, resolved for Python 3.11+ on every platform (markers). A few
# seconds; re-run after adding or bumping a dependency, then `make install`.
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml layers/sommelier/requirements.txt --extra dev --universal \
		--python-version 3.11 --custom-compile-command "make lock" --quiet -o $(LOCK)

clean:
	rm -rf $(VENV) .pytest_cache .aws-sam
