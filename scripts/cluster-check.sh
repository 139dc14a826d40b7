#!/bin/sh
# Applies the Job that `servebench kube job` prints to a real Kubernetes
# control plane on this machine and runs it: etcd, kube-apiserver,
# kube-controller-manager (the Job controller) and kube-scheduler, built
# from their published Go modules, with kubectl of the same release; the
# one node's kubelet is stood in for by the test (TestKubeJobOnACluster),
# which runs the pods bound to it chrooted, as TestKubeJobRunsInAScratchImage
# runs them. Needs root (the pods' users, a bind mount) and openssl;
# everything listens on loopback only. docs/DISTRIBUTED.md.
#
#   scripts/cluster-check.sh            # build once (about 15 min on 2 cores), start, test, stop
#
# Environment: SB_K8S_VERSION (default v1.37.2; its staging modules are
# v0.MINOR.PATCH), SB_ETCD_VERSION (default v3.7.0), SB_CLUSTER_CACHE (the
# binaries, default .cache/cluster), SB_CLUSTER_KEEP=1 leaves the control
# plane running after the test (its kubeconfig is printed).
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)

k8s=${SB_K8S_VERSION:-v1.37.2}
etcdv=${SB_ETCD_VERSION:-v3.7.0}
cache=${SB_CLUSTER_CACHE:-$repo/.cache/cluster}
bin=$cache/$k8s
staging=v0.${k8s#v1.}

[ "$(id -u)" = 0 ] || { echo "cluster-check: run as root: the stand-in kubelet runs pods as their users" >&2; exit 1; }
command -v openssl >/dev/null || { echo "cluster-check: needs openssl for the service-account key" >&2; exit 1; }

# Build: k8s.io/kubernetes is not installable with go install (its go.mod
# replaces the staging modules with directories), so a module of its own
# requires it and points each staging module at its published release.
if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/etcd" ]; then
	src=$cache/src-$k8s
	mkdir -p "$src" "$bin"
	gomod=$(go mod download -json "k8s.io/kubernetes@$k8s" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
	{
		printf 'module clustercheck\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n' "$k8s"
		sed -n 's/^[[:space:]]*\(k8s\.io\/[^ ]*\) => \.\/staging.*/\1/p' "$gomod" |
			while read -r m; do printf 'replace %s => %s %s\n' "$m" "$m" "$staging"; done
	} >"$src/go.mod"
	cat >"$src/tools.go" <<-'EOF'
	//go:build tools

	package clustercheck

	import (
		_ "go.etcd.io/etcd/server/v3/etcdmain"
		_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
		_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
		_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
		_ "k8s.io/kubernetes/cmd/kubectl"
	)
	EOF
	(cd "$src" && go get "go.etcd.io/etcd/server/v3@$etcdv" && go mod tidy &&
		echo "cluster-check: building Kubernetes $k8s and etcd $etcdv into $bin" >&2 &&
		go build -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=$k8s" -o "$bin/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
			k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl &&
		go build -trimpath -o "$bin/etcd" go.etcd.io/etcd/server/v3)
fi

dir=$(mktemp -d)
pids=""
stop() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	sleep 2
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$dir"
}
if [ "${SB_CLUSTER_KEEP:-}" != 1 ]; then trap stop EXIT; fi
start() { # name, command...
	name=$1; shift
	"$@" >"$dir/$name.log" 2>&1 &
	pids="$pids $!"
}
waitfor() { # what, command...
	what=$1; shift
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 120 ]; then
			echo "cluster-check: $what did not come up in 60 s; its log:" >&2
			tail -30 "$dir/$what.log" >&2
			exit 1
		fi
		sleep 0.5
	done
}

openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
echo "$token,admin,admin,system:masters" >"$dir/tokens.csv"
cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: check, cluster: {server: "https://127.0.0.1:16443", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: check, context: {cluster: check, user: admin, namespace: default}}]
current-context: check
EOF

start etcd "$bin/etcd" --data-dir "$dir/etcd" --listen-client-urls http://127.0.0.1:23790 \
	--advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
	--initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster default=http://127.0.0.1:23800
start kube-apiserver "$bin/kube-apiserver" --etcd-servers http://127.0.0.1:23790 \
	--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port 16443 --cert-dir "$dir/certs" \
	--token-auth-file "$dir/tokens.csv" --authorization-mode RBAC \
	--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/sa.pub" \
	--service-account-signing-key-file "$dir/sa.key" --service-cluster-ip-range 10.96.0.0/24 \
	--endpoint-reconciler-type none
waitfor kube-apiserver "$bin/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /readyz
start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$dir/kubeconfig" \
	--controllers job-controller,node-lifecycle-controller,persistentvolume-binder-controller,serviceaccount-controller,namespace-controller,garbage-collector-controller \
	--leader-elect=false --bind-address 127.0.0.1 --secure-port 0
start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$dir/kubeconfig" --leader-elect=false \
	--bind-address 127.0.0.1 --secure-port 0
# Pods need their namespace's default service account, which the
# controller manager creates. Its node lifecycle controller lifts a new
# node's not-ready taint once the node reports Ready, and watches the
# stand-in kubelet's heartbeats (its Lease) as a real kubelet's.
waitfor kube-controller-manager "$bin/kubectl" --kubeconfig "$dir/kubeconfig" get serviceaccount default
echo "cluster-check: $("$bin/kubectl" --kubeconfig "$dir/kubeconfig" version 2>/dev/null | tr '\n' ' ')" >&2

status=0
SB_KUBECONFIG=$dir/kubeconfig SB_KUBECTL=$bin/kubectl \
	go test ./cmd/servebench -run '^TestKubeJobOnACluster$' -count=1 -v || status=$?
if [ $status != 0 ]; then
	for l in "$dir"/kube-controller-manager.log "$dir"/kube-scheduler.log; do
		echo "cluster-check: the end of $l:" >&2
		tail -20 "$l" >&2
	done
fi
if [ "${SB_CLUSTER_KEEP:-}" = 1 ]; then
	echo "cluster-check: the control plane keeps running: KUBECONFIG=$dir/kubeconfig $bin/kubectl get pods -A" >&2
fi
exit $status
