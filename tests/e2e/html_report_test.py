#!/usr/bin/env python3
"""The HTML report in headless Chromium with no network: engine-bench sweeps on a synthesized
model (the sweep json contract, engine-bench --report), and the full page for the fixture
profile plus that sweep. The page measures its own charts into <pre id="selftest">; this reads
it from Chromium's --dump-dom. Exits 77 (skipped) when Chromium is not installed."""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# No sandbox (containers), no GPU, nothing that phones home; the proxy leads nowhere, so a page
# that needed the network would fail to load what it asked for.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--proxy-server=127.0.0.1:9", "--hide-scrollbars"]
PHASE_CHARTS = ["layers", "roofline", "optypes"]
SWEEP_CHARTS = ["sweep-pp-throughput", "sweep-pp-memory", "sweep-tg-throughput", "sweep-tg-memory"]

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def selftest(chromium, page):
    """Loads `page` in a fresh profile and returns the page's own self-test summary."""
    with tempfile.TemporaryDirectory(prefix="html-report-chromium-") as profile:
        run = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                              "file://" + os.path.abspath(page)], capture_output=True, text=True, timeout=180)
    if run.returncode != 0:
        raise RuntimeError(f"chromium exited {run.returncode}: {run.stderr[-2000:]}")
    found = re.search(r'<pre id="selftest">(.*?)</pre>', run.stdout, re.S)
    if not found or not found.group(1).strip():
        raise RuntimeError("the page wrote no self-test (did its script run?)")
    return json.loads(html.unescape(found.group(1)))


def check_page(chromium, page, expected_charts, expected_tables):
    name = os.path.basename(page)
    source = open(page, encoding="utf-8").read()
    urls = set(re.findall(r'(?:https?:)?//[^\s"\'<>)]+', source)) - {"http://www.w3.org/2000/svg"}
    check(not urls, f"{name}: no URLs but the SVG namespace in the source {sorted(urls)[:5]}")
    for svg in re.findall(r"<svg.*?</svg>", source, re.S):
        label = re.search(r'aria-label="([^"]*)"', svg).group(1)
        axes = re.findall(r'class="axis"[^>]*>([^<]*)<', svg)
        check(len(axes) == 2 and all(a.strip() for a in axes), f"{name}: '{label}' has two axis titles {axes}")
        check(bool(re.search(r'class="title"[^>]*>[^<]+<', svg)), f"{name}: '{label}' has a title")
    report = selftest(chromium, page)
    check(report["errors"] == [], f"{name}: no script, resource or policy errors {report['errors']}")
    check(report["external_refs"] == 0, f"{name}: no external references ({report['external_refs']})")
    check(report["tables"] == expected_tables, f"{name}: {report['tables']} tables, expected {expected_tables}")
    ids = [c["id"] for c in report["charts"]]
    check(ids == expected_charts, f"{name}: charts {ids}")
    for c in report["charts"]:
        check(c["width"] > 100 and c["height"] > 100 and c["marks"] > 0 and c["drawn_marks"] == c["marks"],
              f"{name}: {c['id']} rendered {c['width']:.0f}x{c['height']:.0f} px, "
              f"{c['drawn_marks']}/{c['marks']} marks with a size")
    return report


def check_sweep_json(doc):
    sweeps = doc["sweeps"]
    check([p["tokens"] for p in sweeps["pp"]] == [16, 32, 64], f"pp sweep points {[p.get('tokens') for p in sweeps['pp']]}")
    check([p["depth"] for p in sweeps["tg"]] == [0, 32], f"tg sweep points {[p.get('depth') for p in sweeps['tg']]}")
    for kind in ("pp", "tg"):
        points = sweeps[kind]
        for p in points:
            check(p["t_s"] > 0 and p["sd"] >= 0 and isinstance(p["peak_rss"], int) and p["peak_rss"] > 0,
                  f"{kind} point {p.get('tokens', p.get('depth'))}: t_s {p['t_s']:.1f}, peak_rss {p['peak_rss']}")
            check(p["session_bytes"] == p["weights"] + p["kv_cache"] + p["compute_buffer"],
                  f"{kind}: session bytes = weights + KV + compute buffer")
        kv = [p["kv_cache"] for p in points]
        check(all(a < b for a, b in zip(kv, kv[1:])), f"{kind}: the KV cache grows along the sweep {kv}")
        check(len({p["weights"] for p in points}) == 1, f"{kind}: the weights stay the same")
    check(len(doc["tests"]) == 5 and all("samples_ts" in t for t in doc["tests"]), "tests: the 5 records in full")


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--bench", "--gguf", "--render", "--profile", "--dir", "--run"):
        ap.add_argument(flag, required=True)
    args = ap.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("SKIP: chromium is not installed (tools/setup.sh installs the Debian package)")
        return 77
    os.makedirs(args.dir, exist_ok=True)
    model, bench_json, bench_html, full_html = (os.path.join(args.dir, f)
                                                for f in ("m.gguf", "bench.json", "bench.html", "report.html"))
    subprocess.run([args.gguf, "synth", "--out", model, "--type", "q8_0", "--layers", "2", "--embd", "64", "--ff",
                    "128", "--heads", "4", "--kv-heads", "2"], check=True, stdout=subprocess.DEVNULL)
    with open(bench_json, "w") as out:
        subprocess.run([args.bench, "-m", model, "--sweep-pp", "16,32,64", "--sweep-tg", "0,32", "-n", "8", "-r", "2",
                        "-t", "2", "-o", "json", "--report", bench_html], check=True, stdout=out, timeout=300)
    check_sweep_json(json.load(open(bench_json)))
    subprocess.run([args.render, full_html, "--profile", args.profile, "--bench", bench_json], check=True)

    check_page(chromium, bench_html, SWEEP_CHARTS, 3)
    phases = [p for p in ("prefill", "decode") if p in json.load(open(args.profile))["phases"]]
    report = check_page(chromium, full_html, [f"{p}-{c}" for p in phases for c in PHASE_CHARTS] + SWEEP_CHARTS,
                        6 * len(phases) + 3)
    check_roofline(report, json.load(open(args.profile)), phases)

    # engine-run's own report of a real profiled run, checked against the profile it printed.
    run_html, run_json = os.path.join(args.dir, "run.html"), os.path.join(args.dir, "run.json")
    subprocess.run([args.run, "-m", model, "-p", "Once upon a time", "-n", "8", "-t", "2", "--profile",
                    "--profile-format", "json", "--profile-out", run_json, "--report", run_html], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    run_report = check_page(chromium, run_html, [f"{p}-{c}" for p in ("prefill", "decode") for c in PHASE_CHARTS], 12)
    check_roofline(run_report, json.load(open(run_json)), ("prefill", "decode"))
    print(f"{len(failures)} failures")
    return 1 if failures else 0


def check_roofline(report, profile, phases):
    for p in phases:
        roofline = next(c for c in report["charts"] if c["id"] == f"{p}-roofline")
        placed = sum(1 for n in profile["phases"][p]["nodes"] if n["intensity"] > 0 and n["achieved_gflops_s"] > 0)
        ceilings = len(set(v for v in profile["hardware"]["peak_tflops"].values() if v > 0))
        check(roofline["marks"] == placed + 1 + ceilings,
              f"{p} roofline: a point per placed node ({placed}), the memory roof and {ceilings} ceilings")


if __name__ == "__main__":
    sys.exit(main())
