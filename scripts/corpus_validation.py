#!/usr/bin/env python3
"""`ggp validate` over the whole corpus, one game after another, and the table of
docs/corpus-validation.md: how many games are proved well-formed, how many refuted (which
property) with a counterexample, how many undecided, and the time per game.

    cargo build --release -p ggp
    python3 scripts/corpus_validation.py [--seconds 5] [--jobs 1] [--raw FILE] > table.md
    python3 scripts/corpus_validation.py --from FILE --seconds 5 > table.md

Each game gets `--seconds` for its exploration and playouts (building the reasoner is not
counted in that budget, but is in the wall time reported). `--raw` keeps every game's JSON
lines; `--from` makes the table again from them.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("GGP_SHARED", os.path.join(ROOT, "..", "shared"))
GGP = os.path.join(ROOT, "target", "release", "ggp")


def games():
    out = []
    for top in ("games", "gdl2"):
        base = os.path.join(SHARED, "corpus", top)
        for d, _, files in os.walk(base):
            out.extend(os.path.join(d, f) for f in files if f.endswith(".kif"))
    return sorted(out)


def validate(game, seconds, extra):
    begin = time.monotonic()
    try:
        p = subprocess.run([GGP, "validate", game, "--format", "json", "--seconds", str(seconds),
                            *extra], capture_output=True, text=True, timeout=seconds * 4 + 300)
        stdout, stderr, code = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        stdout, stderr, code = "", "timed out", None
    wall = time.monotonic() - begin
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    summary = next((l["summary"] for l in lines if "summary" in l), None)
    findings = [l for l in lines if "summary" not in l]
    return {"game": os.path.relpath(game, os.path.join(SHARED, "corpus")), "code": code,
            "wall": wall, "summary": summary, "findings": findings,
            "note": stderr.strip().splitlines()[-1] if stderr.strip() else ""}


def outcome(r):
    s = r["summary"]
    if s is None:
        blocking = sorted({f["code"] for f in r["findings"] if f.get("severity") == "error"})
        if blocking:
            return "refused", "blocking errors: " + ", ".join(blocking)
        return "failed", r["note"]
    errors = sorted({f["code"] for f in r["findings"] if f["severity"] == "error"})
    if s["refuted"]:
        return "refuted", ", ".join(s["refuted"])
    if errors:
        return "cannot evaluate", ", ".join(errors)
    if s["exhaustive"] and not s["undecided"]:
        return "proved", ""
    return "undecided", ", ".join(s["undecided"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--raw")
    ap.add_argument("--from", dest="source")
    ap.add_argument("extra", nargs="*", help="more `ggp validate` options, after --")
    args = ap.parse_args()
    if args.source:
        with open(args.source) as f:
            results = [json.loads(line) for line in f]
    else:
        files = games()
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda g: validate(g, args.seconds, args.extra), files))
    if args.raw:
        with open(args.raw, "w") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    counts = {}
    by_property = {}
    for r in results:
        kind, detail = outcome(r)
        r["outcome"], r["detail"] = kind, detail
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "refuted":
            for p in detail.split(", "):
                by_property[p] = by_property.get(p, 0) + 1
    total_wall = sum(r["wall"] for r in results)
    print(f"Budget: `--seconds {args.seconds:g}` per game"
          + (f" (`{' '.join(args.extra)}`)" if args.extra else "") + f", {args.jobs} at a time; "
          f"{len(results)} games in {total_wall / 60:.1f} min of wall time.\n")
    walls = sorted(r["wall"] for r in results)
    print(f"Time per game (wall, building the reasoner included): median {walls[len(walls) // 2]:.2f} s, "
          f"mean {total_wall / len(walls):.2f} s, longest {walls[-1]:.2f} s.\n")
    print("| outcome | games |\n|---|---|")
    for kind in ("proved", "refuted", "undecided", "cannot evaluate", "refused", "failed"):
        if kind in counts:
            print(f"| {kind} | {counts[kind]} |")
    print("\n| refuted property | games |\n|---|---|")
    for p, n in sorted(by_property.items(), key=lambda x: -x[1]):
        print(f"| {p} | {n} |")
    print("\n| game | outcome | property / codes | states | depth | exhaustive | playouts "
          "| validation s | wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        s = r["summary"] or {}
        codes = sorted({f["code"] for f in r["findings"] if f.get("severity") in ("error", "warning")})
        detail = r["detail"]
        if r["outcome"] == "refuted" and codes:
            detail += " (" + ", ".join(codes) + ")"
        print(f"| {r['game']} | {r['outcome']} | {detail} | {s.get('states', '')} | "
              f"{s.get('depth', '')} | {'yes' if s.get('exhaustive') else ('no' if s else '')} | "
              f"{s.get('playouts', '')} | "
              + (f"{s['seconds']:.2f}" if s else "")
              + f" | {r['wall']:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
