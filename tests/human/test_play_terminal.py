"""Terminal play a person can follow: whole games driven through stdin (moves chosen by
number, after reading the choices printed), checked against the recorded states: Puerto Rico
build prices and Mayor colonists, Port Royal's revealed cards and busts, Cuba's plantation
grids and building costs; quit with --record, --load, and the printed default seed."""

import csv
import os
import random
import re
import select
import subprocess
import tempfile

import pytest
from test_play_records import CLI, run_cli

import caribsim
from caribsim import records
from caribsim.cuba._core import MARKER_NAMES
from caribsim.human import boards, play

DATA = os.path.join(os.path.dirname(caribsim.__file__), "data")
PROMPT = b"\n> "


def data_rows(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return list(csv.DictReader(f))


class Player:
    """`python -m caribsim play ...` in a subprocess: read up to each prompt, answer by number.
    Used as ``with Player(...) as player:``, which starts the program and closes its pipes
    and stderr file at the end (killing it if it still runs)."""

    def __init__(self, *args):
        self.args = [str(a) for a in args]
        self.text = ""  # everything printed so far

    def __enter__(self):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [*CLI, *self.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err
        )
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.err.close()

    def prompt(self):
        """The text printed up to the next prompt, or None when the program ended."""
        buf, fd = b"", self.proc.stdout.fileno()
        while not buf.endswith(PROMPT):
            ready, _, _ = select.select([fd], [], [], 300)
            assert ready, "the game printed nothing for 300 s"
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.text += buf.decode()
                assert self.proc.wait(60) == 0, self.stderr()
                return None
            buf += chunk
        self.text += buf.decode()
        return buf.decode()

    def send(self, line):
        self.proc.stdin.write(f"{line}\n".encode())
        self.proc.stdin.flush()

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode()


def choices(prompt_text):
    """The numbered moves of a prompt: [label, ...] (number k is index k - 1)."""
    block = prompt_text.rsplit("Your move:\n", 1)[1]
    return [m.group(1) for m in re.finditer(r"^ +\d+\. (.*)$", block, re.M)]


def drive(player, choose):
    """Answer every prompt with ``choose(labels, prompt_text)`` (an index); returns the list
    of (prompt text, chosen label) in order."""
    played = []
    while (text := player.prompt()) is not None:
        labels = choices(text)
        k = choose(labels, text)
        played.append((text, labels[k]))
        player.send(k + 1)
    return played


def my_steps(record, seat=0):
    """The indices of the record's steps that were the person's decisions."""
    return [i for i, s in enumerate(record["steps"]) if s["player"] == seat]


# --- Puerto Rico ------------------------------------------------------------------------


def _pr_choice(labels, _text):
    """Take the Builder when offered, then the dearest build; else the first move."""
    roles = [i for i, lab in enumerate(labels) if lab.startswith("role builder")]
    if roles:
        return roles[0]
    builds = [
        (int(m.group(1)), i)
        for i, lab in enumerate(labels)
        if (m := re.match(r"build .+?: (\d+) doubloons?", lab)) and "more than in hand" not in lab
    ]
    return max(builds)[1] if builds else 0


@pytest.fixture(scope="module")
def pr_game(tmp_path_factory):
    path = tmp_path_factory.mktemp("pr") / "game.json"
    with Player(
        "play",
        "puerto_rico",
        "--players",
        3,
        "--bots",
        "random,random",
        "--seed",
        12,
        "--board",
        "full",
        "--no-color",
        "--record",
        path,
    ) as player:
        played = drive(player, _pr_choice)
    rec = records.load(path)
    return played, rec, records.states(rec), player.text


def test_puerto_rico_build_prices_are_what_the_doubloons_drop_by(pr_game):
    played, rec, states, _ = pr_game
    rows = {r["id"]: r for r in data_rows("puerto_rico_buildings.csv")}
    steps = my_steps(rec)
    assert len(steps) == len(played)
    checked = discounted = 0
    for (_text, label), i in zip(played, steps):
        m = re.match(r"build (.+?): (\d+) doubloons?.*, (\d+) VP, (\d+) left$", label)
        if not m:
            continue
        building = m.group(1).replace(" ", "_")
        before, after = states[i].to_dict(), states[i + 1].to_dict()
        assert rec["steps"][i]["name"] == f"build {m.group(1)}"
        assert before["boards"][0]["doubloons"] - after["boards"][0]["doubloons"] == int(m.group(2))
        assert int(m.group(3)) == int(rows[building]["vp"])
        assert int(m.group(4)) == before["buildings"][building]
        checked += 1
        discounted += int(m.group(2)) < int(rows[building]["cost"])
    assert checked >= 3 and discounted >= 1


def test_puerto_rico_roles_show_the_doubloons_on_their_cards(pr_game):
    played, rec, states, _ = pr_game
    seen = 0
    for (text, _), i in zip(played, my_steps(rec)):
        roles = states[i].to_dict()["roles"]
        for role, extra in re.findall(r"^ +\d+\. role (\w+)(.*)$", text, re.M):
            n = roles[role]["doubloons"]
            assert extra == (f": +{n} doubloon{'s' if n > 1 else ''} on the card" if n else "")
            seen += n > 0
    assert seen >= 3


def test_puerto_rico_mayor_shows_the_colonists_still_to_place(pr_game):
    played, rec, states, _ = pr_game
    seen = 0
    for (text, _), i in zip(played, my_steps(rec)):
        board = text.rsplit("Puerto Rico, ", 1)[1]
        d = states[i].to_dict()
        m = re.search(r"^Mayor: seat (\d+) still places (\d+) colonist", board, re.M)
        assert (m is not None) == (d["step"] == "mayor")
        if m:
            assert (int(m.group(1)), int(m.group(2))) == (0, d["turn"]["to_place"])
            seen += 1
    assert seen >= 1


def test_puerto_rico_board_has_its_legend_and_the_engine_board(pr_game):
    played, rec, states, _ = pr_game
    for (text, _), i in list(zip(played, my_steps(rec)))[:20]:
        assert str(states[i]) in text
        legend = re.search(r"^Legend: (.*)$", text, re.M).group(1)
        assert "G Governor" in legend and "> to act" in legend and "colonists/tiles" in legend


# --- Port Royal -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pry_game(tmp_path_factory):
    path = tmp_path_factory.mktemp("pry") / "game.json"
    with Player(
        "play",
        "port_royal",
        "--players",
        3,
        "--bots",
        "random,random",
        "--seed",
        4,
        "--board",
        "full",
        "--no-color",
        "--record",
        path,
    ) as player:
        played = drive(player, lambda labels, text: 0)  # always reveal, never take: many busts
    rec = records.load(path)
    return played, rec, records.states(rec), player.text


def _deck():
    return {r["id"]: r for r in data_rows("port_royal_deck.csv")}


def test_port_royal_prints_every_revealed_card_readably(pry_game):
    _, rec, states, out = pry_game
    deck = _deck()
    reveals = [
        (states[i].to_dict()["active"], step["name"].split()[1])
        for i, step in enumerate(rec["steps"])
        if states[i].is_chance_node() and states[i].chance_event()[0] == "reveal"
    ]
    shown = re.findall(r"^  seat (\d+) reveals (.*)$", out, re.M)
    assert len(shown) == len(reveals) > 20
    for (seat, text), (active, card) in zip(shown, reveals):
        c = deck[card]
        assert int(seat) == active
        if c["category"] == "ship":
            kind = card.split("_")[1].capitalize()
            assert text.startswith(f"{kind} ({c['colour']}), ") and f"{c['coins']} coin" in text
            assert ("cannot be repelled" in text) == (c["skull"] == "1")
            assert c["skull"] == "1" or f"{c['swords']} sword" in text
        elif c["category"] == "person":
            assert f"cost {c['cost']}, {c['vp']} VP" in text
        elif c["category"] == "expedition":
            assert text.startswith(f"Expedition {c['symbol']}: {c['vp']} VP")
        else:
            assert text.startswith("Tax increase")


def test_port_royal_busts_repels_and_expeditions_match_the_record(pry_game):
    _, rec, states, out = pry_game
    deck = _deck()
    busts = repels = fulfils = 0
    for i, step in enumerate(rec["steps"]):
        d = states[i].to_dict()
        chance = states[i].is_chance_node()
        if chance and states[i].chance_event()[0] == "reveal":
            card = step["name"].split()[1]
        elif step["name"] == "dock":
            card = d["pending"]
        else:
            card = None
        if card and deck[card]["category"] == "ship" and states[i + 1].to_dict()["pending"] != card:
            colours = {deck[c]["colour"] for c in d["harbour"] if deck[c]["category"] == "ship"}
            busts += deck[card]["colour"] in colours
        repels += step["name"] == "repel"
        fulfils += step["name"].startswith("fulfil ")
    assert busts >= 1
    assert len(re.findall(r"^  bust: a second \w+ ship", out, re.M)) == busts
    assert len(re.findall(r"^  repelled: ", out, re.M)) == repels
    assert len(re.findall(r"^  seat \d fulfils Expedition ", out, re.M)) == fulfils


def test_port_royal_coin_lines_follow_the_coin_counts(pry_game):
    played, rec, states, out = pry_game
    told = ""
    # at every prompt, each seat's latest coin line gives its coin count in the state there
    for (text, _), i in zip(played, my_steps(rec)):
        told += text
        for seat, p in enumerate(states[i].to_dict()["players"]):
            last = re.findall(rf"^  seat {seat}: \d+ -> (\d+) coins?$", told, re.M)[-1]
            assert int(last) == len(p["coins"])
            n = len(p["coins"])
            coins = f"{n} coin" if n == 1 else f"{n} coins"  # the number of the noun
            assert re.search(rf"^[S ][> ]seat {seat}: {coins} \|", text, re.M)
    for seat, p in enumerate(states[-1].to_dict()["players"]):
        assert int(re.findall(rf"^  seat {seat}: \d+ -> (\d+) coins?$", out, re.M)[-1]) == len(
            p["coins"]
        )


def test_port_royal_board_names_cards_not_ids(pry_game):
    played, _, _, _ = pry_game
    ids = set(_deck())
    for text, _ in played:
        board = text.rsplit("Port Royal, ", 1)[1].split("Your move:")[0]
        assert not ids & set(re.findall(r"[a-z_0-9]+", board))


def test_port_royal_moves_name_cards_not_ids(pry_game):
    """A take or a fulfil says the card's printed name ("trade Galleon (black) for 1 coin"),
    never its id; typing the engine's name still plays it (match_move)."""
    played, _, states, _ = pry_game
    ids = set(_deck())
    takes = 0
    for text, _ in played:
        labels = choices(text)
        assert not ids & {w for lab in labels for w in re.findall(r"[a-z_0-9]+", lab)}, labels
        takes += sum(lab.startswith(("trade ", "hire ")) for lab in labels)
    assert takes >= 10
    s = next(st for st in states if not st.is_chance_node() and any(
        st.action_to_string(a).startswith("take ") for a in st.legal_actions()))  # fmt: skip
    a = next(a for a in s.legal_actions() if s.action_to_string(a).startswith("take "))
    labels = [boards.get("port_royal").choice_label(s, b) for b in s.legal_actions()]
    label = labels[s.legal_actions().index(a)]
    assert play.match_move(s.action_to_string(a), s, labels)[0] == a  # the id, typed
    assert play.match_move(label, s, labels)[0] == a  # the label, typed


# --- Cuba -------------------------------------------------------------------------------


def _cuba_choice(labels, _text):
    """Water at setup (to pay irrigation), the Architect when offered, then a build and its
    field, then the Mayor and a load; else the first move."""
    for prefix in ("take water", "play architect", "build ", "place on ", "play mayor", "load "):
        hits = [i for i, lab in enumerate(labels) if lab.startswith(prefix)]
        if hits:
            return hits[0]
    return 0


@pytest.fixture(scope="module")
def cuba_game(tmp_path_factory):
    path = tmp_path_factory.mktemp("cuba") / "game.json"
    with Player(
        "play",
        "cuba",
        "--players",
        3,
        "--bots",
        "random,random",
        "--seed",
        8,
        "--board",
        "full",
        "--no-color",
        "--record",
        path,
    ) as player:
        played = drive(player, _cuba_choice)
    rec = records.load(path)
    return played, rec, records.states(rec), player.text


def _expected_grid(d, seat):
    layout = {(int(r["row"]), int(r["col"])): r["field"] for r in data_rows("cuba_plantation.csv")}
    names = {r["id"]: r["name"] for r in data_rows("cuba_buildings.csv")}
    board = d["boards"][seat]
    on = {f: b for b, f in board["buildings"].items()}
    return [
        [
            ("*" if board["pawn"] == f"{r},{c}" else "")
            + ("#" + names[on[f"{r},{c}"]] if f"{r},{c}" in on else layout[r, c])
            for c in range(1, 5)
        ]
        for r in range(1, 4)
    ]


def _shown_grid(text, seat):
    """The cells of a seat's printed grid, cut at the columns of its header."""
    header, *rows = text.split(f"Plantation of seat {seat}:\n", 1)[1].split("\n")[:4]
    starts = [m.start() for m in re.finditer(r"col \d", header)]
    return [[row[a:b].strip() for a, b in zip(starts, [*starts[1:], None])] for row in rows]


def test_cuba_grids_show_every_field_building_and_pawn(cuba_game):
    played, rec, states, _ = cuba_game
    built = 0
    for (text, _), i in zip(played, my_steps(rec)):
        d = states[i].to_dict()
        for seat in range(3):
            assert _shown_grid(text, seat) == _expected_grid(d, seat)
            line = re.search(rf"^..seat {seat}: .*$", text, re.M).group()
            assert f"| hand {', '.join(d['boards'][seat]['hand']) or 'none'}" in line
        built = max(built, len(d["boards"][0]["buildings"]))
    assert built >= 2


def test_cuba_board_names_ships_buildings_and_laws_not_ids(cuba_game):
    """The board says a ship by what it takes, a building by its printed name, a law by its
    text, a black marker by its space ("Mayor: 4 pesos"): no id of theirs is printed."""
    played, rec, states, _ = cuba_game
    data = states[0].game.component_data()
    ships = {x["id"]: x["slots"] for x in data["ships"]}
    ids = {
        *ships,
        *(r["id"] for r in data_rows("cuba_buildings.csv")),
        *(x["id"] for x in data["laws"]),
    }
    ids |= set(MARKER_NAMES)  # the black markers' spaces: trader_crop, mayor_4pesos, ...
    ids = {x for x in ids if "_" in x}  # drought, corruption: ids that are words of their text
    seen_ship = seen_building = seen_marker = False
    board_markers = {  # rules §6.8
        "trader_material": "Trader: material",
        "trader_crop": "Trader: crop",
        "architect_2vp": "Architect: 2 VP",
        "architect_1vp": "Architect: 1 VP",
        "mayor_4pesos": "Mayor: 4 pesos",
        "mayor_2pesos": "Mayor: 2 pesos",
    }
    for (text, _), i in zip(played, my_steps(rec)):
        board = text.rsplit("Cuba, ", 1)[1].split("Plantation of seat")[0]
        assert not ids & set(re.findall(r"[a-z][a-z0-9_]*", board)), board
        d = states[i].to_dict()
        docks = [x["ship"] for x in d["harbour"]["docks"] if x]
        harbour = [*docks, *([d["harbour"]["at_sea"]] if d["harbour"]["at_sea"] else [])]
        for ship in harbour:
            takes = ", ".join(
                f"{n} {k}" for k, n in zip(boards.get("cuba").CARGO, ships[ship]) if n
            )
            assert f"ship ({takes})" in board
            seen_ship = True
        for b in d["boards"]:
            for building, field in b["buildings"].items():
                assert f"{boards.get('cuba').building_name(states[i], building)} ({field})" in board
                seen_building = True
        markers = d["markers"]
        if markers:
            assert "markers: " + ", ".join(board_markers[m] for m in markers) in board, board
            seen_marker = True
    assert seen_ship and seen_building and seen_marker


def test_cuba_build_costs_are_what_is_paid(cuba_game):
    played, rec, states, _ = cuba_game
    checked = 0
    for (_, label), i in zip(played, my_steps(rec)):
        m = re.match(r"build .+?: costs (.*)$", label)
        if not m:
            continue
        cost = {k: int(n) for n, k in re.findall(r"(\d+) (\w+)", m.group(1))}
        before, after = states[i].to_dict()["boards"][0], states[i + 1].to_dict()["boards"][0]
        for item in ("wood", "stone", "water"):
            assert before["yard"][item] - after["yard"][item] == cost.get(item, 0)
        assert before["pesos"] - after["pesos"] == cost.get("pesos", 0)
        checked += 1
    assert checked >= 2


def test_cuba_worker_choices_say_what_is_on_the_field(cuba_game):
    played, rec, states, _ = cuba_game
    seen = 0
    for (text, _), i in zip(played, my_steps(rec)):
        grid = _expected_grid(states[i].to_dict(), 0)
        for r, c, what in re.findall(
            r"^ +\d+\. (?:pawn to|harvest|place on) (\d),(\d)\W+(?:covers )?(?:1 )?"
            r"\(?([A-Za-z ]+?)(?:[),]|$)",
            text,
            re.M,
        ):
            assert grid[int(r) - 1][int(c) - 1].lstrip("*#") == what
            seen += 1
    assert seen > 10


def test_cuba_pawn_moves_say_the_materials_they_bring(cuba_game):
    played, rec, states, _ = cuba_game
    moves = 0
    for (_, label), i in zip(played, my_steps(rec)):
        m = re.match(r"pawn to \d,\d \(.*?\): (.*); crop fields: ", label)
        if not m:
            continue
        said = {k: int(n) for n, k in re.findall(r"\+(\d+) (\w+)", m.group(1))}
        before, after = (
            states[i].to_dict()["boards"][0]["yard"],
            states[i + 1].to_dict()["boards"][0]["yard"],
        )
        assert {
            k: after[k] - before[k] for k in ("wood", "stone", "water") if after[k] != before[k]
        } == said
        moves += 1
    assert moves >= 3


def test_cuba_harvest_choices_say_the_crop_and_the_water_paid(cuba_game):
    played, rec, states, _ = cuba_game
    free = paid = 0
    for (_, label), i in zip(played, my_steps(rec)):
        m = re.match(r"harvest \d,\d: (\d+) (\w+), (free|costs (\d+) water)$", label)
        if not m:
            continue
        before, after = (
            states[i].to_dict()["boards"][0]["yard"],
            states[i + 1].to_dict()["boards"][0]["yard"],
        )
        assert after[m.group(2)] - before[m.group(2)] == int(m.group(1))
        assert before["water"] - after["water"] == int(m.group(4) or 0)
        free += m.group(3) == "free"
        paid += m.group(3) != "free"
    assert free >= 3 and paid >= 1


def test_cuba_loads_and_characters_say_their_vp_and_votes(cuba_game):
    played, rec, states, _ = cuba_game
    setup = {r["key"]: r["value"] for r in data_rows("cuba_setup.csv")}
    votes = dict(kv.split("=") for kv in setup["character_votes"].split(";"))
    dock_vp = setup["dock_vp_per_item"].split(";")
    loads = 0
    for (text, label), i in zip(played, my_steps(rec)):
        for character, n in re.findall(r"^ +\d+\. play (\w+) \((\d+) votes?\)$", text, re.M):
            assert votes[character] == n
        m = re.match(r"load \w+ on dock (\d): (\d+) VP per item$", label)
        if m:
            assert m.group(2) == dock_vp[int(m.group(1)) - 1]
            gained = (
                states[i + 1].to_dict()["boards"][0]["vp"] - states[i].to_dict()["boards"][0]["vp"]
            )
            assert gained == int(m.group(2))
            loads += 1
    assert loads >= 1


def test_cuba_bots_bids_stay_secret(cuba_game):
    _, rec, _, out = cuba_game
    assert any(s["name"].startswith("bid ") and s["player"] != 0 for s in rec["steps"])
    assert re.search(r"^seat [12] \(random\): bid \(secret", out, re.M)
    assert not re.search(r"^seat [12] \(random\): bid \d", out, re.M)


# --- quit, --record, --load, the seed -----------------------------------------------------


def test_quit_with_record_writes_the_steps_played_and_load_resumes_there(tmp_path):
    path = tmp_path / "quit.json"
    r = run_cli(
        "play",
        "puerto_rico",
        "--players",
        3,
        "--bots",
        "random,random",
        "--no-color",
        "--record",
        path,
        stdin="1\n1\n1\nquit\n",
    )
    assert r.returncode == 0, r.stderr
    rec = records.load(path)
    state = records.replay(rec)
    assert f"record of {len(rec['steps'])} steps saved to {path}" in r.stdout
    mine = [s["name"] for s in rec["steps"] if s["player"] == 0]
    assert mine == [m.split(":")[0] for m in re.findall(r"^(?:> )*you: (.*)$", r.stdout, re.M)]
    assert len(mine) == 3
    assert not state.is_terminal() and state.current_player() == 0
    resumed = run_cli(
        "play",
        "puerto_rico",
        "--load",
        path,
        "--bots",
        "random,random",
        "--no-color",
        stdin="quit\n",
    )
    assert resumed.returncode == 0, resumed.stderr
    assert (
        resumed.stdout.splitlines()[0]
        == f"resumed at step {len(rec['steps'])} (seed {rec['seed']})"
    )
    first_board = resumed.stdout.split("Your move:")[0]
    assert str(state) in first_board and "Puerto Rico, " not in first_board.split(str(state))[0]


def test_load_resumes_a_save_file_record(tmp_path):
    path = tmp_path / "saved.json"
    r = run_cli(
        "play",
        "port_royal",
        "--players",
        2,
        "--bots",
        "random",
        "--no-color",
        stdin=f"1\n1\nsave {path}\nquit\n",
    )
    assert r.returncode == 0, r.stderr
    state = records.replay(records.load(path))
    assert f"saved {len(state.history())} steps to {path}" in r.stdout
    resumed = run_cli(
        "play", "port_royal", "--load", path, "--bots", "random", "--no-color", stdin="quit\n"
    )
    assert resumed.returncode == 0, resumed.stderr
    board = resumed.stdout.split("Your move:")[0]
    assert boards.get("port_royal").text_board(state) in board


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read record"),
        ("{not json", "not valid JSON"),
        ('{"format": "pgn"}', "record.format"),
    ],
)
def test_load_of_a_missing_or_corrupt_file_is_one_error_line(tmp_path, content, message):
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    r = run_cli("play", "puerto_rico", "--load", path, stdin="quit\n")
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m caribsim play: error: --load: ")
    assert message in lines[0]


def test_load_refuses_another_game_and_a_finished_one(tmp_path):
    path = tmp_path / "full.json"
    s = caribsim.load_game("port_royal", players=2).new_initial_state(seed=1)
    rng = random.Random(1)
    while not s.is_terminal():
        if s.is_chance_node():
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
    records.save(records.record_game(s, seed=1), path)
    for game, message in (("cuba", "holds a port_royal game, not cuba"), ("port_royal", "is over")):
        r = run_cli("play", game, "--load", path, stdin="quit\n")
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.splitlines()) == 1


def test_the_default_seed_is_fresh_and_printed_and_seed_replays_it():
    runs = [
        run_cli(
            "play",
            "cuba",
            "--players",
            3,
            "--bots",
            "random,random",
            "--no-color",
            stdin="1\n1\nquit\n",
        )
        for _ in range(2)
    ]
    seeds = []
    for r in runs:
        assert r.returncode == 0, r.stderr
        m = re.match(r"seed (\d+): replay with --seed (\d+)$", r.stdout.splitlines()[0])
        assert m and m.group(1) == m.group(2)
        seeds.append(int(m.group(1)))
    assert seeds[0] != seeds[1]
    again = run_cli(
        "play",
        "cuba",
        "--players",
        3,
        "--bots",
        "random,random",
        "--no-color",
        "--seed",
        seeds[0],
        stdin="1\n1\nquit\n",
    )
    assert again.stdout == runs[0].stdout


def test_a_move_can_be_typed_as_its_label():
    from caribsim.human import play

    s = caribsim.load_game("puerto_rico", players=3).new_initial_state(seed=3)
    rng = random.Random(3)
    while s.is_chance_node() or s.to_dict()["step"] != "build":
        s.resolve_chance() if s.is_chance_node() else s.apply_action(rng.choice(s.legal_actions()))
    board = boards.get("puerto_rico")
    legal = s.legal_actions()
    labels = [board.choice_label(s, a) for a in legal]
    k = next(i for i, lab in enumerate(labels) if lab.startswith("build indigo plant:"))
    assert play.match_move(labels[k].upper(), s, labels) == (legal[k], None)
    assert play.match_move(labels[k], s) == (
        None,
        f"no legal move matches {labels[k].lower()!r}; {play.HELP}",
    )
    assert play.match_move("build indigo plant", s, labels) == (legal[k], None)


# --- the board at each decision: what changed, or all of it --------------------------------


@pytest.mark.parametrize(("game", "seed"), [("puerto_rico", 5), ("cuba", 6)])
def test_after_a_move_only_the_boards_changed_lines_and_board_shows_all(tmp_path, game, seed):
    """By default a decision shows the board whole once, then only its lines that changed
    (each under its seat's line), without the legend; ``board`` shows all of it again."""
    path = tmp_path / "game.json"
    rng, texts, boarded = random.Random(seed), [], []
    with Player(
        "play", game, "--players", 3, "--bots", "random,random", "--seed", seed,
        "--no-color", "--record", path,
    ) as player:  # fmt: skip
        text = player.prompt()
        while text is not None:
            texts.append(text)
            if len(texts) % 5 == 3:  # now and then the whole board
                player.send("board")
                boarded.append(len(texts) - 1)
                text = player.prompt()
                texts[-1] += text
            player.send(rng.randrange(len(choices(texts[-1]))) + 1)
            text = player.prompt()
        end = player.text.rsplit("\n> ", 1)[1]  # after the last prompt: the game's end
    rec = records.load(path)
    states = records.states(rec)
    decisions = [states[i] for i in my_steps(rec)]
    assert len(decisions) == len(texts) >= 10
    board = boards.get(game)
    full = [board.text_board(s).split("\n") for s in decisions]
    header = "changed on the board (type board for all of it):"
    for k, text in enumerate(texts):
        before_moves = text.rsplit("Your move:\n", 1)[0]
        if k == 0:  # the first decision: everything, with the legend
            assert "\n".join(full[0]) in before_moves and header not in before_moves
            continue
        assert header in before_moves, before_moves
        shown = before_moves.rsplit(header + "\n", 1)[1].rstrip("\n").split("\n")
        assert not any(line.startswith("Legend: ") for line in shown), shown
        assert set(shown) <= set(full[k][:-1]), set(shown) - set(full[k])  # lines of the board
        new = set(full[k][:-1]) - set(full[k - 1])  # a line not on the last board at all
        assert new <= set(shown), new - set(shown)
        assert len(shown) < len(full[k]) - 1  # and far from all of it
        if k in boarded:  # then `board`: the whole of it, with the legend
            assert "\n".join(full[k]) in text.rsplit("Your move:\n", 1)[1]
    assert board.text_board(states[-1]) in end  # the end: all of it
