#!/usr/bin/env python3
"""Reasoner speed side by side: `ggp bench` (the fast engine's bit-parallel playouts, the fast
engine one playout at a time, the reference engine) against the baselines
of ../shared/bench (the hand-written C tic-tac-toe and the SWI-Prolog translation), in
alternating rounds on one machine, reporting medians and the median of the per-round ratios.

    cargo build --release -p ggp
    python3 scripts/bench_reasoner.py [--rounds 5] [--seconds 5] [GAME ...]

Needs gcc, python3 and swipl (`apt-get install swi-prolog-nox`); a baseline that is missing is
reported as such. Prints a Markdown table and every round's figures.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("GGP_SHARED", os.path.join(ROOT, "..", "shared"))
GGP = os.path.join(ROOT, "target", "release", "ggp")
GAMES = ["ticTacToe", "connectFour", "breakthrough", "reversi", "hex", "speedChess"]


def run(cmd, timeout):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return out.stdout + out.stderr
    except subprocess.TimeoutExpired:
        return ""


def ggp(game, engine, seconds, *extra):
    out = run([GGP, "bench", game, "--seconds", str(seconds), "--engine", engine, *extra],
              seconds + 60)
    rate = re.search(r"playouts/s:\s+([\d.]+)", out)
    build = re.search(r"build time:\s+([\d.]+) ms", out)
    return (float(rate.group(1)) if rate else None, float(build.group(1)) if build else None)


def prolog(pl, seconds):
    out = run(["swipl", "-O", os.path.join(SHARED, "bench/prolog/playout.pl"), pl, str(seconds)],
              seconds * 3 + 30)
    m = re.search(r"([\d.]+) playouts/s", out)
    rate = float(m.group(1)) if m else None
    return rate if rate else None


def handwritten(binary):
    m = re.search(r"([\d.]+) playouts/s", run([binary], 60))
    return float(m.group(1)) if m else None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x):
    if x is None:
        return "—"
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("games", nargs="*", default=GAMES)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    ttt = None
    try:
        ttt = os.path.join(tmp, "ttt")
        subprocess.run(["gcc", "-O2", "-o", ttt, os.path.join(SHARED, "bench/handwritten/ttt.c")],
                       check=True)
    except (OSError, subprocess.CalledProcessError):
        ttt = None
    have_swipl = subprocess.run(["which", "swipl"], capture_output=True).returncode == 0
    rows = []
    for name in args.games:
        game = os.path.join(SHARED, "corpus/games/base", name + ".kif")
        pl = os.path.join(tmp, name + ".pl")
        if have_swipl:
            with open(pl, "w") as f:
                subprocess.run([sys.executable, os.path.join(SHARED, "bench/prolog/kif2pl.py"), game],
                               stdout=f, check=True)
        rounds = []
        for r in range(args.rounds):
            fast, build = ggp(game, "fast", args.seconds)
            ref, _ = ggp(game, "reference", args.seconds)
            pro = prolog(pl, args.seconds) if have_swipl else None
            hand = handwritten(ttt) if (ttt and name == "ticTacToe") else None
            seq, _ = ggp(game, "fast", args.seconds, "--sequential")
            rounds.append((fast, build, ref, pro, hand, seq))
            print(f"{name} round {r + 1}: fast {fmt(fast)} (build {build} ms), "
                  f"one at a time {fmt(seq)}, reference {fmt(ref)}, "
                  f"prolog {fmt(pro)}, handwritten {fmt(hand)}", file=sys.stderr, flush=True)

        def ratio(i, j):
            return median([a[i] / a[j] for a in rounds if a[i] and a[j]])

        rows.append((name, median([a[0] for a in rounds]), median([a[1] for a in rounds]),
                     median([a[2] for a in rounds]), ratio(0, 2), median([a[3] for a in rounds]),
                     ratio(0, 3), median([a[4] for a in rounds]), ratio(0, 4),
                     median([a[5] for a in rounds]), ratio(5, 2), rounds))
    print("| game | fast playouts/s | build ms | one at a time | reference | fast ÷ reference | "
          "one at a time ÷ reference | SWI-Prolog | fast ÷ Prolog | hand-written C | fast ÷ C |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, fast, build, ref, r_ref, pro, r_pro, hand, r_hand, seq, r_seq, _) in rows:
        rr = lambda x: "—" if x is None else f"{x:,.1f}x" if x >= 1 else f"{x:.3f}x"
        print(f"| {name} | {fmt(fast)} | {fmt(build)} | {fmt(seq)} | {fmt(ref)} | {rr(r_ref)} | "
              f"{rr(r_seq)} | {fmt(pro)} | {rr(r_pro)} | {fmt(hand)} | {rr(r_hand)} |")
    print()
    for (name, *_, rounds) in rows:
        print(f"- {name}: " + "; ".join(
            f"fast {fmt(a[0])} / one at a time {fmt(a[5])} / reference {fmt(a[2])} / "
            f"Prolog {fmt(a[3])}" + (f" / C {fmt(a[4])}" if a[4] else "") for a in rounds))


if __name__ == "__main__":
    main()
