"""Play, watch and record: game records, the play/replay/bench/arena/simulate commands end to
end (subprocess), and the HTML viewer in a real headless browser."""

import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest
from extras import need

import caribsim
from caribsim import records, viewer

CLI = [sys.executable, "-m", "caribsim"]


def run_cli(*args, stdin=None, timeout=300):
    return subprocess.run(
        CLI + [str(a) for a in args], input=stdin, capture_output=True, text=True, timeout=timeout
    )


def random_game(players=3, seed=5, steps=None, game=None):
    """A random game (Puerto Rico with ``players``, or ``game``) played ``steps`` steps or
    to the end."""
    g = game or caribsim.load_game("puerto_rico", players=players)
    s = g.new_initial_state(seed=seed)
    rng = random.Random(seed)
    while not s.is_terminal() and (steps is None or len(s.history()) < steps):
        if s.is_chance_node():
            s.resolve_chance()
        else:
            s.apply_action(rng.choice(s.legal_actions()))
    return s


# --- records ------------------------------------------------------------------------


def test_record_round_trip_replays_to_an_identical_final_state(tmp_path):
    s = random_game()
    rec = records.record_game(s, seed=5, players_info=["a", "b", "c"])
    assert rec["format"] == "caribsim-record" and rec["version"] == 1
    assert rec["caribsim_version"] == caribsim.__version__
    assert rec["final"]["returns"] == s.returns()
    assert [st["action"] for st in rec["steps"]] == s.history()
    assert all(st["name"] == s.action_to_string(st["action"]) for st in rec["steps"])
    assert any(st["player"] == -1 for st in rec["steps"])  # chance outcomes are steps too
    path = tmp_path / "g.json"
    records.save(rec, path)
    again = records.replay(records.load(path))
    assert again.to_dict() == s.to_dict()


def test_unfinished_game_records_have_no_final(tmp_path):
    s = random_game(steps=50)
    rec = records.record_game(s, seed=5)
    assert rec["final"] is None
    assert records.replay(rec).to_dict() == s.to_dict()
    assert records.replay(rec, upto=10).history() == s.history()[:10]


def _bad(rec, step, **change):
    rec = json.loads(json.dumps(rec))
    rec["steps"][step].update(change)
    return rec


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: _bad(r, 40, name="build nothing"), "step 40"),
        (lambda r: _bad(r, 41, action=0), "step 41"),
        (lambda r: _bad(r, 42, player=(r["steps"][42]["player"] + 1) % 3), "step 42"),
        (lambda r: _bad(r, 43, action=10**6), "step 43"),
        (lambda r: {**r, "final": {"scores": [], "returns": [1, 0, 0]}}, "final scores"),
        (lambda r: {**r, "steps": r["steps"][:-5]}, "not over"),
        (lambda r: {**r, "options": {**r["options"], "players": 4}}, "step "),
        (lambda r: {**r, "game": "chess"}, "unknown game"),
        (lambda r: {**r, "format": "pgn"}, "format"),
        (lambda r: {**r, "version": 99}, "version"),
        (lambda r: {**r, "seed": -1}, "seed"),
        (lambda r: {**r, "steps": [1, 2]}, "step 0"),
    ],
)
def test_corrupted_or_mismatched_records_name_the_first_bad_step(mutate, message):
    rec = records.record_game(random_game(), seed=5)
    with pytest.raises(records.RecordError, match=message):
        records.replay(mutate(rec))


def test_load_rejects_unreadable_files(tmp_path):
    with pytest.raises(records.RecordError, match="cannot read"):
        records.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(records.RecordError, match="not valid JSON"):
        records.load(tmp_path / "bad.json")


# --- play ---------------------------------------------------------------------------


def test_play_scripted_with_bad_input_undo_hint_and_save(tmp_path):
    saved = tmp_path / "partial.json"
    script = (
        "\n".join(
            [
                "undo",
                "xyz",
                "999",
                "role",
                "hint",
                "1",
                "undo",
                "role settler",
                f"save {saved}",
                "save",
                "quit",
            ]
        )
        + "\n"
    )
    r = run_cli(
        "play",
        "puerto_rico",
        "--players",
        3,
        "--seat",
        0,
        "--bots",
        "random,random",
        "--hint-iterations",
        200,
        stdin=script,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "nothing to undo" in out
    assert "no legal move matches 'xyz'" in out
    assert "no move 999" in out
    assert "'role' is ambiguous" in out
    # the hint says what its figures are: 200 iterations, visit shares and the wins
    hint = re.search(r"^(?:> )?hint \(200 search iterations; [^)]*\): (.*)$", out, re.M)
    assert hint, out
    parts = hint.group(1).split("; ")
    assert 1 <= len(parts) <= 5
    figures = [re.fullmatch(r".+: (\d+)% of the visits, won (\d+)%", p) for p in parts]
    assert all(figures), parts
    visits = [int(m.group(1)) for m in figures]
    assert visits == sorted(visits, reverse=True) and sum(visits) <= 101
    assert all(0 <= int(m.group(2)) <= 100 for m in figures)
    assert "back to your previous decision" in out
    assert "you: role settler" in out
    assert "save needs a file name" in out
    rec = records.load(saved)
    assert rec["players"] == ["human", "random", "random"]
    st = records.replay(rec)
    # the undone first move is not in the record; 'role settler' is the person's first decision
    decisions = [s for s in rec["steps"] if s["player"] == 0]
    assert decisions[0]["name"] == "role settler"
    assert not st.is_terminal()


def test_play_a_full_game_to_the_end_and_record_it(tmp_path):
    path = tmp_path / "full.json"
    r = run_cli(
        "play",
        "puerto_rico",
        "--players",
        2,
        "--bots",
        "greedy",
        "--seed",
        3,
        "--record",
        path,
        "--no-color",
        stdin="1\n" * 2000,
    )
    assert r.returncode == 0, r.stderr
    assert "Game over" in r.stdout and "\033[" not in r.stdout
    rec = records.load(path)
    final = records.replay(rec)
    assert final.is_terminal() and rec["final"]["returns"] == final.returns()


def test_play_colour_and_end_of_input():
    r = run_cli(
        "play", "puerto_rico", "--players", 3, "--bots", "random,random", "--color", stdin=""
    )
    assert r.returncode == 0
    assert "\033[" in r.stdout and "end of input" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--players", 3, "--bots", "random"], "need 2 bots"),
        (["--players", 3, "--seat", 5, "--bots", "random,random"], "seat must be"),
        (["--bots", "random,wizard"], "unknown bot spec"),
    ],
)
def test_play_bad_arguments(args, message):
    r = run_cli("play", "puerto_rico", *args, stdin="quit\n")
    assert r.returncode == 2 and message in r.stderr


# --- replay, simulate, arena, bench ---------------------------------------------------


@pytest.fixture(scope="module")
def record_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("rec") / "game.json"
    records.save(
        records.record_game(random_game(players=4, seed=9), seed=9, players_info=["r"] * 4), path
    )
    return path


def test_replay_step_and_interactive(record_file):
    r = run_cli("replay", record_file, "--step", 120)
    assert r.returncode == 0
    expected = str(records.replay(records.load(record_file), upto=120))
    assert expected in r.stdout
    r = run_cli("replay", record_file, stdin="n\ng 50\np\nbogus\nq\n")
    assert r.returncode == 0
    assert (
        "--- step 50 /" in r.stdout
        and "--- step 49 /" in r.stdout
        and "unknown command 'bogus'" in r.stdout
    )


def test_replay_rejects_a_corrupted_record(tmp_path, record_file):
    rec = json.loads(record_file.read_text())
    rec["steps"][30]["name"] = "pass pass"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec))
    r = run_cli("replay", bad)
    assert r.returncode == 2 and "step 30" in r.stderr


def test_simulate_with_bots_saves_games(tmp_path):
    r = run_cli(
        "simulate",
        "puerto_rico",
        "--players",
        3,
        "--games",
        3,
        "--bots",
        "greedy,random,random",
        "--save-games",
        tmp_path / "games",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["bots"] == ["greedy", "random", "random"] and summary["games"] == 3
    files = sorted(os.listdir(tmp_path / "games"))
    assert files == ["game_00000.json", "game_00001.json", "game_00002.json"]
    for f in files:
        assert records.replay(records.load(tmp_path / "games" / f)).is_terminal()


def test_arena_save_games_and_plot(tmp_path):
    need("plot")
    r = run_cli(
        "arena",
        "puerto_rico",
        "--bots",
        "greedy,random",
        "--games",
        4,
        "--save-games",
        tmp_path / "g",
        "--plot",
        tmp_path / "w.png",
        "--save",
        tmp_path / "m.json",
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    match = json.loads((tmp_path / "m.json").read_text())
    assert len(os.listdir(tmp_path / "g")) == 4
    rec = records.load(tmp_path / "g" / "game_00001.json")
    assert rec["players"] == ["random", "greedy"]  # seats rotate every game
    assert records.replay(rec).returns() == match["games"][1]["returns"]


def test_bench_quick_prints_every_game():
    """One run gives every figure of the README's table, and the machine it ran on."""
    r = run_cli("bench", "--quick", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    rows = out["rows"]
    assert {row["game"] for row in rows} == set(caribsim.games())
    assert all(row["value"] > 0 for row in rows)
    for name in caribsim.games():
        whats = {row["what"] for row in rows if row["game"] == name}
        assert {
            "random playouts (C, 1 thread)",
            "state.child(a) at 512 positions",
            "state.clone() + apply_action(a) at 512 positions",
            "MCTS from the opening, 1 thread",
        } <= whats, whats
        assert any(w.startswith("Python loop") for w in whats)
    assert sum(row["what"].endswith("2 threads") for row in rows) == 2
    assert sum(row["unit"] == "x" for row in rows) == 2
    assert out["machine"]["cpus"] >= 1 and out["machine"]["python"].count(".") == 2


# --- the HTML viewer in a real browser -------------------------------------------------


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("the viewer test needs Debian's chromium (.ci/run installs it)")


@pytest.mark.parametrize("step", [0, 137, None])
def test_html_viewer_shows_the_scores_of_the_chosen_step(tmp_path, record_file, step):
    rec = records.load(record_file)
    out = tmp_path / "replay.html"
    r = run_cli("replay", record_file, "--html", out)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "http://" not in page and "https://" not in page and "<script src" not in page
    n = len(rec["steps"])
    at = n if step is None else step
    st = records.replay(rec, upto=at)
    expected = [s["total"] for s in st.scores()]
    dom = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
            "--dump-dom",
            f"file://{out}#step={at}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert f"step {at} / {n}" in dom
    for seat, total in enumerate(expected):
        assert f'id="score-{seat}">{total}<' in dom
        assert f'id="doubloons-{seat}">{st.to_dict()["boards"][seat]["doubloons"]}<' in dom


def test_viewer_data_has_a_snapshot_per_step(record_file):
    rec = records.load(record_file)
    data = viewer.steps_data(rec)
    assert len(data["snapshots"]) == len(rec["steps"]) + 1
    assert data["snapshots"][-1]["scores"] == [s["total"] for s in rec["final"]["scores"]]
