#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine needs to build and test fuser:
# the compiler, CMake, Ninja, ccache, GoogleTest/GoogleMock, Google
# Benchmark, fmt (apt), torch 2.11.0, pytest, pytest-xdist, numpy and lightning-thunder
# 0.2.6 (pip), and the Python headers when
# the interpreter lacks them (python3-dev). Idempotent: prints nothing
# when everything is already there. The CUDA toolkit (nvcc, NVRTC) is expected
# to be installed already.
set -euo pipefail

TORCH_VERSION="2.11.0"
THUNDER_VERSION="0.2.6"
APT_PACKAGES=(g++ cmake ninja-build ccache libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev)
PYTHON="${FUSER_PYTHON:-python3}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "setup.sh: need root (or sudo) to run: $*" >&2
    exit 1
  fi
}

# --- Debian packages -------------------------------------------------------
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# --- Python packages -------------------------------------------------------
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "setup.sh: $PYTHON not found; install Python 3 first" >&2
  exit 1
fi

pip_install() {
  if [ "$(id -u)" -eq 0 ] || [ -n "${VIRTUAL_ENV:-}" ] || [ -w "$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" ]; then
    "$PYTHON" -m pip install -q --root-user-action=ignore "$@"
  else
    "$PYTHON" -m pip install -q --user "$@"
  fi
}

# (The version is read from the package metadata: importing torch takes seconds.)
if ! "$PYTHON" -c "import importlib.metadata as m; assert m.version('torch').startswith('${TORCH_VERSION}')" >/dev/null 2>&1; then
  echo "setup.sh: installing torch==${TORCH_VERSION} (large download)"
  pip_install "torch==${TORCH_VERSION}"
fi

py_missing=()
"$PYTHON" -c "import pytest" >/dev/null 2>&1 || py_missing+=(pytest)
"$PYTHON" -c "import xdist" >/dev/null 2>&1 || py_missing+=(pytest-xdist)
"$PYTHON" -c "import numpy" >/dev/null 2>&1 || py_missing+=(numpy)
# Lightning Thunder, the frontend whose nvFuser executor runs on fuser
# (doc/thunder.md): the tests check its registration and its fusion
# definitions without a GPU.
"$PYTHON" -c "import importlib.metadata as m; assert m.version('lightning-thunder') == '${THUNDER_VERSION}'" \
  >/dev/null 2>&1 || py_missing+=("lightning-thunder==${THUNDER_VERSION}")
if [ "${#py_missing[@]}" -gt 0 ]; then
  echo "setup.sh: installing ${py_missing[*]}"
  pip_install "${py_missing[@]}"
fi

# --- Python headers (for the extension fuser._C; pybind11 comes with torch) --
py_include="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || true)"
if [ -n "$py_include" ] && [ ! -f "$py_include/Python.h" ]; then
  py_exe="$("$PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null || true)"
  case "$py_exe" in
    /usr/bin/*)  # Debian's own Python: its headers are a package
      echo "setup.sh: installing python3-dev"
      as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        python3-dev >/dev/null
      ;;
    *)
      echo "setup.sh: warning: $PYTHON has no Python.h under $py_include; the Python" \
        "extension (python/) will not be built" >&2
      ;;
  esac
fi

# --- CUDA toolkit (not installed here; only checked) -----------------------
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDACXX:-}" ]; then
  echo "setup.sh: warning: nvcc not found; torch's CMake config needs the CUDA toolkit (set CUDACXX or add it to PATH)" >&2
fi
