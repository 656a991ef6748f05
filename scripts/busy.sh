#!/usr/bin/env bash
# Run a command on a busy machine, as CI's shared 2-core runner often is:
#   scripts/busy.sh N CMD [ARGS...]      e.g.  scripts/busy.sh 6 ./run.sh test
# starts N processes that each keep one core busy, runs CMD, then stops them and exits with CMD's status.
# The busy processes end with CMD (or on Ctrl-C / kill), and on their own after BUSY_LIMIT seconds (default
# 7200) should this script itself be killed with SIGKILL, so none is ever left spinning.
set -uo pipefail

usage() { echo "usage: scripts/busy.sh N CMD [ARGS...]  (N busy processes, 0-64, for the length of CMD)" >&2; exit 2; }
[ $# -ge 2 ] || usage
n=$1; shift
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -le 64 ] || usage
limit=${BUSY_LIMIT:-7200}
[[ "$limit" =~ ^[0-9]+$ ]] && [ "$limit" -gt 0 ] || { echo "BUSY_LIMIT must be a number of seconds" >&2; exit 2; }

pids=()
stop() {
  [ ${#pids[@]} -eq 0 ] && return
  kill "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  pids=()
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM

# Each busy process is this script's own child and stops itself (bash's SECONDS, no fork): killing it leaves
# nothing behind. Under `timeout`, a kill landing between its fork and its bookkeeping orphaned a spinning child.
for _ in $(seq 1 "$n"); do
  bash -c "while (( SECONDS < $limit )); do :; done" &
  pids+=($!)
done
echo "busy.sh: $n busy processes beside: $*" >&2
"$@"
status=$?
stop
exit $status
