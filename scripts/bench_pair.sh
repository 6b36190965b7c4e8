#!/usr/bin/env bash
# Paired one-at-a-time benchmark of two ggp builds: both run at once, one per core (taskset),
# the cores swapped each round, so that a machine whose speed moves from minute to minute
# moves both sides of each pair alike. Prints each round's playouts/s and the ratio B / A, then
# the median ratio.
#
#   scripts/bench_pair.sh OLD_GGP NEW_GGP GAME.kif [ROUNDS=6] [SECONDS=3]
#
# Environment: ENV_A and ENV_B, extra `NAME=value` settings for each side (default none).
# Needs two cores and `taskset` (util-linux).
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 OLD_GGP NEW_GGP GAME.kif [ROUNDS] [SECONDS]" >&2
  exit 2
fi
a=$1 b=$2 game=$3 rounds=${4:-6} secs=${5:-3}
for f in "$a" "$b"; do
  [ -x "$f" ] || { echo "$0: $f is not an executable" >&2; exit 2; }
done
[ -r "$game" ] || { echo "$0: cannot read $game" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

rate() { grep '^playouts/s' "$1" | awk '{print $2}'; }

for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then ca=0 cb=1; else ca=1 cb=0; fi
  # shellcheck disable=SC2086
  env ${ENV_A:-} taskset -c "$ca" "$a" bench "$game" --sequential --seconds "$secs" > "$out/a" 2>/dev/null &
  # shellcheck disable=SC2086
  env ${ENV_B:-} taskset -c "$cb" "$b" bench "$game" --sequential --seconds "$secs" > "$out/b" 2>/dev/null &
  wait
  ra=$(rate "$out/a") rb=$(rate "$out/b")
  if [ -z "$ra" ] || [ -z "$rb" ]; then
    echo "$0: round $r: a build printed no playouts/s" >&2
    exit 1
  fi
  echo "$ra $rb" | awk -v r="$r" '{printf "round %d: %s %s ratio %.3f\n", r, $1, $2, $2 / $1}'
  echo "$ra $rb" | awk '{printf "%.6f\n", $2 / $1}' >> "$out/ratios"
done
sort -n "$out/ratios" | awk '{v[NR] = $1} END {
  m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "median ratio (new / old): %.3f over %d rounds\n", m, NR
}'
