#!/usr/bin/env bash
# The tools' command lines as a new user meets them: the built-in model tells a readable story,
# the text and the metrics stay apart in one file, a full context is said once, --help shows
# the defaults, and every tool refuses bad input with "TOOL: error: ..." and exit status 1.
set -uo pipefail
run=$1 cost=$2 bench=$3 gguf=$4 dir=$5
rm -rf "$dir" && mkdir -p "$dir"
failures=0
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
ok() { printf 'ok   %s\n' "$*"; }

# With no -m, engine-run tells a story with the built-in model: printable English, not byte soup.
if ! timeout 120 "$run" -n 60 --temp 0 -t 2 >"$dir/story.txt" 2>"$dir/story.err"; then
  fail "built-in model run: $(cat "$dir/story.err")"
else
  python3 - "$dir/story.txt" <<'PY' && ok "built-in model: $(head -c 80 "$dir/story.txt")" || fail "story: $(cat "$dir/story.txt")"
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # raises on invalid UTF-8
assert all(c.isprintable() or c == "\n" for c in text) and text.isascii(), repr(text)
words = re.findall(r"[a-z]+", text.lower())
common = {"the", "a", "was", "there", "she", "he", "and", "to", "named", "little", "day", "one", "her", "it"}
assert len(words) >= 30 and sum(w in common for w in words) >= len(words) / 4, words
PY
fi

# Text and metrics in one file: the story ends its line before the metrics begin theirs.
timeout 120 "$run" -n 8 --temp 0 -t 2 >"$dir/both.txt" 2>&1 || fail "one-file run exited $?"
grep -q '^load [0-9.]* ms | warm-up [0-9.]* ms | prompt' "$dir/both.txt" && grep -q '^memory: weights' "$dir/both.txt" \
  && ok "text and metrics on their own lines" || fail "text and metrics run together: $(cat "$dir/both.txt")"

# --no-warmup: the same text, and no warm-up in the metrics.
timeout 120 "$run" -n 8 --temp 0 -t 2 --no-warmup >"$dir/cold.txt" 2>"$dir/cold.err" || fail "--no-warmup run exited $?"
grep -q '^load [0-9.]* ms | prompt' "$dir/cold.err" && [[ $(head -1 "$dir/cold.txt") == "$(head -1 "$dir/both.txt")" ]] \
  && ok "--no-warmup: $(head -1 "$dir/cold.err")" || fail "--no-warmup: $(cat "$dir/cold.txt" "$dir/cold.err")"

# -v: the log on stderr; stdout holds the same text as without it.
timeout 120 "$run" -n 8 --temp 0 -t 2 -v >"$dir/verbose.txt" 2>"$dir/verbose.err" || fail "-v run exited $?"
timeout 120 "$run" -n 8 --temp 0 -t 2 >"$dir/quiet.txt" 2>/dev/null || fail "run without -v exited $?"
grep -q '\[info\] .*cpu backend' "$dir/verbose.err" && cmp -s "$dir/verbose.txt" "$dir/quiet.txt" \
  && ok "-v logs on stderr: $(grep -m1 'cpu backend' "$dir/verbose.err" | cut -c1-80)" \
  || fail "-v: stdout $(cat "$dir/verbose.txt") against $(cat "$dir/quiet.txt"); stderr $(cat "$dir/verbose.err")"

# A context that fills up is said once on stderr, with the tokens it kept; the run still succeeds.
if timeout 120 "$run" -c 8 -n 100 -p "Once" --temp 0 -t 2 >"$dir/full.txt" 2>"$dir/full.err"; then
  n=$(grep -c 'context of 8 positions is full after [0-9]* of 100 tokens (it keeps the [0-9]* prompt tokens and [0-9]* generated ones)' "$dir/full.err")
  [[ $n -eq 1 ]] && ok "full context: $(grep full "$dir/full.err")" || fail "full context said $n times: $(cat "$dir/full.err")"
else
  fail "full-context run exited non-zero: $(cat "$dir/full.err")"
fi
timeout 120 "$run" -c 64 -n 8 --temp 0 -t 2 >/dev/null 2>"$dir/roomy.err"
grep -q 'is full' "$dir/roomy.err" && fail "full context said when it was not full: $(cat "$dir/roomy.err")"

# --help shows each option's default.
expect_default() {  # TOOL_AND_ARGS... -- PATTERN
  local pattern=${*: -1} help
  help=$(timeout 30 "${@:1:$#-1}" --help 2>&1)
  grep -Eq -- "$pattern" <<<"$help" && ok "help default $pattern" || fail "no default '$pattern' in: ${*:1:$#-1} --help"
}
expect_default "$run" '-n,--n-predict .*=64'
expect_default "$cost" '--ubatch .*=512'
expect_default "$bench" '-r,--repetitions .*=5'
expect_default "$gguf" synth '--embd .*=256'

# --chat: a reply of at most -n tokens to each user line of stdin, in the template named; the built-in model's
# file names no template, which is said with the names to choose from.
"$gguf" synth -o "$dir/qwen.gguf" --arch qwen2 --embd 64 --heads 2 --kv-heads 1 --ff 128 --layers 2 --vocab 1024 >/dev/null
if printf 'Once upon a time\nThe little dog\n' | timeout 120 "$run" -m "$dir/qwen.gguf" --chat --chat-template chatml \
    --system "Be brief." -n 6 --temp 0 -t 2 >"$dir/chat.txt" 2>"$dir/chat.err"; then
  decoded=$(sed -n 's/.*| decode \([0-9]*\) tokens.*/\1/p' "$dir/chat.err")
  [[ -s $dir/chat.txt && -n $decoded && $decoded -le 10 ]] \
    && ok "chat: two turns, $decoded tokens decoded after their first" || fail "chat replies: $(cat "$dir/chat.txt" "$dir/chat.err")"
else
  fail "chat run exited non-zero: $(cat "$dir/chat.err")"
fi

# Bad input: one line "TOOL: error: ...", exit status 1, nothing on stdout.
expect_error() {  # TOOL PATTERN ARGS...
  local tool=$1 pattern=$2; shift 2
  local err status name
  name=$(basename "$tool")
  err=$(timeout 60 "$tool" "$@" 2>&1 >"$dir/stdout"); status=$?
  if [[ $status -ne 1 || $(printf '%s\n' "$err" | wc -l) -ne 1 || ! $err =~ ^$name:\ error:.*$pattern ]]; then
    fail "$name $* (exit $status): $err"
  elif [[ -s $dir/stdout ]]; then
    fail "$name $* printed before its error: $(head -c 200 "$dir/stdout")"
  else
    ok "$name $*: $err"
  fi
}
expect_error "$gguf" "subcommand"
expect_error "$gguf" "--out is required" synth
expect_error "$gguf" "--embd: 'abc' is not a whole number" synth --out "$dir/m.gguf" --embd abc
expect_error "$gguf" "--layers: 0 is outside 1 to 1024" synth --out "$dir/m.gguf" --layers 0
expect_error "$gguf" "--out: cannot write '$dir/none/m.gguf': no directory" synth --out "$dir/none/m.gguf"
expect_error "$gguf" "unknown weight type 'q9_9'" synth --out "$dir/m.gguf" --type q9_9
expect_error "$gguf" "No such file" inspect "$dir/none.gguf"
expect_error "$gguf" "directory" inspect "$dir"
expect_error "$run" "--threads: 'two' is not a whole number" -t two
for tool in "$run" "$bench" "$cost"; do expect_error "$tool" "--threads: 0 is outside 1 to 1024" -t 0; done
expect_error "$run" "--top-p: 1.5 is outside 0 to 1" --top-p 1.5
expect_error "$run" "names no chat template \\(tokenizer.chat_template\\); name one \\(chatml, " --chat -p hi
expect_error "$run" "--chat-template: unknown chat template 'vicuna' \\(known: chatml, " --chat --chat-template vicuna
expect_error "$run" "--n-predict: -5 is outside 0 to 16777216" -n -5
expect_error "$run" "--ubatch: 0 is outside 1 to 65536" -b 0
expect_error "$run" "prompt of 5 tokens is longer than the context of 1" -c 1 -p "Once upon a time"
expect_error "$run" "--hw: unknown hardware profile 'nope'" --hw nope
expect_error "$run" "--chat-template requires --chat" --chat-template chatml
expect_error "$run" "--system requires --chat" --system "Be brief."
expect_error "$run" "--chat excludes --replay" --chat --replay "$dir/chat.txt"
printf '{"prompt": "Hi", "prompt_tokens": [1], "generated": [2], "top10": [[[2, 1.0]]]}\n{"prompt": "Hi", "prompt_tokens": [1, -3]}\n' >"$dir/bad.jsonl"
expect_error "$run" "$dir/bad.jsonl line 2: 'prompt_tokens' holds -3, not a token id" --replay "$dir/bad.jsonl"
expect_error "$bench" "--repetitions: 0 is outside 1 to 100000" -m "$dir/none.gguf" -r 0
expect_error "$cost" "unknown preset 'nope' \\(known: gemma-3-1b, " --preset nope
expect_error "$cost" "--tokens: 0 is outside 1 to 16777216" --tokens 0
expect_error "$cost" "--hw: unknown hardware profile 'nope'" --hw nope
expect_error "$cost" "--ctx: 'big' is not a whole number" --ctx big
# Backends: the devices of those built in; one not built in says so, before any model is loaded.
for tool in "$run" "$bench"; do
  devices=$(timeout 30 "$tool" --list-devices) || fail "$(basename "$tool") --list-devices exited $?"
  grep -Eq '^cpu +0 +.* cpu +[0-9.]+ GiB +[0-9.]+ GiB +- +(scalar|avx2|avx512)' <<<"$devices" && ok "$(basename "$tool") --list-devices lists the CPU" \
    || fail "$(basename "$tool") --list-devices: $devices"
done
for b in vulkan cuda; do
  if grep -Eq "^not built into this binary:.*\b$b\b" <<<"$devices"; then
    expect_error "$run" "--backend: $b: not built into this binary" --backend "$b" -m "$dir/none.gguf"
    expect_error "$bench" "--backend: $b: not built into this binary" --backend "$b" -m "$dir/none.gguf"
  fi
  if grep -Eq "^built in, no device found.*\b$b\b" <<<"$devices"; then
    expect_error "$run" "--backend: $b: no device found" --backend "$b"
    expect_error "$bench" "--backend: $b: no device found" --backend "$b" -m "$dir/none.gguf"
  fi
done
# A context past a device's free memory is refused before allocating, naming that device.
for b in cpu vulkan cuda; do
  if grep -q "^$b " <<<"$devices"; then
    expect_error "$run" "context of 16777216 positions needs [0-9]+ bytes .* are free on $b device 0" --backend "$b" -c 16777216
  fi
done
expect_error "$run" "--backend: unknown backend 'tpu' \\(known: cpu, cuda, vulkan\\)" --backend tpu
expect_error "$run" "cpu: no device 7" --device 7 -m "$dir/none.gguf"
echo "$failures failures"
[[ $failures -eq 0 ]]
