"""A bot's move belongs to the position it was found for (docs/web.md, "Undo and hint"): an
undo and another move while the bot thinks, to the same step count, drop its move; a bot that
fails or answers an illegal move stops the bots with the problem said (never a driver gone
and the game "thinking" for good), and an undo lets them go on."""

from __future__ import annotations

import threading
import time
import warnings

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra


import caribsim
from caribsim.search import bots
from caribsim.web.app import create_app
from caribsim.web.limits import Policy
from caribsim.web.workers import STALE, Pool
from tests.web.conftest import token_of, wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on httpx
    from starlette.testclient import TestClient

PR = "puerto_rico"


class Gate(bots.Bot):
    """A bot the test drives: each call is logged with its position; a held call waits for
    ``release``; ``answer`` (a callable of the state) is what it plays."""

    name = "gate"

    def __init__(self):
        super().__init__()
        self.calls: list = []  # (history, action or the exception)
        self.hold = False
        self.held = threading.Event()
        self.go = threading.Event()
        self.answer = lambda state: state.legal_actions()[0]

    def step(self, state):
        history = tuple(state.history())
        if self.hold:
            self.hold = False
            self.held.set()
            assert self.go.wait(60), "the test never released the bot"
        try:
            action = self.answer(state)
        except Exception as e:
            self.calls.append((history, e))
            raise
        self.calls.append((history, action))
        return action


def view(c, gid, token=None):
    r = c.get(f"/api/games/{gid}", params={"token": token} if token else None)
    assert r.status_code == 200, r.text
    return r.json()


def settled(c, gid, token):
    """The view once the person is to act (no bot thinking)."""
    return wait_for(
        lambda: (lambda v: v if v["moves"] and not v["thinking"] else None)(view(c, gid, token)),
        what="the person's turn",
    )


def post(c, gid, what, **body):
    r = c.post(f"/api/games/{gid}/{what}", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _after(state, action):
    """(step count, whether the bot (seat 1) is to act) after ``action`` and the chance
    right after it."""
    s = state.clone()
    s.apply_action(action)
    while s.is_chance_node():
        s.resolve_chance()
    return len(s.history()), not s.is_terminal() and s.current_player() == 1


@pytest.fixture
def game():
    """A 2-player Puerto Rico game of a person (seat 0) and a Gate (seat 1), no bot delay."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        app = create_app(folder, bot_delay=0, policy=Policy(workers=2))
        with TestClient(app) as c:
            made = c.post(
                "/api/games", json={"game": PR, "seats": ["human", "random"], "seed": 21}
            ).json()
            gid, tok = made["id"], token_of(made, 0)
            settled(c, gid, tok)
            g = app.state.games.get(gid)
            gate = g.bots[1] = Gate()
            yield c, gid, tok, g, gate


def _two_moves_to_the_same_step(c, gid, tok, g):
    """Play the person's moves until a decision where two moves both hand the turn to the
    bot at the same step count; that view and the two actions."""
    for _ in range(200):
        v = settled(c, gid, tok)
        state = g.state.clone()
        by_end: dict = {}
        for a in state.legal_actions():
            step, bots_turn = _after(state, a)
            if bots_turn:
                by_end.setdefault(step, []).append(a)
        pair = next((acts for acts in by_end.values() if len(acts) >= 2), None)
        if pair:
            return v, pair[0], pair[1]
        post(c, gid, "move", token=tok, step=v["step"], action=v["moves"][0]["action"])
    pytest.fail("no decision with two moves to the same step count")


def test_undo_and_another_move_to_the_same_step_drop_the_bots_stale_move(game):
    c, gid, tok, g, gate = game
    v, a, b = _two_moves_to_the_same_step(c, gid, tok, g)
    gate.hold = True
    after_a = post(c, gid, "move", token=tok, step=v["step"], action=a)
    assert after_a["thinking"]
    assert gate.held.wait(30)  # the bot searches the position after a
    first = g.state.clone()
    back = post(c, gid, "undo", token=tok, step=after_a["step"])
    assert back["step"] == v["step"]
    after_b = post(c, gid, "move", token=tok, step=back["step"], action=b)
    assert after_b["step"] == after_a["step"]  # the same step count, another position
    second = g.state.clone()
    stale = sorted(set(first.legal_actions()) - set(second.legal_actions()))
    # the held bot answers a move of the first position (one not legal in the second, if any:
    # played there it raised ValueError in the driver and the game showed 'thinking' for good)
    old = first.history()
    gate.answer = lambda state: (
        stale[0] if stale and state.history() == old else state.legal_actions()[0]
    )
    gate.go.set()
    final = wait_for(
        lambda: (lambda x: x if x["step"] > after_b["step"] and not x["thinking"] else None)(
            view(c, gid, tok)
        ),
        what="the bot's move",
    )
    assert final["problem"] is None
    (h1, stale_move), (h2, played) = gate.calls[:2]
    assert list(h1) == first.history() and list(h2) == second.history()
    history = g.state.history()
    assert history[: after_b["step"]] == second.history()
    assert history[after_b["step"]] == played  # the move found for this position
    if stale:
        assert stale_move not in second.legal_actions()


def test_a_bot_that_fails_is_said_and_an_undo_lets_the_bots_go_on(game):
    c, gid, tok, g, gate = game
    v = settled(c, gid, tok)

    def boom(state):
        raise RuntimeError("the network is gone")

    gate.answer = boom
    # the person's moves until the bot is to act (and fails)
    while True:
        v = settled(c, gid, tok)
        bots_turn = [m["action"] for m in v["moves"] if _after(g.state, m["action"])[1]]
        if bots_turn:
            break
        post(c, gid, "move", token=tok, step=v["step"], action=v["moves"][0]["action"])
    post(c, gid, "move", token=tok, step=v["step"], action=bots_turn[0])
    stopped = wait_for(
        lambda: (lambda x: x if x["problem"] else None)(view(c, gid, tok)), what="the problem"
    )
    assert stopped["problem"] == "seat 1 (gate) failed: the network is gone"
    assert not stopped["thinking"] and stopped["to_act"] == 1  # not 'thinking' for good
    assert g.task.done()  # the driver waits for an undo, it did not die with an exception
    assert g.task.exception() is None
    gate.answer = lambda state: state.legal_actions()[0]
    back = post(c, gid, "undo", token=tok, step=stopped["step"])
    assert back["problem"] is None
    again = post(c, gid, "move", token=tok, step=back["step"], action=bots_turn[0])
    wait_for(
        lambda: view(c, gid, tok)["step"] > again["step"] and not view(c, gid, tok)["thinking"],
        what="the bot's move after the undo",
    )
    assert view(c, gid, tok)["problem"] is None


def test_a_bots_illegal_move_is_a_problem_not_a_dead_driver(game):
    c, gid, tok, g, gate = game
    gate.answer = lambda state: 10**6
    while True:
        v = settled(c, gid, tok)
        to_bot = [m["action"] for m in v["moves"] if _after(g.state, m["action"])[1]]
        if to_bot:
            break
        post(c, gid, "move", token=tok, step=v["step"], action=v["moves"][0]["action"])
    post(c, gid, "move", token=tok, step=v["step"], action=to_bot[0])
    stopped = wait_for(
        lambda: (lambda x: x if x["problem"] else None)(view(c, gid, tok)), what="the problem"
    )
    assert stopped["problem"] == "seat 1 (gate) chose 1000000, which is not a legal move here"
    assert not stopped["thinking"] and g.task.done() and g.task.exception() is None
    gate.answer = lambda state: state.legal_actions()[0]
    back = post(c, gid, "undo", token=tok, step=stopped["step"])
    post(c, gid, "move", token=tok, step=back["step"], action=to_bot[0])
    wait_for(lambda: view(c, gid, tok)["step"] > stopped["step"], what="the bots going on")
    assert view(c, gid, tok)["problem"] is None


def _decision(seed=3, players=3):
    state = caribsim.load_game(PR, players=players).new_initial_state(seed=seed)
    while state.is_chance_node():
        state.resolve_chance()
    return state


def test_a_stale_search_stops_at_its_next_slice():
    import asyncio

    async def run():
        pool = Pool(Policy(workers=1, max_seconds=30))
        t0 = time.monotonic()
        bot = bots.parse_bot("mcts:seconds=30")
        found = await pool.move("g", bot, _decision(), stale=lambda: time.monotonic() - t0 > 0.1)
        pool.close()
        return found, time.monotonic() - t0

    found, seconds = asyncio.run(run())
    assert found is STALE and seconds < 1.0


def test_a_sliced_move_is_the_bots_own_search():
    """Cut into slices, an MCTS move of N iterations is the search MCTSBot.step makes with
    the same seed (the tree kept between the slices), tree reuse over the moves included."""
    import asyncio

    spec = "mcts:3000"

    async def run(states):
        pool = Pool(Policy(workers=2, slice_seconds=0.002))
        bot = bots.parse_bot(spec)
        bot.restart(7)
        out = [await pool.move("g", bot, s.clone()) for s in states]
        pool.close()
        return out

    state, states = _decision(5), []
    reference = bots.parse_bot(spec)
    reference.restart(7)
    expected = []
    for _ in range(6):
        states.append(state.clone())
        expected.append(reference.step(state.clone()))
        state.apply_action(expected[-1])
        while state.is_chance_node():
            state.resolve_chance()
    assert asyncio.run(run(states)) == expected
