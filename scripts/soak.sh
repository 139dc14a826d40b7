#!/bin/sh
# Soak: the built servebench against a streaming server in another process
# (TTFT 200 ms, 50 tokens 50 ms apart), 1,000 concurrent streams for the
# duration given (default 10m), with the client's resident memory sampled
# from /proc as it runs. Prints RSS over time and the bytes each completed
# request added after the first third (docs/PERFORMANCE.md, "Soak").
#
#   scripts/soak.sh 10m            # 1,000 streams for 10 minutes
#   scripts/soak.sh 1h 1000 rss.json
set -eu
d=${1:-10m}
streams=${2:-1000}
out=${3:-}
cd "$(dirname "$0")/.."
SERVEBENCH_SOAK=$d SERVEBENCH_SOAK_STREAMS=$streams SERVEBENCH_SOAK_OUT=$out \
	exec go test ./cmd/servebench -count=1 -timeout 0 -v -run '^TestSoakMemoryDoesNotGrowWithRequests$'
