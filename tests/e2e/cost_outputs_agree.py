#!/usr/bin/env python3
"""engine-cost's text, JSON and CSV outputs agree on the same numbers, for every preset on every
hardware profile: the text summary's module tree, op table, totals, memory and speed lines are
read back and checked against the JSON; the CSV's per-node figures against the JSON's nodes.
The text outputs also run under the sanitizer build, which must print the same text.

usage: cost_outputs_agree.py ENGINE_COST ENGINE_COST_ASAN MODEL.gguf"""
import csv
import io
import json
import math
import re
import subprocess
import sys

cost, cost_asan, model_file = sys.argv[1:4]
failures = []


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise SystemExit(f"{binary} {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return p.stdout


def check(ok, what):
    if not ok:
        failures.append(what)


UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def seconds(text, what):
    """A human_seconds() value, or a failure when it is not one (the garbage this test guards against)."""
    m = re.fullmatch(r"(\d{1,6}\.\d{3}) (s|ms|us)", text.strip())
    if not m:
        failures.append(f"{what}: '{text.strip()[:60]}' is not a time")
        return None
    return float(m.group(1)) * UNITS[m.group(2)], 0.0005 * UNITS[m.group(2)]  # value, display rounding


def near(shown, exact, rel=1e-6):
    value, rounding = shown
    return abs(value - exact) <= rounding + rel * abs(exact) + 1e-15


def module_table(text):
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Module "))
    header = [c.strip() for c in lines[start].split("|")]
    rows = []
    for l in lines[start + 2:]:
        if not l.strip():
            break
        cells = [c.strip() for c in l.split("|")]
        rows.append(dict(zip(header, cells), name=cells[0].lstrip("├└│─ ")))
    return rows


def op_table(text):
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("op "))
    rows = {}
    for l in lines[start + 1:]:
        if not l.strip():
            break
        m = re.match(r"(\S+)\s+.*?\s(\d+\.\d{3} (?:s|ms|us))\s+([\d.]+)%\s+([\d.]+)%$", l)
        check(m is not None, f"op row unreadable: {l}")
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def plausible(label, text, step_s):
    """Every time in the module tree is a time, and none exceeds the whole step."""
    modules = module_table(text)
    for r in modules:
        for col in ("Time", "Self time"):
            if r[col]:
                t = seconds(r[col], f"{label}: module {r['name']} {col}")
                if t and t[0] > step_s + t[1]:
                    failures.append(f"{label}: module {r['name']} {col} {r[col]} exceeds the step's {step_s} s")
    return modules


def compare(label, text, doc, table):
    nodes = doc["nodes"]
    step_s = doc["speed"]["step_s"]
    check(abs(sum(n["predicted"]["time_s"] for n in nodes) - step_s) <= 1e-9 * step_s, f"{label}: json nodes sum")

    modules = plausible(label, text, step_s)
    root = modules[0]
    check(root["Nodes"] == str(len(nodes)), f"{label}: root module has {root['Nodes']} nodes, json {len(nodes)}")
    t = seconds(root["Time"], f"{label}: root Time")
    check(t is None or near(t, step_s), f"{label}: root Time {root['Time']} vs json step_s {step_s}")
    for r in modules:  # the layer rows, named by their index
        if r["name"].isdigit():
            layer = int(r["name"])
            exact = sum(n["predicted"]["time_s"] for n in nodes if n["layer"] == layer)
            t = seconds(r["Time"], f"{label}: layer {layer} Time")
            check(t is None or near(t, exact), f"{label}: layer {layer} Time {r['Time']} vs json {exact}")
            count = sum(1 for n in nodes if n["layer"] == layer)
            check(r["Nodes"] == str(count), f"{label}: layer {layer} has {r['Nodes']} nodes, json {count}")

    for op, shown in op_table(text).items():
        exact = sum(n["predicted"]["time_s"] for n in nodes if n["op"] == op)
        t = seconds(shown, f"{label}: op {op}")
        check(t is None or near(t, exact), f"{label}: op {op} time {shown} vs json {exact}")

    m = re.search(r"this step +(\S+ \S+),", text)
    check(m is not None and near(seconds(m.group(1), f"{label}: this step") or (math.inf, 0), step_s),
          f"{label}: 'this step' line vs json step_s {step_s}")
    m = re.search(r"decode +([\d.]+) tok/s", text)
    check(m is not None and abs(float(m.group(1)) - doc["speed"]["decode_tok_s"]) <= 0.05 + 1e-9 * doc["speed"]["decode_tok_s"],
          f"{label}: decode tok/s")
    for part, key in (("weights", "weights"), ("KV cache", "kv_cache"), ("compute buffer", "compute_buffer")):
        m = re.search(rf"^  {part} +(\d+) bytes", text, re.M)
        check(m is not None and int(m.group(1)) == doc["memory"][key], f"{label}: memory {part}")
    for metric, value in doc["totals"].items():
        m = re.search(rf"^  {metric} +(\S+)  \(", text, re.M)
        check(m is not None and abs(float(m.group(1)) - value) <= 1e-5 * abs(value), f"{label}: total {metric}")

    check(len(table) == len(nodes), f"{label}: csv has {len(table)} nodes, json {len(nodes)}")
    for row, n in zip(table, nodes):
        if row["name"] != n["name"] or abs(float(row["predicted_s"]) - n["predicted"]["time_s"]) > 1e-5 * n["predicted"]["time_s"]:
            failures.append(f"{label}: csv node {row['index']} {row['name']} differs from json {n['name']}")
            break
        if any(abs(float(row[k]) - v) > 1e-5 * abs(v) for k, v in n["counts"].items()):
            failures.append(f"{label}: csv counts of node {row['name']} differ from json {n['counts']}")
            break


presets = [l.split()[0] for l in run(cost, "--preset", "list").splitlines()]
profiles = [l.split()[0] for l in run(cost, "--hw", "list").splitlines()[1:]]
check(len(presets) >= 5 and "cpu-local" in profiles and len(profiles) >= 5, f"lists: {presets} {profiles}")
sources = [["--preset", p] for p in presets] + [[model_file]]
checked = 0
for source in sources:
    for hw in profiles:
        args = [*source, "--hw", hw, "--tokens", "1", "--past", "7"]
        label = " ".join(args)
        text = run(cost, *args)
        if hw == "cpu-local":  # measured anew by every run, so only one output can be checked, on its own
            if source[0] == model_file:
                m = re.search(r"this step +(\S+ \S+),", text)
                step = seconds(m.group(1) if m else "", f"{label}: this step")
                if step:
                    plausible(label, text, step[0] + step[1])
                checked += 1
            continue
        doc = json.loads(run(cost, *args, "--format", "json"))
        table = list(csv.DictReader(io.StringIO(run(cost, *args, "--format", "csv"))))
        compare(label, text, doc, table)
        checked += 1

# The sanitizer build prints the same text (a value read after its scope ended aborts it instead).
for args in ([model_file, "--hw", "h100-sxm"], ["--preset", "llama-3.2-1b", "--hw", "rtx-4090", "--tokens", "9"],
             ["--preset", "gpt2", "--hw", "a100-80gb"], [model_file, "--trace"], [model_file]):
    check(run(cost_asan, *args) == run(cost, *args), f"sanitizer build's text differs: {' '.join(args)}")

for f in failures[:20]:
    print("FAIL", f)
print(f"{checked} source x hardware combinations compared; {len(failures)} failures")
sys.exit(1 if failures else 0)
