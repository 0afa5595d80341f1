#!/usr/bin/env bash
# Installs the library into a temporary prefix and builds docs/example against it with find_package.
set -euo pipefail
build=$1 src=$2 work=$3 gguf=$4
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/docs/example" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$gguf" synth --out "$work/model.gguf" --type q8_0 --layers 2 --embd 64 --ff 128 --heads 4 --kv-heads 2
"$work/build/engine-example" "$work/model.gguf" "Once upon a time" | tee "$work/out.txt"
grep -q "tokens in context" "$work/out.txt"
