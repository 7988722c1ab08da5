"""Build Port Royal positions for the rules tests (the dict route, like pr_scenario.py).

``make(...)`` lays out the 120 cards as asked (displays, harbour, expedition area, discard
pile, coins) and puts every other card into the draw pile, then sets the flow and builds the
state with ``game.state_from_dict`` (which checks card conservation and the flow). Because
every reveal and coin draw is a chance event, a test chooses the card that is revealed with
``reveal(state, "ship_flute_blue_s2_c2")``; coin draws are resolved with ``drain``.
"""

from __future__ import annotations

from collections import Counter

import caribsim
from caribsim import _port_royal as core

CARDS = core.CARD_IDS
ROWS = {r["id"]: r for r in core.CARD_ROWS}
FIVE_P = "expedition_anchor_cross_house_5p"


FULL_DECK = Counter({r["id"]: int(r["count"]) for r in core.CARD_ROWS})  # all 120 cards


def deck(players):
    c = Counter({r["id"]: int(r["count"]) for r in core.CARD_ROWS})
    if players < 5:
        del c[FIVE_P]
    return c


def make(
    players=4,
    *,
    active=0,
    start=0,
    coins=None,
    display=None,
    harbour=(),
    expeditions=(),
    discard=(),
    draw=None,
    step="discover",
    revealed=1,
    takers_done=0,
    picks_left=0,
    end_triggered=False,
    require_expedition=False,
    turns=1,
    seed=0,
    coin_cards=None,
    leftover_seats=None,
):
    """A position at a decision. ``coins``: {seat: n} (any cards, taken from the draw pile's
    most common variants) and/or ``coin_cards``: {seat: [ids]}; ``display``: {seat: [ids]};
    ``draw``: the exact draw pile (default: every card not placed elsewhere; when given, the
    cards placed nowhere become coins of ``leftover_seats``, default all seats)."""
    game = caribsim.load_game("port_royal", players=players, require_expedition=require_expedition)
    d = game.new_initial_state(seed=seed).to_dict()
    pool = deck(players)

    def take(card):
        assert pool[card] > 0, f"scenario uses more {card} than the deck has"
        pool[card] -= 1
        return card

    boards = [{"coins": [], "coin_generations": [], "display": {}} for _ in range(players)]
    for seat, cards in (display or {}).items():
        for c in cards:
            take(c)
            boards[seat]["display"][c] = boards[seat]["display"].get(c, 0) + 1
    hb = {}
    for c in harbour:
        take(c)
        hb[c] = hb.get(c, 0) + 1
    area = [take(c) for c in expeditions]
    if players == 5 and FIVE_P not in area and not any(FIVE_P in b["display"] for b in boards):
        area.append(take(FIVE_P))
    disc = [take(c) for c in discard]
    for seat, cards in (coin_cards or {}).items():
        for c in cards:
            boards[seat]["coins"].append(take(c))
            boards[seat]["coin_generations"].append(0)
    reserved = Counter(draw or [])
    for seat, n in (coins or {}).items():
        for _ in range(n):
            # coins come from the most common person/ship variants, so that every variant
            # keeps a copy in the draw pile for reveals when possible
            best = max(
                (
                    c
                    for c in pool
                    if pool[c] - reserved[c] > 0 and ROWS[c]["category"] in ("ship", "person")
                ),
                key=lambda c: (pool[c] - reserved[c], c),
            )
            boards[seat]["coins"].append(take(best))
            boards[seat]["coin_generations"].append(0)
    if draw is None:
        draw_pile = [c for c in sorted(pool) if c != FIVE_P for _ in range(pool[c])]
    else:
        draw_pile = [take(c) for c in draw]
        # every card not placed elsewhere becomes a coin, dealt round-robin from `leftover_seats`
        rest = [c for c in sorted(pool) if c != FIVE_P for _ in range(pool[c])]
        seats = list(leftover_seats if leftover_seats is not None else range(players))
        for k, c in enumerate(rest):
            boards[seats[k % len(seats)]]["coins"].append(take(c))
            boards[seats[k % len(seats)]]["coin_generations"].append(0)
    d.update(
        {
            "phase": "trade" if step == "take" else "discover",
            "step": step,
            "resume": "take" if step == "take" else "discover",
            "start_player": start,
            "active": active,
            "player": (active + takers_done) % players if step == "take" else active,
            "takers_done": takers_done,
            "picks_left": picks_left,
            "revealed": revealed,
            "pending": None,
            "end_triggered": end_triggered,
            "turns": turns,
            "generation": 0,
            "draw_pile": draw_pile,
            "discard_pile": disc,
            "harbour": hb,
            "expedition_area": area,
            "queue": [],
            "players": boards,
            "history": [],
        }
    )
    if draw is not None:
        leftover = +pool
        leftover.pop(FIVE_P, None)
        assert not leftover, f"cards not placed anywhere: {dict(leftover)}"
    return game.state_from_dict(d)


def act(state, *names):
    """Apply decisions (or chance outcomes) by name."""
    for name in names:
        state.apply_action(state.string_to_action(name))
    return state


def reveal(state, card):
    """The active player reveals, and the revealed card is `card`."""
    if "reveal" in names(state):
        act(state, "reveal")
    assert state.chance_event() == ("reveal", state.active_player()), state.chance_event()
    act(state, "card " + card)
    return state


def drain(state, card=None):
    """Resolve chance nodes (with `card` when given and possible, else the state's RNG) up
    to the next decision or reveal; returns the card moves as (kind, seat, card)."""
    moves = []
    while state.is_chance_node() and state.chance_event()[0] != "reveal":
        kind, seat = state.chance_event()
        outs = [a for a, _ in state.chance_outcomes()]
        want = state.string_to_action("card " + card) if card else None
        a = want if want in outs else None
        if a is None:
            a = state.resolve_chance()
        else:
            state.apply_action(a)
        moves.append((kind, seat, state.action_to_string(a)[5:]))
    return moves


def names(state):
    return [state.action_to_string(a) for a in state.legal_actions()]


def coins(state, seat=None):
    d = state.to_dict()
    if seat is None:
        return [len(p["coins"]) for p in d["players"]]
    return len(d["players"][seat]["coins"])


def display(state, seat):
    return state.to_dict()["players"][seat]["display"]


def zones(state):
    """Where every card is: a Counter per zone name."""
    d = state.to_dict()
    z = {
        "draw": Counter(d["draw_pile"]),
        "discard": Counter(d["discard_pile"]),
        "harbour": Counter(d["harbour"]),
        "area": Counter(d["expedition_area"]),
        "box": Counter(d["box"]),
        "pending": Counter([d["pending"]] if d["pending"] else []),
    }
    for i, p in enumerate(d["players"]):
        z[f"coins{i}"] = Counter(p["coins"])
        z[f"display{i}"] = Counter(p["display"])
    return z


def total_cards(state):
    t = Counter()
    for c in zones(state).values():
        t += c
    return t
