#!/usr/bin/env bash
# Create the virtual environment and install sommelier with its dev extras.
# Works on a fresh Debian/Ubuntu with Python 3.11+: if the venv module is missing
# (Debian ships it separately), it installs python3-venv when it can.
set -euo pipefail
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "sommelier needs Python 3.11 or newer (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    version=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
      echo "installing python${version}-venv (Debian ships venv separately)…"
      apt-get update -qq && (apt-get install -y -qq "python${version}-venv" || apt-get install -y -qq python3-venv)
      "$PYTHON" -m venv "$VENV"
    else
      echo "Python's venv module is missing: run 'sudo apt-get install python3-venv' and try again" >&2
      exit 1
    fi
  fi
fi

pip_install() {
  # This machine's pip.conf names mirror folders that may be absent; those warnings are noise.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@" 2> >(grep -v '^WARNING: Location' >&2)
}
pip_install --upgrade pip
# The versions the tests run with are the ones the Lambda layer ships: both install from the one lock
# (regenerate it with `make lock`).
pip_install -e ".[dev]" -c layers/sommelier/requirements.lock
echo "installed: $("$VENV/bin/python" --version) in $VENV"
