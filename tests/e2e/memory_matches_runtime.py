#!/usr/bin/env python3
"""engine-cost's memory estimate equals what engine-run allocates, to the byte, per model, on the
backend ENGINE_BACKEND names (default cpu)."""
import json
import os
import re
import subprocess
import sys

cost, run = sys.argv[1:3]
models = sys.argv[3:]
backend = os.environ.get("ENGINE_BACKEND", "cpu")
failures = 0
for model in models:
    est = json.loads(subprocess.run([cost, model, "--format", "json", "-t", "2", "--backend", backend], capture_output=True,
                                    check=True, text=True).stdout)["memory"]
    err = subprocess.run([run, "-m", model, "-p", "Once upon a time", "-n", "2", "-t", "2", "--backend", backend],
                         capture_output=True,
                         check=True).stderr.decode("utf-8", errors="replace")
    m = re.search(r"memory: weights (\d+) bytes \| KV cache (\d+) bytes \| compute buffer (\d+) bytes \| scratch (\d+) bytes",
                  err)
    if not m:
        print(f"{model}: no memory line in engine-run's output:\n{err}")
        failures += 1
        continue
    actual = dict(zip(("weights", "kv_cache", "compute_buffer", "scratch"), map(int, m.groups())))
    for key, value in actual.items():
        status = "ok" if est[key] == value else "MISMATCH"
        failures += status != "ok"
        print(f"{status:8} {model}: {key} estimated {est[key]}, allocated {value}")
print(f"{len(models) * 4 - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
