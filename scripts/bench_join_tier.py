#!/usr/bin/env python3
"""The fast engine's join tier against the reference engine, side by side: `ggp bench` on the
games too large for a network (those listed in crates/gdl-reason/tests/join_tier.txt, each
distinct game once), one playout at a time, the two engines alternating in every round. Reports
states per second (playouts that end in an error of the game's own rules, as chess's do at its
move limit, count their states like any other), the median of each engine's rounds and the
median of the per-round ratios, and the build times.

    cargo build --release -p ggp
    python3 scripts/bench_join_tier.py [--rounds 2] [--seconds 4] [GAME ...]

GAME is a path under ../shared/ (as join_tier.txt lists them); by default one of each group of
copies. Prints a Markdown table and every round's figures.
"""

import argparse
import os
import re
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("GGP_SHARED", os.path.join(ROOT, "..", "shared"))
GGP = os.path.join(ROOT, "target", "release", "ggp")
LISTING = os.path.join(ROOT, "crates", "gdl-reason", "tests", "join_tier.txt")


def bench(game, engine, seconds):
    cmd = [GGP, "bench", os.path.join(SHARED, game), "--seconds", str(seconds),
           "--engine", engine, "--sequential"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
        text = out.stdout + out.stderr
    except subprocess.TimeoutExpired:
        return None, None, "timed out"
    rate = re.search(r"states/s:\s+([\d.]+)", text)
    build = re.search(r"build time:\s+([\d.]+) ms", text)
    engine_line = re.search(r"engine:\s+(\S+)", text)
    note = "" if rate else text.strip().splitlines()[-1] if text.strip() else "no output"
    if engine_line and engine == "fast" and "join plans" not in text:
        note = "not on the join tier"
    return (float(rate.group(1)) if rate else None,
            float(build.group(1)) if build else None, note)


# One of each kind: the country games of AAAI 2006 are alike, and copies are left out.
DEFAULT = ["base/chess", "base/alexChess", "gamecontroller/benderng_Chess", "base/sudoku",
           "base/merrills", "base/mummymaze1p", "base/laikLee_hex", "base/amazonsTorus",
           "base/slaughter", "fhars-ggp-games/bonaparte", "aaai2006/BRAZIL",
           "aaai2006/FARMERS_S", "base/gt_two_thirds_6p", "base/ruleDepthExponential",
           "uwa-hyperplayer/small_dominion", "ric2b-ggp-base/graphColouring1"]


def default_games():
    listed = [line.split("\t")[0] for line in open(LISTING)]
    return [next(p for p in listed if "/" + g in p and
                 os.path.basename(p).startswith(os.path.basename(g) + "."))
            for g in DEFAULT]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("games", nargs="*")
    args = parser.parse_args()
    games = args.games or default_games()
    rows = []
    for game in games:
        joins, reference, ratios, builds, notes = [], [], [], [], set()
        for r in range(args.rounds):
            order = ["fast", "reference"] if r % 2 == 0 else ["reference", "fast"]
            got = {}
            for engine in order:
                rate, build, note = bench(game, engine, args.seconds)
                got[engine] = rate
                if note:
                    notes.add(f"{engine}: {note}")
                if engine == "fast":
                    builds.append(build)
            joins.append(got["fast"])
            reference.append(got["reference"])
            if got["fast"] and got["reference"]:
                ratios.append(got["fast"] / got["reference"])
            print(f"round {r + 1} {game}: join tier {got['fast']}, reference {got['reference']}",
                  flush=True)
        rows.append((game, median(joins), median(reference), median(ratios), median(builds),
                     "; ".join(sorted(notes))))
    print()
    print("| game | join tier states/s | reference states/s | join tier ÷ reference | build (network refused, then join plans) | notes |")
    print("|---|---|---|---|---|---|")
    fmt = lambda x, f: "–" if x is None else f.format(x)
    for game, j, r, ratio, build, notes in rows:
        print(f"| {game} | {fmt(j, '{:,.0f}')} | {fmt(r, '{:,.0f}')} | {fmt(ratio, '{:.2f}')} "
              f"| {fmt(build, '{:,.0f} ms')} | {notes} |")


if __name__ == "__main__":
    main()
