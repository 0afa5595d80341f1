#!/usr/bin/env bash
# The project's entry points on a fresh Debian 12 machine:
#   tools/dev.sh demo   install what is missing, build, synthesize a small model, generate text with it
#   tools/dev.sh test   install what is missing, build (tests include an ASan/UBSan engine-run), run every test
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc)

build() {  # build DIR [cmake args...]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

bash tools/setup.sh
case "${1:-}" in
  demo)
    build build -DCMAKE_BUILD_TYPE=Release
    mkdir -p build/models
    ./build/tools/engine-gguf/engine-gguf synth --out build/models/demo-llama-q8_0.gguf --type q8_0
    ./build/tools/engine-run/engine-run -m build/models/demo-llama-q8_0.gguf -p "Once upon a time" -n 32 --temp 0
    ;;
  test)
    build build -DCMAKE_BUILD_TYPE=Release -DENGINE_WERROR=ON
    ctest --test-dir build --output-on-failure -j "$jobs"
    ;;
  *)
    echo "usage: tools/dev.sh demo|test" >&2
    exit 2
    ;;
esac
