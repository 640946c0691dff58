#!/usr/bin/env bash
# Gets a real kube-apiserver and etcd for the real-server tier (npm run test:e2e) through setup-envtest, the tool of
# controller-runtime's envtest, and prints the folder holding them: the tests read it from VC_KUBE_ASSETS.
#   export VC_KUBE_ASSETS=$(scripts/fetch-kube-assets.sh)          # the newest Kubernetes envtest has
#   export VC_KUBE_ASSETS=$(scripts/fetch-kube-assets.sh 1.24.x)   # the oldest it has (envtest has nothing before 1.24)
# Usage: scripts/fetch-kube-assets.sh [VERSION] [DIR]   (DIR default ${XDG_CACHE_HOME:-~/.cache}/vc/envtest)
# Needs internet access and either setup-envtest on PATH or Go to install it (SETUP_ENVTEST_VERSION picks its version,
# default latest).
set -euo pipefail

version=${1:-}
dir=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/vc/envtest}
mkdir -p "$dir"

tool=$(command -v setup-envtest || true)
if [ -z "$tool" ]; then
  command -v go >/dev/null || { echo "fetch-kube-assets: needs setup-envtest on PATH or Go to install it (https://go.dev/dl/)" >&2; exit 2; }
  echo "installing setup-envtest@${SETUP_ENVTEST_VERSION:-latest} into $dir/bin" >&2
  GOBIN="$dir/bin" go install "sigs.k8s.io/controller-runtime/tools/setup-envtest@${SETUP_ENVTEST_VERSION:-latest}"
  tool="$dir/bin/setup-envtest"
fi

# `use` downloads (once) and prints the folder of kube-apiserver, etcd and kubectl for the version asked, or the newest.
assets=$("$tool" use ${version:+"$version"} --bin-dir "$dir" -p path)
for binary in kube-apiserver etcd; do
  [ -x "$assets/$binary" ] || { echo "fetch-kube-assets: $assets has no $binary" >&2; exit 1; }
done
echo "$("$assets/kube-apiserver" --version) in $assets" >&2
echo "$assets"
