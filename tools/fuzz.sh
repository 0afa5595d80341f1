#!/usr/bin/env bash
# tools/fuzz.sh RUNS [NAME...]: a fuzzing campaign. Builds the fuzzers (build/fuzz, with clang) and runs
# each named one (all of tests/fuzz/fuzzers.cmake when none is) for RUNS executions from its corpus, one
# after another; each one's log, with libFuzzer's final statistics (executions, coverage), lands in
# build/fuzz/campaign-NAME.log. ENGINE_FUZZ_FLAGS adds libFuzzer flags (-max_len=512). docs/reliability.md
# records the campaigns run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${ENGINE_BUILD_DIR:-build}
runs=${1:?usage: tools/fuzz.sh RUNS [NAME...]}
shift
names=("$@")
((${#names[@]})) || read -r -a names < <(sed -n 's/^set(FUZZERS \([^)]*\)).*/\1/p' "$root/tests/fuzz/fuzzers.cmake")
cmake --build "$root/$build_dir" --target fuzzers >/dev/null
status=0
for name in "${names[@]}"; do
  log=$root/$build_dir/fuzz/campaign-$name.log
  bash "$root/tests/fuzz/run_fuzzer.sh" "$root/$build_dir/fuzz/fuzz-$name" "$root/tests/fuzz/corpus/$name" \
    "$root/$build_dir/fuzz/campaign-$name" "-runs=$runs" ${ENGINE_FUZZ_FLAGS:-} >"$log" 2>&1 || status=1
  printf '%-18s %s\n' "$name" "$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1)"
done
exit $status
