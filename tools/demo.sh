#!/usr/bin/env bash
# What `tools/dev.sh demo` shows, from a build folder: a story from the built-in model with its
# timing, what the cost analyzer says of the same model before anything runs, and the run's
# own profile with the predicted time beside the measured one.
#   tools/demo.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=${1:-build}
run=$build/tools/engine-run/engine-run
cost=$build/tools/engine-cost/engine-cost
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

section() { printf '\n== %s ==\n\n' "$1"; }

section "engine-run: a story from the built-in model (stories260K.gguf, a real 260K-parameter llama trained on TinyStories)"
"$run" -p "Once upon a time" -n 100 --temp 0 -t 2 --profile --profile-out "$scratch/profile.txt"

section "engine-cost: what one decode step of the same model costs, before anything runs"
"$cost" --past 100 >"$scratch/cost.txt"
# The module tree has a row per block of every layer: its first rows stand for the rest.
awk '/^Module /{tree=1; shown=0} tree && !NF{tree=0; print "(... one row per block of every layer)\n"}
     !tree || shown++ < 10' "$scratch/cost.txt"

section "engine-cost --trace: the dataflow trace of the same step (its first 40 lines)"
"$cost" --past 100 --trace >"$scratch/trace.txt"
head -n 40 "$scratch/trace.txt"

section "engine-run --profile: the story's decode steps, predicted (roofline of this CPU, measured on the spot) beside measured"
awk '/^=== decode/{decode=1; print; next} decode && /^(Predicted vs measured|Peak Memory)/{show=1} decode && show' \
  "$scratch/profile.txt"
