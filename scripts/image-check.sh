#!/bin/sh
# Builds the Dockerfile's image with a container engine and runs the Job
# that `servebench kube job` prints in it: three workers as the Job's pods
# (their user, fsGroup, volume and expanded arguments) against a scripted
# server on loopback, merged into one run (TestKubeJobRunsInAScratchImage
# with SB_IMAGE set). Needs root and podman or docker; docs/DISTRIBUTED.md.
#
#   scripts/image-check.sh                  # build servebench:check, run the Job
#   scripts/image-check.sh --standin-builder
#
# --standin-builder is for a machine that cannot pull the Dockerfile's
# builder (golang:1.26): it imports one made of this machine's Go toolchain,
# a static busybox for the build's shell, and the CA bundle, under that
# name. The image's own stage (FROM scratch) is the Dockerfile's either way.
#
# Environment: SB_CONTAINER, the engine command (default podman, else
# docker); SB_CONTAINER_FLAGS, flags added to each build and run (for
# example --ulimit nofile=N:N where the engine's default limits are above
# the machine's); SB_IMAGE, the image's name (default servebench:check).
set -eu
cd "$(dirname "$0")/.."

engine=${SB_CONTAINER:-}
if [ -z "$engine" ]; then
	for e in podman docker; do
		if command -v "$e" >/dev/null; then engine=$e; break; fi
	done
fi
[ -n "$engine" ] || { echo "image-check: no container engine: install podman or docker, or set SB_CONTAINER" >&2; exit 1; }
flags=${SB_CONTAINER_FLAGS:-}
image=${SB_IMAGE:-servebench:check}
builder=$(sed -n 's/^FROM \([^ ]*\) AS build$/\1/p' Dockerfile)
[ -n "$builder" ] || { echo "image-check: the Dockerfile names no build stage (FROM IMAGE AS build)" >&2; exit 1; }

if [ "${1:-}" = "--standin-builder" ]; then
	bb=$(command -v busybox || true)
	[ -n "$bb" ] && ! ldd "$bb" >/dev/null 2>&1 || {
		echo "image-check: --standin-builder needs a static busybox for the build's shell (Debian: apt-get install busybox-static)" >&2; exit 1; }
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT
	mkdir -p "$root/usr/local" "$root/bin" "$root/tmp" "$root/go" "$root/root" "$root/etc/ssl/certs"
	chmod 1777 "$root/tmp"
	cp -a "$(go env GOROOT)" "$root/usr/local/go"
	cp "$bb" "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	echo "image-check: importing a stand-in for $builder: $(go version) from this machine" >&2
	# shellcheck disable=SC2086 # $engine may carry the engine's own flags
	tar -C "$root" -c . | $engine import \
		--change "ENV PATH=/go/bin:/usr/local/go/bin:/bin" --change "ENV GOPATH=/go" \
		--change "ENV GOTOOLCHAIN=local" --change "ENV HOME=/root" --change "WORKDIR /go" \
		- "$builder" >/dev/null
fi

# The build shares this machine's network, so that the builder reaches the
# module proxy the way go does here.
# shellcheck disable=SC2086
$engine build --network host $flags -t "$image" .
SB_IMAGE=$image SB_CONTAINER=$engine SB_CONTAINER_FLAGS=$flags \
	go test ./cmd/servebench -run '^TestKubeJobRunsInAScratchImage$' -count=1 -v
