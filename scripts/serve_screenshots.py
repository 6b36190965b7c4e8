#!/usr/bin/env python3
"""Takes the screenshots of `ggp serve` in docs/: a live match page (connect four, two built-in
players, in the middle of the match), a person's page of a GDL-II match (Monty Hall, as the
contestant, who sees only its percepts), a person's page of a GDL-III match (number guessing,
as the guesser, once its answers tell it the number: `serve-gdl3.png`), the board drawn for six games of the corpus and the
board a person seated in blind breakthrough (GDL-II) sees, of what it knows; every board at a
desktop's width (`board-KEY.png`) and at a phone's, 400 px (`board-KEY-phone.png`); the games'
page searched by a tag (`serve-games.png`, `serve-games-phone.png`) and a game's statistics
(`serve-stats.png`).

Starts the real server on a fresh database with the project's games and six games of the
corpus (read from ../shared, never copied into the project), creates the matches through the
API, and photographs each match page with Debian's headless Chromium through `chromedriver`.
Needs only Python's standard library, `chromium` and `chromium-driver`.

    cargo build --release -p ggp
    python3 scripts/serve_screenshots.py [--ggp target/release/ggp] [--only live,gdl2,gdl3,boards,blind,games,stats]
"""

import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("GGP_SHARED", os.path.join(ROOT, "..", "shared"))
TOKEN = "screenshot-admin-token-0123456789"
# (key, file in the corpus's base, steps to play before the photograph)
CORPUS = [
    ("ticTacToe", "ticTacToe.kif", 5),
    ("connectFour", "connectFour.kif", 14),
    ("breakthrough", "breakthrough.kif", 24),
    ("reversi", "reversi.kif", 20),
    ("chess", "chess.kif", 16),
    ("hex", "hex.kif", 30),
]


def api(port, method, path, body=None, token=TOKEN):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, json.loads(data) if data else None


def wait_for_step(port, match_id, n):
    """Until the match has played `n` steps, or is over."""
    while True:
        status, record = api(port, "GET", f"/api/matches/{match_id}")
        # Not recorded until its players are ready.
        if status == 200 and (len(record["moves"]) >= n or record["status"] != "live"):
            return
        time.sleep(0.05)


class Browser:
    """Headless Chromium through `chromedriver` (the WebDriver protocol over HTTP), in a
    process group of its own that is killed at the end."""

    def __init__(self, chromium, width=1280, height=900):
        """A window `width` × `height`; below 500 px, a phone's screen is emulated (headless
        Chromium's window does not shrink further)."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.driver = subprocess.Popen([shutil.which("chromedriver") or "chromedriver",
                                        f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        options = {
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     "--disable-dev-shm-usage", f"--window-size={max(width, 500)},{height}"]}
        if width < 500:
            options["mobileEmulation"] = {
                "deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0}}
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": options}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request(method, path, body=json.dumps(body if body is not None else {}),
                     headers={"Content-Type": "application/json"})
        answer = json.loads(conn.getresponse().read())["value"]
        conn.close()
        return answer

    def shoot(self, url, out, settle=1.5):
        self.call("POST", f"/session/{self.session}/url", {"url": url})
        time.sleep(settle)
        png = self.call("GET", f"/session/{self.session}/screenshot")
        with open(out, "wb") as f:
            f.write(base64.b64decode(png))
        print("wrote", os.path.relpath(out, ROOT))

    def close(self):
        try:
            self.call("DELETE", f"/session/{self.session}")
        finally:
            os.killpg(self.driver.pid, signal.SIGKILL)
            self.driver.wait()


def shoot_gdl3(port, base, browser, out):
    status, made = api(port, "POST", "/api/matches", {
        "game": "number_guessing", "players": ["human"], "startclock": 5, "playclock": 600,
        "seed": 5})
    assert status == 201, made
    seat = made["seats"][0]
    view = f"/api/matches/{made['id']}/views/guesser"
    lo, hi = 1, 8
    for step in range(1, 4):
        while (api(port, "GET", view, token=seat["token"])[1].get("turn") or {}).get("step") != step:
            time.sleep(0.05)
        m = (lo + hi + 1) // 2
        api(port, "POST", f"/api/matches/{made['id']}/moves", {"move": f"(ask {m})", "step": step},
            token=seat["token"])
        while len(api(port, "GET", view, token=seat["token"])[1]["steps"]) <= step:
            time.sleep(0.05)
        answer = api(port, "GET", view, token=seat["token"])[1]["steps"][step]["percepts"]
        if answer == ["yes"]:
            hi = m - 1
        else:
            lo = m
    browser.shoot(f"{base}{seat['url']}", os.path.join(out, "serve-gdl3.png"))
    api(port, "POST", f"/api/matches/{made['id']}/abort?reason=screenshot%20taken")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ggp", default=os.path.join(ROOT, "target", "release", "ggp"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs"))
    ap.add_argument("--only", default="live,gdl2,gdl3,boards,blind,games,stats",
                    help="which screenshots, of live, gdl2, gdl3, boards, blind, games and stats")
    args = ap.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus")
        os.mkdir(corpus)
        for key, name, _ in CORPUS:
            os.symlink(os.path.join(SHARED, "corpus", "games", "base", name),
                       os.path.join(corpus, key + ".kif"))
        server = subprocess.Popen(
            [args.ggp, "serve", "--addr", "127.0.0.1:0", "--db", os.path.join(tmp, "db.sqlite"),
             "--games", os.path.join(ROOT, "games"), "--games", corpus,
             "--admin-token", TOKEN], stderr=subprocess.PIPE, text=True)
        browser = phone = None
        try:
            port = None
            for line in server.stderr:
                m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
                if m:
                    port = int(m.group(1))
                    break
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            base = f"http://127.0.0.1:{port}"
            browser = Browser(args.chromium, height=1000)
            phone = Browser(args.chromium, width=400, height=800)

            # The live page: connect four, slowed down, photographed in the middle.
            if "live" in only:
                status, made = api(port, "POST", "/api/matches", {
                    "game": "connect4", "players": ["random", "legal"], "startclock": 5,
                    "playclock": 30, "seed": 11, "delay": 3000})
                assert status == 201, made
                live = made["id"]
                wait_for_step(port, live, 6)
                browser.shoot(f"{base}/matches/{live}", os.path.join(args.out, "serve-live.png"))
                api(port, "POST", f"/api/matches/{live}/abort?reason=screenshot%20taken")

            # A person's page of a GDL-II match: Monty Hall as the contestant, at the choice
            # between staying and switching (its pick and the door opened seen, the car not).
            if "gdl2" in only:
                status, made = api(port, "POST", "/api/matches", {
                    "game": "montyhall", "players": ["human"], "startclock": 5,
                    "playclock": 600, "seed": 5})
                assert status == 201, made
                seat = made["seats"][0]
                view = f"/api/matches/{made['id']}/views/contestant"
                for step, move in [(0, "(choose 1)"), (2, None)]:
                    while (api(port, "GET", view, token=seat["token"])[1].get("turn") or {}).get("step") != step:
                        time.sleep(0.05)
                    if move:
                        api(port, "POST", f"/api/matches/{made['id']}/moves",
                            {"move": move, "step": step}, token=seat["token"])
                browser.shoot(f"{base}{seat['url']}", os.path.join(args.out, "serve-gdl2.png"))
                api(port, "POST", f"/api/matches/{made['id']}/abort?reason=screenshot%20taken")

            # A person's page of a GDL-III match: number guessing as the guesser, asking by
            # bisection until its answers leave one number, photographed when it knows it.
            if "gdl3" in only:
                shoot_gdl3(port, base, browser, args.out)

            # The corpus's boards: each match played some steps, then photographed while it goes on.
            for key, _, at in CORPUS if "boards" in only else []:
                status, made = api(port, "POST", "/api/matches", {
                    "game": key, "players": ["random"] * len(api(port, "GET", f"/api/games/{key}")[1]["roles"]),
                    "startclock": 30, "playclock": 30, "seed": 3, "delay": 300})
                assert status == 201, made
                mid = made["id"]
                wait_for_step(port, mid, at)
                browser.shoot(f"{base}/matches/{mid}", os.path.join(args.out, f"board-{key}.png"))
                phone.shoot(f"{base}/matches/{mid}", os.path.join(args.out, f"board-{key}-phone.png"))
                api(port, "POST", f"/api/matches/{mid}/abort?reason=screenshot%20taken")

            # Blind breakthrough (GDL-II) as white, a person: after a few moves, the board of
            # what it knows, black's pawns it has not seen move shaded.
            if "blind" in only:
                status, made = api(port, "POST", "/api/matches", {
                    "game": "blindbreakthrough", "players": ["human", "random"],
                    "startclock": 5, "playclock": 600, "seed": 7})
                assert status == 201, made
                seat = made["seats"][0]
                view = f"/api/matches/{made['id']}/views/white"
                for step in [0, 2, 4]:
                    while True:
                        turn = api(port, "GET", view, token=seat["token"])[1].get("turn") or {}
                        if turn.get("step") == step:
                            break
                        time.sleep(0.05)
                    # The most advanced pawn's first move forward, for a game that goes on.
                    move = sorted(turn["moves"], key=lambda m: -int(m.strip("()").split()[2]))[0]
                    api(port, "POST", f"/api/matches/{made['id']}/moves",
                        {"move": move, "step": step}, token=seat["token"])
                wait_for_step(port, made["id"], 6)
                for who, name in [(browser, "board-blindbreakthrough.png"),
                                  (phone, "board-blindbreakthrough-phone.png")]:
                    who.shoot(f"{base}{seat['url']}", os.path.join(args.out, name), settle=2.5)
                api(port, "POST", f"/api/matches/{made['id']}/abort?reason=screenshot%20taken")

            # The games' page, searched by a tag, once every game's trial has run (its tags).
            if "games" in only:
                while any(g["latest"].get("traits") is None for g in api(port, "GET", "/api/games")[1]):
                    time.sleep(0.2)
                browser.shoot(f"{base}/games?tags=2-roles", os.path.join(args.out, "serve-games.png"))
                phone.shoot(f"{base}/games?tags=2-roles", os.path.join(args.out, "serve-games-phone.png"))

            # A game's statistics after a few quick matches of tic-tac-toe.
            if "stats" in only:
                for seed in range(12):
                    players = ["random", "legal"] if seed % 2 else ["legal", "random"]
                    status, made = api(port, "POST", "/api/matches", {
                        "game": "tictactoe", "players": players, "startclock": 1,
                        "playclock": 1, "seed": seed})
                    assert status == 201, made
                    wait_for_step(port, made["id"], 100)
                browser.shoot(f"{base}/games/tictactoe/stats", os.path.join(args.out, "serve-stats.png"))
        finally:
            for b in (browser, phone):
                if b:
                    b.close()
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
