#!/usr/bin/env bash
# install-deps.sh: install every Debian package madlib_dl needs to build and test.
# Safe to run again; does nothing when all packages are present.
set -euo pipefail
PKGS=(
  build-essential pkg-config xz-utils
  postgresql-15 postgresql-server-dev-15 postgresql-contrib
  libopenblas-dev libcmocka-dev libjson-c-dev libdnnl-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev
  libhdf5-dev libzip-dev python3-h5py
  python3-onnx python3-torch
  libipc-run-perl postgresql-15-plproxy
  clang libclang-rt-dev
  dataset-fashion-mnist python3
  sqlsmith
  python3-psycopg2 python3-pandas python3-matplotlib python3-sklearn
  python3-nbclient python3-nbformat python3-ipykernel
  python3-numpy python3-sklearn
  dpkg-dev debhelper postgresql-server-dev-all lintian
)
# Node.js and npm (onnxruntime-node for the interchange step): Debian's,
# unless a Node.js with npm is installed already (e.g. NodeSource's, whose
# nodejs package conflicts with Debian's npm).
command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
