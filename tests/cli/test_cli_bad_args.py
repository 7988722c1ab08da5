"""Bad command lines: every one exits with code 2 and one line on stderr naming the problem,
with no traceback, no output and no file left behind.

The table runs in one child process through ``caribsim.__main__.main(argv)`` (fast, and a
crash fails the test instead of pytest); a few run as real ``python -m caribsim`` processes,
and the terminal game is fed odd input at its prompt.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from extras import need

import caribsim
from caribsim import records

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
PR = "puerto_rico"
BOTS2 = ["--bots", "random,random"]

# (argv, words the one stderr line must hold); {w} is the workspace folder
CASES = [
    # the command itself
    ([], "the following arguments are required: COMMAND"),
    (["dance"], "invalid choice: 'dance'"),
    (["--frobnicate"], "the following arguments are required: COMMAND"),
    (["games", "--bad"], "unrecognized arguments: --bad"),
    (["games", "extra"], "unrecognized arguments: extra"),
    (["bench", "--fast"], "unrecognized arguments: --fast"),
    (["bench", "5"], "unrecognized arguments: 5"),
    # simulate: game, players, numbers, options, bots
    (["simulate"], "the following arguments are required: GAME"),
    (["simulate", "chess"], "unknown game 'chess'; available: cuba, port_royal, puerto_rico"),
    (["simulate", "PUERTO_RICO"], "unknown game 'PUERTO_RICO'"),
    (["simulate", PR, "--players", "9"], "players must be 2..5, got 9"),
    (["simulate", PR, "--players", "1"], "players must be 2..5, got 1"),
    (["simulate", PR, "--players", "0"], "players must be an integer >= 1, got 0"),
    (["simulate", PR, "--players", "-3"], "players must be an integer >= 1, got -3"),
    (["simulate", PR, "--players", "four"], "players must be an integer >= 1, got 'four'"),
    (["simulate", "port_royal", "--players", "6"], "players must be 2..5, got 6"),
    (["simulate", "cuba", "--players", "99999999999999999999"], "players must be 2..5"),
    (["simulate", PR, "--games", "0"], "games must be an integer in 1..10000000, got 0"),
    (["simulate", PR, "--games", "-5"], "games must be an integer in 1..10000000, got -5"),
    (["simulate", PR, "--games", "1e3"], "games must be an integer in 1..10000000, got '1e3'"),
    (
        ["simulate", PR, "--games", "1000000000"],
        "games must be an integer in 1..10000000, got 1000000000",
    ),
    (
        ["simulate", PR, "--games", "9" * 5000],
        "games must be an integer in 1..10000000, got '" + "9" * 40 + "'... (5000 characters)",
    ),
    (
        ["simulate", PR, "--games", "9" * 4000],
        "games must be an integer in 1..10000000, got " + "9" * 40 + "... (4000 characters)",
    ),
    (["simulate", PR, "--games", ""], "games must be an integer in 1..10000000, got ''"),
    (["simulate", PR, "--seed", "-1"], "seed must be an integer in 0..2**64-1, got -1"),
    (
        ["simulate", PR, "--seed", str(2**64)],
        "seed must be an integer in 0..2**64-1, got 18446744073709551616",
    ),
    (["simulate", PR, "--seed", "abc"], "seed must be an integer in 0..2**64-1, got 'abc'"),
    (["simulate", PR, "--seed", "1.5"], "seed must be an integer in 0..2**64-1, got '1.5'"),
    (["simulate", PR, "--threads", "0"], "threads must be an integer in 1..256, got 0"),
    (["simulate", PR, "--threads", "100000"], "threads must be an integer in 1..256, got 100000"),
    (["simulate", PR, "--threads", "x"], "threads must be an integer in 1..256, got 'x'"),
    (["simulate", PR, "-o", "colour=blue"], "unknown option 'colour' for puerto_rico; allowed:"),
    (["simulate", PR, "-o", "players=3"], "unknown option 'players' for puerto_rico; allowed:"),
    (["simulate", PR, "-o", "expansion"], "option must look like KEY=VALUE"),
    (["simulate", PR, "-o", "=true"], "option must look like KEY=VALUE"),
    (["simulate", PR, "-o", "expansion=maybe"], "expansion"),
    (["simulate", PR, "-o", "all_colonists_and_vp=7"], "all_colonists_and_vp"),
    (["simulate", PR, "--bots", "random,random,random"], "4 seats; got 3 bots"),
    (["simulate", PR, "--bots", "wizard,random,random,random"], "unknown bot spec 'wizard'"),
    (["simulate", PR, "--bots", "mcts:abc,random,random,random"], "mcts:abc"),
    (["simulate", PR, "--bots", "mcts:0,random,random,random"], "iterations"),
    (["simulate", PR, "--bots", "mcts:10:speed=2,random,random,random"], "unknown option 'speed'"),
    (["simulate", PR, "--bots", ",,,"], "bot spec"),
    (
        ["simulate", PR, "--bots", "random,random,random,random", "--threads", "2"],
        "--threads applies to the C playouts",
    ),
    (["simulate", PR, "--backend", "cloud"], "argument --backend: invalid choice: 'cloud'"),
    (["simulate", PR, "--workers", "0"], "workers must be an integer in 1..1024, got 0"),
    (["simulate", PR, "--workers", "100000"], "workers must be an integer in 1..1024, got 100000"),
    (["simulate", PR, "--address", "auto"], "address= is for backend='ray', not 'local'"),
    (["simulate", PR, "--chunk-size", "0"], "chunk size must be an integer >= 1, got 0"),
    (["simulate", PR, "--retries", "-1"], "retries must be an integer >= 0, got -1"),
    (
        ["simulate", PR, "--resume", "{w}/afile.txt"],
        "argument --resume: '{w}/afile.txt' is a file, not a folder",
    ),
    (
        ["simulate", PR, "--resume", "{w}/afile.txt/sub"],
        "argument --resume: '{w}/afile.txt' is a file, not a folder",
    ),
    (
        ["simulate", PR, "--resume", "/proc/caribsim-run"],
        "argument --resume: cannot write the folder '/proc/caribsim-run' in '/proc'",
    ),
    (
        ["simulate", PR, "--resume", "/proc/self"],
        "argument --resume: cannot write into '/proc/self'",
    ),
    (
        ["simulate", PR, "--resume", "{w}/badrun", "--games", "2"],
        "run file '{w}/badrun/run.json' is not valid JSON",
    ),
    (["simulate", PR, "--resume", "{w}/otherrun", "--games", "2"], "holds chunks of another run"),
    (
        ["simulate", PR, "--save-games", "{w}/afile.txt"],
        "argument --save-games: '{w}/afile.txt' is a file, not a folder",
    ),
    (
        ["simulate", PR, "--save-games", "/proc/caribsim-games"],
        "argument --save-games: cannot write the folder",
    ),
    (["simulate", PR, "--save-games", ""], "argument --save-games: needs a folder name"),
    (["simulate", PR, "--games"], "argument --games/-n: expected one argument"),
    (["simulate", PR, "--jsn"], "unrecognized arguments: --jsn"),
    # arena
    (["arena", PR], "the following arguments are required: --bots/-b"),
    (["arena", "checkers", *BOTS2], "unknown game 'checkers'"),
    (["arena", PR, "--bots", "random"], "players must be 2..5, got 1"),
    (["arena", PR, "--bots", "random,sleepy"], "unknown bot spec 'sleepy'"),
    (["arena", PR, "--bots", "mcts:-5,random"], "iterations must be in 1.."),
    (["arena", PR, "--bots", "mcts:5:c=fast,random"], "mcts:5:c=fast"),
    (
        ["arena", PR, "--bots", "random,random,random", "-o", "players=2"],
        "unknown option 'players'",
    ),
    (["arena", PR, *BOTS2, "--games", "0"], "games must be an integer in 1..1000000, got 0"),
    (
        ["arena", PR, *BOTS2, "--games", "1000000000"],
        "games must be an integer in 1..1000000, got 1000000000",
    ),
    (["arena", PR, *BOTS2, "--games", "ten"], "games must be an integer in 1..1000000, got 'ten'"),
    (["arena", PR, *BOTS2, "--seed", "-7"], "seed must be an integer in 0..2**64-1, got -7"),
    (["arena", PR, *BOTS2, "--processes", "0"], "processes must be an integer in 1..1024, got 0"),
    (
        ["arena", PR, *BOTS2, "--processes", "2", "--backend", "local"],
        "--processes K is --backend processes",
    ),
    (
        ["arena", PR, *BOTS2, "--processes", "2", "--workers", "3"],
        "--processes K is --backend processes",
    ),
    (
        ["arena", PR, *BOTS2, "--save", "{w}"],
        "argument --save: '{w}' is a folder; give a file name",
    ),
    (
        ["arena", PR, *BOTS2, "--save", "{w}/missing/out.json"],
        "the folder '{w}/missing' does not exist",
    ),
    (
        ["arena", PR, *BOTS2, "--save", "/proc/caribsim.json"],
        "argument --save: cannot write '/proc/caribsim.json'",
    ),
    (["arena", PR, *BOTS2, "--save", ""], "argument --save: needs a file name"),
    (
        ["arena", PR, *BOTS2, "--save-games", "{w}/afile.txt"],
        "argument --save-games: '{w}/afile.txt' is a file",
    ),
    (
        ["arena", PR, *BOTS2, "--save-games", "/proc/caribsim-games"],
        "argument --save-games: cannot write",
    ),
    (["arena", PR, *BOTS2, "--plot", "{w}/adir"], "argument --plot: '{w}/adir' is a folder"),
    (
        ["arena", PR, *BOTS2, "--plot", "{w}/missing/p.png"],
        "the folder '{w}/missing' does not exist",
    ),
    (
        ["arena", PR, *BOTS2, "--resume", "{w}/afile.txt"],
        "argument --resume: '{w}/afile.txt' is a file",
    ),
    (
        ["arena", PR, *BOTS2, "--backend", "processes", "--address", "auto"],
        "address= is for backend='ray'",
    ),
    # tournament
    (
        ["tournament", PR, "--players", "2", "--bots", "random"],
        "the following arguments are required: --games/-n",
    ),
    (
        ["tournament", PR, "--players", "3", *BOTS2, "--games", "6"],
        "at least as many bots as seats: 3 seats, got 2",
    ),
    (
        ["tournament", PR, "--players", "2", "--bots", "random,random,greedy", "--games", "5"],
        "games must be a multiple of 6, got 5",
    ),
    (
        ["tournament", PR, "--players", "2", *BOTS2, "--games", "2", "--schedule", "elo"],
        "schedule must be one of",
    ),
    (
        ["tournament", PR, "--players", "2", "--bots", "random,nobody", "--games", "2"],
        "unknown bot spec 'nobody'",
    ),
    (
        ["tournament", PR, "--players", "2", *BOTS2, "--games", "2", "--plot", "{w}/adir"],
        "argument --plot: '{w}/adir' is a folder",
    ),
    # train
    (
        ["train", PR, "--out", "{w}/tr", "--rounds", "0"],
        "rounds=0 is the teacher's warm start alone (round 0): it needs a teacher",
    ),
    (
        ["train", PR, "--out", "{w}/tr", "--rounds", "-1"],
        "rounds must be an integer in 0..1000000, got -1",
    ),
    (["train", PR, "--out", "{w}/afile.txt"], "is a file, not a folder"),
    (
        ["train", PR, "--out", "{w}/tr", "--threshold", "2"],
        "threshold must be a finite number >= 0.0 and <= 1.01",
    ),
    # play
    (["play"], "the following arguments are required: GAME"),
    (["play", "go"], "unknown game 'go'"),
    (["play", PR, "--players", "7"], "players must be 2..5, got 7"),
    (["play", PR, "--players", "3", "--bots", "random"], "3 players need 2 bots, got 1"),
    (
        ["play", PR, "--players", "3", "--seat", "3", "--bots", "random,random"],
        "seat must be 0..2, got 3",
    ),
    (["play", PR, "--seat", "-1"], "seat must be an integer >= 0, got -1"),
    (["play", PR, "--bots", "random,genius"], "unknown bot spec 'genius'"),
    (["play", PR, "--hint-iterations", "0"], "hint iterations must be an integer >= 1, got 0"),
    (["play", PR, "--seed", "x"], "seed must be an integer in 0..2**64-1, got 'x'"),
    (["play", PR, "--record", "{w}/adir"], "argument --record: '{w}/adir' is a folder"),
    (["play", PR, "--record", "{w}/missing/g.json"], "the folder '{w}/missing' does not exist"),
    (
        ["play", PR, "--record", "/proc/caribsim.json"],
        "argument --record: cannot write '/proc/caribsim.json'",
    ),
    (["play", PR, "-o", "turbo=1"], "unknown option 'turbo' for puerto_rico"),
    (["play", PR, "--color", "yes"], "unrecognized arguments: yes"),
    # replay: files that are missing, folders, not JSON, nested, not UTF-8, not records
    (["replay"], "the following arguments are required: FILE"),
    (
        ["replay", "{w}/missing.json"],
        "cannot read record '{w}/missing.json': No such file or directory",
    ),
    (["replay", "{w}/adir"], "cannot read record '{w}/adir': Is a directory"),
    (["replay", "{w}/notjson.json"], "record '{w}/notjson.json' is not valid JSON"),
    (["replay", "{w}/empty.json"], "record '{w}/empty.json' is not valid JSON"),
    (["replay", "{w}/nested.json"], "record '{w}/nested.json' is nested too deeply"),
    (["replay", "{w}/nested_dict.json"], "record '{w}/nested_dict.json' is nested too deeply"),
    (["replay", "{w}/latin1.json"], "record '{w}/latin1.json' is not UTF-8 text"),
    (["replay", "{w}/utf16.json"], "record '{w}/utf16.json' is not UTF-8 text"),
    (["replay", "{w}/list.json"], "a record is a JSON object, got list"),
    (["replay", "{w}/badstep.json"], "step 3: action"),
    (["replay", "{w}/badplayers.json"], "record.players has 2 entries for a 3-player game"),
    (["replay", "{w}/badgame.json"], "unknown game 'chess'"),
    (["replay", "/dev/zero"], "record '/dev/zero' is larger than 64 MiB"),
    (["replay", "{w}/good.json", "--step", "-1"], "step must be an integer >= 0, got -1"),
    (["replay", "{w}/good.json", "--step", "10000"], "--step must be 0..12, got 10000"),
    (["replay", "{w}/good.json", "--step", "two"], "step must be an integer >= 0, got 'two'"),
    (["replay", "{w}/good.json", "--html", "{w}/adir"], "argument --html: '{w}/adir' is a folder"),
    (
        ["replay", "{w}/good.json", "--html", "{w}/missing/r.html"],
        "the folder '{w}/missing' does not exist",
    ),
    (
        ["replay", "{w}/good.json", "--html", "/proc/caribsim.html"],
        "argument --html: cannot write '/proc/caribsim.html'",
    ),
    (
        ["replay", "{w}/good.json", "--html", "{w}/r.html", "--step", "3"],
        "give --step N (print one board) or --html FILE",
    ),
    (["replay", "{w}/good.json", "{w}/good.json"], "unrecognized arguments"),
    # serve
    (["serve", "--port", "70000"], "port must be an integer in 1..65535, got 70000"),
    (["serve", "--port", "0"], "port must be an integer in 1..65535, got 0"),
    (["serve", "--port", "http"], "port must be an integer in 1..65535, got 'http'"),
    (
        ["serve", "--games-dir", "{w}/afile.txt"],
        "argument --games-dir: '{w}/afile.txt' is a file, not a folder",
    ),
    (
        ["serve", "--games-dir", "/proc/caribsim-web"],
        "argument --games-dir: cannot write the folder",
    ),
    (["serve", "--bot-delay", "-1"], "bot delay must be a number of seconds in 0..60, got '-1'"),
    (["serve", "--bot-delay", "nan"], "bot delay must be a number of seconds in 0..60, got 'nan'"),
    (["serve", "--hint-iterations", "0"], "hint iterations must be an integer >= 1, got 0"),
    (["serve", "--analysis-iterations", "0"], "analysis iterations must be an integer >= 1, got 0"),
    (
        ["serve", "--host", "192.0.2.1", "--games-dir", "{w}/web"],
        "cannot listen on 192.0.2.1:8000: Cannot assign requested address",
    ),
    (["serve", "--lang", "de"], "argument --lang: unknown language 'de'; choose from en, cs"),
    # selfplay
    (["selfplay", PR], "the following arguments are required: --out"),
    (["selfplay", "bridge", "--out", "{w}/sp"], "unknown game 'bridge'"),
    (
        ["selfplay", PR, "--out", "{w}/afile.txt"],
        "argument --out: '{w}/afile.txt' is a file, not a folder",
    ),
    (
        ["selfplay", PR, "--out", "/proc/caribsim-sp"],
        "argument --out: cannot write the folder '/proc/caribsim-sp' in '/proc'",
    ),
    (["selfplay", PR, "--out", "{w}/sp", "--bot", "random"], "self-play needs an MCTS bot"),
    (["selfplay", PR, "--out", "{w}/sp", "--bot", "mcts:x"], "mcts:x"),
    (
        ["selfplay", PR, "--out", "{w}/sp", "--games", "0"],
        "games must be an integer in 1..1000000, got 0",
    ),
    (
        ["selfplay", PR, "--out", "{w}/sp", "--games", "1000000000"],
        "games must be an integer in 1..1000000",
    ),
    (["selfplay", PR, "--out", "{w}/sp", "--players", "6"], "players must be 2..5, got 6"),
    (
        ["selfplay", PR, "--out", "{w}/sp", "--games-per-shard", "0"],
        "games per shard must be an integer >= 1, got 0",
    ),
    (
        ["selfplay", PR, "--out", "{w}/sp", "--chunk-size", "4"],
        "use --games-per-shard for the chunk size (not --chunk-size)",
    ),
    (
        ["selfplay", PR, "--out", "{w}/sp", "--resume", "{w}/r"],
        "--out is already resumable (not --resume)",
    ),
    (
        ["selfplay", PR, "--out", "{w}/sp", "--seed", str(-(2**70))],
        "seed must be an integer in 0..2**64-1",
    ),
    (["selfplay", PR, "--out", "{w}/sp", "-o", "speed=3"], "unknown option 'speed'"),
]

# the command lines above, run in one child process through main(argv)
_DRIVER = r"""
import contextlib, io, json, os, resource, signal, sys, traceback
from caribsim.__main__ import main

resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))   # a regression fails, not the machine

class CaseTimeout(BaseException):
    pass

def on_alarm(*_):
    raise CaseTimeout("no answer within 20 s")

signal.signal(signal.SIGALRM, on_alarm)

def listing(root):
    out = []
    for d, dirs, files in os.walk(root):   # (a folder's mtime moves with the checks' probes)
        out += [(os.path.join(d, n), None, None) for n in dirs]
        for n in files:
            st = os.stat(os.path.join(d, n))
            out.append((os.path.join(d, n), st.st_size, st.st_mtime_ns))
    return sorted(out, key=str)

root, cases = sys.argv[1], json.loads(sys.stdin.read())
results = []
for argv in cases:
    before = listing(root)
    out, err = io.StringIO(), io.StringIO()
    sys.stdin = io.StringIO("")
    signal.alarm(20)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:
                code = e.code
    except BaseException:
        code, err = "raised", io.StringIO(err.getvalue() + traceback.format_exc())
    signal.alarm(0)
    results.append({"code": code, "out": out.getvalue(), "err": err.getvalue(),
                    "changed": listing(root) != before})
print(json.dumps(results))
"""


def _record(players=3, seed=3, steps=12):
    game = caribsim.load_game(PR, players=players)
    s = game.new_initial_state(seed=seed)
    while len(s.history()) < steps:
        s.resolve_chance() if s.is_chance_node() else s.apply_action(s.legal_actions()[0])
    return records.record_game(s, seed, ["a", "b", "c"])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    w = tmp_path_factory.mktemp("cli")
    (w / "adir").mkdir()
    (w / "afile.txt").write_text("x\n")
    (w / "notjson.json").write_text("{not json")
    (w / "empty.json").write_text("")
    (w / "nested.json").write_text("[" * 200_000)
    (w / "nested_dict.json").write_text('{"format": ' + "[" * 40 + "]" * 40 + "}")
    (w / "latin1.json").write_bytes('{"game": "café"}'.encode("latin-1"))
    (w / "utf16.json").write_bytes('{"game": "x"}'.encode("utf-16"))
    (w / "list.json").write_text("[1, 2]")
    good = _record()
    (w / "good.json").write_text(json.dumps(good))
    bad = json.loads(json.dumps(good))
    bad["steps"][3]["name"] = "role prospector"
    (w / "badstep.json").write_text(json.dumps(bad))
    (w / "badplayers.json").write_text(json.dumps({**good, "players": ["a", "b"]}))
    (w / "badgame.json").write_text(json.dumps({**good, "game": "chess"}))
    (w / "badrun").mkdir()
    (w / "badrun" / "run.json").write_text('{"kind": ')
    (w / "otherrun").mkdir()
    (w / "otherrun" / "run.json").write_text('{"kind": "arena"}')
    return w


@pytest.fixture(scope="module")
def table_results(workspace):
    cases = [[a.replace("{w}", str(workspace)) for a in argv] for argv, _ in CASES]
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(workspace)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=900,
        env=ENV,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_the_table_is_large_and_covers_every_command():
    assert len(CASES) >= 80
    commands = {argv[0] for argv, _ in CASES if argv and not argv[0].startswith("-")}
    assert set(build_commands()) <= commands


def build_commands():
    from caribsim.__main__ import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return list(sub.choices)


@pytest.mark.parametrize(
    "k", range(len(CASES)), ids=[" ".join(a)[:60] or "(none)" for a, _ in CASES]
)
def test_bad_invocation_exits_2_with_one_clear_line(workspace, table_results, k):
    _argv, words = CASES[k]
    if words.startswith("cannot listen on"):
        need("web")  # found when the server binds its port, which needs the extra
    r = table_results[k]
    words = words.replace("{w}", str(workspace))
    assert r["code"] == 2, r
    assert "Traceback" not in r["err"], r["err"]
    lines = r["err"].splitlines()
    assert len(lines) == 1 and r["err"].endswith("\n"), r["err"]
    assert lines[0].startswith("python -m caribsim"), lines[0]
    assert ": error: " in lines[0] and words in lines[0], lines[0]
    assert r["out"] == "", r["out"]
    assert not r["changed"]  # nothing written, created or removed


# --- real processes ---------------------------------------------------------------------

REAL = [
    (["simulate", PR, "--games", "1000000000"], "games must be an integer in 1..10000000"),
    (["replay", "{w}/nested.json"], "is nested too deeply"),
    (["replay", "{w}/latin1.json"], "is not UTF-8 text"),
    (["arena", PR, *BOTS2, "--games", "2", "--save", "{w}/adir"], "is a folder"),
    (["selfplay", PR, "--out", "/proc/caribsim-sp", "--games", "1"], "cannot write the folder"),
    (["simulate", PR, "--save-games", "/proc/self/x"], "cannot write the folder"),
]


def test_real_processes_exit_2_with_one_line(workspace):
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "caribsim"] + [a.replace("{w}", str(workspace)) for a in argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for argv, _ in REAL
    ]
    for p, (argv, words) in zip(procs, REAL):
        out, err = p.communicate(timeout=120)
        assert p.returncode == 2 and out == "", (argv, p.returncode, err)
        assert len(err.splitlines()) == 1 and words in err and "Traceback" not in err, (argv, err)


def test_help_of_every_command_prints_and_exits_0():
    """The top-level help crashed on a '%' in the arena summary."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "caribsim", *cmd, "--help"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for cmd in [[]] + [[c] for c in build_commands()]
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and err == "" and out.startswith("usage: python -m caribsim"), (
            p.args,
            err,
        )


# --- the terminal game and the replay prompt under odd input ------------------------------

PLAY = [
    sys.executable,
    "-m",
    "caribsim",
    "play",
    PR,
    "--players",
    "3",
    "--bots",
    "random,random",
    "--no-color",
]


def _run_play(stdin: bytes):
    return subprocess.run(PLAY, input=stdin, capture_output=True, timeout=120, env=ENV)


@pytest.mark.parametrize(
    "stdin, says",
    [
        (b"", "end of input: leaving the game"),
        (b"\xff\xfe role\n", "that input is not UTF-8 text"),
        (b"x" * 1_000_000 + b"\n", "that line is too long (at most 4096 characters)"),
        (b"1" * 5000 + b"\n", "that line is too long (at most 4096 characters)"),
        (b"9" * 4000 + b"\n", "no move 0: choose 1.."),
        ("\u00b2\n".encode(), "no legal move matches '\u00b2'"),  # a digit int() refuses
        (b"\x1b[A\n", "that input holds control characters"),
    ],
    ids=["eof", "not-utf8", "1MB-line", "5000-digits", "4000-digits", "superscript-2", "arrow-key"],
)
def test_play_prompt_odd_input_gets_a_message_and_the_game_goes_on(stdin, says):
    r = _run_play(stdin + b"quit\n" if stdin else b"")
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0 and err == "", err
    assert says in out
    assert "Traceback" not in out
    if stdin:
        assert out.rstrip().endswith("leaving the game")  # it read on to "quit"
        assert len(out) < 20_000  # a huge line is not echoed


def test_play_huge_line_without_newline_then_end_of_input():
    r = _run_play(b"y" * 3_000_000)
    out = r.stdout.decode()
    assert r.returncode == 0 and r.stderr == b""
    assert "that line is too long" in out and out.rstrip().endswith(
        "end of input: leaving the game"
    )


def _interrupt_at_prompt(argv, prompt: bytes):
    p = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    seen = b""
    deadline = time.monotonic() + 60
    while not seen.endswith(prompt) and time.monotonic() < deadline:
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        seen += chunk
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    return p.returncode, (seen + out).decode(), err.decode()


def test_play_ctrl_c_at_the_prompt_leaves_with_a_message():
    code, out, err = _interrupt_at_prompt(PLAY, b"> ")
    assert code == 130, (code, err)
    assert out.rstrip().endswith("interrupted: leaving the game")
    assert err == ""


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_during_a_run_is_one_line():
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "caribsim",
            "arena",
            PR,
            "--bots",
            "mcts:20000,random",
            "--games",
            "5",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    deadline = time.monotonic() + 60
    while _cpu_seconds(p.pid) < 2.0 and time.monotonic() < deadline:  # past the imports, searching
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert err == "python -m caribsim arena: interrupted\n" and out == ""


def test_replay_prompt_odd_input(workspace):
    stdin = (
        b"\xff\xfe\n"
        + "g \u00b2\n".encode()
        + b"g "
        + b"9" * 5000
        + b"\n"
        + b"z" * 100_000
        + b"\nn\nq\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "caribsim", "replay", str(workspace / "good.json")],
        input=stdin,
        capture_output=True,
        timeout=120,
        env=ENV,
    )
    out = r.stdout.decode()
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert "unknown command '\\udcff\\udcfe'" in out
    assert "unknown command 'g \\xb2'" in out
    assert "that line is too long" in out
    assert "--- step 1 / 12" in out
