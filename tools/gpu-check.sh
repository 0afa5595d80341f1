#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU: every GPU test, the replay of every shared
# reference and of every synthesized architecture's (tests/data/reference) on each GPU backend,
# the memory test, the cost model calibrated on each GPU backend and its predictions beside
# what 1B-shaped files measure (engine-bench, and per layer under engine-run --profile), and
# engine-bench on Llama-3-8B-shaped Q4_0 and Q4_K files (beside llama.cpp's CUDA backend where a
# llama.cpp source tree is given); the models are synthesized on the spot, each result in one
# summary file.
#
#   tools/gpu-check.sh [OUT_DIR]       build with CUDA (and Vulkan where its loader is installed)
#                                      into build-gpu/, then run every check
#   tools/gpu-check.sh pack [MODEL...] build here for the GPU machine (ENGINE_CUDA_ARCHS, default
#                                      90: H100 / H200) and gather into build-gpu/pack/ what the
#                                      checks need: the tools and tests (stripped), the shared
#                                      libraries they load beyond the C and C++ runtimes, and the
#                                      shared references with their models (MODEL...: only those)
#   tools/gpu-check.sh run [OUT_DIR]   run every check from build-gpu/pack/ (for a GPU machine
#                                      without the build's packages)
#
# OUT_DIR (default build-gpu/gpu-check) receives summary.md and one log per check. Environment:
#   ENGINE_SHARED_DIR  the shared models and references (default ../shared, else build-gpu/pack/shared)
#   LLAMA_CPP          a llama.cpp source tree: built with CUDA beside the project and benchmarked
#                      on the same files, interleaved with the engine
#   LLAMA_BENCH        a llama-bench binary built with CUDA, in place of building LLAMA_CPP's
#   GPU_CHECK_MODELS   where the synthesized models are written (default build-gpu/models)
#   GPU_CHECK_BACKENDS the backends to test (default: cuda and vulkan where they have a GPU device)
#   LLAMA_QUANTIZE     a llama-quantize binary for the 1B Q4_K_M file (default: LLAMA_CPP's; with
#                      neither, the calibration table takes an all-Q4_K file in its place)
#   GPU_CHECK_TIMEOUT  seconds a check may run (default 600)
# Exits non-zero when a check fails; the summary says which.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
build="build-gpu"
mode=check
case "${1:-}" in
  pack | run) mode=$1; shift ;;
esac
out=${1:-$build/gpu-check}
shared=${ENGINE_SHARED_DIR:-}
if [[ -z $shared ]]; then
  if [[ -d ../shared/reference ]]; then shared=../shared; else shared=$build/pack/shared; fi
fi
shared=$(cd "$shared" 2>/dev/null && pwd || echo "$shared")
models=${GPU_CHECK_MODELS:-$build/models}
limit=${GPU_CHECK_TIMEOUT:-600}  # seconds a check may run

configure_and_build() {  # configure_and_build ARCHS
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DENGINE_CUDA_ARCHS="$1" >/dev/null &&
    cmake --build "$build" -j "$(nproc)" --target engine-run engine-bench engine-gguf engine-cost engine-tests
}

pack=$build/pack
tools=(engine-run engine-bench engine-gguf engine-cost)
if [[ $mode == pack ]]; then
  configure_and_build "${ENGINE_CUDA_ARCHS:-90}" || exit 1
  grep -q "CUDA backend: built" <(cmake -S . -B "$build" 2>&1) || { echo "gpu-check pack: no CUDA toolkit here" >&2; exit 1; }
  rm -rf "$pack" && mkdir -p "$pack/bin" "$pack/lib" "$pack/shared/reference" "$pack/shared/models"
  for t in "${tools[@]}"; do cp "$build/tools/$t/$t" "$pack/bin/"; done
  cp "$build/tests/engine-tests" "$pack/bin/"
  strip "$pack"/bin/*
  for bin in "$pack"/bin/*; do
    ldd "$bin" | awk '/=> \// {print $3}' | grep -Ev '/lib(c|m|dl|rt|pthread|gcc_s|stdc\+\+)\.so' | xargs -r cp -Lu -t "$pack/lib"
  done
  for ref in ../shared/reference/*.jsonl; do
    model=$(basename "$ref" .jsonl)
    [[ $# == 0 || " $* " == *" $model "* ]] || continue
    cp "$ref" "$pack/shared/reference/" && cp "../shared/models/$model.gguf" "$pack/shared/models/"
  done
  du -sh "$pack"/*
  exit 0
fi
mkdir -p "$out" "$models"
summary=$out/summary.md
failed=()
note() { echo "$*" | tee -a "$summary"; }
# check NAME COMMAND...: runs it with its output in OUT_DIR/NAME.log, notes pass or fail.
check() {
  local name=$1
  shift
  if timeout "$limit" "$@" >"$out/$name.log" 2>&1; then
    note "- pass: $name"
  else
    note "- FAIL: $name (exit $?, $out/$name.log)"
    failed+=("$name")
  fi
}

: >"$summary"
note "# GPU check, $(date -u '+%Y-%m-%d %H:%M UTC'), engine at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
note ""
note "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
note "CPU: $(lscpu | sed -n 's/^Model name: *//p')"
note ""
if [[ $mode == check ]]; then
  check build configure_and_build "${ENGINE_CUDA_ARCHS:-native}" || true
  [[ ${#failed[@]} == 0 ]] || exit 1
  bin=$build/tools
  tests=$build/tests/engine-tests
  run=$bin/engine-run/engine-run bench=$bin/engine-bench/engine-bench gguf=$bin/engine-gguf/engine-gguf cost=$bin/engine-cost/engine-cost
else
  export LD_LIBRARY_PATH=$root/$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  tests=$pack/bin/engine-tests
  run=$pack/bin/engine-run bench=$pack/bin/engine-bench gguf=$pack/bin/engine-gguf cost=$pack/bin/engine-cost
fi
"$run" --list-devices | tee "$out/devices.txt" | sed 's/^/    /' | tee -a "$summary"
# The backends checked: those with a GPU device (a software driver's "device" is the CPU), or
# GPU_CHECK_BACKENDS; the benchmarks run on GPU devices only.
read -ra backends <<<"${GPU_CHECK_BACKENDS:-}"
gpus=()
for b in cuda vulkan; do
  grep -Eq "^$b +0 .* (discrete|integrated|virtual)-gpu " "$out/devices.txt" && gpus+=("$b")
done
((${#backends[@]})) || backends=("${gpus[@]}")
((${#backends[@]})) || { note "no GPU device: nothing to check"; exit 1; }

note ""
note "## Tests on ${backends[*]}"
# every test that runs once per backend (the op harness, the agreement of logits), on the GPU ones
check backend-tests "$tests" --gtest_filter='*/cuda:*/vulkan'
check backend-tests-vulkan-shared-sums env ENGINE_VULKAN_KERNELS=gpu-shared-sums "$tests" --gtest_filter='*BackendOps.MulMat*/vulkan'
for b in "${backends[@]}"; do
  for ref in "$shared"/reference/*.jsonl; do
    model=$(basename "$ref" .jsonl)
    [[ -f $shared/models/$model.gguf ]] || continue
    check "replay-$b-$model" "$run" -m "$shared/models/$model.gguf" --replay "$ref" --backend "$b"
  done
  # the architectures' synthesized models (Qwen, Gemma 3, Phi-3, mixtures of experts), written again from their flags
  for ref in tests/data/reference/*.jsonl; do
    check "replay-$b-$(basename "$ref" .jsonl)" bash tests/e2e/replay_synth.sh "$gguf" "$run" "$ref" "$b" "$models/synth"
  done
  memory_models=()
  for m in "$shared"/models/stories260K.gguf "$shared"/models/synth-llama-*.gguf "$shared"/models/synth-gpt2-*.gguf; do
    [[ -f $m ]] && memory_models+=("$m")  # a pack may hold some of them
  done
  check "memory-$b" env ENGINE_BACKEND="$b" python3 tests/e2e/memory_matches_runtime.py "$cost" "$run" "${memory_models[@]}"
done

# synth NAME TYPE FLAGS...: a model of random weights whose rows repeat 64 drawn ones (seconds to
# write at any size, timed as any), written once into the models folder.
synth() {
  local name=$1 type=$2
  shift 2
  [[ -f $models/$name.gguf ]] || "$gguf" synth -o "$models/$name.gguf" --type "$type" --distinct-rows 64 "$@" >"$out/synth-$name.log" 2>&1 ||
    { note "- FAIL: synth $name"; failed+=("synth-$name"); }
}
llama1b=(--embd 2048 --layers 16 --heads 32 --kv-heads 8 --ff 8192 --vocab 32000 --ctx 4096)
llama8b=(--embd 4096 --layers 32 --heads 32 --kv-heads 8 --ff 14336 --vocab 128256 --ctx 8192)

llama_bench=${LLAMA_BENCH:-} quantize=${LLAMA_QUANTIZE:-}
if [[ -n ${LLAMA_CPP:-} && -z $llama_bench ]]; then
  if cmake -S "$LLAMA_CPP" -B "$LLAMA_CPP/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=native -DLLAMA_CURL=OFF >"$out/llama-build.log" 2>&1 &&
     cmake --build "$LLAMA_CPP/build-gpu" -j "$(nproc)" --target llama-bench llama-quantize >>"$out/llama-build.log" 2>&1; then
    llama_bench=$LLAMA_CPP/build-gpu/bin/llama-bench
    quantize=${quantize:-$LLAMA_CPP/build-gpu/bin/llama-quantize}
  else
    note "- FAIL: llama.cpp build ($out/llama-build.log)"
    failed+=(llama-build)
  fi
fi

note ""
note "## The cost model on each GPU backend: calibrated, then predicted beside measured"
((${#gpus[@]})) || note "no GPU device: no calibration"
cal_files=()
if ((${#gpus[@]})); then
  for type in q4_0 q8_0 f16; do synth "llama1b-$type" "$type" "${llama1b[@]}"; cal_files+=("$models/llama1b-$type.gguf"); done
  if [[ -n $quantize ]]; then
    [[ -f $models/llama1b-q4_k_m.gguf ]] || check quantize-q4_k_m "$quantize" "$models/llama1b-f16.gguf" "$models/llama1b-q4_k_m.gguf" q4_k_m
    cal_files+=("$models/llama1b-q4_k_m.gguf")
  else
    note "no llama-quantize: an all-Q4_K file stands for Q4_K_M"
    synth llama1b-q4_k q4_k "${llama1b[@]}"
    cal_files+=("$models/llama1b-q4_k.gguf")
  fi
fi
# A prompt of about 470 tokens of these files' vocabulary, one step of the prompt's rate.
prompt="$(for _ in 1 2 3 4 5 6 7 8; do printf 'The little fox looked carefully at a broken wooden boat near the tall green hill. '; done)"
if [[ -n $llama_bench ]] && ((${#cal_files[@]})); then
  note ""
  note "llama.cpp CUDA: \`llama-bench -m llama1b-{q4_0,q8_0,f16,q4_k_m}.gguf -ngl 99 -p 512 -n 128 -r 3 -o md\`"
  model_flags=()
  for file in "${cal_files[@]}"; do model_flags+=(-m "$file"); done
  timeout "$limit" "$llama_bench" "${model_flags[@]}" -ngl 99 -p 512 -n 128 -r 3 -o md 2>"$out/llama-bench-1b.log" | tee -a "$summary"
fi
for b in "${gpus[@]}"; do
  list=$(IFS=,; echo "${cal_files[*]}")
  note ""
  note "engine $b, datasheet profile: \`engine-bench --backend $b -m llama1b-{q4_0,q8_0,f16,q4_k_m}.gguf -p 512 -n 128 -r 3\`"
  timeout "$limit" "$bench" --backend "$b" -m "$list" -p 512 -n 128 -r 3 -o md 2>"$out/bench-$b-datasheet.log" | tee -a "$summary" ||
    { note "- FAIL: engine-bench $b datasheet"; failed+=("bench-$b-datasheet"); }
  note ""
  note "engine $b, calibrated: \`engine-bench --backend $b --calibrate cal-$b.json -m llama1b-{q4_0,q8_0,f16,q4_k_m}.gguf -p 512 -n 128 -r 3\`"
  timeout "$limit" "$bench" --backend "$b" --calibrate "$out/cal-$b.json" -m "$list" -p 512 -n 128 -r 3 -o md 2>"$out/calibrate-$b.log" | tee -a "$summary" ||
    { note "- FAIL: engine-bench --calibrate $b"; failed+=("calibrate-$b"); continue; }
  for file in "${cal_files[@]}"; do
    check "profile-$b-$(basename "$file" .gguf)" "$run" -m "$file" --backend "$b" -p "$prompt" -n 64 --temp 0 --profile --hw "$out/cal-$b.json"
  done
  # The first prompt without the warm-up, beside the runs above: what a session's first step pays
  # (on an H100, layer 0 of a cold CUDA prompt read 1.51 of its prediction, 1.01 after the warm-up)
  check "profile-$b-$(basename "${cal_files[0]}" .gguf)-no-warmup" \
    "$run" -m "${cal_files[0]}" --backend "$b" -p "$prompt" -n 64 --temp 0 --profile --hw "$out/cal-$b.json" --no-warmup
done

note ""
note "## Benchmarks: Llama-3-8B-shaped files (random weights)"
((${#gpus[@]})) || note "no GPU device: no benchmarks"
for type in q4_0 q4_k; do
  ((${#gpus[@]})) || break
  synth "llama3-8b-$type" "$type" "${llama8b[@]}"
done
for type in q4_0 q4_k; do
  file=$models/llama3-8b-$type.gguf
  [[ -f $file ]] || continue
  if [[ -n $llama_bench ]]; then
    note ""
    note "llama.cpp CUDA, $type: \`llama-bench -m $(basename "$file") -ngl 99 -p 512 -n 128 -r 3 -o md\`"
    timeout "$limit" "$llama_bench" -m "$file" -ngl 99 -p 512 -n 128 -r 3 -o md 2>"$out/llama-bench-$type.log" | tee -a "$summary"
  fi
  for b in "${gpus[@]}"; do
    hw=()
    [[ -f $out/cal-$b.json ]] && hw=(--hw "$out/cal-$b.json")
    note ""
    note "engine $b, $type: \`engine-bench -m $(basename "$file") --backend $b ${hw[*]:+--hw cal-$b.json }-p 512 -n 128 -r 3 -o md\`"
    timeout "$limit" "$bench" -m "$file" --backend "$b" "${hw[@]}" -p 512 -n 128 -r 3 -o md 2>"$out/bench-$b-$type.log" | tee -a "$summary" ||
      { note "- FAIL: engine-bench $b $type"; failed+=("bench-$b-$type"); }
  done
done
# Where the decode time goes, op by op, predicted beside measured (docs/profiling.md).
for b in "${gpus[@]}"; do
  file=$models/llama3-8b-q4_0.gguf
  [[ -f $file ]] && check "profile-$b-q4_0" "$run" -m "$file" --backend "$b" -p "Once upon a time" -n 16 --temp 0 --profile
done

note ""
if [[ ${#failed[@]} == 0 ]]; then
  note "All checks passed."
else
  note "Failed: ${failed[*]}"
  exit 1
fi
