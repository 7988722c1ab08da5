"""What clients may ask for (caribsim.web.limits, docs/web.md): every spec over the operator's
policy is a 400 naming the limit, a model outside the allowed folders is refused without the
file being touched, a record's Cuba data folder only from the operator's list, creates limited
per client (429 with Retry-After) and the unfinished games capped; a flood of 1,500 creates
leaves a real server's memory flat; and six games of the heaviest allowed bot leave a seventh
game's bot its own budget (the bounded pool takes the games' slices in turn).

Run with -s for the figures (latencies, memory)."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import shutil
import threading
import time
import warnings

import pytest
from extras import need

import caribsim

need("web")  # a test of caribsim.web: skips without the extra


from caribsim.human import records
from caribsim.web.app import DEFAULT_BOT, create_app
from caribsim.web.limits import PACKAGE_MODELS, Policy, RateLimiter
from tests.web.conftest import free_socket, serve_process, serving, wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on httpx
    from starlette.testclient import TestClient

PR = "puerto_rico"


def _client(folder, policy=None, bot_delay=0.0, **kw):
    return TestClient(create_app(folder, bot_delay=bot_delay, policy=policy), **kw)


def _create(c, seats, game=PR, **extra):
    return c.post("/api/games", json={"game": game, "seats": seats, "seed": 5, **extra})


def _no_games(c):
    listed = c.get("/api/games").json()
    return listed["games"] == [] and listed["finished"] == []


# --- the specs --------------------------------------------------------------------------
REFUSED = [
    # the list: each accepted before, each a 400 naming its limit now
    ("mcts:seconds=1e300", "asks for seconds 1e+300; this server allows at most 5 a move"),
    (f"mcts:{2**40}", f"asks for iterations {2**40}; this server allows at most 10000 a move"),
    (
        f"puct:{2**40}",
        "asks for simulations x playouts 1099511627776; this server allows at most 1000",
    ),
    ("mcts:100:threads=64", "asks for threads 64; this server allows at most 1 a move"),
    (
        "puct:100:rollouts=10000",
        "asks for simulations x playouts 1000000; this server allows at most 1000",
    ),
    ("mcts:10001", "asks for iterations 10001; this server allows at most 10000"),
    ("mcts:seconds=5.5", "asks for seconds 5.5; this server allows at most 5"),
    ("gumbel:1001", "asks for simulations x playouts 1001"),
    ("puct:300:rollouts=4", "asks for simulations x playouts 1200"),
    ("az:600", "asks for simulations x playouts 1200"),  # the card's mix=0.5: a playout each
]


@pytest.mark.parametrize("spec, words", REFUSED)
def test_a_spec_over_the_budget_is_a_400_naming_the_limit(tmp_path, spec, words):
    with _client(tmp_path) as c:
        r = _create(c, ["human", spec])
        assert r.status_code == 400 and r.headers["content-type"] == "application/json", r.text
        error = r.json()["error"]
        assert error.startswith("seat 1: ") and words in error, error
        # and what is allowed
        assert (
            "a move: at most 10000 MCTS iterations, 1000 guided simulations x playouts, 5 s"
            in error
        )
        assert _no_games(c)


def test_the_default_bot_and_the_budgets_edges_are_allowed(tmp_path):
    with _client(tmp_path, bot_delay=30) as c:
        for spec in (
            DEFAULT_BOT,
            "mcts:10000",
            "mcts:seconds=5",
            "mcts:100:threads=1",
            "puct:1000",
            "gumbel:250:rollouts=4",
            "az",
            "random",
            "greedy",
        ):
            r = _create(c, ["human", spec])
            assert r.status_code == 201, (spec, r.text)


def test_a_kind_the_operator_leaves_out_is_refused_naming_the_allowed(tmp_path):
    policy = Policy(bots=("random", "mcts"), max_simulations=500, max_threads=2)
    with _client(tmp_path, policy) as c:
        for spec, kind in (("greedy", "greedy"), ("puct:10", "puct"), ("AZ", "az")):
            r = _create(c, ["human", spec])
            assert r.status_code == 400
            assert r.json()["error"] == (
                f"seat 1: {kind} bots are not allowed on this server; allowed: random, mcts"
            )
        r = c.post("/api/games?lang=cs", json={"game": PR, "seats": ["human", "greedy"]})
        assert r.json()["error"] == (  # in the page's language, as every refusal
            "hráč 1: boti greedy nejsou na tomto serveru povoleni; povoleno: random, mcts"
        )
        r = _create(c, ["human", "mcts:501"])
        assert r.status_code == 400 and "at most 500 a move" in r.json()["error"]
        assert _create(c, ["human", "mcts:500:threads=2"]).status_code == 201
        r = _create(c, ["human", "genius"])  # not a kind at all: parse_bot's message
        assert r.status_code == 400 and "seat 1: unknown bot spec 'genius'" in r.json()["error"]
        listed = c.get("/api/games").json()["limits"]
        assert listed["bots"] == ["random", "mcts"] and listed["max_simulations"] == 500


def test_a_spec_is_checked_in_a_record_played_on_too(tmp_path):
    with _client(tmp_path, bot_delay=30) as c:
        made = _create(c, ["human", "random"]).json()
        record = c.app.state.games.get(made["id"]).record()
        r = c.post("/api/games", json={"record": record, "seats": ["human", "mcts:seconds=1e300"]})
        assert r.status_code == 400 and "asks for seconds 1e+300" in r.json()["error"]


# --- the model files --------------------------------------------------------------------
def _blocks_not(c, body, seconds=20.0):
    """The answer to ``body`` (a create), which must come within ``seconds``: a request that
    opened a FIFO would hang."""
    answer: list = []
    t = threading.Thread(target=lambda: answer.append(c.post("/api/games", json=body)), daemon=True)
    t.start()
    t.join(seconds)
    assert answer, "the request hangs: the file was opened"
    return answer[0]


def test_a_model_outside_the_allowed_folders_is_refused_without_touching_it(tmp_path):
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    models = tmp_path / "models"
    models.mkdir()
    os.mkfifo(models / "inner.npz")  # a FIFO in an allowed folder: not a regular file
    (models / "out.npz").symlink_to(tmp_path / "elsewhere.npz")  # a link out of the folder
    (tmp_path / "elsewhere.npz").write_bytes(b"x")
    policy = Policy(models_dirs=(str(models),), creates_per_minute=1000)
    errors = {}
    with _client(tmp_path / "games", policy) as c:
        for model in (
            "/proc/self/fd/0",  # the issue's: it blocked the whole server
            str(fifo),
            "inner.npz",
            str(models / "inner.npz"),
            "out.npz",
            "/etc",  # was 'it is a folder'
            "/no/such/file.npz",  # was 'no such file'
            "/etc/passwd",
            "../fifo.npz",
            "sub/../../fifo.npz",
            "",
        ):
            for kind in ("alphazero:10", "puct:10", "gumbel:10"):
                r = _blocks_not(c, {"game": PR, "seats": ["human", f"{kind}:model={model}"]})
                assert r.status_code == 400, (model, r.text)
                errors[model] = r.json()["error"]
        assert _no_games(c)
    # one message whatever is at the path (no oracle of the server's files): the name given
    # and the models allowed
    said = {e.replace(repr(m[:80]), "M") for m, e in errors.items()}
    assert said == {
        "seat 1: model M is not one of this server's models; allowed: puerto_rico_2p.npz "
        "(model=NAME.npz)"
    }, said


def test_a_model_of_the_operators_folder_is_played_and_named_by_its_file(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(os.path.join(PACKAGE_MODELS, "puerto_rico_2p.npz"), models / "mine.npz")
    with _client(tmp_path / "games", Policy(models_dirs=(str(models),))) as c:
        r = _create(c, ["alphazero:20:model=mine.npz", "puct:20:model=puerto_rico_2p.npz"])
        assert r.status_code == 201, r.text
        gid = r.json()["id"]
        v = wait_for(
            lambda: (lambda v: v if v["step"] > 12 else None)(c.get(f"/api/games/{gid}").json())
        )
        # puct: over a network is named as alphazero:
        assert v["players"] == [
            "alphazero:20:model=mine.npz",
            "alphazero:20:model=puerto_rico_2p.npz",
        ]
        assert v["problem"] is None
        assert str(tmp_path) not in json.dumps(v)  # the server's folders stay off the pages
        r = _create(c, ["human", "alphazero:20:model=" + str(models / "mine.npz")])
        assert r.status_code == 201  # a full path inside the folder is the same file
        listed = c.get("/api/games").json()["limits"]
        assert listed["models"] == ["puerto_rico_2p.npz", "mine.npz"]


# --- a record's options -----------------------------------------------------------------
def _cuba_record(data, folder=None):
    """A record of a new 2-player Cuba game whose options say ``data``, made with the data
    of ``folder`` (default the shipped data)."""
    game = caribsim.load_game("cuba", players=2, data=folder)
    record = records.record_game(game.new_initial_state(seed=3), 3)
    record["options"] = {**record["options"], "data": data}
    return record


def _cuba_data(tmp_path):
    """A copy of the shipped Cuba data in a folder of its own."""
    data = tmp_path / "cuba-data"
    data.mkdir()
    shipped = os.path.dirname(PACKAGE_MODELS)
    for name in os.listdir(shipped):
        if name.startswith("cuba_") and name.endswith(".csv"):
            shutil.copy(os.path.join(shipped, name), data / name)
    return data


def test_a_records_cuba_data_folder_is_refused_unless_the_operator_lists_it(tmp_path):
    data = _cuba_data(tmp_path)
    with _client(tmp_path / "a") as c:
        for folder in ("/etc", str(data), "relative", 7):
            r = c.post(
                "/api/games", json={"record": _cuba_record(folder), "seats": ["human", "random"]}
            )
            assert r.status_code == 400, r.text
            assert r.json()["error"] == (
                f"cuba: the data folder {folder!r} is not one this server allows; allowed: none"
            )
        assert _no_games(c) and not list((tmp_path / "a").glob("*.json"))
    with _client(tmp_path / "b", Policy(cuba_data_dirs=(str(data),))) as c:
        r = c.post(
            "/api/games", json={"record": _cuba_record("/etc"), "seats": ["human", "random"]}
        )
        assert r.status_code == 400 and f"allowed: {data}" in r.json()["error"]
        r = c.post(
            "/api/games",
            json={"record": _cuba_record(str(data), str(data)), "seats": ["human", "random"]},
        )
        assert r.status_code == 201, r.text
        gid = r.json()["id"]
        assert c.get(f"/api/games/{gid}").json()["options"]["data"] == str(data)


def test_a_stored_game_is_loaded_only_within_the_servers_policy(tmp_path, monkeypatch):
    """A game stored while the operator allowed its data folder (or by a server before there
    was a policy) is not loaded by a server that does not allow it: its folder is not read,
    the game answers why, and the other games go on."""
    data = _cuba_data(tmp_path)
    folder = tmp_path / "games"
    with _client(folder, Policy(cuba_data_dirs=(str(data),)), bot_delay=30) as c:
        r = c.post(
            "/api/games",
            json={"record": _cuba_record(str(data), str(data)), "seats": ["human", "human"]},
        )
        assert r.status_code == 201, r.text
        gid = r.json()["id"]
        other = _create(c, ["human", "human"]).json()["id"]
    read: list = []
    load_game = caribsim.load_game
    monkeypatch.setattr(
        caribsim, "load_game", lambda *a, **kw: read.append(kw.get("data")) or load_game(*a, **kw)
    )
    with _client(folder, bot_delay=30) as c:  # the default policy: no data folder allowed
        r = c.get(f"/api/games/{gid}")
        assert r.status_code == 500
        assert r.json()["error"] == (
            f"game {gid} cannot be read from the store: cuba: the data folder {str(data)!r} "
            "is not one this server allows; allowed: none"
        )
        assert str(data) not in read  # refused before the rules were made
        assert c.get(f"/api/games/{other}").status_code == 200
    with _client(folder, Policy(cuba_data_dirs=(str(data),)), bot_delay=30) as c:
        assert c.get(f"/api/games/{gid}").json()["options"]["data"] == str(data)


def _steps(c, game_id):
    return c.app.state.games.get(game_id).steps


def test_a_stored_bot_over_the_servers_budget_waits_saying_why(tmp_path):
    """A seat's bot stored under a larger budget is not run by a server with a smaller one:
    the game waits when that seat is to act, with the policy's refusal said."""
    folder = tmp_path / "games"
    spec = "mcts:20000"
    with _client(folder, Policy(max_simulations=20000), bot_delay=30) as c:
        made = _create(c, [spec, spec]).json()  # its bots wait 30 s: none moves here
    with _client(folder, bot_delay=0.0) as c:  # the default: 10000 iterations a move at most
        view = wait_for(
            lambda: (v := c.get(f"/api/games/{made['id']}").json())["problem"] and v,
            what="the game's problem",
        )
        seat = view["to_act"]
        assert view["problem"].startswith(
            f"seat {seat} ({spec}) failed: seat {seat}: {spec} asks for iterations 20000; "
            "this server allows at most 10000 a move ("
        )
        assert view["step"] == 0 or all(e["player"] < 0 for e in _steps(c, made["id"]))


# --- creates per client, games held -----------------------------------------------------
def test_creates_past_the_rate_are_429_with_retry_after_per_client(tmp_path):
    app = create_app(tmp_path, bot_delay=30, policy=Policy(creates_per_minute=3))
    with TestClient(app) as c, TestClient(app, client=("10.0.0.2", 5000)) as other:
        for _ in range(3):
            assert _create(c, ["human", "random"]).status_code == 201
        for body in ({"game": PR, "seats": ["human", "random"]}, {"not": "even checked"}):
            r = c.post("/api/games", json=body)
            assert r.status_code == 429, r.text
            assert 1 <= int(r.headers["retry-after"]) <= 20
            assert r.json()["error"] == (
                "too many new games from this address: at most 3 a minute; try again in "
                f"{r.headers['retry-after']} s"
            )
        assert _create(other, ["human", "random"]).status_code == 201  # another address
        assert len(c.get("/api/games").json()["games"]) == 4


def test_the_rate_limiter_refills_and_forgets_the_oldest_clients():
    now = [0.0]
    limiter = RateLimiter(6, clients=100, clock=lambda: now[0])  # one token every 10 s
    assert [limiter.take("a") for _ in range(6)] == [0.0] * 6
    assert limiter.take("a") == pytest.approx(10.0)
    now[0] += 5
    assert limiter.take("a") == pytest.approx(5.0)  # a refused take spends nothing
    now[0] += 15.0  # 2 tokens now
    assert [limiter.take("a") for _ in range(2)] == [0.0, 0.0]
    assert limiter.take("a") > 0
    for k in range(10_000):
        limiter.take(f"client {k}")
    assert len(limiter._buckets) == 100


def test_the_unfinished_games_are_capped(tmp_path):
    with _client(tmp_path, Policy(max_games=2), bot_delay=30) as c:
        assert _create(c, ["human", "random"]).status_code == 201
        assert _create(c, ["human", "random"]).status_code == 201
        r = _create(c, ["human", "random"])
        assert r.status_code == 503 and r.json()["error"] == (
            "this server holds 2 unfinished games, as many as it may; try again when some have ended"
        )
    with _client(tmp_path / "b", Policy(max_games=1)) as c:
        gid = _create(c, ["random", "random"]).json()["id"]
        assert _create(c, ["human", "random"]).status_code == 503
        wait_for(lambda: c.get(f"/api/games/{gid}").json()["over"], what="the bots' game")
        assert _create(c, ["human", "random"]).status_code == 201  # a finished game does not count


# --- a flood --------------------------------------------------------------------------------
def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def _answers(port) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/api/games")
        return conn.getresponse().status == 200
    except OSError:
        return False


@pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="needs procfs: apt-get install procps"
)
def test_a_flood_of_creates_is_429s_and_the_servers_memory_stays_flat(tmp_path):
    with free_socket() as sock:
        port = sock.getsockname()[1]
    p = serve_process(port, str(tmp_path), "--bot-delay", "30", "--creates-per-minute", "5")
    try:
        assert p.stdout.readline().startswith("caribsim: play at"), p.stderr.read()
        wait_for(lambda: _answers(port), what="the server")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = json.dumps({"game": PR, "seats": ["human", "mcts:2000"]})
        statuses, rss = [], {}
        start = time.perf_counter()
        for k in range(1500):
            conn.request("POST", "/api/games", body, {"content-type": "application/json"})
            r = conn.getresponse()
            r.read()
            statuses.append(r.status)
            if r.status == 429:
                assert int(r.getheader("retry-after")) >= 1
            if k + 1 in (100, 500, 1500):
                rss[k + 1] = _rss_kib(p.pid)
        seconds = time.perf_counter() - start
        conn.close()
    finally:
        p.terminate()
        p.communicate(timeout=60)
    assert statuses[:5] == [201] * 5 and statuses[5:] == [429] * 1495
    grown = rss[1500] - rss[100]
    print(
        f"\n1500 creates in {seconds:.1f} s: 5 x 201, 1495 x 429; server RSS {rss[100]} KiB after "
        f"100, {rss[500]} after 500, {rss[1500]} after 1500 (+{grown} KiB)"
    )
    assert grown < 2048, rss


# --- fairness -------------------------------------------------------------------------------
HEAVY = 0.5  # seconds a move of the heaviest allowed MCTS bot
OWN = 0.2  # the seventh game's bot's seconds a move
MARGIN = 0.3


async def _watch(address, gid, moves, out):
    """The arrival times of the game's first ``moves`` updates after the first view."""
    import websockets

    async with websockets.connect(f"ws://{address}/api/games/{gid}/ws") as ws:
        json.loads(await ws.recv())
        while len(out) < moves:
            view = json.loads(await ws.recv())
            out.append((time.monotonic(), view["step"]))


def _post(address, body):
    conn = http.client.HTTPConnection(*address.split(":"), timeout=30)
    conn.request("POST", "/api/games", json.dumps(body), {"content-type": "application/json"})
    r = conn.getresponse()
    made = json.load(r)
    assert r.status == 201, made
    return made["id"]


@pytest.mark.parametrize(
    "heavy",
    [f"mcts:seconds={HEAVY}", "puct:1000", "az"],
    ids=["mcts-at-its-seconds", "guided-at-its-simulations", "az"],
)
def test_six_games_of_the_heaviest_bot_leave_a_seventh_its_own_budget(tmp_path, heavy):
    policy = Policy(max_seconds=HEAVY, max_simulations=10**7, workers=2)
    app = create_app(tmp_path, bot_delay=0, policy=policy)
    with serving(app) as address:
        for k in range(6):
            _post(address, {"game": PR, "players": 2, "seats": [heavy, heavy], "seed": k})
        time.sleep(2 * HEAVY)  # the six are searching
        bot = f"mcts:seconds={OWN}"
        start = time.monotonic()
        gid = _post(address, {"game": PR, "seats": [bot, bot], "seed": 99})
        updates: list = []
        asyncio.run(asyncio.wait_for(_watch(address, gid, 6, updates), 60))
    # from one bot move to the next (the first update may come before the page listens)
    times = [t for t, _ in updates]
    gaps = [b - a for a, b in zip(times, times[1:])]
    first = updates[0][0] - start  # the create (on the pool too) and the first move
    print(
        f"\n{heavy} x 6: the seventh's first view after {first:.3f} s; its moves (own budget {OWN} s) took "
        + ", ".join(f"{g:.3f}" for g in gaps)
        + " s"
    )
    assert max(gaps) <= OWN + MARGIN, gaps
