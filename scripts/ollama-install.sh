#!/usr/bin/env bash
# Builds Ollama (CPU only) from its Go module into the state directory, for
# servebench's real-engine test. Idempotent: does nothing when the binary
# there already is the wanted version.
#
# Environment:
#   OLLAMA_VERSION   module version to build (default v0.17.4)
#   SB_OLLAMA_STATE  state directory (default .cache/ollama in the repo)
#   SB_OLLAMA_CFLAGS C/C++ flags for llama.cpp's CPU code (default
#                    -march=x86-64-v3 where the CPU has AVX2, else none)
set -euo pipefail
cd "$(dirname "$0")/.."

OLLAMA_VERSION="${OLLAMA_VERSION:-v0.17.4}"
# The module zip lacks llama.cpp's vendor/ folder; malgo ships the one
# header the cgo build still needs (miniaudio.h).
MALGO_VERSION="v0.11.24"
STATE="${SB_OLLAMA_STATE:-.cache/ollama}"
mkdir -p "$STATE/bin" "$STATE/include/miniaudio"
STATE="$(cd "$STATE" && pwd)"
BIN="$STATE/bin/ollama"

# A plain `go install` compiles ggml's CPU kernels for baseline x86-64
# (SSE2): prompt processing is then many times slower than in Ollama's
# release builds, which pick AVX2 kernels at run time. x86-64-v3 (AVX2, FMA,
# F16C) is what every x86 CI runner of the last decade has.
if [[ -z "${SB_OLLAMA_CFLAGS+set}" ]]; then
	SB_OLLAMA_CFLAGS=""
	if [[ "$(uname -m)" == x86_64 ]] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
		SB_OLLAMA_CFLAGS="-march=x86-64-v3"
	fi
fi
CFLAGS_ALL="-O2${SB_OLLAMA_CFLAGS:+ $SB_OLLAMA_CFLAGS}"

log() { echo "ollama-install: $*" >&2; }

# The version is stamped into the binary (it is what /api/version reports),
# and Go records the C flags it was built with.
if [[ -x "$BIN" ]]; then
	info="$(go version -m "$BIN" 2>/dev/null || true)"
	if grep -qF "version.Version=${OLLAMA_VERSION#v}" <<<"$info" &&
		grep -qxE "[[:space:]]+build[[:space:]]+CGO_CFLAGS=\"?${CFLAGS_ALL}\"?" <<<"$info"; then
		log "$BIN is already $OLLAMA_VERSION (C flags: $CFLAGS_ALL)"
		exit 0
	fi
fi

# Headers the cgo build includes from the system.
missing=()
for pkg in nlohmann-json3-dev libstb-dev; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
	sudo=()
	[[ "$(id -u)" == 0 ]] || sudo=(sudo)
	log "installing ${missing[*]}"
	"${sudo[@]}" apt-get update
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y "${missing[@]}"
fi

# Run module commands outside this repository so its go.mod is untouched.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [[ ! -s "$STATE/include/miniaudio/miniaudio.h" ]]; then
	dir="$(cd "$tmp" && GOWORK=off go mod download -json "github.com/gen2brain/malgo@$MALGO_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
	[[ -n "$dir" && -f "$dir/miniaudio.h" ]] || { log "miniaudio.h not found in malgo $MALGO_VERSION"; exit 1; }
	cp "$dir/miniaudio.h" "$STATE/include/miniaudio/miniaudio.h"
	chmod u+w "$STATE/include/miniaudio/miniaudio.h"
fi

log "building github.com/ollama/ollama@$OLLAMA_VERSION, C flags $CFLAGS_ALL (several minutes the first time)"
start=$SECONDS
(cd "$tmp" && GOWORK=off CGO_ENABLED=1 CGO_CPPFLAGS="-I$STATE/include${CGO_CPPFLAGS:+ $CGO_CPPFLAGS}" \
	CGO_CFLAGS="$CFLAGS_ALL" CGO_CXXFLAGS="$CFLAGS_ALL" GOBIN="$STATE/bin" \
	go install -ldflags="-X=github.com/ollama/ollama/version.Version=${OLLAMA_VERSION#v}" \
		"github.com/ollama/ollama@$OLLAMA_VERSION")
log "built $BIN in $((SECONDS - start)) s"
