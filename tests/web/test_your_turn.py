"""The your-turn signal of the game page (issue: "Comforts"): when the turn comes to the page,
its status line flashes, and a short sound plays only if the person switched it on (off by
default, kept in the browser). In real headless Chromium, with the page's AudioContext
replaced by one that counts its tones."""

from __future__ import annotations

from extras import need

need("web")  # a test of caribsim.web: skips without the extra

from selenium.webdriver.common.by import By

from caribsim.web.app import create_app
from tests.web.conftest import post_json, serving, token_of
from tests.web.test_browser import _click_move, _your_turn

# installed before the page's own scripts: every tone started is counted
_COUNTING_AUDIO = """
window.__tones = 0;
window.AudioContext = class {
  constructor() { this.currentTime = 0; this.destination = {}; }
  createGain() { return {gain: {value: 0}, connect() {}}; }
  createOscillator() {
    return {frequency: {value: 0}, connect() {}, start() { window.__tones += 1; }, stop() {}};
  }
};
"""
_SIGNAL = """const s = document.getElementById("status");
return {turns: +(s.dataset.turns || 0), flashing: s.classList.contains("your-turn"),
        tones: window.__tones, sound: document.getElementById("sound").checked};"""


def test_the_turn_flashes_the_status_and_sounds_only_when_switched_on(browser, tmp_path):
    script = browser.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument", {"source": _COUNTING_AUDIO}
    )
    try:
        app = create_app(tmp_path, bot_delay=0.05)
        with serving(app) as address:
            url = f"http://{address}"
            made = post_json(
                f"{url}/api/games", {"game": "puerto_rico", "seats": ["human", "random"], "seed": 3}
            )
            browser.get(f"{url}/game/{made['id']}?token={token_of(made, 0)}")
            browser.execute_script("localStorage.removeItem('caribsim-sound')")
            browser.refresh()
            s = _your_turn(browser, -1)
            first = browser.execute_script(_SIGNAL)
            # the person switches the sound on; the bot's move brings the turn back
            browser.find_element(By.ID, "sound").click()
            turns = first["turns"]
            while True:
                _click_move(browser, s["actions"][0])
                s = _your_turn(browser, int(s["step"]))
                now = browser.execute_script(_SIGNAL)
                if now["turns"] > turns:
                    break
            browser.refresh()  # the choice is kept in this browser
            kept = browser.execute_script("return document.getElementById('sound').checked")
            browser.execute_script("localStorage.removeItem('caribsim-sound')")
    finally:
        browser.execute_cdp_cmd(
            "Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]}
        )
    assert first == {"turns": 1, "flashing": True, "tones": 0, "sound": False}
    assert now["flashing"] and now["sound"]
    assert now["tones"] == now["turns"] - first["turns"] >= 1
    assert kept is True
