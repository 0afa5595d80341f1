#!/usr/bin/env python3
"""The seed trace is reproduced exactly by --cost-model seed, and --cost-model default differs
from it only on the lines docs/cost-model.md explains: the totals, the temporary-storage
headline and the per-node costs lines."""
import subprocess
import sys

cost, model, seed_file = sys.argv[1:4]
args = [cost, model, "--ctx", "32768", "--tokens", "1", "--past", "0", "--trace"]
def lines(text):
    return [l.rstrip() for l in text.splitlines()]
seed = lines(subprocess.run(args + ["--cost-model", "seed"], capture_output=True, check=True, text=True).stdout)
default = lines(subprocess.run(args + ["--cost-model", "default"], capture_output=True, check=True, text=True).stdout)
expected = lines(open(seed_file, encoding="utf-8").read())
if seed != expected:
    bad = next(i for i, (a, b) in enumerate(zip(seed + [None] * len(expected), expected)) if a != b)
    print(f"seed model differs from the seed trace at line {bad + 1}:\n  ours: {seed[bad] if bad < len(seed) else None}\n  seed: {expected[bad]}")
    sys.exit(1)
explained = ("Size of temporary storage", "  read:", "  write:", "  fmul:", "  fadd:", "  fdiv:", "  fexp:",
             "  fsin:", "  sqrt:", "  fpow:")
# The totals block may gain metrics (default counts fadd for every multiply-add, write for every op).
body_default = default[default.index(next(l for l in default if l.startswith("<"))):]
body_seed = seed[seed.index(next(l for l in seed if l.startswith("<"))):]
if len(body_default) != len(body_seed):
    print(f"trace bodies differ in length: {len(body_default)} vs {len(body_seed)}")
    sys.exit(1)
unexplained = [(i, a, b) for i, (a, b) in enumerate(zip(body_default, body_seed))
               if a != b and "costs: {" not in a]
head_default = default[:len(default) - len(body_default)]
unexplained += [(i, l, "") for i, l in enumerate(head_default) if l.strip() and not l.startswith(explained)
                and l != "Total cost:"]
for i, a, b in unexplained[:10]:
    print(f"unexplained difference at body line {i}:\n  default: {a}\n  seed:    {b}")
changed = sum(a != b for a, b in zip(body_default, body_seed))
print(f"seed trace reproduced ({len(expected)} lines); default differs on {changed} costs lines; "
      f"{len(unexplained)} unexplained")
sys.exit(1 if unexplained else 0)
