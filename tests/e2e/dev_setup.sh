#!/usr/bin/env bash
# tools/dev.sh, the README's two set-up commands: `demo` builds only the two tools it runs, with
# exactly the commands `test` builds them with (so the test build after the demo reuses all of
# it), and the demo shows its four parts.
#   dev_setup.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -uo pipefail
src=$1 build=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
failures=0
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
ok() { printf 'ok   %s\n' "$*"; }

# What each command would build, in a scratch folder configured as dev.sh configures build/.
ENGINE_BUILD_DIR=$dir/build ENGINE_DEV_DRY_RUN=1 bash "$src/tools/dev.sh" demo >"$dir/demo.txt" || fail "dev.sh demo (dry run) exited $?"
cp "$dir/build/compile_commands.json" "$dir/demo_compile_commands.json"
ENGINE_BUILD_DIR=$dir/build ENGINE_DEV_DRY_RUN=1 bash "$src/tools/dev.sh" test >"$dir/test.txt" || fail "dev.sh test (dry run) exited $?"
cmp -s "$dir/build/compile_commands.json" "$dir/demo_compile_commands.json" \
  && ok "demo and test configure the same flags" || fail "test configures other flags than demo (it would rebuild)"
demo=$(grep -c -- ' -c ' "$dir/demo.txt") all=$(grep -c -- ' -c ' "$dir/test.txt")
((demo > 0 && demo * 2 < all)) && ok "demo compiles $demo of $all sources" || fail "demo compiles $demo of $all sources"
grep -q -- '-o tools/engine-run/engine-run ' "$dir/demo.txt" && grep -q -- '-o tools/engine-cost/engine-cost ' "$dir/demo.txt" \
  && ok "demo links engine-run and engine-cost" || fail "demo does not link its two tools"
extra=$(comm -23 <(sort -u "$dir/demo.txt") <(sort -u "$dir/test.txt") | wc -l)
((extra == 0)) && ok "every demo command is a test command" || fail "$extra demo commands differ from the test build's"

# The demo itself, on this build: a story, the cost summary, the trace, the profile.
timeout 300 bash "$src/tools/demo.sh" "$build" >"$dir/demo_output.txt" 2>&1 || fail "tools/demo.sh exited $?"
for part in '^== engine-run: a story' '^Once upon a time, there was a little' '^load [0-9.]+ ms \| warm-up [0-9.]+ ms \| prompt' \
            '^== engine-cost: what one decode step' '^LlamaForCausalLM +\|' '^  compute buffer +[0-9]+ bytes' \
            '^== engine-cost --trace' '^<-+inp_embd: get_rows' '^Predicted vs measured \(decode' '^  TOTAL +[0-9.]+ +[0-9.]+'; do
  grep -Eq -- "$part" "$dir/demo_output.txt" && ok "demo shows $part" || fail "demo output lacks $part"
done
echo "$failures failures"
[[ $failures -eq 0 ]]
