#!/usr/bin/env bash
# engine-cost refuses bad input with one error line and exit status 1.
set -uo pipefail
cost=$1 dir=$2 shared=$3
rm -rf "$dir" && mkdir -p "$dir"
failures=0
expect_error() {  # WHAT PATTERN ARGS...
  local what=$1 pattern=$2; shift 2
  local err status
  err=$(timeout 60 "$cost" "$@" 2>&1 >/dev/null); status=$?
  if [[ $status -ne 1 || $(printf '%s\n' "$err" | wc -l) -ne 1 || ! $err =~ ^engine-cost:\ error:.*$pattern ]]; then
    printf 'FAIL %s (exit %d):\n%s\n' "$what" "$status" "$err"; failures=$((failures + 1))
  else
    printf 'ok   %-22s %s\n' "$what" "$err"
  fi
}
header=$shared/models/mistral-large-2-q4_0.header.gguf
if [[ -f $header ]]; then
  head -c 300000 "$header" > "$dir/truncated.gguf"
  expect_error "truncated header" "truncated|cannot fit|past the end" "$dir/truncated.gguf"
  # Same file with its architecture renamed (same length, so every offset stays valid).
  python3 - "$header" "$dir/unknown_arch.gguf" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
key = b"general.architecture"
at = data.index(key) + len(key) + 4 + 8  # value type u32, string length u64
assert data[at:at + 5] == b"llama"
open(sys.argv[2], "wb").write(data[:at] + b"xyzzy" + data[at + 5:])
PY
  expect_error "unknown architecture" "architecture 'xyzzy'" "$dir/unknown_arch.gguf"
  expect_error "tokens 0" "--tokens: 0 is outside 1 to" "$header" --tokens 0
  expect_error "context too small" "smaller than --past 30 \+ --tokens 8" "$header" --ctx 32 --past 30 --tokens 8
fi
expect_error "unknown preset" "unknown preset 'llama-9000'.*llama-3-8b" --preset llama-9000
expect_error "unknown hardware" "h100-sxm" --preset llama-3-8b --hw tpu-v9
expect_error "profile file missing" "hardware profile file '$dir/none.json' cannot be read" --preset llama-3-8b --hw "$dir/none.json"
printf '{"name": "x", "description": "y", "mem_bw_gbs": {"value": -1, "source": "z"}}' > "$dir/bad.json"
expect_error "profile file with a bad figure" "key 'mem_bw_gbs' value must be a positive number" --preset llama-3-8b --hw "$dir/bad.json"
expect_error "tokens not a number" "--tokens: '1e3' is not a whole number" --tokens 1e3
expect_error "file and preset" "not both" "$dir/none.gguf" --preset gpt2
expect_error "missing file" "No such file" "$dir/none.gguf"
expect_error "negative past" "--past: -3 is outside 0 to" --preset tinyllama-1.1b --past -3
echo "$failures failures"
[[ $failures -eq 0 ]]
