#!/usr/bin/env python3
"""Simulations per second of the `mcts` player beside `ggp bench`, measured side by side.

    cargo build --release -p ggp
    python3 scripts/mcts_speed.py [--rounds 3] [--seconds 5] [--playclock 1] [GAME ...]

For each game and round, one after the other: `ggp bench GAME --seconds S` (the fast engine's
512 playouts side by side, "batch"), `ggp bench GAME --seconds S --sequential` (one playout at
a time) and `ggp arena GAME --player mcts --player random --matches 1 --playclock P` (the
player's rollouts and iterations over its thinking time). Rounds alternate so that a change of
load touches all three alike. Games are read from ../shared/corpus/games/base (`$GGP_SHARED`);
the default is the six games of the reasoner benchmark. Prints every round and a Markdown table
of medians, with the one-minute load average when each round began.
"""

import argparse
import json
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


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def bench(path, seconds, sequential):
    cmd = [GGP, "bench", path, "--seconds", str(seconds)]
    if sequential:
        cmd.append("--sequential")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    m = re.search(r"^playouts/s:\s+([0-9.]+)", out.stdout, re.M)
    if out.returncode != 0 or not m:
        sys.exit(f"ggp bench failed on {path}: {out.stderr.strip()}")
    return float(m.group(1))


def arena(path, playclock, seed):
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "arena.json")
        cmd = [GGP, "arena", path, "--player", "mcts", "--player", "random", "--matches", "1",
               "--startclock", "3", "--playclock", str(playclock), "--seed", str(seed),
               "--no-db", "--json", result]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if out.returncode != 0 or not os.path.exists(result):
            sys.exit(f"ggp arena failed on {path}: {out.stderr.strip()}")
        with open(result) as f:
            mcts = json.load(f)["players"][0]
    return mcts["sims_per_sec"] or 0.0, mcts["iterations_per_sec"] or 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("games", nargs="*", default=GAMES)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--playclock", type=int, default=1)
    args = ap.parse_args()
    if not os.path.exists(GGP):
        sys.exit(f"{GGP} is missing: cargo build --release -p ggp")
    rows = []
    for game in args.games:
        path = os.path.join(SHARED, "corpus", "games", "base", game + ".kif")
        if not os.path.exists(path):
            print(f"skipped {game}: {path} is absent", file=sys.stderr)
            continue
        runs = []
        for r in range(1, args.rounds + 1):
            began = load()
            batch = bench(path, args.seconds, False)
            seq = bench(path, args.seconds, True)
            sims, iters = arena(path, args.playclock, r)
            runs.append((batch, seq, sims, iters, began))
            print(f"{game} round {r} (load {began:.2f}): batch {batch:,.0f}/s, one at a time "
                  f"{seq:,.0f}/s, mcts {sims:,.0f} rollouts/s ({sims / batch:.0%} of batch), "
                  f"{iters:,.0f} iterations/s ({iters / batch:.0%})", flush=True)
        med = [statistics.median(x[i] for x in runs) for i in range(4)]
        loads = [x[4] for x in runs]
        rows.append((game, med, min(loads), max(loads)))
    print()
    print("| game | mcts rollouts/s | mcts iterations/s | bench batch | bench one at a time "
          "| rollouts ÷ batch | iterations ÷ batch | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|")
    for game, (batch, seq, sims, iters), lo, hi in rows:
        print(f"| {game} | {sims:,.0f} | {iters:,.0f} | {batch:,.0f} | {seq:,.0f} "
              f"| {sims / batch:.0%} | {iters / batch:.0%} | {lo:.1f} – {hi:.1f} |")


if __name__ == "__main__":
    main()
