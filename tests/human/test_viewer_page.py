"""The replay page in a real headless Chromium: Puerto Rico's building supply, circles and
Mayor colonists against the replayed state, the game-over panel against the final scores
and returns, the keyboard and the address (#step=N), the narrow layout, the chart's end
labels, and a screenshot of every game's page (also written to $CARIBSIM_SCREENSHOT_DIR)."""

import base64
import csv
import os
import random
import struct
import zlib
from importlib.resources import files

import pytest
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import caribsim
from caribsim import records, viewer
from caribsim.human import boards, lang

NAMES = ["random-a", "greedy-b", "mcts-c", "random-d", "greedy-e"]
WINDOW = (1280, 1000)  # the browser fixture's size, restored by tests that change it


def play_record(game_name="puerto_rico", seed=5, **options):
    """The record of a game played to its end by uniformly random moves (seeded)."""
    game = caribsim.load_game(game_name, **options)
    state = game.new_initial_state(seed=seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return records.record_game(state, seed=seed, players_info=NAMES[: game.num_players()])


def end_kind(final) -> str:
    """How a game ended: "clear" (one seat has the top total), "tiebreak" (the top totals tie,
    one seat wins) or "shared" (the win is shared)."""
    totals = [s["total"] for s in final["scores"]]
    returns = final["returns"]
    if totals.count(max(totals)) == 1:
        return "clear"
    return "shared" if returns.count(max(returns)) > 1 else "tiebreak"


def first_record(kind, seeds=range(600)):
    """The first 3-player Puerto Rico random game (by seed) that ended as ``kind``."""
    for seed in seeds:
        rec = play_record(seed=seed, players=3)
        if end_kind(rec["final"]) == kind:
            return rec
    raise AssertionError(f"no {kind} game in seeds {seeds}")


def building_rows():
    text = (
        files("caribsim").joinpath("data", "puerto_rico_buildings.csv").read_text(encoding="utf-8")
    )
    return {r["id"]: r for r in csv.DictReader(text.splitlines())}


def open_page(browser, path, step):
    browser.get("about:blank")  # a fresh load, not a hash change of the open page
    browser.get(f"file://{path}#step={step}")
    return browser


def open_step(browser, uri: str, step: int):
    """The page at ``uri`` loaded afresh at ``step``, once it has drawn that step (it draws
    after the load; on a busy machine not yet when get() returns)."""
    browser.get(f"{uri}#step={step}")
    browser.refresh()  # the same file with another hash is not reloaded by get
    WebDriverWait(browser, 30).until(lambda b: counter(b).startswith(f"step {step} /"))
    return browser


def counter(browser):
    return browser.find_element("id", "counter").text


def wait_for_step(browser, step, n):
    WebDriverWait(browser, 10).until(lambda b: counter(b) == f"step {step} / {n}")


def drawn(browser, prefix, *names):
    """id -> ([data-NAME...], filled circles, all circles) of the elements whose id starts with
    ``prefix``, read in one round trip."""
    rows = browser.execute_script(
        "const [p, names] = arguments;"
        "return [...document.querySelectorAll('[id^=\"' + p + '\"]')].map(e => [e.id,"
        " names.map(n => e.getAttribute('data-' + n)), e.querySelectorAll('.dot.on').length,"
        " e.querySelectorAll('.dot').length]);",
        prefix,
        list(names),
    )
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


@pytest.fixture(scope="module")
def pr_record():
    return play_record(seed=36, players=3)


@pytest.fixture(scope="module")
def pr_page(tmp_path_factory, pr_record):
    path = tmp_path_factory.mktemp("page") / "pr.html"
    viewer.write_html(pr_record, path)
    return path


def _steps(rec, pred):
    """The steps (0..N) whose replayed state's dict satisfies ``pred``."""
    return [i for i, st in enumerate(records.states(rec)) if pred(st.to_dict())]


# --- Puerto Rico's drawing --------------------------------------------------------------


def check_supply_and_city(browser, d):
    rows = building_rows()
    supply = drawn(browser, "pr-supply-", "left", "cost", "vp", "circles")
    if "expansion" in d:  # production buildings and the violet kinds in play
        in_play = [
            b
            for b in d["buildings"]
            if rows[b]["kind"].endswith("production") or b in d["expansion"]["violet_in_play"]
        ]
    else:
        in_play = [b for b in d["buildings"] if rows[b]["set"] == "base"]
    assert sorted(supply) == sorted(f"pr-supply-{b}" for b in in_play)
    for b in in_play:
        r = rows[b]
        assert supply[f"pr-supply-{b}"][0] == [
            str(d["buildings"][b]),
            r["cost"],
            r["vp"],
            r["circles"],
        ]
        assert supply[f"pr-supply-{b}"][1:] == (0, int(r["circles"]))  # supply circles are empty
    for seat, board in enumerate(d["boards"]):
        city = drawn(browser, f"pr-building-{seat}-", "colonists", "circles", "vp")
        assert sorted(city) == sorted(f"pr-building-{seat}-{b}" for b in board["buildings"])
        for b, colonists in board["buildings"].items():
            r = rows[b]
            assert city[f"pr-building-{seat}-{b}"] == (
                [str(colonists), r["circles"], r["vp"]],
                colonists,
                int(r["circles"]),
            )
        island = drawn(browser, f"pr-island-{seat}-", "tiles", "colonists")
        worked = {k: t for k, t in board["island"].items() if t["tiles"]}
        assert sorted(island) == sorted(f"pr-island-{seat}-{k}" for k in worked)
        for k, t in worked.items():
            on = t.get("colonists", 0)
            circles = t["tiles"] if "colonists" in t else 0  # a forest has no circle
            assert island[f"pr-island-{seat}-{k}"] == ([str(t["tiles"]), str(on)], on, circles)


def test_supply_and_circles_drawn_match_the_replayed_state(browser, pr_record, pr_page):
    n = len(pr_record["steps"])
    for step in (0, n // 4, n // 2, 3 * n // 4, n):
        open_page(browser, pr_page, step)
        assert counter(browser) == f"step {step} / {n}"
        check_supply_and_city(browser, records.replay(pr_record, upto=step).to_dict())


def test_expansion_buildings_in_the_supply_and_on_the_boards(browser, tmp_path):
    rec = play_record(seed=9, players=3, expansion=True)
    path = tmp_path / "exp.html"
    viewer.write_html(rec, path)
    n = len(rec["steps"])
    drafting = _steps(rec, lambda d: 0 < len(d["expansion"]["violet_in_play"]) < 17)
    drafted = _steps(rec, lambda d: len(d["expansion"]["violet_in_play"]) == 17)
    for step in (drafting[0], drafted[0], n // 2, n):
        open_page(browser, path, step)
        check_supply_and_city(browser, records.replay(rec, upto=step).to_dict())
    # the game covers what the base game lacks: expansion buildings owned, one without a
    # circle or with two (Statue, Guest house), forests on the islands
    d, rows = records.replay(rec).to_dict(), building_rows()
    owned = [
        b for board in d["boards"] for b in board["buildings"] if rows[b]["set"] == "expansion"
    ]
    assert owned and any(rows[b]["circles"] != "1" for b in owned)
    assert any(board["island"]["forest"]["tiles"] for board in d["boards"])


def test_mayor_shows_the_colonists_each_seat_still_has_to_place(browser, pr_record, pr_page):
    mayor = _steps(pr_record, lambda d: d["step"] == "mayor" and d["turns_done"] > 0)
    other = _steps(pr_record, lambda d: d["phase"] != "mayor")
    for step in (mayor[0], mayor[len(mayor) // 2]):
        open_page(browser, pr_page, step)
        st = records.replay(pr_record, upto=step)
        d = st.to_dict()
        seats = len(d["boards"])
        placed = {(d["role_chooser"] + k) % seats for k in range(d["turns_done"])}
        marks = drawn(browser, "pr-toplace-", "status", "to-place", "san-juan")
        assert sorted(marks) == [f"pr-toplace-{i}" for i in range(seats)]
        for i, board in enumerate(d["boards"]):
            status = (
                "placed" if i in placed else "placing" if i == st.current_player() else "waiting"
            )
            to_place = d["turn"]["to_place"] if status == "placing" else 0
            assert marks[f"pr-toplace-{i}"][0] == [status, str(to_place), str(board["san_juan"])]
        assert d["turn"]["to_place"] > 0
    open_page(browser, pr_page, other[len(other) // 2])
    assert drawn(browser, "pr-toplace-") == {}


# --- the game-over panel ------------------------------------------------------------------


def check_game_over(browser, rec):
    final = rec["final"]
    panel = browser.find_element("id", "game-over")
    assert panel.is_displayed()
    rows = drawn(browser, "final-", "total", "tiebreak", "return")
    best = max(final["returns"])
    for seat, score in enumerate(final["scores"]):
        row = browser.find_element("id", f"final-{seat}")
        total, tiebreak, returned = rows[f"final-{seat}"][0]
        assert (int(total), int(tiebreak), float(returned)) == (
            score["total"],
            score["tiebreak"],
            final["returns"][seat],
        )
        cells = [td.text for td in row.find_elements("tag name", "td")]
        parts = [k for k in score if k not in ("total", "tiebreak")]
        assert cells[1:] == [str(score["total"])] + [str(score[k]) for k in parts] + [
            str(score["tiebreak"])
        ]
        assert NAMES[seat] in cells[0]
        assert ("winner" in row.get_attribute("class").split()) == (final["returns"][seat] == best)
    heads = [th.text for th in panel.find_elements("tag name", "th")]
    assert heads == ["seat", "total"] + [viewer.part_label(k) for k in parts] + ["tie-break"]
    # why it ended (§7.1), the board's end_reason over the record's states
    ended = boards.get(rec["game"]).end_reason(records.states(rec), lang.translator(rec["game"]))
    assert panel.find_element("id", "ended").text == ended and "ended after the round" in ended
    return panel.find_element("id", "verdict").text


def test_game_over_panel_shows_the_final_scores_and_the_winner(browser, tmp_path):
    rec = first_record("clear")
    path = tmp_path / "clear.html"
    viewer.write_html(rec, path)
    n = len(rec["steps"])
    open_page(browser, path, n - 1)
    assert not browser.find_element("id", "game-over").is_displayed()
    open_page(browser, path, n)
    verdict = check_game_over(browser, rec)
    returns = rec["final"]["returns"]
    winner = returns.index(max(returns))
    assert (
        verdict
        == f"winner: seat {winner} ({NAMES[winner]}) with {rec['final']['scores'][winner]['total']} points"
    )
    assert (
        browser.execute_script("return document.querySelectorAll('#game-over td.used').length") == 0
    )


def test_game_over_panel_names_the_tie_break(browser, tmp_path):
    rec = first_record("tiebreak")
    path = tmp_path / "tb.html"
    viewer.write_html(rec, path)
    open_page(browser, path, len(rec["steps"]))
    verdict = check_game_over(browser, rec)
    scores, returns = rec["final"]["scores"], rec["final"]["returns"]
    winner = returns.index(max(returns))
    top = scores[winner]["total"]
    tied = [i for i, s in enumerate(scores) if s["total"] == top]
    assert winner in tied and len(tied) > 1
    assert "tie-break (doubloons + goods)" in verdict and f"tied on {top} points" in verdict
    assert f"{scores[winner]['tiebreak']} against" in verdict
    used = browser.execute_script(
        "return [...document.querySelectorAll('#game-over td.used')].map(td => td.parentElement.id)"
    )
    assert sorted(used) == [f"final-{i}" for i in tied]


def test_game_over_panel_shows_a_shared_win(browser, tmp_path):
    rec = first_record("shared")
    path = tmp_path / "shared.html"
    viewer.write_html(rec, path)
    open_page(browser, path, len(rec["steps"]))
    verdict = check_game_over(browser, rec)
    returns = rec["final"]["returns"]
    winners = [i for i, r in enumerate(returns) if r == max(returns)]
    assert verdict.startswith("shared win: " + ", ".join(f"seat {w} ({NAMES[w]})" for w in winners))
    assert len({rec["final"]["scores"][w]["tiebreak"] for w in winners}) == 1


# --- keyboard, address, narrow screens, chart ------------------------------------------------


def test_one_key_press_moves_one_step(browser, pr_record, pr_page):
    n = len(pr_record["steps"])
    open_page(browser, pr_page, 10)
    slider = browser.find_element("id", "slider")
    slider.click()  # the focused range input moves on arrow keys by itself
    start = int(slider.get_attribute("value"))
    assert browser.execute_script("return document.activeElement.id") == "slider"
    for key, expected in (
        (Keys.ARROW_RIGHT, start + 1),
        (Keys.ARROW_RIGHT, start + 2),
        (Keys.ARROW_LEFT, start + 1),
        (Keys.HOME, 0),
        (Keys.END, n),
        (Keys.ARROW_LEFT, n - 1),
    ):
        slider.send_keys(key)
        assert counter(browser) == f"step {expected} / {n}"
        assert slider.get_attribute("value") == str(expected)
        assert browser.execute_script("return location.hash") == f"#step={expected}"
    body = browser.find_element("tag name", "body")
    browser.execute_script("document.activeElement.blur()")
    body.send_keys(Keys.ARROW_RIGHT)
    assert counter(browser) == f"step {n} / {n}"


def test_editing_the_address_shows_that_step(browser, pr_record, pr_page):
    n = len(pr_record["steps"])
    open_page(browser, pr_page, 40)
    browser.execute_script("location.hash = '#step=5'")
    wait_for_step(browser, 5, n)
    d = records.replay(pr_record, upto=5).to_dict()
    for seat, board in enumerate(d["boards"]):
        assert browser.find_element("id", f"doubloons-{seat}").text == str(board["doubloons"])
    browser.execute_script(f"location.hash = '#step={n}'")
    wait_for_step(browser, n, n)
    assert browser.find_element("id", "game-over").is_displayed()


def test_the_page_fits_a_phone_screen(browser, pr_record, pr_page):
    # a phone (mobile emulation) lays a page without a viewport tag out 980 px wide
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 420, "height": 900, "deviceScaleFactor": 1, "mobile": True},
    )
    try:
        open_page(browser, pr_page, len(pr_record["steps"]))
        assert browser.execute_script("return window.innerWidth") == 420
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 424, f"the page is {width} px wide on a 420 px screen"
        chart = browser.execute_script(
            "return document.getElementById('chart').getBoundingClientRect().width"
        )
        assert 300 < chart <= 420
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_chart_end_labels_do_not_overlap(browser, tmp_path):
    rec = first_record("tiebreak")  # two seats end on the same total
    path = tmp_path / "close.html"
    viewer.write_html(rec, path)
    open_page(browser, path, 0)
    totals = [s["total"] for s in rec["final"]["scores"]]
    boxes = browser.execute_script(
        "return [...document.querySelectorAll('#chart text.end')].map(t => { const b = t.getBBox();"
        " return [t.textContent, b.x, b.y, b.width, b.height]; })"
    )
    assert [b[0] for b in boxes] == [f"seat {p}: {t}" for p, t in enumerate(totals)]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            _, x1, y1, w1, h1 = boxes[i]
            _, x2, y2, w2, h2 = boxes[j]
            assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1, (
                boxes[i],
                boxes[j],
            )
    # a higher total keeps its label above a lower one
    for i in range(len(boxes)):
        for j in range(len(boxes)):
            if totals[i] > totals[j]:
                assert boxes[i][2] < boxes[j][2]


# --- screenshots of every game's page -------------------------------------------------------


def png_pixels(data: bytes):
    """Width, height and rows of pixel tuples of an 8-bit RGB/RGBA PNG (its IDAT unfiltered)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + size]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    raw, stride, prev, rows = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            pred = (0, a, b, (a + b) // 2, _paeth(a, b, c))[kind]
            line[x] = (line[x] + pred) & 0xFF
        rows.append([tuple(line[x : x + bpp]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def full_page_screenshot(browser, path):
    """The whole page, below the window's height too (Chromium's DevTools capture)."""
    size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = browser.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
        },
    )
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))


@pytest.mark.parametrize("game_name", ["puerto_rico", "port_royal", "cuba"])
def test_screenshots_of_a_finished_game(browser, tmp_path, game_name):
    rec = play_record(game_name, seed=11)
    page = tmp_path / f"{game_name}.html"
    viewer.write_html(rec, page)
    text = page.read_text(encoding="utf-8")  # one file: nothing fetched from anywhere
    for reference in (
        "http://",
        "https://",
        "<script src",
        "<link",
        "@import",
        "url(",
        "<img",
        "<iframe",
    ):
        assert reference not in text, (
            f"the {game_name} page refers to something outside it: {reference!r}"
        )
    n = len(rec["steps"])
    out_dirs = [tmp_path] + (
        [os.environ["CARIBSIM_SCREENSHOT_DIR"]] if os.environ.get("CARIBSIM_SCREENSHOT_DIR") else []
    )
    for step, suffix in ((n // 2, ""), (n, "_end")):
        open_page(browser, page, step)
        assert counter(browser) == f"step {step} / {n}"
        assert browser.find_element("id", "game-over").is_displayed() == (step == n)
        for folder in out_dirs:
            shot = os.path.join(folder, f"viewer_{game_name}{suffix}.png")
            full_page_screenshot(browser, shot)
            with open(shot, "rb") as f:
                data = f.read()
            assert len(data) > 20_000
            width, height, rows = png_pixels(data)
            assert 600 <= width <= WINDOW[0] and height >= 600
            colours = {px for row in rows[::16] for px in row[::16]}
            assert len(colours) > 8, f"{shot} is nearly one flat colour: {sorted(colours)[:8]}"


def _rounds(rec):
    """Each state's round number, counted here by the rules' own marks: Puerto Rico's
    Governor, Port Royal's turns per player, Cuba's round."""
    mark = {
        "puerto_rico": lambda d: d["governor"],
        "port_royal": lambda d: d["turns"] // d["options"]["players"],
        "cuba": lambda d: d["round"],
    }[rec["game"]]
    marks = [mark(s.to_dict()) for s in records.states(rec)]
    return [sum(a != b for a, b in zip(marks[:i], marks[1 : i + 1])) for i in range(len(marks))]


@pytest.mark.parametrize("name", ["puerto_rico", "port_royal", "cuba"])
def test_the_replay_jumps_by_round_and_by_decision(browser, tmp_path, name):
    """Hundreds of steps (Port Royal's draws are steps) are read by round and by decision:
    "round >>" (Page Down) goes to the next round's first step, "<< round" (Page Up) to the
    start of this round or, at a start, the one before; the decision buttons skip chance."""
    rng = random.Random(2)
    state = caribsim.load_game(name, players=2).new_initial_state(seed=2)
    while not state.is_terminal():
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    rec = records.record_game(state, 2)
    path = tmp_path / f"{name}.html"
    viewer.write_html(rec, path)
    rounds, n = _rounds(rec), len(rec["steps"])
    starts = [i for i in range(n + 1) if i == 0 or rounds[i] != rounds[i - 1]]
    decisions = [i for i in range(1, n + 1) if rec["steps"][i - 1]["player"] >= 0]
    assert len(starts) > 3 and len(decisions) < n
    open_page(browser, path, 0)
    at = lambda: int(counter(browser).split()[1])  # noqa: E731  "step K / N"
    for k in starts[1:4]:
        browser.find_element("id", "next-round").click()
        assert at() == k
    mid = starts[3] + 1
    open_page(browser, path, mid)
    browser.find_element("id", "prev-round").click()
    assert at() == starts[3]
    browser.find_element("tag name", "body").send_keys(Keys.PAGE_UP)
    assert at() == starts[2]
    browser.find_element("tag name", "body").send_keys(Keys.PAGE_DOWN)
    assert at() == starts[3]
    open_page(browser, path, 0)
    for k in decisions[:5]:
        browser.find_element("id", "next-decision").click()
        assert at() == k
    browser.find_element("id", "prev-decision").click()
    assert at() == decisions[3]
