#!/usr/bin/env bash
# Starts Ollama (built by ollama-install.sh) on a loopback port with
# servebench's random-weight test model, loaded and ready.
#
# Prints, on stdout, lines a shell can source (also written to $STATE/env):
#   SB_OLLAMA_URL=http://127.0.0.1:11435
#   SB_OLLAMA_MODEL=sbtest
#
# Environment:
#   SB_OLLAMA_STATE        state directory (default .cache/ollama in the repo)
#   SB_OLLAMA_HOST         host:port to listen on (default 127.0.0.1:11435; if
#                          that port is taken, the next free one up to +100)
#   SB_OLLAMA_MODEL        model name to create (default sbtest)
#   SB_OLLAMA_WAIT         seconds to wait for the server and the model (default 60)
#   SB_MKGGUF_FLAGS        extra flags for cmd/mkgguf (model size; default none)
#   SB_OLLAMA_NUM_THREAD   CPU threads per model (Modelfile num_thread; default:
#                          Ollama's choice, the physical cores)
#   OLLAMA_NUM_PARALLEL    slots per model (default 4)
#   OLLAMA_CONTEXT_LENGTH  context per request, num_ctx (Ollama's default if unset)
# Logs: $STATE/serve.log (the server, with llama.cpp's KV-cache lines).
set -euo pipefail
cd "$(dirname "$0")/.."

STATE="${SB_OLLAMA_STATE:-.cache/ollama}"
mkdir -p "$STATE"
STATE="$(cd "$STATE" && pwd)"
BIN="$STATE/bin/ollama"
LOG="$STATE/serve.log"
PIDFILE="$STATE/serve.pid"
MODEL="${SB_OLLAMA_MODEL:-sbtest}"
WAIT="${SB_OLLAMA_WAIT:-60}"
export OLLAMA_NUM_PARALLEL="${OLLAMA_NUM_PARALLEL:-4}"

log() { echo "ollama-start: $*" >&2; }
fail() {
	log "FAILED: $*"
	# The log and the process are ours only once this script started them.
	if [[ -n "${pid:-}" ]]; then
		log "last lines of $LOG:"
		tail -n 40 "$LOG" >&2
		kill -TERM -- "-$pid" 2>/dev/null || true
		rm -f "$PIDFILE"
	fi
	exit 1
}
listening() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

[[ -x "$BIN" ]] || fail "$BIN not found; run scripts/ollama-install.sh first"
if [[ -s "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
	fail "already running (pid $(cat "$PIDFILE")); stop it with scripts/ollama-stop.sh"
fi

want="${SB_OLLAMA_HOST:-127.0.0.1:11435}"
host="${want%:*}"
port="${want##*:}"
if [[ -z "${SB_OLLAMA_HOST:-}" ]]; then
	for ((p = port; p <= port + 100; p++)); do
		listening "$host" "$p" || break
	done
	((p <= port + 100)) || fail "no free port in $host:$port..$((port + 100))"
	port=$p
elif listening "$host" "$port"; then
	fail "$host:$port is already in use (SB_OLLAMA_HOST)"
fi
url="http://$host:$port"

start=$SECONDS
# Written every time (a second; the same flags give the same bytes), so a
# change to the model's code or flags is never hidden by an old file.
# shellcheck disable=SC2086 # SB_MKGGUF_FLAGS is a list of flags
go run ./cmd/mkgguf -o "$STATE/model.gguf" ${SB_MKGGUF_FLAGS:-} >&2 || fail "mkgguf"
printf 'FROM ./model.gguf\n' >"$STATE/Modelfile"
if [[ -n "${SB_OLLAMA_NUM_THREAD:-}" ]]; then
	printf 'PARAMETER num_thread %d\n' "$SB_OLLAMA_NUM_THREAD" >>"$STATE/Modelfile"
fi

# setsid: the server leads its own process group, so ollama-stop.sh can
# end it with its runner subprocesses.
mkdir -p "$STATE/models"
OLLAMA_HOST="$host:$port" OLLAMA_MODELS="$STATE/models" OLLAMA_KEEP_ALIVE=-1 \
	setsid "$BIN" serve >"$LOG" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$PIDFILE"
log "pid $pid, $url, log $LOG, OLLAMA_NUM_PARALLEL=$OLLAMA_NUM_PARALLEL"

deadline=$((SECONDS + WAIT))
until curl -fsS --max-time 2 "$url/api/version" >/dev/null 2>&1; do
	kill -0 "$pid" 2>/dev/null || fail "ollama serve exited"
	((SECONDS < deadline)) || fail "no answer on $url/api/version within ${WAIT}s"
	sleep 0.2
done

OLLAMA_HOST="$host:$port" "$BIN" create "$MODEL" -f "$STATE/Modelfile" >>"$LOG" 2>&1 ||
	fail "ollama create $MODEL"

# An empty generate loads the model and keeps it loaded (keep_alive -1), so
# a benchmark never times a model load, and the KV-cache size is in the log.
curl -fsS --max-time "$WAIT" "$url/api/generate" \
	-d "{\"model\":\"$MODEL\",\"keep_alive\":-1}" >/dev/null 2>>"$LOG" ||
	fail "loading $MODEL"
grep -m1 "llama_kv_cache: size" "$LOG" >&2 || log "warning: no llama_kv_cache line in $LOG"
log "ready in $((SECONDS - start)) s"

printf 'SB_OLLAMA_URL=%s\nSB_OLLAMA_MODEL=%s\n' "$url" "$MODEL" | tee "$STATE/env"
