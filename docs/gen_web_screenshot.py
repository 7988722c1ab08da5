"""Make docs/web_puerto_rico.png, the README's picture of a game in progress in the browser:
Puerto Rico, a person (random moves) against two random bots, at his first Builder decision
after step 40 (the last move marked on the board and said above it, the affordable buildings
outlined, the log grouped by round and phase beside the board), 1366 x 768, in headless
Chromium (Debian's chromium and chromium-driver).

    python docs/gen_web_screenshot.py [out.png]

Needs the web extra (``pip install 'caribsim[web]'``) and Selenium (the test extra).
"""

from __future__ import annotations

import json
import random
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from caribsim.web.app import create_app

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("web_puerto_rico.png"))


def main() -> None:
    app = create_app(Path(tempfile.mkdtemp()), bot_delay=1.0)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1366,768"):
        opts.add_argument(arg)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": False},
    )
    try:

        def post(path, body):
            req = urllib.request.Request(
                url + path, json.dumps(body).encode(), {"content-type": "application/json"}
            )
            with urllib.request.urlopen(req) as r:
                return json.load(r)

        made = post(
            "/api/games",
            {"game": "puerto_rico", "seats": ["human", "random", "random"], "seed": 12},
        )
        browser.get(url + made["links"][0]["url"])
        deadline = time.monotonic() + 240
        rng, last = random.Random(2), -1
        while True:
            status = browser.find_element(By.ID, "status")
            step = int(status.get_attribute("data-step") or -1)
            moves = browser.find_elements(By.CSS_SELECTOR, "#moves button.move")
            if time.monotonic() > deadline:
                raise SystemExit("no Builder decision of the person after a bot's move in 240 s")
            if step == last or not moves:
                time.sleep(0.05)
                continue
            marked = browser.find_elements(By.CSS_SELECTOR, "#supply .target")
            if step > 40 and any(m.text.startswith("build ") for m in moves) and marked:
                time.sleep(0.3)  # the marks of the bot's move at their brightest
                browser.save_screenshot(str(OUT))
                print(f"wrote {OUT} at step {step}")
                return
            last = step
            try:
                rng.choice(moves).click()
            except Exception:  # an update redrew the buttons: look again
                continue
    finally:
        browser.quit()
        server.should_exit = True


if __name__ == "__main__":
    main()
