#!/usr/bin/env bash
# Stops the Ollama that ollama-start.sh started: TERM to its process group
# (the server and its runners), then KILL if it has not exited in time.
#
# Environment:
#   SB_OLLAMA_STATE      state directory (default .cache/ollama in the repo)
#   SB_OLLAMA_STOP_WAIT  seconds to wait after TERM (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."

STATE="${SB_OLLAMA_STATE:-.cache/ollama}"
PIDFILE="$STATE/serve.pid"
WAIT="${SB_OLLAMA_STOP_WAIT:-10}"

log() { echo "ollama-stop: $*" >&2; }

if [[ ! -s "$PIDFILE" ]]; then
	log "not running (no $PIDFILE)"
	exit 0
fi
pid="$(cat "$PIDFILE")"
# A stale pid file may name a process that is not ours any more.
if ! kill -0 "$pid" 2>/dev/null || [[ "$(ps -o comm= -p "$pid" 2>/dev/null)" != ollama* ]]; then
	log "pid $pid is not a running ollama; removing $PIDFILE"
	rm -f "$PIDFILE"
	exit 0
fi

kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
for ((i = 0; i < WAIT * 10; i++)); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	log "pid $pid still running after ${WAIT}s; sending KILL"
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
fi
rm -f "$PIDFILE"
log "stopped pid $pid"
