#!/usr/bin/env python3
"""Load on one `ggp serve`: concurrent matches between built-in players, live-stream viewers
on every match, and people loading pages meanwhile.

Starts the real server (a fresh database in a temporary directory, the project's games), then:
- creates MATCHES matches of GAME, `random` against `random` (through `POST /api/matches`);
- opens VIEWERS event streams (`/api/matches/{id}/events?html=1`, what a match page reads),
  spread evenly over the matches, each reading to the match's `end` event;
- meanwhile PAGERS clients load pages in a loop (the dashboard, the list of matches, a live
  match's page), timing each from the request to the last byte of the answer;
- when every match has ended: checks that each finished, that every viewer received every one
  of its match's steps, and reads the manager's own time per step from `GET /api/server`;
- then loads the same pages again with the server idle, for comparison.

Prints one JSON object with the figures. Needs only Python's standard library.

    cargo build --release -p ggp
    python3 scripts/bench_serve.py [--ggp target/release/ggp] [--matches 50] [--viewers 200]
"""

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "bench-admin-token-0123456789"


def start_server(ggp, db):
    proc = subprocess.Popen(
        [ggp, "serve", "--addr", "127.0.0.1:0", "--db", db, "--games",
         os.path.join(ROOT, "games"), "--admin-token", TOKEN, "--max-steps", "10000"],
        stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"listening on http://([^/\s]+)", line)
        if m:
            host, port = m.group(1).rsplit(":", 1)
            # Keep reading its log so that it never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, host, int(port)
    raise RuntimeError("ggp serve stopped before listening")


class Client:
    def __init__(self, host, port):
        self.host, self.port = host, port
        self.conn = http.client.HTTPConnection(host, port, timeout=120)

    def request(self, method, path, body=None):
        headers = {"Authorization": f"Bearer {TOKEN}"}
        if body is not None:
            body = json.dumps(body)
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                return r.status, r.read()
            except (ConnectionError, http.client.HTTPException):
                if attempt:
                    raise
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)


def viewer(host, port, match_id, out):
    """Reads a match's event stream to its end; records the steps received."""
    conn = http.client.HTTPConnection(host, port, timeout=300)
    conn.request("GET", f"/api/matches/{match_id}/events?html=1")
    r = conn.getresponse()
    steps, event, ended = set(), None, None
    while True:
        line = r.readline()
        if not line:
            break
        line = line.decode().rstrip("\n")
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:") and event == "step":
            steps.add(json.loads(line[5:])["step"])
        elif line.startswith("data:") and event == "end":
            ended = json.loads(line[5:])["status"]
            break
        elif line == "":
            event = None
    conn.close()
    out.append((match_id, steps, ended))


def pager(host, port, paths, stop, latencies, errors):
    client = Client(host, port)
    rng = random.Random()
    while not stop.is_set():
        path = rng.choice(paths())
        t = time.perf_counter()
        status, _ = client.request("GET", path)
        latencies.append(time.perf_counter() - t)
        if status != 200:
            errors.append((path, status))


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def summary(latencies):
    ms = [x * 1000 for x in latencies]
    return {"requests": len(ms), "median_ms": round(statistics.median(ms), 2),
            "p99_ms": round(percentile(ms, 99), 2), "max_ms": round(max(ms), 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ggp", default=os.path.join(ROOT, "target", "release", "ggp"))
    ap.add_argument("--game", default="connect4")
    ap.add_argument("--matches", type=int, default=50)
    ap.add_argument("--viewers", type=int, default=200)
    ap.add_argument("--pagers", type=int, default=4)
    ap.add_argument("--delay", type=int, default=100,
                    help="milliseconds between steps (not counted in the manager's time)")
    ap.add_argument("--idle-seconds", type=float, default=5)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        proc, host, port = start_server(args.ggp, os.path.join(tmp, "bench.sqlite"))
        try:
            api = Client(host, port)
            ids = []
            t0 = time.perf_counter()
            for k in range(args.matches):
                status, body = api.request("POST", "/api/matches", {
                    "game": args.game, "players": ["random", "random"], "startclock": 5,
                    "playclock": 5, "seed": k, "delay": args.delay})
                if status != 201:
                    raise RuntimeError(f"POST /api/matches: {status} {body!r}")
                ids.append(json.loads(body)["id"])
            created = time.perf_counter() - t0

            seen = []
            viewers = [threading.Thread(target=viewer, args=(host, port, ids[k % len(ids)], seen))
                       for k in range(args.viewers)]
            for v in viewers:
                v.start()
            stop, latencies, page_errors = threading.Event(), [], []
            live_pages = lambda: ["/", "/matches"] + [f"/matches/{i}" for i in ids]
            pagers = [threading.Thread(target=pager, args=(host, port, live_pages, stop,
                                                           latencies, page_errors))
                      for _ in range(args.pagers)]
            for p in pagers:
                p.start()
            for v in viewers:
                v.join()
            # Every viewer has its match's end: every match has ended.
            stop.set()
            for p in pagers:
                p.join()
            loaded = time.perf_counter() - t0

            records = {}
            for i in ids:
                status, body = api.request("GET", f"/api/matches/{i}")
                records[i] = json.loads(body)
            statuses = {}
            for r in records.values():
                statuses[r["status"]] = statuses.get(r["status"], 0) + 1
            missed = [(i, sorted(set(range(1, len(records[i]["moves"]) + 1)) - steps), end)
                      for i, steps, end in seen
                      if steps != set(range(1, len(records[i]["moves"]) + 1)) or end != "finished"]
            _, body = api.request("GET", "/api/server")
            server = json.loads(body)

            # The same pages with the server idle.
            stop, idle, idle_errors = threading.Event(), [], []
            pagers = [threading.Thread(target=pager, args=(host, port, live_pages, stop,
                                                           idle, idle_errors))
                      for _ in range(args.pagers)]
            for p in pagers:
                p.start()
            time.sleep(args.idle_seconds)
            stop.set()
            for p in pagers:
                p.join()
        finally:
            proc.terminate()
            proc.wait()

    steps = [len(r["moves"]) for r in records.values()]
    print(json.dumps({
        "load": {"game": args.game, "matches": args.matches, "viewers": args.viewers,
                 "pagers": args.pagers, "delay_ms": args.delay},
        "matches": statuses,
        "steps": {"total": sum(steps), "min": min(steps), "max": max(steps)},
        "viewers_missing_steps_or_end": len(missed),
        "created_in_s": round(created, 2),
        "all_ended_in_s": round(loaded, 2),
        "manager_us_per_step": server["managerMicrosPerStep"],
        "pages_under_load": summary(latencies),
        "page_errors_under_load": len(page_errors),
        "pages_idle": summary(idle),
        "page_errors_idle": len(idle_errors),
    }, indent=2))
    if missed or statuses != {"finished": args.matches} or page_errors or idle_errors:
        print("FAILED:", missed[:5], statuses, page_errors[:5], idle_errors[:5], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
