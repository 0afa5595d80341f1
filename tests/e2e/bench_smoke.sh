#!/usr/bin/env bash
# engine-bench on a small synthesized model: the structure of each output format, and
# bad input refused with one error line and exit status 1. No timing assertions.
set -uo pipefail
bench=$1 gguf=$2 dir=$3 cost=$4
rm -rf "$dir" && mkdir -p "$dir"
"$gguf" synth --out "$dir/m.gguf" --type q8_0 --layers 2 --embd 64 --ff 128 --heads 4 --kv-heads 2 >/dev/null || exit 1
failures=0
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
args=(-m "$dir/m.gguf" -p 16 -n 8 -r 2 -t 2)

md=$(timeout 120 "$bench" "${args[@]}" -o md) || fail "md run exited $?"
header='^\| model +\| +size \| +params \| backend +\| threads \| +test \| +t/s \| predicted \| roofline \|$'
grep -Eq "$header" <<<"$md" || fail "md header: $md"
grep -Eq '^\| llama [0-9]+K Q8_0 +\| +[0-9.]+ MiB \| +[0-9.]+ K \| CPU +\| +2 \| +pp16 \| +[0-9.]+ ± [0-9.]+ \| +[0-9.]+ \| +\|$' \
  <<<"$md" || fail "md pp16 row: $md"
grep -Eq '^\| llama .*\| +tg8 \| +[0-9.]+ ± [0-9.]+ \| +[0-9.]+ \| +[0-9.]+ % \|$' <<<"$md" || fail "md tg8 row: $md"
grep -Eq '^dtype mix of llama .*q8_0 [0-9.]+ %' <<<"$md" || fail "md dtype mix footer: $md"
grep -Eq '^hardware profile cpu-local \(.*\): [0-9.]+ GB/s, [0-9.]+ TFLOP/s f32, [0-9.]+ us an op; predicted = ' <<<"$md" \
  || fail "md hardware footer: $md"

timeout 120 "$bench" "${args[@]}" --depth 0,4 -o json > "$dir/out.json" || fail "json run exited $?"
python3 - "$dir/out.json" <<'PY' || fail "json structure"
import json, sys
records = json.load(open(sys.argv[1]))
assert [r["test"] for r in records] == ["pp16", "pp16 @ d4", "tg8", "tg8 @ d4"], records
assert [r["n_depth"] for r in records] == [0, 4, 0, 4], records
for r in records:
    for key in ("model_path", "model_desc", "model_size", "model_params", "dtype_mix", "backend", "threads",
                "kv_type", "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "samples_ts", "bandwidth_gbs",
                "predicted_ts", "hardware"):
        assert key in r, (key, r)
    assert len(r["samples_ts"]) == 2 and all(v > 0 for v in r["samples_ts"]), r
    assert abs(sum(d["share"] for d in r["dtype_mix"]) - 1) < 1e-9, r["dtype_mix"]
    assert r["dtype_mix"][0]["type"] == "q8_0", r["dtype_mix"]
    assert r["predicted_ts"] > 0 and r["hardware"] == "cpu-local", r
gen = [r for r in records if r["n_gen"]]
assert all(r["decode_step_bytes"] > 0 and r["roofline_fraction"] > 0 for r in gen), gen
# On cpu-local each repetition's roofline divides by the bandwidth read beside it; the record's
# bandwidth is their mean, and a prompt test reads none.
for r in gen:
    bws = r["samples_bandwidth_gbs"]
    assert len(bws) == 2 and all(b > 0 for b in bws), r
    assert abs(r["bandwidth_gbs"] - sum(bws) / 2) < 1e-9 * r["bandwidth_gbs"], r
    expected = sum(r["decode_step_bytes"] * ts / (bw * 1e9) for ts, bw in zip(r["samples_ts"], bws)) / 2
    assert abs(r["roofline_fraction"] - expected) < 1e-9 * expected, (r["roofline_fraction"], expected)
assert all(r["samples_bandwidth_gbs"] == [] for r in records if r["n_prompt"]), records
assert gen[1]["decode_step_bytes"] >= gen[0]["decode_step_bytes"], gen
assert all(r["roofline_fraction"] is None and r["n_prompt"] == 16 for r in records[:2]), records[:2]
print("json ok:", [(r["test"], round(r["avg_ts"], 1)) for r in records])
PY

timeout 120 "$bench" "${args[@]}" -o csv > "$dir/out.csv" || fail "csv run exited $?"
python3 - "$dir/out.csv" <<'PY' || fail "csv structure"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["test"] for r in rows] == ["pp16", "tg8"], rows
for r in rows:
    assert len(r["samples_ts"].split(";")) == 2 and float(r["avg_ts"]) > 0, r
assert rows[0]["roofline_fraction"] == "" and float(rows[1]["roofline_fraction"]) > 0, rows
assert all(float(r["predicted_ts"]) > 0 and r["hardware"] == "cpu-local" for r in rows), rows
print("csv ok:", list(rows[0].keys()))
PY

# Sweeps: a row per point with the session's memory parts and the peak RSS (the json contract
# and the HTML report are checked by html_report_test.py).
md=$(timeout 120 "$bench" -m "$dir/m.gguf" --sweep-pp 8,16 --sweep-tg 0,8 -n 4 -r 1 -t 2) || fail "sweep run exited $?"
grep -Eq '^\| model +\| +test \| +t/s \| +weights \| +KV cache \| +compute \| +session \| +peak RSS \|$' <<<"$md" \
  || fail "sweep md header: $md"
for test in pp8 pp16 tg4 'tg4 @ d8'; do
  grep -Eq "^\| llama .*\| +$test \| +[0-9.]+ ± [0-9.]+ \|( +[0-9.]+ MiB \|){5}\$" <<<"$md" || fail "sweep md $test row: $md"
done
grep -Eq '^session = weights \+ KV cache \+ compute buffer' <<<"$md" || fail "sweep md footer: $md"

# -p 0 skips prompt processing, as in llama-bench: only the tg rows.
only_tg=$(timeout 60 "$bench" -m "$dir/m.gguf" -p 0 -n 4 -r 1 2>&1) || fail "-p 0 run: $only_tg"
if grep -q ' pp[0-9]' <<<"$only_tg" || ! grep -q ' tg4 ' <<<"$only_tg"; then fail "-p 0 rows: $only_tg"; else echo "ok   -p 0 times tg only"; fi

# The peak RSS is the model's: a 2-layer model stays far below the bandwidth probe's buffer.
timeout 120 "$bench" -m "$dir/m.gguf" -p 16 -n 4 -r 1 -o json > "$dir/rss.json" || fail "rss run exited $?"
python3 - "$dir/rss.json" <<'PY' || fail "peak RSS"
import json, sys
records = json.load(open(sys.argv[1]))
assert all(r["peak_rss"] < 100 << 20 for r in records), [r["peak_rss"] for r in records]
print("ok   peak RSS", [r["peak_rss"] >> 20 for r in records], "MiB")
PY

# --calibrate writes the profile the benchmarks use, which engine-cost --hw FILE predicts with.
out=$(timeout 480 "$bench" --calibrate "$dir/cal.json" -t 2) || fail "--calibrate exited $?: $out"
python3 - "$dir/cal.json" <<'PY' || fail "calibrated profile"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["name"] == "cpu-local-calibrated" and "calibrated" in p["description"], p
assert p["op_overhead_us"]["value"] > 0 and p["mem_bw_gbs"]["value"] > 0, p
assert p["op_overhead_us"]["source"].startswith("engine-bench --calibrate"), p
rates = p["mul_mat_tflops"]
assert sorted(rates) == sorted(["f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K",
                                "q5_K", "q6_K"]), rates
assert all(r["value"] > 0 for r in rates.values()), rates
for key in ("mul_mat_short_tflops", "mul_mat_gbs"):
    assert sorted(p[key]) == sorted(rates) and all(r["value"] > 0 for r in p[key].values()), (key, p[key])
for key in ("attention_tflops", "attention_decode_tflops", "attention_decode_deep_tflops"):
    assert list(p[key]) == ["f16"] and p[key]["f16"]["value"] > 0, (key, p[key])
columns = p["mul_mat_columns_gbs"]
assert sorted(columns) == sorted(rates), columns
assert all(sorted(map(int, c)) == list(range(2, 16)) and all(r["value"] > 0 for r in c.values()) for c in columns.values()), columns
assert {"RMS_NORM", "ROPE", "SOFT_MAX", "SILU", "MUL", "ADD"} <= set(p["op_gbs"]), p["op_gbs"]
assert all(r["value"] > 0 for r in p["op_gbs"].values()), p["op_gbs"]
print("ok   calibrated profile:", p["description"])
PY
predicted=$(timeout 60 "$cost" "$dir/m.gguf" --hw "$dir/cal.json") || fail "engine-cost --hw FILE exited $?"
grep -Eq '^speed on cpu-local-calibrated \(.*plus [0-9.]+ us an op\)$' <<<"$predicted" && grep -q '^  profile .*calibrated' <<<"$predicted" \
  && echo "ok   engine-cost --hw reads the calibrated profile" || fail "engine-cost --hw FILE: $predicted"
timeout 60 "$cost" "$dir/m.gguf" --hw "$dir/cal.json" --format json > "$dir/cost.json" || fail "engine-cost --hw FILE --format json"
python3 - "$dir/cost.json" "$dir/cal.json" <<'PY' || fail "calibrated profile in the JSON view"
import json, sys
speed = json.load(open(sys.argv[1]))["speed"]
assert speed["hardware"] == "cpu-local-calibrated" and "calibrated" in speed["hardware_description"], speed
assert speed["op_overhead_us"] > 0, speed
assert speed["hardware_calibrated"] == json.load(open(sys.argv[2]))["calibrated"], speed
PY
timeout 60 "$cost" "$dir/m.gguf" --hw "$dir/cal.json" --format csv > "$dir/cost.csv" || fail "engine-cost --hw FILE --format csv"
python3 - "$dir/cost.csv" "$dir/cal.json" <<'PY' || fail "calibrated profile in the CSV view"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
when = json.load(open(sys.argv[2]))["calibrated"]
assert rows and all(r["hardware"] == "cpu-local-calibrated" and r["calibrated"] == when for r in rows), rows[0]
print("ok   the CSV view names the calibrated profile and its date,", when)
PY
# --calibrate-dtypes times only the products named; the rest of the profile is as full.
timeout 240 "$bench" --calibrate "$dir/cal-q4_0.json" --calibrate-dtypes q4_0 -t 2 > /dev/null \
  || fail "--calibrate --calibrate-dtypes q4_0 exited $?"
python3 - "$dir/cal-q4_0.json" <<'PY' || fail "profile of q4_0 products only"
import json, sys
p = json.load(open(sys.argv[1]))
for key in ("mul_mat_tflops", "mul_mat_short_tflops", "mul_mat_gbs", "mul_mat_columns_gbs"):
    assert list(p[key]) == ["q4_0"], (key, p[key])
assert p["description"].endswith("products of q4_0 weights only"), p["description"]
assert p["attention_tflops"]["f16"]["value"] > 0 and {"RMS_NORM", "ROPE", "MUL"} <= set(p["op_gbs"]), p
print("ok   --calibrate-dtypes q4_0 times the q4_0 products only")
PY
# A profile written earlier predicts later benchmarks: --hw FILE.
timeout 120 "$bench" -m "$dir/m.gguf" -p 16 -n 4 -r 1 -t 2 -o csv --hw "$dir/cal.json" > "$dir/hw.csv" \
  || fail "engine-bench --hw FILE exited $?"
python3 - "$dir/hw.csv" "$dir/cal.json" <<'PY' || fail "engine-bench --hw FILE"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
when = json.load(open(sys.argv[2]))["calibrated"]
assert [r["test"] for r in rows] == ["pp16", "tg4"], rows
assert all(r["hardware"] == "cpu-local-calibrated" and r["hardware_calibrated"] == when and float(r["predicted_ts"]) > 0
           for r in rows), rows
print("ok   engine-bench --hw FILE predicts with it")
PY

# --tune: a row per dtype with its form and the requests kept on each class of rows, the same as
# the cache file it writes where the CPU has forms to time.
ENGINE_CPU_TUNE_FILE="$dir/tune.txt" timeout 120 "$bench" --tune > "$dir/tune.md" || fail "--tune exited $?"
python3 - "$dir/tune.md" "$dir/tune.txt" <<'PY' || fail "--tune table"
import os, re, sys
text = open(sys.argv[1]).read()
header = re.search(r"^\| dtype \| form \|.*$", text, re.M)
assert header, text
classes = [int(n) for n in re.findall(r"rows of (\d+)\+? \|", header.group(0))]
assert len(classes) >= 2 and classes == sorted(set(classes)), header.group(0)
rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if re.match(r"^\| [a-z0-9_]+K? \|", line)]
rows = [r for r in rows if r[0] != "dtype"]
assert len(rows) >= 10 and all(len(r) == 5 + len(classes) for r in rows), rows
cell = re.compile(r"^(near\+far|far|none) \((\d+\.\d) / (\d+\.\d) / (\d+\.\d); (\d+\.\d) / (\d+\.\d) / (\d+\.\d)\)$")  # all threads; one
form_cell = re.compile(r"^(\d+\.\d) / (\d+\.\d)$")  # on all threads / on one thread
def split(r):  # dtype, form, the form rates (all threads', then one thread's), then per class its requests and six rates
    forms = [form_cell.match(c) for c in r[2:5]]
    cells = [cell.match(c) for c in r[5:]]
    assert all(forms) and all(cells), r
    form_gbs = [float(m.group(1)) for m in forms] + [float(m.group(2)) for m in forms]
    return r[:2], form_gbs, [m.group(1) for m in cells], [float(x) for m in cells for x in m.groups()[1:]]
if os.path.exists(sys.argv[2]):  # timed: the file holds the table's choices and figures
    lines = open(sys.argv[2]).read().split("\n")
    assert lines[0].startswith("engine cpu decode forms "), lines[0]
    cached = {f[0]: f for f in (l.split() for l in lines[2:] if l)}
    for r in rows:
        names, form_gbs, requests, request_gbs = split(r)
        f = cached[r[0]]
        n = len(classes)
        assert f[:2] == names and f[2:2 + n] == requests, (f, r)
        figures = [float(x) for x in f[2 + n:]]
        assert all(abs(a - b) <= 0.051 for a, b in zip(figures, form_gbs + request_gbs)), (f, r)  # the table rounds to 0.1
        assert len(figures) == 6 + 6 * n and all(x > 0 for x in request_gbs), (f, r)
else:  # no forms to time (AVX2 alone): nothing timed
    assert all(x == 0 for r in rows for part in split(r)[1::2] for x in part), rows
print("ok   engine-bench --tune:", len(rows), "dtypes")
PY

# Bad input: one error line, exit status 1, and nothing on stdout (no table header before the error).
expect_error() {  # WHAT PATTERN ARGS...
  local what=$1 pattern=$2; shift 2
  local err status
  err=$(timeout 60 "$bench" "$@" 2>&1 >"$dir/stdout"); status=$?
  if [[ $status -ne 1 || $(printf '%s\n' "$err" | wc -l) -ne 1 || ! $err =~ ^engine-bench:\ error:.*$pattern ]]; then
    fail "$what (exit $status): $err"
  elif [[ -s $dir/stdout ]]; then
    fail "$what printed before its error: $(head -c 300 "$dir/stdout")"
  else
    printf 'ok   %-22s %s\n' "$what" "$err"
  fi
}
expect_error "missing model" "No such file" -m "$dir/none.gguf"
head -c "$(( $(stat -c %s "$dir/m.gguf") - 64 ))" "$dir/m.gguf" > "$dir/cut.gguf"  # header intact, data cut short
expect_error "data cut short" "past the end" -m "$dir/cut.gguf" -p 16 -n 4 -r 1
expect_error "report folder missing" "report: cannot write '$dir/none/r.html': no directory" -m "$dir/m.gguf" \
  -p 16 -n 4 -r 1 --report "$dir/none/r.html"
expect_error "prompt below 0" "n-prompt: -1 is outside 0 to" -m "$dir/m.gguf" -p -1
expect_error "nothing to time" "nothing to time" -m "$dir/m.gguf" -p 0 -n 0
expect_error "reps 0" "repetitions: 0 is outside 1 to" -m "$dir/m.gguf" -r 0
expect_error "unknown backend" "backend" -m "$dir/m.gguf" --backend tpu
expect_error "depth beyond context" "pp16 @ d60 needs 76 context positions but the context holds 64" \
  -m "$dir/m.gguf" -c 64 -p 16 -n 8 --depth 60
expect_error "sweep with -p" "n-prompt excludes --sweep-pp" -m "$dir/m.gguf" --sweep-pp 8 -p 16
expect_error "sweep with -d" "depth excludes --sweep-tg" -m "$dir/m.gguf" --sweep-tg 8 -d 16
expect_error "sweep tg below 0" "sweep-tg: -1 is outside 0 to" -m "$dir/m.gguf" --sweep-tg -1
expect_error "gen not a number" "n-gen: 'abc' is not a whole number" -m "$dir/m.gguf" -n abc
expect_error "calibrate to non-json" "calibrate: '$dir/cal.txt' must end in .json" --calibrate "$dir/cal.txt"
expect_error "unknown profile" "unknown hardware profile 'tpu-v9'" -m "$dir/m.gguf" --hw tpu-v9
expect_error "calibrate a non-weight dtype" "calibrate-dtypes: 'i32' is not a weight dtype" --calibrate "$dir/c.json" --calibrate-dtypes f16,i32
expect_error "dtypes without calibrate" "calibrate-dtypes requires --calibrate" -m "$dir/m.gguf" --calibrate-dtypes f16
expect_error "calibrate and --hw" "calibrate excludes --hw" -m "$dir/m.gguf" --hw h100-sxm --calibrate "$dir/c.json"
echo "$failures failures"
[[ $failures -eq 0 ]]
