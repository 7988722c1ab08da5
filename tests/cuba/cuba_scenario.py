"""Scenario builder for the Cuba rules tests (public API only).

``start(n, ...)`` plays a real new game up to the first Character decision of round 1 with
chosen chance outcomes (ships, proposals) and returns (game, state). ``edit(state, fn)``
takes ``to_dict()``, lets ``fn`` change it (boards, harbour, laws, flow), recomputes the
supply and the bank so that every item and peso stays conserved (with the unlimited supply
they are derived: count - market - ships - players), and rebuilds the state through
``state_from_dict`` (which validates everything).

Fields are written "row,col" as in the reference (1-based). Seats are 0-based (P1 = seat 0).
"""

from __future__ import annotations

import caribsim

ITEMS = ("sugar", "citrus", "tobacco", "rum", "cigar", "wood", "stone", "water")
CROPS = ITEMS[:3]
CARGO = ITEMS[:5]


def act(state, *names):
    for name in names:
        state.apply_action(state.string_to_action(name))
    return state


def legal(state):
    return {state.action_to_string(a) for a in state.legal_actions()}


def start(
    n=3,
    start_player=0,
    ships=("ship_01", "ship_02", "ship_03"),
    proposals=("tax_1", "levy_sugar", "subsidy_water", "market_gains"),
    data=None,
    items=None,
    **opts,
):
    """A game at the first Character decision of round 1. Every player takes 2 wood and
    2 sugar (or `items`, a list of 4 names) as starting items."""
    kw = {"data": data} if data is not None else {}
    game = caribsim.load_game("cuba", players=n, start_player=start_player, **kw, **opts)
    s = game.new_initial_state(seed=1)
    for sh in ships:
        act(s, f"ship draw {sh}")
    for _ in range(n):
        for it in items or ("wood", "wood", "sugar", "sugar"):
            act(s, f"take {it}")
    for p in proposals:
        act(s, f"law draw {p}")
    assert s.step_name() == "character"
    return game, s


def empty_board(b):
    for k in b["yard"]:
        b["yard"][k] = 0
    for k in b["warehouse"]:
        b["warehouse"][k] = 0
        b["storage"][k] = 0


def fix_supply(d, game):
    spec = game.component_data()
    su = spec["setup"]
    count = su["supply_count"]
    for i, k in enumerate(ITEMS):
        used = sum(b["yard"][k] for b in d["boards"])
        if k in CROPS:
            used += sum(b["warehouse"][k] + b["storage"][k] for b in d["boards"])
        if k in CARGO:
            used += d["market"][k]
            used += sum(dk["cargo"][k] for dk in d["harbour"]["docks"] if dk)
        d["supply"][k] = count[i] - used
    d["bank"] = su["coins"] - sum(b["pesos"] for b in d["boards"])
    if d["options"]["supply_limited"] and any(v < 0 for v in d["supply"].values()):
        raise AssertionError(
            f"scenario uses more items than the limited supply holds: {d['supply']}"
        )


def edit(state, fn):
    game = state.game
    d = state.to_dict()
    fn(d)
    fix_supply(d, game)
    fix_revealed(d, game)
    return game.state_from_dict(d)


def board(state, seat):
    return state.to_dict()["boards"][seat]


def set_dock(d, dock, ship, **cargo):
    """Put `ship` (an id) on dock 1..3 with cargo, moving it out of wherever it was."""
    h = d["harbour"]
    _remove_ship(h, ship)
    old = h["docks"][dock - 1]
    if old is not None:
        h["deck_unseen"].append(old["ship"])
    h["docks"][dock - 1] = {"ship": ship, "cargo": {k: cargo.get(k, 0) for k in CARGO}}
    h["deck_unseen"].sort()


def set_at_sea(d, ship):
    h = d["harbour"]
    _remove_ship(h, ship)
    if h["at_sea"] is not None:
        h["deck_unseen"].append(h["at_sea"])
    h["at_sea"] = ship
    h["deck_unseen"].sort()


def _remove_ship(h, ship):
    for i, dk in enumerate(h["docks"]):
        if dk and dk["ship"] == ship:
            h["docks"][i] = None
    if h["at_sea"] == ship:
        h["at_sea"] = None
    if ship in h["deck_unseen"]:
        h["deck_unseen"].remove(ship)
    if ship in h["deck_returned"]:
        h["deck_returned"].remove(ship)


def set_law(d, stack, law_id):
    """Put a law in force (``edit`` marks it revealed; use round >= 2 so that its stack has
    revealed a card for it besides this round's proposal)."""
    d["laws"]["in_force"][stack] = law_id


def set_proposal(d, stack, law_id):
    d["laws"]["proposals"][stack] = law_id


def fix_revealed(d, game):
    """Revealed cards per stack = the round number (actions to law execution): the cards in
    force and proposed, padded with other cards of the stack in file order (discarded ones)."""
    laws = game.component_data()["laws"]
    names = ("I", "II", "III", "IV")
    rev = []
    for k, st in enumerate(names):
        ids = [x["id"] for x in laws if x["stack"] == k]
        if (
            d["laws"]["proposals"][st] is not None
            and d["laws"]["proposals"][st] == d["laws"]["in_force"][st]
        ):
            d["laws"]["proposals"][st] = next(i for i in ids if i != d["laws"]["in_force"][st])
        need = [
            v
            for v in (d["laws"]["in_force"][st], d["laws"]["proposals"][st])
            if v not in (None, "initial")
        ]
        pad = [i for i in ids if i not in need]
        if d["phase"] in ("actions", "parliament", "law_execution"):
            want = d["round"]
        elif d["phase"] == "proposals":
            want = d["round"] - 1 + (1 if d["laws"]["next_stack"] > k else 0)
        elif d["phase"] == "end_of_round":
            want = d["round"] - 1
        else:
            want = 0
        if len(need) > want:
            raise AssertionError(f"stack {st}: {need} cannot all be revealed in round {d['round']}")
        rev += need + pad[: want - len(need)]
    d["laws"]["revealed"] = rev


def give_building(b, building, field):
    b["buildings"][building] = field


PASSIVE_STEPS = ("pawn", "harvest", "trade", "build", "foreman_mode", "foreman", "load", "pick")


def play_card(state, card):
    """The player on turn plays `card` and does nothing with it."""
    seat = state.current_player()
    act(state, f"play {card}")
    while state.current_player() == seat and state.step_name() in PASSIVE_STEPS:
        act(state, "pass")
    return state


def to_parliament(state, fourth, hands_extra="trader"):
    """From a round's action phase: jump to lap 4, turn 0 (edit), and let every seat in turn
    order play its 4th card fourth[seat] and do nothing."""
    n = state.num_players()

    def f(d):
        d["lap"] = 3
        d["turn"] = 0
        d["player"] = d["start_player"]
        d["character"] = None
        for i, b in enumerate(d["boards"]):
            other = "worker" if fourth[i] != "worker" else "trader"
            b["hand"] = sorted(
                {fourth[i], other}, key=("worker", "trader", "architect", "foreman", "mayor").index
            )

    state = edit(state, f)
    sp = state.to_dict()["start_player"]
    for j in range(n):
        seat = (sp + j) % n
        assert state.current_player() == seat
        play_card(state, fourth[seat])
    return state


def passive_round(state, bid=0):
    """Finish the current round doing nothing: first card in hand, pass, bid `bid` (or 0),
    first enactment, refuse tax and levy, chance at random."""
    r = state.to_dict()["round"]
    while not state.is_terminal() and state.to_dict()["round"] == r:
        if state.is_chance_node():
            state.resolve_chance()
            continue
        step = state.step_name()
        la = state.legal_actions()
        names = [state.action_to_string(a) for a in la]
        if step == "character":
            play_card(state, names[0][5:])
        elif step == "bid":
            act(state, f"bid {min(bid, len(la) - 1)}")
        elif "pass" in names:
            act(state, "pass")
        else:
            state.apply_action(la[0])
    return state


def at_enact(state, winner=0, fourth=None, round=2, fn=None):
    """Jump (edit) to the parliament winner's enactment of round `round`; `fn(d)` may change
    more (laws in force, proposals, boards)."""
    n = state.num_players()
    fourth = fourth or ["worker"] * n

    def f(d):
        d["round"] = round
        d["phase"] = "parliament"
        d["step"] = "enact"
        d["player"] = winner
        d["lap"] = 4
        d["turn"] = 0
        d["character"] = None
        d["parliament"]["winner"] = winner
        for i, b in enumerate(d["boards"]):
            b["fourth"] = fourth[i]
            b["hand"] = ["trader" if fourth[i] != "trader" else "worker"]
        if fn:
            fn(d)

    return edit(state, f)


def pass_laws(state, pay=(), deliver=()):
    """Law execution: seats in `pay` pay the tax, seats in `deliver` deliver the levy, others pass."""
    while state.step_name() in ("tax", "levy"):
        seat = state.current_player()
        if state.step_name() == "tax":
            act(state, "pay tax" if seat in pay else "pass")
        else:
            act(state, "deliver levy" if seat in deliver else "pass")
    return state
