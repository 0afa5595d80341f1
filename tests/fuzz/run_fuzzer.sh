#!/usr/bin/env bash
# run_fuzzer.sh FUZZER CORPUS WORK_DIR LIMIT [FLAG...]: fuzzes from the inputs of CORPUS (left as it is; new
# inputs go to WORK_DIR/new) until LIMIT, a libFuzzer flag (-max_total_time=60, -runs=10000000), with any
# further libFuzzer flags (-max_len=512). A crash, leak,
# timeout or memory blow-up fails with the input that caused it in WORK_DIR/artifacts: fix the bug,
# then add that input to CORPUS as a regression.
set -euo pipefail
fuzzer=$1 corpus=$2 work=$3 limit=$4
shift 4
rm -rf "$work" && mkdir -p "$work/new" "$work/artifacts"
exec "$fuzzer" "$limit" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$@" "$work/new" "$corpus"
