#!/usr/bin/env bash
# One-command set-up for a fresh machine (Python 3.11 with venv).
#   ./run.sh dashboard [--corpus DIR] [--truth FILE] [--collection beir:DIR] [--roots DIR:DIR] [--locked] [--no-warm]
#                      [--baseline CONFIG] [--monitor-log FILE]
#                      [--address A]
#                      [--port N]
#                        install into .venv and start the dashboard (default: the bundled corpus, on 127.0.0.1)
#   ./run.sh test        install into .venv (with test tools) and run the whole test suite
#                        (plain `pytest` runs the fast selection: no model, browser, ray or slow tests)
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
    # ragdiag's own options become environment variables; the rest go to streamlit.
    pass=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --corpus) export RAGDIAG_CORPUS="$2"; shift 2 ;;
        --truth) export RAGDIAG_TRUTH="$2"; shift 2 ;;
        --collection) export RAGDIAG_COLLECTION="$2"; shift 2 ;;
        --roots) export RAGDIAG_ROOTS="$2"; shift 2 ;;
        --locked) export RAGDIAG_LOCKED=1; shift ;;
        --no-warm) export RAGDIAG_WARM=0; shift ;;
        --baseline) export RAGDIAG_BASELINE="$2"; shift 2 ;;
        --monitor-log) export RAGDIAG_MONITOR_LOG="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
        --address) pass+=(--server.address "$2"); shift 2 ;;
        --port) pass+=(--server.port "$2"); shift 2 ;;
        *) pass+=("$1"); shift ;;
      esac
    done
    venv requirements.txt
    # streamlit run app.py, with the configured data's evaluation started as the server starts (ui/serve.py)
    exec "$VENV/bin/python" -m ui.serve ${pass[@]+"${pass[@]}"}
    ;;
  test)
    shift
    venv requirements-dev.txt
    if [ -x scripts/browser-deps.sh ]; then scripts/browser-deps.sh; fi
    # -m "" lifts pyproject's fast default selection: everything runs, real model and browser included.
    # Four workers (two per core here), a test file per worker at a time: its module fixtures stay shared. A worker
    # often waits on a server, a browser or Ray; on a busy machine each process gets a share of the cores, so two
    # workers ran the tests of unit/ and pages/ under scripts/busy.sh 6 in 466 s and four in 335 s (108 and 134 s
    # quiet: each worker collects the suite and starts its fixtures). RAGDIAG_TEST_WORKERS=N sets another number.
    exec "$VENV/bin/python" -m pytest -m "" -n "${RAGDIAG_TEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder "$@"
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
