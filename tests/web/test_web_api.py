"""The JSON API of caribsim.web through starlette's TestClient: making a game, moves, every
refused request (wrong seat, wrong token, stale step, malformed body, illegal action) leaving
the game and its files as they were, undo, hint, the live updates, a bot game to its end
whose record replays, and a new app over the same games folder resuming the games."""

from __future__ import annotations

import json
import random
import sqlite3
import warnings

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra


import caribsim
from caribsim.human import boards, lang, records, viewer
from caribsim.search import mcts
from caribsim.web import games
from caribsim.web import page as web_page
from caribsim.web.app import DEFAULT_BOT, create_app
from tests.web import stored
from tests.web.conftest import HINT_ITERATIONS, token_of, wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on httpx
    from starlette.testclient import TestClient

PR = "puerto_rico"


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "games"


def _client(folder, bot_delay=0.0):
    return TestClient(create_app(folder, bot_delay=bot_delay, hint_iterations=HINT_ITERATIONS))


@pytest.fixture
def client(folder):
    with _client(folder) as c:
        yield c


def create(c, seats, game=PR, seed=5, **extra):
    r = c.post("/api/games", json={"game": game, "seats": seats, "seed": seed, **extra})
    assert r.status_code == 201, r.text
    return r.json()


def view(c, gid, *tokens):
    r = c.get(f"/api/games/{gid}", params=[("token", t) for t in tokens])
    assert r.status_code == 200, r.text
    return r.json()


def settled(c, gid, *tokens):
    """The view once no bot is to act (a person's turn or the end)."""
    return wait_for(
        lambda: (lambda v: v if not v["thinking"] else None)(view(c, gid, *tokens)),
        what="the bots to move",
    )


def files(folder):
    """Everything the store holds (to see that a refused request stored nothing)."""
    return stored.everything(folder)


def replayed(folder, gid, upto=None):
    return records.replay(stored.record(folder, gid), upto)


def move(c, gid, token, step, action):
    return c.post(f"/api/games/{gid}/move", json={"token": token, "step": step, "action": action})


def test_a_new_game_is_its_record_and_the_view_is_its_state(client, folder):
    made = create(client, ["human", "random", "random"])
    tok = token_of(made, 0)
    v = view(client, made["id"], tok)
    st = replayed(folder, made["id"])
    assert stored.record(folder, made["id"])["players"] == ["human", "random", "random"]
    assert v["step"] == len(st.history()) and v["to_act"] == st.current_player() == 0
    assert v["snapshot"] == json.loads(json.dumps(viewer.snapshot(st, PR)))
    board = boards.get(PR)
    assert [(m["action"], m["label"]) for m in v["moves"]] == [
        (a, board.choice_label(st, a, seat=0)) for a in st.legal_actions()
    ]
    assert v["you"] == [0] and not v["over"]
    assert len(v["log"]) == v["step"]  # one line per step (chance outcomes too)
    assert view(client, made["id"])["moves"] == []  # a watcher without a token gets no moves
    assert tok not in json.dumps(stored.record(folder, made["id"]))  # the record holds no secret
    # nor is it given before the end: its chance steps would show what the board hides
    for path in (f"/api/games/{made['id']}/record", f"/replay/{made['id']}"):
        r = client.get(path)
        assert r.status_code == 409 and "the record is given when the game is over" in r.text


def test_a_move_is_played_the_bots_answer_and_the_record_follows(client, folder):
    made = create(client, ["human", "random", "random"], seed=9)
    gid, tok = made["id"], token_of(made, 0)
    before = view(client, gid, tok)
    action = before["moves"][-1]["action"]
    r = move(client, gid, tok, before["step"], action)
    assert r.status_code == 200, r.text
    after = settled(client, gid, tok)
    st = replayed(folder, gid)
    assert st.history()[before["step"]] == action
    assert after["step"] == len(st.history()) > before["step"]
    assert after["to_act"] == st.current_player()
    assert [m["action"] for m in after["moves"]] == (
        st.legal_actions() if st.current_player() == 0 else []
    )
    assert after["snapshot"]["scores"] == [s["total"] for s in st.scores()]


def test_moves_of_the_wrong_seat_token_or_step_are_refused_and_change_nothing(client, folder):
    made = create(client, ["human", "human", "random"])
    gid, t0, t1 = made["id"], token_of(made, 0), token_of(made, 1)
    v = view(client, gid, t0)
    a = v["moves"][0]["action"]
    saved = files(folder)
    cases = [
        (
            move(client, gid, t1, v["step"], a),
            409,
            "not your turn: seat 0 (human) is to act, you are seat 1",
        ),
        (move(client, gid, "not-a-token", v["step"], a), 403, "this token belongs to no seat"),
        (move(client, gid, "", v["step"], a), 403, "give the seat's token"),
        (
            move(client, gid, t0, v["step"] - 1, a),
            409,
            f"stale request: made at step {v['step'] - 1}, the game is at step {v['step']}",
        ),
        (move(client, gid, t0, v["step"] + 3, a), 409, "stale request"),
        (move(client, gid, t0, True, a), 400, "step must be an integer"),
        (
            move(client, gid, t0, v["step"], 999),
            400,
            "action 999 is not a legal move here; the legal actions are",
        ),
        (move(client, gid, t0, v["step"], str(a)), 400, f'action "{a}" is not a legal move'),
        (move(client, "0" * 12, t0, v["step"], a), 404, "no game '000000000000'"),
        (
            move(client, "..%2F..%2Fetc", t0, v["step"], a),
            404,
            "Not Found: POST /api/games/../../etc/move",
        ),
        (client.post(f"/api/games/{gid}/moves", json={}), 404, "Not Found: POST /api/games/"),
        (client.get(f"/api/games/{gid}/move"), 405, "Method Not Allowed"),
        (client.post(f"/api/games/{gid}/move", content=b"{not json"), 400, "not valid JSON"),
        (client.post(f"/api/games/{gid}/move", content=b"\xff\xfe"), 400, "not valid JSON"),
        (
            client.post(f"/api/games/{gid}/move", json=[t0, v["step"], a]),
            400,
            "must be a JSON object",
        ),
        (
            client.post(f"/api/games/{gid}/move", json={"token": t0, "step": v["step"]}),
            400,
            "exactly action, step, token",
        ),
        (
            client.post(
                f"/api/games/{gid}/move", json={"token": t0, "step": v["step"], "action": a, "x": 1}
            ),
            400,
            "exactly action, step, token",
        ),
        (
            client.post(f"/api/games/{gid}/move", content=b" " * 70_000),
            413,
            "larger than 65536 bytes",
        ),
        (
            client.get(f"/api/games/{gid}", params={"token": "wrong"}),
            403,
            "this token belongs to no seat",
        ),
    ]
    for r, status, words in cases:
        assert r.status_code == status and words in r.json()["error"], (status, words, r.text)
    assert files(folder) == saved
    assert view(client, gid, t0) == v
    assert [m["action"] for m in view(client, gid, t0, t1)["moves"]] == [
        m["action"] for m in v["moves"]
    ]


def test_a_record_that_cannot_be_written_plays_nothing(client, folder):
    made = create(client, ["human", "random", "random"], seed=12)
    gid, tok = made["id"], token_of(made, 0)
    v = view(client, gid, tok)
    saved = files(folder)
    client.app.state.games.store.set_busy_timeout(0.05)
    blocker = sqlite3.connect(stored.path(folder), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock: writing fails
    try:
        r = move(client, gid, tok, v["step"], v["moves"][0]["action"])
        assert r.status_code == 500 and "cannot save the game's record" in r.json()["error"]
        assert "database is locked" in r.json()["error"] and "nothing was played" in r.text
        assert view(client, gid, tok) == v
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert files(folder) == saved
    assert move(client, gid, tok, v["step"], v["moves"][0]["action"]).status_code == 200
    assert replayed(folder, gid).history()[v["step"]] == v["moves"][0]["action"]


def test_refused_new_games_make_no_files(client, folder):
    cases = [
        (
            {"game": "chess", "seats": ["human", "random"]},
            "game must be one of cuba, port_royal, puerto_rico",
        ),
        ({"game": PR, "seats": ["human"]}, "seats must be a list of 2..5 entries"),
        ({"game": PR, "seats": ["human", "genius"]}, "seat 1: unknown bot spec 'genius'"),
        ({"game": PR, "seats": ["human", "mcts:0"]}, "seat 1: "),
        ({"game": PR, "seats": ["human", 7]}, 'seat 1: give "human" or a bot spec'),
        (
            {"game": PR, "seats": ["human", "random"], "players": 3},
            "players is 3 but 2 seats are given",
        ),
        ({"game": PR, "seats": ["human", "random"], "options": {"turbo": True}}, "option 'turbo'"),
        (
            {"game": PR, "seats": ["human", "random"], "options": {"expansion": "yes"}},
            "each true or false",
        ),
        (
            {"game": PR, "seats": ["human", "random"], "options": {"all_31_buildings": True}},
            "puerto_rico: draft, buildings, all_31_buildings and exclusions need expansion=True",
        ),
        (
            {"game": PR, "seats": ["human", "random"], "seed": -1},
            "seed must be an integer in 0..18446744073709551615",
        ),
        ({"game": PR, "seats": ["human", "random"], "seed": 2**64}, "seed must be an integer"),
        ({"game": PR, "seats": ["human", "random"], "colour": "red"}, "unknown field(s) colour"),
        (
            {"game": "cuba", "seats": ["human", "az"]},
            "seat 1: az is the network trained for puerto_rico",
        ),
        (
            {"game": PR, "seats": ["human", "az", "random"]},
            "seat 1: az is the network trained for puerto_rico",
        ),
        ("puerto_rico", "a new game is a JSON object"),
    ]
    for body, words in cases:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and words in r.json()["error"], (body, r.text)
    assert stored.count(folder) == 0
    assert client.get("/api/games").json()["games"] == []


def test_options_and_other_games_are_made_as_asked(client, folder):
    made = create(
        client, ["human", "random", "random"], options={"expansion": True}, seed=2**64 - 1
    )
    rec = stored.record(folder, made["id"])
    assert rec["options"] == caribsim.load_game(PR, players=3, expansion=True).options()
    assert rec["seed"] == 2**64 - 1 and "expansion" in view(client, made["id"])["snapshot"]
    for game in ("port_royal", "cuba"):
        made = create(client, ["random", "human"], game=game, seed=3)
        assert replayed(folder, made["id"]).game == caribsim.load_game(game, players=2)


def test_undo_goes_back_to_the_persons_previous_decision(client, folder):
    made = create(client, ["human", "random", "random"], seed=11)
    gid, tok = made["id"], token_of(made, 0)
    first = view(client, gid, tok)
    assert first["undo"] == {"0": None}
    r = client.post(f"/api/games/{gid}/undo", json={"token": tok, "step": first["step"]})
    assert r.status_code == 409 and "nothing to undo for seat 0" in r.json()["error"]
    # two decisions of seat 0, the bots and chance between
    for _ in range(2):
        v = settled(client, gid, tok)
        assert move(client, gid, tok, v["step"], v["moves"][-1]["action"]).status_code == 200
    v = settled(client, gid, tok)
    target = v["undo"]["0"]
    assert target is not None and target < v["step"]
    r = client.post(f"/api/games/{gid}/undo", json={"token": tok, "step": v["step"] - 1})
    assert r.status_code == 409 and "stale request" in r.json()["error"]
    r = client.post(f"/api/games/{gid}/undo", json={"token": tok, "step": v["step"]})
    assert r.status_code == 200, r.text
    back = r.json()
    expected = replayed(folder, gid)
    assert back["step"] == target == len(expected.history()) and back["to_act"] == 0
    assert expected == records.replay(records.record_game(expected, 11), target)
    # the same board as when that decision was first asked
    assert [m["action"] for m in back["moves"]] == expected.legal_actions()
    assert back["log"] == v["log"][:target]


def test_undo_never_takes_back_another_persons_move(client, folder):
    made = create(client, ["human", "human", "random"], seed=4)
    gid, tokens = made["id"], [token_of(made, 0), token_of(made, 1)]
    moved = set()
    while True:  # until seat 1 has moved after a move of seat 0
        v = settled(client, gid, *tokens)
        if 0 in moved and v["undo"]["0"] is None:
            break
        p = v["to_act"]
        assert move(client, gid, tokens[p], v["step"], v["moves"][0]["action"]).status_code == 200
        moved.add(p)
    players = [s["player"] for s in stored.record(folder, gid)["steps"]]
    last0 = max(i for i, p in enumerate(players) if p == 0)
    assert 1 in players[last0:]  # seat 1 moved since seat 0's last decision
    assert v["undo"]["1"] is not None
    r = client.post(f"/api/games/{gid}/undo", json={"token": tokens[0], "step": v["step"]})
    assert r.status_code == 409 and "nothing to undo for seat 0" in r.json()["error"]


def test_hint_is_the_search_of_the_position(client, folder):
    made = create(client, ["human", "random", "random"], seed=8)
    gid, tok = made["id"], token_of(made, 0)
    v = view(client, gid, tok)
    r = client.post(f"/api/games/{gid}/hint", json={"token": tok, "step": v["step"]})
    assert r.status_code == 200, r.text
    h = r.json()
    st = replayed(folder, gid)
    result = mcts.search(st, iterations=HINT_ITERATIONS, seed=v["step"])
    shares = sorted(result.policy().items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [(m["action"], m["share"]) for m in h["moves"]] == shares
    assert [m["win"] for m in h["moves"]] == [result.mean_reward[a] for a, _ in shares]
    # each move's expected score margin: seat 0's score minus the best other's, at the end of
    # the hint's random games after the move
    for m in h["moves"]:
        scores = caribsim.random_playouts(
            st.child(m["action"]), games.MARGIN_PLAYOUTS, seed=v["step"]
        ).scores
        expected = sum(int(s[0]) - max(int(s[1]), int(s[2])) for s in scores) / len(scores)
        assert m["margin"] == round(expected, 2)
    assert len({m["margin"] for m in h["moves"]}) > 1  # it tells the moves apart
    assert h["win"] == result.mean_reward[result.action] and h["iterations"] == result.iterations
    assert [m["label"] for m in h["moves"]] == [
        boards.get(PR).choice_label(st, a) for a, _ in shares
    ]
    r = client.post(f"/api/games/{gid}/hint", json={"token": tok, "step": v["step"] + 1})
    assert r.status_code == 409 and "stale request" in r.json()["error"]


def test_a_bot_game_plays_to_its_end_and_its_record_replays(client, folder):
    made = create(client, ["random", "greedy", "random"], seed=21)
    gid = made["id"]
    assert made["links"] == []
    end = wait_for(
        lambda: (lambda v: v if v["over"] else None)(view(client, gid)),
        timeout=120,
        what="the bot game to end",
    )
    rec = stored.record(folder, gid)
    st = records.replay(rec)  # every step checked, the final scores too
    assert st.is_terminal() and rec["final"] == {"scores": st.scores(), "returns": st.returns()}
    assert rec["players"] == ["random", "greedy", "random"]
    board = boards.get(rec["game"])
    why = board.end_reason(records.states(rec), lang.translator(rec["game"]))
    assert end["game_over"] == viewer.game_over(
        rec["final"], rec["players"], None, why, board.TIEBREAK
    )
    assert [r["total"] for r in end["game_over"]["rows"]] == [s["total"] for s in st.scores()]
    assert client.get(f"/api/games/{gid}/record").json() == rec
    page = client.get(f"/replay/{gid}")
    # the viewer's page of the record, with play from here (the app's default bot for the seats)
    assert page.status_code == 200 and page.text == web_page.replay(rec, gid, DEFAULT_BOT)
    assert (
        page.text.startswith(viewer.render(rec).rsplit("</body>", 1)[0])
        and 'id="play-from-here"' in page.text
    )
    listed = client.get("/api/games").json()
    assert gid not in [g["id"] for g in listed["games"]] and gid in [
        g["id"] for g in listed["finished"]
    ]


def test_a_new_app_over_the_same_folder_resumes_the_games(folder):
    with _client(folder, bot_delay=30) as c:  # the bots wait: the server stops first
        made = create(c, ["human", "random", "random"], seed=13)
        gid, tok = made["id"], token_of(made, 0)
        v = view(c, gid, tok)
        assert move(c, gid, tok, v["step"], v["moves"][0]["action"]).status_code == 200
        stopped = view(c, gid, tok)
        assert stopped["thinking"] or stopped["to_act"] == 0
    with _client(folder) as c:
        listed = c.get("/api/games").json()["games"]
        assert [(g["id"], g["step"]) for g in listed] == [(gid, stopped["step"])]
        again = settled(c, gid, tok)  # the same token; the bots move on by themselves
        assert again["log"][: len(stopped["log"])] == stopped["log"]
        assert again["to_act"] == 0 and again["moves"]
        r = move(c, gid, tok, again["step"], again["moves"][0]["action"])
        assert r.status_code == 200, r.text
        assert replayed(folder, gid).history()[again["step"]] == again["moves"][0]["action"]


def test_a_broken_file_in_the_folder_does_not_stop_the_others(folder):
    """A folder of the files of the server before the store: its good games are imported at
    the first start (their tokens still act), a broken one is not (and the server starts)."""
    good, bad = "0123456789ab", "ba9876543210"
    for gid, seed in ((good, 1), (bad, 2)):
        state = caribsim.load_game(PR, players=2).new_initial_state(seed=seed)
        stored.write_legacy(folder, gid, state, seed, ["human", "random"], [f"tok{seed}", None])
    (folder / f"{bad}.json").write_text("{broken")
    with _client(folder) as c:
        assert [g["id"] for g in c.get("/api/games").json()["games"]] == [good]
        assert c.get(f"/api/games/{bad}").status_code == 404
        assert view(c, good, "tok1")["you"] == [0]


def test_a_second_page_sees_the_moves_live(client):
    made = create(client, ["human", "human", "random"], seed=6)
    gid, t0, t1 = made["id"], token_of(made, 0), token_of(made, 1)
    with client.websocket_connect(f"/api/games/{gid}/ws?token={t1}") as ws:
        first = ws.receive_json()
        assert first["you"] == [1] and first["moves"] == [] and first["to_act"] == 0
        a = view(client, gid, t0)["moves"][0]
        assert move(client, gid, t0, first["step"], a["action"]).status_code == 200
        pushed = ws.receive_json()
        assert pushed["step"] == first["step"] + 1
        assert pushed["log"][-1].endswith(f"seat 0 (human): {a['label'].split(':')[0]}")
        ws.send_text("move 3")
        assert "only sends the game's updates" in ws.receive_json()["error"]
    with client.websocket_connect(f"/api/games/{gid}/ws?token=forged") as ws:
        refused = ws.receive_json()
        assert refused["status"] == 403 and "belongs to no seat" in refused["error"]


def test_the_pages_are_served(client):
    made = create(client, ["human", "random"], seed=3)
    lobby = client.get("/")
    assert lobby.status_code == 200 and 'id="create"' in lobby.text
    page = client.get(f"/game/{made['id']}")
    assert (
        page.status_code == 200 and "const BOARD" in page.text and "function gameOver" in page.text
    )
    missing = client.get("/game/abcabcabcabc")
    assert missing.status_code == 404 and "no game &#x27;abcabcabcabc&#x27;" in missing.text


# ---------------------------------------------------------------------------------------------
# play on from a record


def _random_record(name, seed, players=3):
    game = caribsim.load_game(name, players=players)
    st = game.new_initial_state(seed=seed)
    rng = __import__("random").Random(seed)
    while not st.is_terminal():
        if st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
    return records.record_game(st, seed)


@pytest.mark.parametrize("name", ["puerto_rico", "port_royal", "cuba"])
def test_a_record_is_played_on_from_a_step(client, folder, name):
    rec = _random_record(name, seed=4)
    at = len(rec["steps"]) // 3
    before = records.replay(rec, upto=at)
    seats = ["human"] + ["random"] * (before.game.num_players() - 1)
    r = client.post("/api/games", json={"record": rec, "step": at, "seats": seats})
    assert r.status_code == 201, r.text
    made = r.json()
    v = settled(client, made["id"], token_of(made, 0))
    saved = stored.record(folder, made["id"])
    assert saved["steps"][:at] == rec["steps"][:at]  # the record's first steps are kept
    assert saved["seed"] == rec["seed"] and saved["options"] == rec["options"]
    now = records.replay(saved)  # and the game goes on from there
    assert now.history()[:at] == before.history()
    assert v["step"] == len(now.history()) >= at
    # the board as seat 0 may see it: a card put face down unnamed, the others' secret bids not
    expected = viewer.snapshot(now, name)
    board = boards.get(name)
    if getattr(board, "face_down", lambda s: False)(records.states(saved)[-2]):
        expected["last"] = board.FACE_DOWN_LAST
    if hasattr(board, "hide"):
        board.hide(expected, now, [0])
    assert v["snapshot"] == json.loads(json.dumps(expected))


@pytest.mark.parametrize(
    "change,words",
    [
        (
            lambda rec: {"record": rec, "step": len(rec["steps"]) + 1},
            "step must be an integer in 0..",
        ),
        (lambda rec: {"record": rec}, "the record's game is over at step"),
        (
            lambda rec: {
                "record": {
                    **rec,
                    "steps": [*rec["steps"][:5], {"player": 0, "action": 9999, "name": "x"}],
                },
                "step": 3,
            },
            "the record does not replay",
        ),
        (lambda rec: {"record": "a record"}, "record must be a game record"),
        (
            lambda rec: {"record": rec, "step": 3, "seats": ["human"]},
            "seats must be a list of 3 entries",
        ),
        (lambda rec: {"record": rec, "step": 3, "seats": ["human", "nobody", "random"]}, "nobody"),
        (lambda rec: {"record": rec, "step": 3, "seed": 1}, "unknown field(s) seed beside record"),
    ],
)
def test_a_bad_record_request_is_refused_and_makes_nothing(client, folder, change, words):
    rec = _random_record("puerto_rico", seed=2)
    body = {"seats": ["human", "random", "random"], **change(rec)}
    r = client.post("/api/games", json=body)
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert stored.count(folder) == 0


def test_the_record_kept_step_by_step_is_the_replayed_one(client, folder):
    """The server keeps the record's steps as they are played (no replay at every save): the
    file equals records.record_game of the game's state, also after an undo."""
    made = create(client, ["human", "random", "random"], seed=21)
    gid, tok = made["id"], token_of(made, 0)
    game = client.app.state.games.get(gid)
    for _ in range(6):
        v = settled(client, gid, tok)
        if v["over"]:
            break
        assert move(client, gid, tok, v["step"], v["moves"][-1]["action"]).status_code == 200
        settled(client, gid, tok)  # the bots have moved: the state holds still
        assert stored.record(folder, gid) == records.record_game(
            game.state, game.seed, game.players
        )
    v = settled(client, gid, tok)
    assert (
        client.post(f"/api/games/{gid}/undo", json={"token": tok, "step": v["step"]}).status_code
        == 200
    )
    assert stored.record(folder, gid) == records.record_game(game.state, game.seed, game.players)


def test_a_card_put_face_down_is_never_named_to_a_live_page(client, folder):
    """Port Royal's coins are cards face down: while the game goes on, no view names the card
    a coin draw or a fee put face down (the record, given at the end, does); a revealed card
    is named as before."""
    made = create(client, ["human", "human"], game="port_royal", seed=4)
    gid, tokens = made["id"], [token_of(made, 0), token_of(made, 1)]
    game = client.app.state.games.get(gid)
    rng = random.Random(4)
    seen = {"hidden": 0, "named": 0}

    def check(v):
        history = game.state.history()
        for snap, upto in ((v["snapshot"], len(history)), (v["previous"], len(history) - 1)):
            if snap is None or upto == 0:
                continue
            before = game.rules.new_initial_state(seed=game.seed)
            for a in history[: upto - 1]:
                before.apply_action(a)
            coin = before.is_chance_node() and before.chance_event()[0] in ("draw", "fee")
            name = before.action_to_string(history[upto - 1])
            if coin:
                seen["hidden"] += 1
                assert snap["last"] == "card ?" and name.startswith("card ")
            else:
                seen["named"] += 1
                assert snap["last"] == name
        assert all(" coin (" not in line or "face down" in line for line in v["log"])

    for _ in range(40):
        v = view(client, gid, *tokens)
        if v["over"]:
            break
        check(view(client, gid))  # a watcher's view, as a player's
        seat = v["to_act"]
        assert (
            move(client, gid, tokens[seat], v["step"], rng.choice(v["moves"])["action"]).status_code
            == 200
        )
    assert seen["hidden"] > 0 and seen["named"] > 0
