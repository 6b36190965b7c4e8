#!/usr/bin/env python3
"""Keystroke to diagnostics through the real `ggp lsp`, over pipes, as an editor sees it.

For each game: open it, then N times type `x` after the first letter of the name that opens the middle form and
delete it again (one `didChange` per keystroke, incremental), timing each from the write of
the change to the arrival of the `publishDiagnostics` for its version. Prints the median and
the 90th percentile.

    cargo build --release -p ggp
    python3 scripts/bench_lsp.py [--ggp target/release/ggp] [--keystrokes 200]
"""

import argparse
import json
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("GGP_SHARED", os.path.join(ROOT, "..", "shared"))
GAMES = [
    ("arithmetic-stupid (425 KB)", "corpus/games/ric2b-ggp-base/arithmetic-stupid.kif"),
    ("connectFour", "corpus/games/base/connectFour.kif"),
]


class Server:
    def __init__(self, ggp):
        self.proc = subprocess.Popen([ggp, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, message):
        body = json.dumps(dict(jsonrpc="2.0", **message)).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server stopped")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def request(self, method, params):
        self.next_id += 1
        self.send(dict(id=self.next_id, method=method, params=params))
        while True:
            message = self.read()
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def diagnostics(self, version):
        while True:
            message = self.read()
            if (message.get("method") == "textDocument/publishDiagnostics"
                    and message["params"].get("version") == version):
                return message["params"]["diagnostics"]

    def close(self):
        self.request("shutdown", None)
        self.send(dict(method="exit"))
        self.proc.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ggp", default=os.path.join(ROOT, "target", "release", "ggp"))
    parser.add_argument("--keystrokes", type=int, default=200)
    args = parser.parse_args()
    for name, path in GAMES:
        text = open(os.path.join(SHARED, path), encoding="utf-8").read()
        lines = text.splitlines()
        middle = next(k for k in range(len(lines) // 2, len(lines))
                      if lines[k].lstrip().startswith("(") and len(lines[k].strip()) > 5)
        column = len(lines[middle]) - len(lines[middle].lstrip()) + 2
        server = Server(args.ggp)
        server.request("initialize", {"processId": None, "capabilities": {}})
        server.send(dict(method="initialized", params={}))
        uri = "file:///bench/game.kif"
        server.send(dict(method="textDocument/didOpen", params={"textDocument": {
            "uri": uri, "languageId": "gdl", "version": 1, "text": text}}))
        server.diagnostics(1)
        times = []
        for version in range(2, args.keystrokes + 2):
            insert = version % 2 == 0
            change = {"range": {"start": {"line": middle, "character": column},
                                "end": {"line": middle, "character": column + (0 if insert else 1)}},
                      "text": "x" if insert else ""}
            start = time.perf_counter()
            server.send(dict(method="textDocument/didChange", params={
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}))
            server.diagnostics(version)
            times.append((time.perf_counter() - start) * 1000)
        server.close()
        times.sort()
        p90 = times[int(len(times) * 0.9)]
        print(f"{name}: {len(times)} keystrokes, median {statistics.median(times):.2f} ms, "
              f"90th percentile {p90:.2f} ms, min {times[0]:.2f} ms")


if __name__ == "__main__":
    main()
