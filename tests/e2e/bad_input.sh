#!/usr/bin/env bash
# Feeds malformed models, paths and prompts to a sanitizer build of engine-run: each must
# end with exit status 1 and one error line naming the problem; no crash, hang or
# sanitizer report.
set -uo pipefail
run=$1 make_bad=$2 dir=$3
rm -rf "$dir" && "$make_bad" "$dir" || exit 1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
failures=0

expect_error() {  # expect_error WHAT PATTERN ARGS...
  local what=$1 pattern=$2; shift 2
  local err status
  err=$(timeout 120 "$run" "$@" -n 4 -t 2 2>&1 >"$dir/stdout")
  status=$?
  if [[ $status -ne 1 || $(printf '%s\n' "$err" | wc -l) -ne 1 || ! $err =~ ^engine-run:\ error:.*$pattern ]]; then
    printf 'FAIL %s (exit %d):\n%s\n' "$what" "$status" "$err"
    failures=$((failures + 1))
  elif [[ -s $dir/stdout ]]; then  # refused before any step ran: nothing was generated
    printf 'FAIL %s: generated before its error:\n%s\n' "$what" "$(head -c 300 "$dir/stdout")"
    failures=$((failures + 1))
  else
    printf 'ok   %-22s %s\n' "$what" "$err"
  fi
}

expect_error "missing file" "No such file" -m "$dir/does-not-exist.gguf"
expect_error "directory" "directory" -m "$dir"
expect_error "not GGUF" "not a GGUF file" -m "$dir/not_gguf.gguf"
for f in "$dir"/truncated_*.gguf; do
  expect_error "$(basename "$f" .gguf)" "GGUF|truncated|past the end|end of|runs past|ends" -m "$f"
done
expect_error "data past the end" "past the end" -m "$dir/data_past_end.gguf"
expect_error "unknown dtype" "blk.0.attn_q.weight.*99|99.*blk.0.attn_q.weight" -m "$dir/unknown_dtype.gguf"
expect_error "missing tensor" "missing tensor 'blk.1.ffn_down.weight'" -m "$dir/missing_tensor.gguf"
expect_error "wrong shape" "blk.0.attn_k.weight' has shape" -m "$dir/wrong_shape.gguf"
long_prompt=$(printf 'once upon a time %.0s' $(seq 1 40))
expect_error "prompt past context" "longer than the context" -m "$dir/good.gguf" -c 16 -p "$long_prompt"
expect_error "bad flag value" "threads|Range|-t" -m "$dir/good.gguf" -t -5

expect_error "unknown hardware" "--hw: unknown hardware profile 'nope'" -m "$dir/good.gguf" --hw nope --profile
expect_error "report folder missing" "--report: cannot write '$dir/none/r.html': no directory" -m "$dir/good.gguf" \
  --report "$dir/none/r.html"
expect_error "trace into a folder" "--trace-out: '$dir' is a directory" -m "$dir/good.gguf" --trace-out "$dir"
expect_error "count not a number" "--n-predict: 'abc' is not a whole number" -m "$dir/good.gguf" -n abc
expect_error "temperature not a number" "--temp: 'hot' is not a number" -m "$dir/good.gguf" --temp hot
# A context beyond memory is refused with the bytes it needs and the bytes free, before allocating.
expect_error "context beyond memory" "context of 16777216 positions needs [0-9]+ bytes .* weights [0-9]+ \\+ KV cache [0-9]+ \\+ compute buffer [0-9]+.*, but [0-9]+ bytes .* are free on cpu device 0" \
  -m "$dir/good.gguf" -c 16777216

# The intact model runs under the sanitizers.
if ! out=$(timeout 300 "$run" -m "$dir/good.gguf" -p "once upon a time" -n 4 -t 2 2>&1); then
  printf 'FAIL good model:\n%s\n' "$out"
  failures=$((failures + 1))
fi
echo "$failures failures"
[[ $failures -eq 0 ]]
