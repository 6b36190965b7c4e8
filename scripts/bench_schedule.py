#!/usr/bin/env python3
"""Measures the tournament schedule: matches scheduled and finished per second with 1, 2 and 4
workers sharing one database, and how long claiming a match takes under that contention.

For each number of workers: a fresh database, a web front end that plays nothing
(`ggp serve --capacity 0`), N `ggp serve --worker` processes, and one round robin of short
matches between two built-in players (`random` and `legal` on tic-tac-toe: the manager's and
the schedule's work, not the players', is what is measured). The time runs from the
tournament's creation to its end. Each worker prints, when stopped, how many claims it made
and their mean and longest time; the table gives the mean over workers and the longest.

    cargo build --release -p ggp
    python3 scripts/bench_schedule.py [--ggp target/release/ggp] [--workers 1,2,4]
                                      [--matches 400] [--capacity 8]
                                      [--db sqlite | --db postgres://user@host:port/postgres]

With a PostgreSQL URL (of a database the user may create databases from), each run gets a
fresh database of its own (`psql` makes it). Needs Python's standard library (and `psql`).
"""

import argparse
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "bench-schedule-admin-token-0123456789"


def reader(proc, lines):
    for raw in proc.stderr:
        lines.append(raw.decode("utf-8", "replace"))


def start(args, wait_for):
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, cwd=ROOT)
    lines = []
    threading.Thread(target=reader, args=(proc, lines), daemon=True).start()
    deadline = time.time() + 60
    while time.time() < deadline:
        for line in lines:
            m = re.search(wait_for, line)
            if m:
                return proc, lines, m
        if proc.poll() is not None:
            raise SystemExit("".join(lines))
        time.sleep(0.05)
    raise SystemExit("not started: " + "".join(lines))


def api(url, method, path, body=None):
    host = url.split("//")[1]
    conn = http.client.HTTPConnection(host, timeout=30)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    data = None
    if body is not None:
        data = json.dumps(body)
        headers["Content-Type"] = "application/json"
    conn.request(method, path, data, headers)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, json.loads(text) if text else None


def run(ggp, db, workers, matches, capacity):
    web, web_lines, m = start(
        [ggp, "serve", "--addr", "127.0.0.1:0", "--db", db, "--admin-token", TOKEN,
         "--games", "games", "--capacity", "0"],
        r"listening on (http://\S+?)/? ")
    url = m.group(1)
    procs = []
    for _ in range(workers):
        procs.append(start(
            [ggp, "serve", "--worker", "--db", db, "--capacity", str(capacity),
             "--admin-token", TOKEN],
            r"\(server (\d+)\)"))
    started = time.time()
    status, made = api(url, "POST", "/api/tournaments", {
        "name": f"bench {workers}", "games": ["tictactoe"], "players": ["random", "legal"],
        "rounds": matches // 2, "startclock": 1, "playclock": 1, "seed": 1,
    })
    assert status == 201, made
    tid = made["id"]
    deadline = time.time() + 600
    while True:
        # The list: progress without standings, light enough to ask often.
        _, listed = api(url, "GET", "/api/tournaments")
        t = next(x for x in listed if x["id"] == tid)
        if t["status"] == "finished":
            break
        if time.time() > deadline:
            raise SystemExit(f"the tournament did not end in 10 minutes: {t['progress']}")
        time.sleep(0.05)
    elapsed = time.time() - started
    done = t["progress"]["done"]
    if t["progress"]["failed"]:
        _, full = api(url, "GET", f"/api/tournaments/{tid}")
        failures = sorted({m["failure"] for m in full["matches"] if m["status"] == "failed"})
        print(f"# {t['progress']['failed']} failed: {failures}", flush=True)
    claims = []
    for proc, lines, _ in procs:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        time.sleep(0.1)
        for line in lines:
            s = re.search(r"(\d+) claims of the schedule, ([\d.]+) ms on average, ([\d.]+) ms at most", line)
            if s:
                claims.append((int(s.group(1)), float(s.group(2)), float(s.group(3))))
    web.send_signal(signal.SIGINT)
    web.wait(timeout=60)
    total = sum(c[0] for c in claims)
    mean = sum(c[0] * c[1] for c in claims) / total if total else 0.0
    longest = max((c[2] for c in claims), default=0.0)
    per_worker = [p[2].group(1) for p in procs]
    return done, elapsed, total, mean, longest, per_worker


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ggp", default=os.path.join(ROOT, "target/release/ggp"))
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--matches", type=int, default=400)
    ap.add_argument("--capacity", type=int, default=8)
    ap.add_argument("--db", default="sqlite",
                    help="sqlite (a fresh file per run) or a postgres:// URL (a fresh database per run)")
    args = ap.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.2f}, "
          f"{args.matches} matches (random v legal, tic-tac-toe), capacity {args.capacity} per worker, {args.db}")
    print("| workers | matches | seconds | matches/s | claims | claim mean ms | claim max ms |")
    print("|---|---|---|---|---|---|---|")
    for n in [int(w) for w in args.workers.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            if args.db.startswith(("postgres://", "postgresql://")):
                name = f"ggp_bench_{n}"
                for sql in (f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"CREATE DATABASE {name}"):
                    subprocess.run(["psql", args.db, "-qc", sql], check=True)
                db = args.db.rsplit("/", 1)[0] + "/" + name
            else:
                db = os.path.join(tmp, "bench.sqlite")
            done, elapsed, claims, mean, longest, _ = run(args.ggp, db, n, args.matches, args.capacity)
        print(f"| {n} | {done} | {elapsed:.2f} | {done / elapsed:.1f} | {claims} | {mean:.2f} | {longest:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
