#!/usr/bin/env python3
"""Greedy generation prints the prompt followed by exactly the reference's first text."""
import json
import subprocess
import sys

run, model, ref = sys.argv[1:4]
with open(ref, encoding="utf-8") as f:
    first = json.loads(f.readline())
cmd = [run, "-m", model, "-p", first["prompt"], "-n", str(len(first["generated"])), "--temp", "0", "-t", "2"]
out = subprocess.run(cmd, capture_output=True, check=True).stdout.decode("utf-8", errors="replace")
expected = first["prompt"] + first["text"] + "\n"
if out != expected:
    print(f"expected:\n{expected!r}\nactual:\n{out!r}")
    sys.exit(1)
print(f"generated text matches the reference ({len(first['generated'])} tokens)")
