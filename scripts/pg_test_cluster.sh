#!/usr/bin/env bash
# Starts a throw-away PostgreSQL cluster for the tests (Debian's postgresql package), on a local
# port, and prints the URL to export as GGP_TEST_POSTGRES. Tests make a fresh database of their
# own in it for each test, so the schema always migrates from empty.
#
#   export GGP_TEST_POSTGRES=$(bash scripts/pg_test_cluster.sh)
#   bash scripts/pg_test_cluster.sh --stop
#
# Installs the package when it is missing and apt can. PostgreSQL will not run as root; as root
# the cluster belongs to the `postgres` user the package creates.
set -euo pipefail
PORT="${GGP_PG_PORT:-54329}"
DIR="${GGP_PG_DIR:-/tmp/ggp-pg-test}"

bin=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && bin="$d"
done
if [ "${1:-}" = "--stop" ]; then
  [ -n "$bin" ] && [ -d "$DIR" ] || exit 0
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$bin/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true
  else
    "$bin/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true
  fi
  exit 0
fi
if [ -z "$bin" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  { $sudo apt-get update -qq && $sudo apt-get install -y -qq postgresql; } >&2
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && bin="$d"
  done
fi
[ -n "$bin" ] || { echo "PostgreSQL's initdb was not found" >&2; exit 1; }

as=()
if [ "$(id -u)" = 0 ]; then
  as=(runuser -u postgres --)
fi
user="$(if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi)"

if ! "${as[@]}" "$bin/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
  rm -rf "$DIR"
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$DIR"
  "${as[@]}" "$bin/initdb" -D "$DIR/data" -U "$user" --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  # Fast and throw-away: nothing here needs to survive a power cut.
  "${as[@]}" "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null
fi
echo "postgres://$user@127.0.0.1:$PORT/postgres"
