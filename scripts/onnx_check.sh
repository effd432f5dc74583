#!/usr/bin/env bash
# Checks exported ONNX graphs with ONNX Runtime: fits small models of each
# exportable kind, exports them, and compares ONNX Runtime's predictions with
# rfm's (labels equal, probabilities and values to 1e-5 relative).
# Installs Node.js (apt-get, as root) when missing and onnxruntime-node from
# npm into a cache folder (RFM_CACHE, default ~/.cache/rfm). Sourced setup.sh
# first (RFM_TAGS). Usage: scripts/onnx_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${RFM_TAGS+x}" ]; then
  source scripts/setup.sh
fi

ORT_VERSION=1.30.0
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "onnx check: installing Node.js and npm with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "onnx check: Node.js and npm are needed (to run ONNX Runtime); install them and retry" >&2
    exit 1
  fi
fi
cache=${RFM_CACHE:-$HOME/.cache/rfm}/onnxruntime-node-$ORT_VERSION
if [ ! -f "$cache/node_modules/onnxruntime-node/package.json" ]; then
  echo "onnx check: installing onnxruntime-node $ORT_VERSION from npm into $cache" >&2
  mkdir -p "$cache"
  # --ignore-scripts: the CPU runtime is in the package; its install script
  # only fetches optional GPU providers from a host outside the npm registry.
  ok=0
  for attempt in 1 2 3; do # a registry hiccup should not fail the suite
    if (cd "$cache" && npm install --silent --no-audit --no-fund --ignore-scripts "onnxruntime-node@$ORT_VERSION" >/dev/null); then
      ok=1
      break
    fi
    echo "onnx check: npm install failed (attempt $attempt of 3)" >&2
    sleep $((attempt * 5))
  done
  if [ "$ok" != 1 ]; then
    echo "onnx check: could not install onnxruntime-node $ORT_VERSION from the npm registry" >&2
    exit 1
  fi
fi
go run ${RFM_TAGS:+-tags "$RFM_TAGS"} ./onnx/internal/onnxcheck --script scripts/onnx_check.js --node-modules "$cache/node_modules"
