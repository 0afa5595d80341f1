#!/usr/bin/env bash
# The project's entry points on a fresh Debian 12 machine:
#   tools/dev.sh demo   install what is missing, build the two tools the demo runs, then show a story from the
#                       built-in model, its cost analysis and its profile (tools/demo.sh)
#   tools/dev.sh test   install what is missing, build everything (tests include ASan/UBSan builds of
#                       engine-run and engine-cost), run every test (ctest)
# Both configure build/ (ENGINE_BUILD_DIR overrides it) with the same flags, so `test` after `demo`
# compiles only what the demo did not need. ENGINE_DEV_DRY_RUN=1 only lists the commands each would build with;
# ENGINE_CUDA_ARCHS narrows the GPU architectures the CUDA backend is compiled for, where a toolkit is found.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc)
build_dir=${ENGINE_BUILD_DIR:-build}
dry_run=${ENGINE_DEV_DRY_RUN:-0}

build() {  # build [TARGET...]: configure build_dir, then build the targets (all when none)
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DENGINE_WERROR=ON \
    ${ENGINE_CUDA_ARCHS:+-DENGINE_CUDA_ARCHS="$ENGINE_CUDA_ARCHS"} >/dev/null
  if [[ $dry_run == 1 ]]; then
    ninja -C "$build_dir" -t commands "${@:-all}"  # every command the targets need, built or not
  elif (($#)); then
    cmake --build "$build_dir" -j "$jobs" --target "$@"
  else
    cmake --build "$build_dir" -j "$jobs"
  fi
}

bash tools/setup.sh
case "${1:-}" in
  demo)
    build engine-run engine-cost
    [[ $dry_run == 1 ]] || bash tools/demo.sh "$build_dir"
    ;;
  test)
    build
    [[ $dry_run == 1 ]] || ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
    ;;
  *)
    echo "usage: tools/dev.sh demo|test" >&2
    exit 2
    ;;
esac
