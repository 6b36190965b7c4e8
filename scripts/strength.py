#!/usr/bin/env python3
"""Player strength on GDL-II games: `ggp match` with built-in players, many seeds, mean goal of
the player under test with a 95% confidence interval (normal approximation; for a 0/100 game
the win rate's Wald interval).

    cargo build --release -p ggp
    python3 scripts/strength.py [--games N] [--playclock S] [--strategies a,b]
                                [--krieg-games N] [--against random,sample]

Monty Hall is `games/montyhall.kif` (the contestant against the manager's `random`);
Kriegspiel tic-tac-toe 4x4 is read from ../shared (`$GGP_SHARED`) and skipped when absent: the
player under test plays each side in turn against each of `--against` (default `random`). A match the game itself cannot end
(Kriegspiel's rules give three goal values when both players complete a line at once) is
counted as failed and left out of the mean. Prints a Markdown table.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("GGP_SHARED", os.path.join(ROOT, "..", "shared"))
GGP = os.path.join(ROOT, "target", "release", "ggp")


def match(game, players, seed, playclock):
    """The goals of one match (role order, `random` included), or None if it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "match.json")
        cmd = [GGP, "match", game, "--no-db", "--json", record, "--seed", str(seed),
               "--startclock", "1", "--playclock", str(playclock), "--grace-ms", "500"]
        for p in players:
            cmd += ["--player", p]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if out.returncode != 0 or not os.path.exists(record):
            print(f"match failed ({seed}): {out.stderr.strip()}", file=sys.stderr)
            return None
        with open(record) as f:
            data = json.load(f)
        if any(e for row in data["errors"] for e in row):
            print(f"errors in match {seed}: {data['errors']}", file=sys.stderr)
        return data["goalValues"]


def summary(values):
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    half = 1.96 * math.sqrt(var / n)
    return n, mean, half


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--playclock", type=int, default=1)
    parser.add_argument("--strategies", default="sample,random,legal")
    parser.add_argument("--krieg-games", type=int, default=40)
    parser.add_argument("--against", default="random",
                        help="Kriegspiel: the opponents, comma-separated (default: random)")
    args = parser.parse_args()
    rows = []
    monty = os.path.join(ROOT, "games", "montyhall.kif")
    for strategy in args.strategies.split(","):
        goals = [match(monty, [strategy], seed, args.playclock) for seed in range(args.games)]
        values = [g[0] for g in goals if g]
        rows.append(("Monty Hall (games/)", strategy, "random (the manager)", values,
                     len(goals) - len(values)))
    krieg = os.path.join(SHARED, "corpus", "gdl2", "uwa-hyperplayer", "kriegTTT_4x4.kif")
    if os.path.exists(krieg) and args.krieg_games > 0:
        for against in args.against.split(","):
            for strategy in args.strategies.split(","):
                if strategy == against:
                    continue
                values = []
                failed = 0
                for seed in range(args.krieg_games):
                    side = seed % 2
                    players = [strategy, against] if side == 0 else [against, strategy]
                    g = match(krieg, players, seed, args.playclock)
                    if g:
                        values.append(g[side])
                    else:
                        failed += 1
                rows.append(("Kriegspiel tic-tac-toe 4x4 (both sides)", strategy, against,
                             values, failed))
    print("| game | player | against | games | failed | mean goal | 95% CI |")
    print("|---|---|---|---|---|---|---|")
    for game, player, against, values, failed in rows:
        if not values:
            print(f"| {game} | {player} | {against} | 0 | {failed} | — | — |")
            continue
        n, mean, half = summary(values)
        print(f"| {game} | {player} | {against} | {n} | {failed} | {mean:.1f} | "
              f"{mean - half:.1f} – {mean + half:.1f} |")


if __name__ == "__main__":
    main()
