"""Scenario builder for the Puerto Rico rules tests (public API only).

A ``Scenario`` starts from ``to_dict()`` of a real new game whose initial chance draws are
resolved, and moves components from the supplies onto the boards (so every component stays
conserved, as ``state_from_dict`` checks). Then

    sc.at_role_selection(chooser)          -> state where ``chooser`` selects the next role
    sc.play_role("captain", chooser)       -> state right after ``chooser`` took the role: the
                                              engine started the phase itself (most honest)

Seats are 0-based; the governor is derived from the chooser and the number of roles already
taken this round (``taken=("settler", ...)`` taken by the seats before the chooser).

Small helpers for acting on states: ``act(state, "ship sugar on 7")``, ``legal(state)`` (set of
action names), ``board(state, seat)``.
"""

from __future__ import annotations

import copy
import csv
import os

import caribsim

GOODS = ("corn", "indigo", "sugar", "tobacco", "coffee")
TILE_KINDS = (*GOODS, "quarry")

_DATA = os.path.join(os.path.dirname(caribsim.__file__), "data")


def read_csv(name):
    with open(os.path.join(_DATA, name), newline="") as f:
        return list(csv.DictReader(f))


BUILDINGS = {
    row["id"]: row for row in read_csv("puerto_rico_buildings.csv") if row["set"] == "base"
}
# every building, the expansion's too (Scenario(expansion=True, ...) games may hold them)
ALL_BUILDINGS = {row["id"]: row for row in read_csv("puerto_rico_buildings.csv")}


class Scenario:
    def __init__(self, players=4, seed=1, face_up=None, **options):
        self.game = caribsim.load_game("puerto_rico", players=players, **options)
        self.n = players
        st = self.game.new_initial_state(seed=seed)
        while st.is_chance_node():
            st.resolve_chance()
        self.d = st.to_dict()
        self.d["history"] = []
        if face_up is not None:
            self.face_up(**face_up)

    # --- boards -----------------------------------------------------------------
    def board(self, seat):
        return self.d["boards"][seat]

    def clear_island(self, seat):
        """Return the seat's tiles (and their colonists) to the stack / quarry supply / colonist supply."""
        isl = self.board(seat)["island"]
        for k in TILE_KINDS:
            t = isl[k]
            self.d["colonists"]["supply"] += t["colonists"]
            if k == "quarry":
                self.d["quarries"] += t["tiles"]
            else:
                self.d["plantations"]["stack"][k] += t["tiles"]
            t["tiles"] = 0
            t["colonists"] = 0
        return self

    def goods(self, seat, **kinds):
        """Give goods from the supply."""
        for k, v in kinds.items():
            assert self.d["goods"][k] >= v, f"not enough {k} in the supply"
            self.d["goods"][k] -= v
            self.board(seat)["goods"][k] += v
        return self

    def tiles(self, seat, kind, n=1, colonists=0):
        """Give n tiles of kind (plantations from the face-down stack, quarries from the supply),
        with `colonists` of them occupied (colonists from the colonist supply)."""
        if kind == "quarry":
            assert self.d["quarries"] >= n
            self.d["quarries"] -= n
        else:
            stack = self.d["plantations"]["stack"]
            face_up = self.d["plantations"]["face_up"]
            take = min(n, stack[kind])
            stack[kind] -= take
            if take < n:  # take the rest from the face-up row
                assert face_up[kind] >= n - take, f"not enough {kind} plantations"
                face_up[kind] -= n - take
        t = self.board(seat)["island"][kind]
        t["tiles"] += n
        self.colonists_on(seat, kind, colonists)
        return self

    def colonists_on(self, seat, kind, n):
        """Put n colonists from the supply on tiles of kind."""
        t = self.board(seat)["island"][kind]
        assert t["colonists"] + n <= t["tiles"]
        self._take_colonists(n)
        t["colonists"] += n
        return self

    def building(self, seat, bid, colonists=0):
        """Give a building from the supply with `colonists` colonists (from the colonist supply)."""
        assert bid in BUILDINGS or ("expansion" in self.d and bid in ALL_BUILDINGS), bid
        assert self.d["buildings"][bid] > 0, f"no {bid} left"
        assert bid not in self.board(seat)["buildings"]
        self.d["buildings"][bid] -= 1
        self.board(seat)["buildings"][bid] = 0
        self.workers(seat, bid, colonists)
        return self

    def workers(self, seat, bid, n):
        self._take_colonists(n)
        self.board(seat)["buildings"][bid] += n
        assert self.board(seat)["buildings"][bid] <= int(ALL_BUILDINGS[bid]["circles"])
        return self

    def forests(self, seat, n, removed="corn"):
        """Expansion: give n forests from the forest supply; as every forest taken removes a
        face-up plantation from the game, n plantations of kind `removed` leave the stack."""
        e = self.d["expansion"]
        assert e["forests"] >= n and self.d["plantations"]["stack"][removed] >= n
        e["forests"] -= n
        self.d["plantations"]["stack"][removed] -= n
        e["removed_plantations"][removed] += n
        self.board(seat)["island"]["forest"]["tiles"] += n
        return self

    def san_juan(self, seat, n):
        self._take_colonists(n)
        self.board(seat)["san_juan"] += n
        return self

    def doubloons(self, seat, n):
        """Set a seat's doubloons (the bank is unlimited, OPEN-6)."""
        self.board(seat)["doubloons"] = n
        return self

    def vp(self, seat, n):
        """Give n VP chips from the pool."""
        assert self.d["vp_chips"] >= n
        self.d["vp_chips"] -= n
        self.board(seat)["vp_chips"] += n
        return self

    def _take_colonists(self, n):
        assert self.d["colonists"]["supply"] >= n, "colonist supply too small"
        self.d["colonists"]["supply"] -= n

    # --- common areas -----------------------------------------------------------
    def colonists(self, supply=None, ship=None, park_seat=None):
        """Set the colonist supply and ship. Colonists are conserved: the ship is filled from or
        emptied into the supply; a smaller supply parks the surplus in park_seat's San Juan."""
        c = self.d["colonists"]
        if ship is not None:
            c["supply"] += c["ship"] - ship
            c["ship"] = ship
        if supply is not None:
            surplus = c["supply"] - supply
            assert surplus >= 0, "cannot raise the supply"
            if surplus:
                assert park_seat is not None, "say where the surplus colonists go (park_seat)"
                self.board(park_seat)["san_juan"] += surplus
            c["supply"] = supply
        assert c["supply"] >= 0
        return self

    def vp_pool(self, n, park_seat):
        """Leave n VP chips in the pool; the rest go to park_seat."""
        return self.vp(park_seat, self.d["vp_chips"] - n)

    def ships(self, *contents):
        """One entry per cargo ship (smallest first): None (empty) or (good, load)."""
        assert len(contents) == len(self.d["cargo_ships"])
        for ship in self.d["cargo_ships"]:
            if ship["good"] is not None:
                self.d["goods"][ship["good"]] += ship["load"]
            ship["good"], ship["load"] = None, 0
        for ship, c in zip(self.d["cargo_ships"], contents):
            if c is not None:
                g, load = c
                assert self.d["goods"][g] >= load
                self.d["goods"][g] -= load
                ship["good"], ship["load"] = g, load
        return self

    def house(self, **kinds):
        for k, v in self.d["trading_house"].items():
            self.d["goods"][k] += v
            self.d["trading_house"][k] = 0
        for k, v in kinds.items():
            self.d["goods"][k] -= v
            self.d["trading_house"][k] = v
        return self

    def face_up(self, **kinds):
        """Set the face-up plantations exactly (the old ones go back to the stack)."""
        pl = self.d["plantations"]
        for k in GOODS:
            pl["stack"][k] += pl["face_up"][k]
            pl["face_up"][k] = 0
        for k, v in kinds.items():
            assert pl["stack"][k] >= v
            pl["stack"][k] -= v
            pl["face_up"][k] = v
        return self

    def stack(self, **kinds):
        """Set the face-down stack exactly; the difference goes to / comes from the discard pile."""
        pl = self.d["plantations"]
        for k in GOODS:
            pl["discard"][k] += pl["stack"][k]
            pl["stack"][k] = 0
        for k, v in kinds.items():
            assert pl["discard"][k] >= v
            pl["discard"][k] -= v
            pl["stack"][k] = v
        return self

    def goods_supply(self, park_seat, **kinds):
        """Set the supply of some goods; the surplus goes to park_seat."""
        for k, v in kinds.items():
            surplus = self.d["goods"][k] - v
            assert surplus >= 0
            self.goods(park_seat, **{k: surplus})
        return self

    def role_doubloons(self, **cards):
        for c, v in cards.items():
            self.d["roles"][c]["doubloons"] = v
        return self

    # --- flow -------------------------------------------------------------------
    def dict_at_role_selection(self, chooser, taken=(), governor=None):
        """A dict where `chooser` selects a role; `taken` roles were taken this round by the
        seats before him (governor first)."""
        d = copy.deepcopy(self.d)
        n = self.n
        sel = len(taken)
        if governor is None:
            governor = (chooser - sel) % n
        assert (governor + sel) % n == chooser
        d["phase"], d["step"] = "role_selection", "role"
        d["governor"], d["player"], d["role_chooser"] = governor, chooser, chooser
        d["selections_done"], d["turns_done"], d["idle_turns"] = sel, 0, 0
        for r in d["roles"].values():
            r["taken_by"] = None
        for i, role in enumerate(taken):
            d["roles"][role]["taken_by"] = (governor + i) % n
        return d

    def at_role_selection(self, chooser, taken=(), governor=None):
        return self.game.state_from_dict(self.dict_at_role_selection(chooser, taken, governor))

    def play_role(self, role, chooser, taken=(), governor=None):
        """The state right after `chooser` took `role`: the engine starts the phase."""
        st = self.at_role_selection(chooser, taken, governor)
        act(st, "role " + role)
        return st

    def state(self):
        return self.game.state_from_dict(copy.deepcopy(self.d))


# --- acting on states ---------------------------------------------------------------
def act(state, *names):
    """Apply actions by name, each checked to be legal."""
    for name in names:
        a = state.string_to_action(name)
        assert a in state.legal_actions(), (
            f"{name!r} is not legal; legal: {sorted(legal(state))} (seat {state.current_player()})"
        )
        state.apply_action(a)
    return state


def legal(state):
    return {state.action_to_string(a) for a in state.legal_actions()}


def board(state, seat):
    return state.to_dict()["boards"][seat]


def vp(state, seat):
    return state.to_dict()["boards"][seat]["vp_chips"]


def doubloons(state, seat):
    return state.to_dict()["boards"][seat]["doubloons"]


def goods(state, seat):
    return {k: v for k, v in state.to_dict()["boards"][seat]["goods"].items() if v}


def nonzero(d):
    return {k: v for k, v in d.items() if v}


def finish_phase(state):
    """Play out the running phase: chance resolved, 'pass' whenever legal, else the first legal action."""
    while not state.is_terminal() and state.to_dict()["phase"] != "role_selection":
        if state.is_chance_node():
            state.resolve_chance()
            continue
        names = legal(state)
        if "pass" in names:
            act(state, "pass")
        else:
            state.apply_action(state.legal_actions()[0])
    return state
