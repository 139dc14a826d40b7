#!/usr/bin/env bash
# GPU device check (docs/PERFORMANCE.md, "GPU telemetry against nvidia-smi"), a few minutes:
#   1. while a load runs, NVML's memory, power and temperature against
#      nvidia-smi --query-gpu=memory.used,power.draw,temperature.gpu, with tolerances,
#      and the energy counter against integrated power (TestNVMLAgainstSMI, build tag gpu);
#   2. that load's run directory carries the GPUs: telemetry.jsonl has nvml samples and
#      summary.json has points[].telemetry.gpus with energy_j, and energy_j_per_output_token.
# The load is an engine on this GPU when GPU_CHECK_URL and GPU_CHECK_MODEL are set, else the
# built-in simulator served on a local port (it leaves the GPU idle: the readings are an idle GPU's).
# Usage: scripts/gpu-check.sh            GPU_CHECK_ROUNDS=N (default 20, one a second)
set -uo pipefail
cd "$(dirname "$0")/.."

command -v nvidia-smi >/dev/null || { echo "gpu-check: nvidia-smi not found: run this on a machine with an NVIDIA GPU and its driver" >&2; exit 2; }
nvidia-smi -L || { echo "gpu-check: nvidia-smi lists no GPU" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/servebench" ./cmd/servebench && go test -c -tags gpu -o "$tmp/telemetry.test" ./internal/telemetry ||
	{ echo "gpu-check: build failed (cgo and a C compiler are needed for NVML)" >&2; exit 1; }

# The load runs for longer than the comparison, so every round sees it.
rounds=${GPU_CHECK_ROUNDS:-20}
args=(run --concurrency 4 --out "$tmp/run")
if [ -n "${GPU_CHECK_URL:-}" ]; then
	args+=(--url "$GPU_CHECK_URL" --model "${GPU_CHECK_MODEL:?set GPU_CHECK_MODEL with GPU_CHECK_URL}" --duration "$((rounds * 2 + 15))s")
else
	# The simulator as a server of its own: run's in-process one has no GPU, so it reads none.
	port=${GPU_CHECK_SIM_PORT:-18089}
	"$tmp/servebench" sim --addr "127.0.0.1:$port" --time-scale 10 >"$tmp/sim.txt" 2>&1 &
	sim=$!
	trap 'kill "$sim" 2>/dev/null; rm -rf "$tmp"' EXIT
	sleep 1
	# --duration is model time: at scale 10 a tenth of it passes.
	args+=(--url "http://127.0.0.1:$port" --duration "$(((rounds * 2 + 15) * 10))s")
fi
"$tmp/servebench" "${args[@]}" >"$tmp/run.txt" 2>&1 &
load=$!
sleep 3

fail=0
GPU_CHECK_ROUNDS=$rounds "$tmp/telemetry.test" -test.run 'TestNVMLAgainstSMI$' -test.v || fail=1
wait "$load" || { echo "gpu-check: the load run failed:"; cat "$tmp/run.txt"; fail=1; }

# 2. The run directory: GPU samples, and the per-point GPU summary.
tail -n 4 "$tmp/run.txt"
n=$(grep -c '"instance":"nvml"' "$tmp/run/telemetry.jsonl" 2>/dev/null)
echo "--- run: ${n:-0} NVML samples in telemetry.jsonl"
grep -q '"source":"gpu","instance":"nvml"' "$tmp/run/telemetry.jsonl" 2>/dev/null ||
	{ echo "gpu-check: no NVML samples in telemetry.jsonl"; grep -i 'GPU telemetry' "$tmp/run.txt"; fail=1; }
for field in memory_used_bytes_max energy_j power_w_mean temperature_c_max energy_j_per_output_token; do
	line=$(grep -oE "\"$field\": ?[0-9.e+-]+" "$tmp/run/summary.json" | head -1)
	echo "    ${line:-$field: MISSING}"
	[ -n "$line" ] || fail=1
done
[ "$fail" = 0 ] && echo "gpu-check: PASS" || echo "gpu-check: FAIL"
exit "$fail"
