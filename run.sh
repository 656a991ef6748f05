#!/usr/bin/env bash
# One-command set-up for a fresh machine (Python 3.11 with venv).
#   ./run.sh dashboard   install into .venv and start the dashboard on the bundled corpus
#   ./run.sh test        install into .venv (with test tools) and run the whole test suite
#                        (plain `pytest` runs the fast selection: no model, no browser)
#   ./run.sh cli ARGS    run `python -m ragdiag ARGS` inside .venv
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
VENV=.venv

venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
  fi
  local req=$1 stamp="$VENV/.installed-$(basename "$1")"
  # Reinstall only when the requirements changed.
  if [ ! -f "$stamp" ] || ! cmp -s "$req" "$stamp"; then
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -r "$req"
    cp "$req" "$stamp"
  fi
}

case "${1:-}" in
  dashboard)
    shift
    venv requirements.txt
    exec "$VENV/bin/python" -m streamlit run app.py "$@"
    ;;
  test)
    shift
    venv requirements-dev.txt
    if [ -x scripts/browser-deps.sh ]; then scripts/browser-deps.sh; fi
    # -m "" lifts pyproject's fast default selection: everything runs, real model and browser included.
    exec "$VENV/bin/python" -m pytest -m "" "$@"
    ;;
  cli)
    shift
    venv requirements.txt
    exec "$VENV/bin/python" -m ragdiag "$@"
    ;;
  *)
    echo "usage: ./run.sh dashboard | test [pytest args] | cli [ragdiag args]" >&2
    exit 2
    ;;
esac
