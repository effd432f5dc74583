#!/usr/bin/env bash
# Sourced by demo.sh and test.sh: makes sure Go is there and picks the
# linear-algebra backend. As root on Debian/Ubuntu it installs OpenBLAS and
# LAPACKE (the fast backend); otherwise it falls back to the pure-Go build
# and says so. Exports RFM_TAGS ("openblas" or "").
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not on PATH; install Go 1.26 or newer (https://go.dev/dl) and retry" >&2
  exit 1
fi

have_openblas() {
  [ -f /usr/include/x86_64-linux-gnu/cblas.h ] || [ -f /usr/include/cblas.h ] || [ -f /usr/include/openblas/cblas.h ]
}
have_lapacke() { [ -f /usr/include/lapacke.h ]; }

if ! { have_openblas && have_lapacke; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing OpenBLAS and LAPACKE with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq libopenblas-dev liblapacke-dev gcc >/dev/null
  fi
fi

if have_openblas && have_lapacke && command -v gcc >/dev/null 2>&1; then
  export RFM_TAGS=openblas
  export CGO_ENABLED=1
else
  if [ "${RFM_REQUIRE_OPENBLAS:-}" = 1 ]; then
    echo "setup: OpenBLAS/LAPACKE could not be installed, and RFM_REQUIRE_OPENBLAS=1 (CI tests both backends): install libopenblas-dev and liblapacke-dev" >&2
    exit 1
  fi
  export RFM_TAGS=
  echo "setup: NOTICE: OpenBLAS/LAPACKE not available (not root, or no apt-get): using the pure-Go backend, about 10x slower on large fits" >&2
fi
