"""What a client of the web server receives for a seat is a function of that seat's information
set only, a watcher's of the public information only (docs/web.md, "Security model").

The strong form: two games that one seat cannot tell apart (the same public steps; Port Royal's
face-down coins swapped between two coin draws, Cuba's pending bid of another seat changed,
Puerto Rico's RNG words different) are made on one server, and everything that seat (or a
watcher) is sent, every message kind, is compared byte for byte, the game's id and version
aside: the view, a move's answer, the WebSocket update, the refusals, the hint, the lobby's line
and the game page. Each twin is checked first to be a real one: its states replay and every
seat's observation of the engine (``observation_tensor``, what the engine says a seat knows) is
the same in both. Then the seed: kept on the server until the game is over, 64 bits of the OS's
entropy when the lobby gives none; and an undo past a chance step draws that chance afresh.
"""

from __future__ import annotations

import copy
import random
import re
import warnings

import numpy as np
import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra

import caribsim
from caribsim.human import boards, records
from caribsim.web.app import create_app
from tests.web.conftest import HINT_ITERATIONS, token_of, wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on httpx
    from starlette.testclient import TestClient


@pytest.fixture
def client(tmp_path):
    with TestClient(
        create_app(tmp_path / "games", bot_delay=0.0, hint_iterations=HINT_ITERATIONS)
    ) as c:
        yield c


def _observations(state) -> list:
    return [np.asarray(state.observation_tensor(p)) for p in range(state.num_players())]


def _same_information(a, b, seats) -> bool:
    return all(np.array_equal(_observations(a)[p], _observations(b)[p]) for p in seats)


def _random_record(name, players, seed, steps, rng):
    """A record of ``steps`` random steps (chance drawn by the state) of a new game."""
    state = caribsim.load_game(name, players=players).new_initial_state(seed=seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.resolve_chance()
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return records.record_game(state, seed)


def _at_decision(record) -> dict | None:
    """The record cut at its last decision node that is not the end (None: there is none)."""
    states = records.states(record)
    for n in range(len(states) - 1, 0, -1):
        if not states[n].is_chance_node() and not states[n].is_terminal():
            return {**record, "steps": record["steps"][:n], "final": None}
    return None


def _port_royal_twins(rng):
    """Two records of Port Royal whose coins differ in faces only: two coin draws' cards
    swapped; every seat's observation the same at the end (no swapped coin was paid)."""
    for attempt in range(200):
        record = _at_decision(_random_record("port_royal", 3, attempt, rng.randrange(40, 160), rng))
        if record is None:
            continue
        states = records.states(record)
        coins = [
            k for k in range(len(record["steps"])) if boards.get("port_royal").face_down(states[k])
        ]
        rng.shuffle(coins)
        for a in coins:
            for b in coins:
                if a >= b or record["steps"][a]["action"] == record["steps"][b]["action"]:
                    continue
                twin = copy.deepcopy(record)
                twin["steps"][a], twin["steps"][b] = record["steps"][b], record["steps"][a]
                twin["steps"][a]["player"] = twin["steps"][b]["player"] = -1
                try:
                    end = records.replay(twin)
                except (records.RecordError, ValueError):
                    continue
                players = range(end.num_players())
                if _same_information(states[-1], end, players):
                    return record, twin, list(players)
    raise AssertionError("no Port Royal twin found")


def _cuba_twins(rng):
    """Two records of Cuba that differ in one seat's pending secret bid; the seats who may
    not see it (and watchers) cannot tell them apart."""
    for attempt in range(400):
        record = _at_decision(_random_record("cuba", 3, attempt, rng.randrange(30, 300), rng))
        if record is None:
            continue
        states = records.states(record)
        end = states[-1]
        for owner in end.hidden_bids_pending():
            k = max(i for i, s in enumerate(record["steps"]) if s["player"] == owner)
            before = states[k]
            bids = [
                a
                for a in before.legal_actions()
                if before.action_to_string(a).startswith("bid ")
                and a != record["steps"][k]["action"]
            ]
            if not bids:
                continue
            twin = copy.deepcopy(record)
            action = rng.choice(bids)
            twin["steps"][k] = {**twin["steps"][k], "action": action}
            twin["steps"][k]["name"] = before.action_to_string(action)
            try:
                other = records.replay(twin)
            except (records.RecordError, ValueError):
                continue
            blind = [p for p in range(end.num_players()) if p != owner]
            assert not _same_information(end, other, [owner])  # the owner sees his bid
            if _same_information(end, other, blind):
                return record, twin, blind
    raise AssertionError("no Cuba twin found")


def _puerto_rico_twins(rng):
    """The same record twice: the two games differ in their RNG words only (a record played
    on draws its chance afresh), which no seat may learn."""
    record = _at_decision(_random_record("puerto_rico", 3, 7, 120, rng))
    return record, copy.deepcopy(record), [0, 1, 2]


def _normal(text: str, game_id: str) -> str:
    """A message with the game's id and version taken out (the two twins differ there)."""
    return re.sub(r'"version":\d+', '"version":0', text.replace(game_id, "ID"))


def _made(client, record, players):
    r = client.post("/api/games", json={"record": record, "seats": ["human"] * players})
    assert r.status_code == 201, r.text
    made = r.json()
    return made["id"], [token_of(made, s) for s in range(players)]


def _messages(client, gid, tokens, seats) -> dict:
    """Everything a client with the tokens of ``seats`` (none: a watcher) is sent, by kind."""
    mine = [tokens[s] for s in seats]
    params = [("token", t) for t in mine]
    out = {}
    view = client.get(f"/api/games/{gid}", params=params)
    out["view"] = view.text
    v = view.json()
    assert v["seed"] is None and not v["over"]
    out["view cs"] = client.get(f"/api/games/{gid}", params=[*params, ("lang", "cs")]).text
    out["page"] = client.get(f"/game/{gid}", params=params).text
    with client.websocket_connect(
        f"/api/games/{gid}/ws?" + "&".join(f"token={t}" for t in mine)
    ) as ws:
        out["websocket"] = ws.receive_text()
    lobby = client.get("/api/games").json()
    out["lobby"] = next(repr(g) for g in lobby["games"] if g["id"] == gid)
    out["record refused"] = client.get(f"/api/games/{gid}/record").text
    out["analysis refused"] = client.get(f"/api/games/{gid}/analysis").text
    to_act = v["to_act"]
    for s in seats:
        body = {"token": tokens[s], "step": v["step"]}
        out[f"undo {s}"] = client.post(f"/api/games/{gid}/undo", json=body).text
        if s != to_act:
            refused = client.post(f"/api/games/{gid}/move", json={**body, "action": 0})
            assert refused.status_code == 409, refused.text
            out[f"not your turn {s}"] = refused.text
            out[f"hint refused {s}"] = client.post(f"/api/games/{gid}/hint", json=body).text
        else:
            refused = client.post(f"/api/games/{gid}/move", json={**body, "action": 10**6})
            assert refused.status_code == 400, refused.text
            out[f"illegal move {s}"] = refused.text
            hint = client.post(f"/api/games/{gid}/hint", json=body)
            assert hint.status_code == 200, hint.text
            out[f"hint {s}"] = hint.text
    return {kind: _normal(text, gid) for kind, text in out.items()}


TWINS = {
    "port_royal": _port_royal_twins,
    "cuba": _cuba_twins,
    "puerto_rico": _puerto_rico_twins,
}


@pytest.mark.parametrize("name", sorted(TWINS))
def test_a_seat_is_sent_the_same_bytes_from_two_states_of_its_information_set(client, name):
    rng = random.Random(f"twins {name}")
    record, twin, blind = TWINS[name](rng)
    players = records.replay(record).num_players()
    a_id, a_tokens = _made(client, record, players)
    b_id, b_tokens = _made(client, twin, players)
    games = client.app.state.games
    a, b = games.get(a_id), games.get(b_id)
    # the twins are different games: their hidden facts (or RNG words) differ
    assert a.state.to_dict() != b.state.to_dict()
    assert a.state.history() == b.state.history() or name != "puerto_rico"
    for seats in [[s] for s in blind] + [[]]:
        sent_a = _messages(client, a_id, a_tokens, seats)
        sent_b = _messages(client, b_id, b_tokens, seats)
        assert sent_a.keys() == sent_b.keys()
        for kind in sent_a:
            assert sent_a[kind] == sent_b[kind], (name, seats, kind)
        assert (
            any(kind.startswith("hint ") for kind in sent_a)
            or not seats
            or (a.state.current_player() not in seats)
        )


@pytest.mark.parametrize("name", sorted(TWINS))
def test_a_move_answer_and_its_update_are_the_same_for_both_twins(client, name):
    """The seat to act plays the same move in both twins (one that reaches a decision, no
    chance drawn on the way): its answer and every other blind seat's update agree."""
    for attempt in range(20):
        rng = random.Random(f"move {name} {attempt}")
        record, twin, blind = TWINS[name](rng)
        ends = [records.replay(record), records.replay(twin)]
        mover = ends[0].current_player()
        quiet = [
            a
            for a in ends[0].legal_actions()
            if a in ends[1].legal_actions()
            and not any(s.child(a).is_chance_node() for s in ends)
            and _same_information(ends[0].child(a), ends[1].child(a), blind)  # no bid revealed
        ]
        if quiet and mover in blind:
            break
    assert quiet and mover in blind, "no twin with a move that keeps them apart"
    made = [_made(client, r, ends[0].num_players()) for r in (record, twin)]
    action = rng.choice(quiet)
    answers = []
    for (gid, tokens), state in zip(made, ends):
        r = client.post(
            f"/api/games/{gid}/move",
            json={"token": tokens[mover], "step": len(state.history()), "action": action},
        )
        assert r.status_code == 200, r.text
        watched = [
            _normal(client.get(f"/api/games/{gid}", params=[("token", tokens[s])]).text, gid)
            for s in blind
        ]
        answers.append((_normal(r.text, gid) if mover in blind else None, watched))
    assert answers[0] == answers[1]


def test_a_server_seed_is_64_bits_of_entropy_and_stays_on_the_server_until_the_end(client):
    ids = []
    for _ in range(6):
        r = client.post("/api/games", json={"game": "port_royal", "seats": ["human", "human"]})
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    seeds = [client.app.state.games.get(g).seed for g in ids]
    assert len(set(seeds)) == 6 and max(seeds) >= 2**40, seeds  # not a short typed number
    for g in ids:
        v = client.get(f"/api/games/{g}").json()
        assert v["seed"] is None
        assert str(client.app.state.games.get(g).seed) not in client.get("/api/games").text
    # a finished game shows its seed (its record does too)
    r = client.post("/api/games", json={"game": "port_royal", "seats": ["random", "random"]})
    gid = r.json()["id"]
    game = client.app.state.games.get(gid)
    v = wait_for(
        lambda: (lambda v: v if v["over"] else None)(client.get(f"/api/games/{gid}").json())
    )
    assert (
        v["over"]
        and v["seed"] == game.seed == client.get(f"/api/games/{gid}/record").json()["seed"]
    )


def test_an_undo_past_a_chance_step_draws_it_afresh_and_the_record_keeps_what_was_played(client):
    """Port Royal: a seat draws a card (a chance step follows its move), reads it, undoes:
    the next draw is not the card it read (the chance to come is drawn from the OS's entropy
    after an undo), and the record replays every step that was played, the last draw too."""
    r = client.post(
        "/api/games", json={"game": "port_royal", "seats": ["human", "human"], "seed": 12}
    )
    made = r.json()
    gid, tokens = made["id"], [token_of(made, s) for s in range(2)]
    game = client.app.state.games.get(gid)
    seen = []
    for _ in range(8):
        v = client.get(f"/api/games/{gid}").json()
        seat, step = v["to_act"], v["step"]
        draws = [a for a in game.state.legal_actions() if game.state.child(a).is_chance_node()]
        assert draws, "the seat to act has no move that draws"
        r = client.post(
            f"/api/games/{gid}/move",
            json={"token": tokens[seat], "step": step, "action": draws[0]},
        )
        assert r.status_code == 200, r.text
        drawn = [
            s["action"] for s in game.steps[step + 1 :] if s["player"] == -1
        ]  # the chance steps the move led to
        seen.append(tuple(drawn))
        r = client.post(f"/api/games/{gid}/undo", json={"token": tokens[seat], "step": game.step})
        assert r.status_code == 200, r.text
        assert game.step == step
    assert len(set(seen)) > 1, seen  # the same draw eight times: the undo was a peek
    rec = game.record()
    assert records.replay(rec).history() == game.state.history()
    assert [s["action"] for s in rec["steps"]] == game.state.history()
