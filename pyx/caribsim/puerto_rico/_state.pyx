# cython: language_level=3
"""Puerto Rico state (module ``caribsim.puerto_rico._state``): the Python side of the
compiled game, over the C struct and rules of ``caribsim.puerto_rico._core``.

What lives here: the ``PuertoRicoState`` class (a GameState), action names, the dict codec
(``_to_dict``, ``state_from_dict``) with its validation and consistency checks, the readable
board, ``new_state`` and the other Python-callable wrappers. The rules stay in the core:
actions applied from here call its functions, and the search runs them through its
GameVTables, never through this module.

This module is also the old ``caribsim._puerto_rico`` (an alias): it re-exports the core's
Python constants, so every name of the old module is here.

May import: caribsim.puerto_rico._core (cimport for the C struct, enums, rules, tables and
vtables; import for its Python constants), caribsim._game, caribsim._types,
caribsim._common and numpy.
"""
cimport cython
from caribsim._types cimport int8, int16, uint8, uint64, popcount64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._game cimport GameVTable, GameState, history_list, set_history
from caribsim.puerto_rico._core cimport *
from caribsim.puerto_rico._core cimport pr_city_used as city_used, pr_copies_of as copies_of

# the core's Python names (BUILDING_IDS, BUILDING_ROWS: as filled by its load_tables at import)
# (_KIND_CODES, _ENUM_IDS, _read_csv, load_tables: unused here, re-exported as names of the old module)
from caribsim.puerto_rico._core import (GOOD_NAMES, TILE_NAMES, ROLE_NAMES, PHASE_NAMES, STEP_NAMES,
                                        BUILDING_IDS, BUILDING_ROWS,
                                        _KIND_CODES, _ENUM_IDS, _read_csv, load_tables)  # no-cython-lint

# the core's C tables and GameVTables, bound once (the core has loaded them at its import)
cdef const PRTables* TABLES = pr_tables()
cdef const BuildingInfo* BUILDING = TABLES.building
cdef const SetupInfo* SETUP = TABLES.setup
cdef int MAX_COLONISTS_VARIANT = TABLES.max_colonists_variant
cdef int MAX_VP_VARIANT = TABLES.max_vp_variant
cdef const GameVTable* PR_VTABLE = pr_vtable(False)
cdef const GameVTable* PR_EXP_VTABLE = pr_vtable(True)

import operator   # no-cython-lint: unused; kept as a name of the old module
from caribsim._common import _Reader, _check_options, _counted, _int_in, _seat_mask   # shared with the other games
cimport numpy as cnp
cnp.import_array()

NUM_DISTINCT_ACTIONS = NUM_BASE_ACTIONS           # the base game's action space (143)
NUM_EXPANSION_ACTIONS = NUM_ACTIONS               # with the expansion (ids 143.. appended)
OPTION_ALL_COLONISTS_AND_VP = OPT_ALL_COLONISTS_AND_VP
OPTION_EXPANSION = OPT_EXPANSION
OPTION_ALL_31 = OPT_ALL_31
OPTION_DRAFT = OPT_DRAFT
OPTION_NO_EXCLUSIONS = OPT_NO_EXCLUSIONS
DICT_VERSION = 1
FIRST_VIOLET_BUILDING = FIRST_VIOLET
DRAFT_SLOT_COUNTS = {c: DRAFT_SLOTS[c] for c in range(11) if DRAFT_SLOTS[c]}   # cost -> slots (§8.2)


def num_actions_for(int options):
    return NUM_ACTIONS if options & OPT_EXPANSION else NUM_BASE_ACTIONS


def _building_label(b):
    return BUILDING_ROWS[b]["name"].lower()


def _action_id(action, n_actions=NUM_BASE_ACTIONS):
    return _int_in(action, "action", 0, n_actions - 1)


def _slot_label(int slot):
    if slot < NUM_GOODS:
        return f"{GOOD_NAMES[slot]} plantation"
    if slot == QUARRY:
        return "quarry"
    if slot == NUM_SLOTS:
        return "san juan"
    return _building_label(slot - NUM_MANNED_KINDS)


def _action_name(action, capacities, n_actions=NUM_BASE_ACTIONS):
    """The stable readable name of action `a` (capacities: the game's cargo ships;
    n_actions: the game's action space, 143 for the base game)."""
    cdef int a = _action_id(action, n_actions)
    if a >= A_DRAFT:
        if a < A_FOREST:
            return "draft " + _building_label(a - A_DRAFT + FIRST_VIOLET)
        if a < A_POST:
            return "forest remove " + GOOD_NAMES[a - A_FOREST]
        if a < A_SWHARF:
            return f"sell {GOOD_NAMES[a - A_POST]} to trading post"
        if a < A_SWHARF_DONE:
            return "small wharf " + GOOD_NAMES[a - A_SWHARF]
        if a == A_SWHARF_DONE:
            return "small wharf done"
        if a == A_BM_VP:
            return "black market vp"
        if a < A_BM_COLONIST:
            return "black market " + GOOD_NAMES[a - A_BM_GOOD]
        if a < A_GUEST:
            return "black market colonist from " + _slot_label(a - A_BM_COLONIST)
        return "guest to " + _slot_label(a - A_GUEST)
    if a < A_SETTLE:
        return "role " + ROLE_NAMES[a - A_ROLE].replace("_", " ")
    if a < A_QUARRY:
        return "settle " + GOOD_NAMES[a - A_SETTLE]
    if a == A_QUARRY:
        return "settle quarry"
    if a == A_HACIENDA:
        return "hacienda draw"
    if a == A_HOSPICE:
        return "hospice colonist"
    if a < A_BUILD:
        slot = a - A_MAYOR
        if slot < NUM_GOODS:
            return f"colonist to {GOOD_NAMES[slot]} plantation"
        if slot == QUARRY:
            return "colonist to quarry"
        return "colonist to " + _building_label(slot - NUM_MANNED_KINDS)
    if a < A_UNIVERSITY:
        return "build " + _building_label(a - A_BUILD)
    if a == A_UNIVERSITY:
        return "university colonist"
    if a < A_SELL:
        return "privilege " + GOOD_NAMES[a - A_PRIVILEGE]
    if a < A_SHIP:
        return "sell " + GOOD_NAMES[a - A_SELL]
    if a < A_WHARF:
        k, slot = divmod(a - A_SHIP, MAX_SHIPS)
        if slot < len(capacities):
            return f"ship {GOOD_NAMES[k]} on {capacities[slot]}"
        return f"ship {GOOD_NAMES[k]} on ship {slot + 1}"
    if a < A_WAREHOUSE:
        return "wharf " + GOOD_NAMES[a - A_WHARF]
    if a < A_KEEP:
        return "warehouse " + GOOD_NAMES[a - A_WAREHOUSE]
    if a < A_PASS:
        return "keep " + GOOD_NAMES[a - A_KEEP]
    if a == A_PASS:
        return "pass"
    return "draw " + GOOD_NAMES[a - A_DRAW]


def action_names(capacities, n_actions=NUM_BASE_ACTIONS):
    """All action names, indexed by action id."""
    return [_action_name(a, capacities, n_actions) for a in range(n_actions)]


cdef class PuertoRicoState(GameState):
    """A Puerto Rico game position. Made by ``PuertoRicoGame.new_initial_state``.

    The whole position is one C struct; ``clone`` is a memcpy. Every method that
    takes input validates it and raises ``ValueError``/``TypeError`` without
    changing the state.
    """
    cdef PRState s

    def __cinit__(self):
        self.vtable = PR_VTABLE

    cdef void* _raw(self) noexcept:
        return &self.s

    cdef inline int _n_actions(self):
        return NUM_ACTIONS if self.s.options & OPT_EXPANSION else NUM_BASE_ACTIONS

    cdef void _set_vtable(self):
        self.vtable = PR_EXP_VTABLE if self.s.options & OPT_EXPANSION else PR_VTABLE

    # --- the OpenSpiel-style interface (apply_action, clone, child: GameState's) ----
    cdef GameState _blank(self):
        return PuertoRicoState.__new__(PuertoRicoState)

    cdef int _illegal(self, int a, const int16* buf, int n) except -1:
        caps = self._capacities()
        na = self._n_actions()
        what = _action_name(a, caps, na)
        legal = ", ".join(f"{buf[i]} ({_action_name(buf[i], caps, na)})" for i in range(n))
        raise ValueError(f"action {a} ({what}) is not legal at step "
                         f"{STEP_NAMES[self.s.step]!r}; legal: {legal}")

    def scores(self):
        """Per seat: VP chips, building VP, bonus VP, total and the tie-break value."""
        cdef PRScore sc
        cdef PRState snap = (<PRState*>self.c_state())[0]   # a copy: the loop below runs Python
        out = []
        for i in range(snap.n_players):
            pr_score(&snap, i, &sc)
            out.append({"vp_chips": sc.vp_chips, "building_vp": sc.building_vp,
                        "bonus_vp": sc.bonus_vp, "total": sc.total, "tiebreak": sc.tiebreak})
        return out

    def phase(self):
        self._ready()
        return PHASE_NAMES[self.s.phase]

    def step_name(self):
        self._ready()
        return STEP_NAMES[self.s.step]

    cdef tuple _capacities(self):
        return tuple(self.s.ship_capacity[i] for i in range(self.s.n_ships))

    def action_to_string(self, action):
        self._ready()
        return _action_name(action, self._capacities(), self._n_actions())

    def string_to_action(self, name):
        self._ready()
        if not isinstance(name, str):
            raise TypeError(f"action name must be a str, got {type(name).__name__}")
        key = " ".join(name.lower().split())
        names = action_names(self._capacities(), self._n_actions())
        try:
            return names.index(key)
        except ValueError:
            legal = [names[a] for a in self.legal_actions()]
            raise ValueError(f"unknown action name {name!r}; legal here: {legal}") from None

    # --- the dict (serialize, pickling and == are GameState's, over it) ---------
    def to_dict(self):
        """The complete position as JSON-able data (see docs/state-dict.md)."""
        return _to_dict(self)

    def __str__(self):
        return _render(self)

    def __repr__(self):
        if self.game is None:
            return "<PuertoRicoState (not initialised)>"
        cdef PRState snap = self.s
        return (f"<PuertoRicoState {snap.n_players}p phase={PHASE_NAMES[snap.phase]} "
                f"step={STEP_NAMES[snap.step]} player={pr_current_player(&snap)}>")


from caribsim._game import _check_seat, _restore   # no-cython-lint: _restore here too: old pickles name it here


def _playout(PuertoRicoState st, bint by_list):
    """For the tests: play `st` to its end in place (its history untouched) with the random
    playout (by_list False) or its reference through the legal lists; the decisions made."""
    cdef PRState* s = <PRState*>st.c_state()
    return pr_list_playout(s) if by_list else pr_random_playout(s)


def new_state(game, int players, int options, seed, violet_set=0):
    """A new game: the setup of §1.4; the first face-up plantations are chance nodes.
    `violet_set`: bit mask of the violet kinds in play (expansion without draft)."""
    seed_value = _int_in(seed, "seed", 0, 2 ** 64 - 1)
    cdef PuertoRicoState st = PuertoRicoState.__new__(PuertoRicoState)
    pr_new_game(&st.s, players, options, <uint64>violet_set, <uint64>seed_value)
    st._set_vtable()
    st.game = game
    st._hist = None
    return st


def observation_size(int players, int options=0):
    return pr_observation_size(players, options)


def building_mask(ids):
    """Bit mask of building ids (as in BUILDING_IDS)."""
    m = 0
    for b in ids:
        m |= 1 << BUILDING_IDS.index(b)
    return m


# --- the dict codec ------------------------------------------------------------

cdef dict _goods_dict(const int8* a):
    return {GOOD_NAMES[k]: a[k] for k in range(NUM_GOODS)}


def _bits(uint8 mask, names):
    return [names[k] for k in range(len(names)) if (mask >> k) & 1]


def _to_dict(PuertoRicoState st):
    # Copy the struct and the history first, with no Python in between (a GC run or a
    # callback could let another thread move the state): the dict is built from the copy.
    cdef PRState snap = (<PRState*>st.c_state())[0]
    hist, hist_n = st._hist, st._hist_n
    cdef PRState* s = &snap
    cdef PRPlayer* p
    cdef int i, b, k
    cdef bint exp = s.options & OPT_EXPANSION
    boards = []
    for i in range(s.n_players):
        p = &s.players[i]
        island = {TILE_NAMES[k]: {"tiles": p.tiles[k], "colonists": p.manned[k]}
                  for k in range(NUM_MANNED_KINDS)}
        island["forest"] = {"tiles": p.tiles[FOREST]}
        boards.append({
            "doubloons": p.doubloons,
            "vp_chips": p.vp,
            "goods": _goods_dict(p.goods),
            "island": island,
            "san_juan": p.san_juan,
            "buildings": {BUILDING_IDS[b]: p.workers[b] for b in range(NUM_BUILDINGS) if owns(p, b)},
        })
    d = {
        "game": "puerto_rico",
        "version": DICT_VERSION,
        "options": st.game.options(),
        "phase": PHASE_NAMES[s.phase],
        "step": STEP_NAMES[s.step],
        "governor": s.governor,
        "player": s.player if s.step != STEP_TERMINAL else None,
        "role_chooser": s.chooser,
        "selections_done": s.selections_done,
        "turns_done": s.turns_done,
        "idle_turns": s.idle_turns,
        "end_triggered": bool(s.end_triggered),
        "roles": {ROLE_NAMES[c]: {"doubloons": s.card_doubloons[c],
                                  "taken_by": s.card_taken_by[c] if (s.cards_taken >> c) & 1 else None}
                  for c in range(NUM_ROLE_CARDS) if (s.cards_in_play >> c) & 1},
        "plantations": {"face_up": _goods_dict(s.face_up), "stack": _goods_dict(s.stack),
                        "discard": _goods_dict(s.discard), "to_draw": s.to_draw},
        "quarries": s.quarries,
        "colonists": {"supply": s.colonist_supply, "ship": s.colonist_ship},
        "vp_chips": s.vp_supply,
        "goods": _goods_dict(s.goods_supply),
        "cargo_ships": [{"capacity": s.ship_capacity[i],
                         "good": GOOD_NAMES[s.ship_good[i]] if s.ship_good[i] >= 0 else None,
                         "load": s.ship_load[i]} for i in range(s.n_ships)],
        "trading_house": _goods_dict(s.house),
        "buildings": {BUILDING_IDS[b]: s.building_supply[b] for b in range(NUM_BUILDINGS)
                      if exp or not BUILDING[b].expansion},
        "turn": {
            "hacienda_used": bool(s.hacienda_used),
            "last_tile": TILE_NAMES[s.last_tile] if s.last_tile >= 0 else None,
            "to_place": s.to_place,
            "last_slot": s.last_slot,
            "last_building": BUILDING_IDS[s.last_building] if s.last_building >= 0 else None,
            "craftsman_received": _bits(s.craftsman_received, GOOD_NAMES),
            "wharf_used": [i for i in range(s.n_players) if (s.wharf_used >> i) & 1],
            "captain_bonus_given": bool(s.captain_bonus_given),
            "warehouse_left": s.warehouse_left,
            "last_warehouse": GOOD_NAMES[s.last_warehouse] if s.last_warehouse >= 0 else None,
            "kept": _bits(s.kept, GOOD_NAMES),
        },
        "boards": boards,
        "rng": [int(s.rng.s[k]) for k in range(4)],
        "history": history_list(hist, hist_n),
    }
    if exp:
        d["expansion"] = {
            "forests": s.forests,
            "removed_plantations": _goods_dict(s.removed),
            "violet_in_play": [BUILDING_IDS[b] for b in range(FIRST_VIOLET, NUM_BUILDINGS)
                               if (s.in_play >> b) & 1],
            "library_done": bool(s.library_done),
            "privilege_left": s.privilege_left,
            "craftsman_amounts": _goods_dict(s.craft_amount),
            "black_market_left": s.bm_left,
            "black_market_last": _BM_CATEGORIES[s.bm_last] if s.bm_last >= 0 else None,
            "small_wharf_used": [i for i in range(s.n_players) if (s.small_wharf_used >> i) & 1],
            "small_wharf_count": s.sw_count,
            "small_wharf_last": GOOD_NAMES[s.sw_last] if s.sw_last >= 0 else None,
            "barrels_left": s.barrels_left,
            "barrels": _goods_dict(s.keep_n),
            "last_keep": GOOD_NAMES[s.last_keep] if s.last_keep >= 0 else None,
        }
    if s.step == STEP_MAYOR:                                # the Mayor's score hold (§4.2)
        d["turn"]["held_bonus_vp"] = s.held_bonus
    return d


_BM_CATEGORIES = ("vp", "colonist", "good")


cdef _read_goods(reader, key, int8* out, int hi=127):
    """A {good: count} table into a C array (a cdef function: def methods cannot take pointers)."""
    r = reader.sub(key)
    for k, g in enumerate(GOOD_NAMES):
        out[k] = r.int(g, 0, hi)
    r.done()


def _mask(values, names, path):
    if not isinstance(values, list) or any(v not in names for v in values) or len(set(values)) != len(values):
        raise ValueError(f"{path} must be a list of distinct names from {list(names)}, got {values!r}")
    m = 0
    for v in values:
        m |= 1 << names.index(v)
    return m


_STEP_PHASES = {STEP_ROLE: (PHASE_ROLE_SELECTION,), STEP_SETTLE: (PHASE_SETTLER,),
                STEP_HOSPICE: (PHASE_SETTLER,), STEP_DRAW_HACIENDA: (PHASE_SETTLER,),
                STEP_DRAW_FACE_UP: (PHASE_SETTLER, PHASE_SETUP), STEP_MAYOR: (PHASE_MAYOR,),
                STEP_BUILD: (PHASE_BUILDER,), STEP_UNIVERSITY: (PHASE_BUILDER,),
                STEP_PRIVILEGE: (PHASE_CRAFTSMAN,), STEP_SELL: (PHASE_TRADER,),
                STEP_LOAD: (PHASE_CAPTAIN,), STEP_WAREHOUSE: (PHASE_CAPTAIN,),
                STEP_KEEP: (PHASE_CAPTAIN,), STEP_TERMINAL: (PHASE_END,),
                STEP_DRAFT: (PHASE_SETUP,), STEP_LIBRARY: (PHASE_SETTLER,),
                STEP_BLACK_MARKET: (PHASE_BUILDER,), STEP_SMALL_WHARF: (PHASE_CAPTAIN,),
                STEP_GUEST: (PHASE_SETTLER, PHASE_BUILDER, PHASE_CRAFTSMAN, PHASE_TRADER, PHASE_CAPTAIN)}


@cython.infer_types(False)
def state_from_dict(game, d):
    """Build a validated state from ``to_dict`` data; raise ValueError/TypeError naming
    the first problem."""
    cdef PuertoRicoState st = PuertoRicoState.__new__(PuertoRicoState)
    cdef PRState* s = &st.s
    cdef int i, k, b, n, c
    opts = game.options()
    r = _Reader(d)
    if r._get("game") != "puerto_rico":
        raise ValueError(f"state.game must be 'puerto_rico', got {d.get('game')!r}")
    version = r._get("version")
    if type(version) is not int or version != DICT_VERSION:
        raise ValueError(f"state.version must be the int {DICT_VERSION}, got {version!r}")
    _check_options(r._get("options"), opts)
    pr_new_game(s, game.num_players(), game._option_bits(), game._violet_set(), 0)   # fixed parameters
    st._set_vtable()
    exp = bool(s.options & OPT_EXPANSION)
    n = s.n_players
    s.phase = r.choice("phase", PHASE_NAMES)
    s.step = r.choice("step", STEP_NAMES)
    if not exp and s.step in (STEP_DRAFT, STEP_LIBRARY, STEP_BLACK_MARKET, STEP_SMALL_WHARF):
        raise ValueError(f"state: step {STEP_NAMES[s.step]!r} is an expansion step; this game has no expansion")
    if s.phase not in _STEP_PHASES[s.step]:
        raise ValueError(f"state: step {STEP_NAMES[s.step]!r} cannot happen in phase {PHASE_NAMES[s.phase]!r}")
    if s.step >= NUM_BASE_STEPS and not exp:
        raise ValueError(f"state: step {STEP_NAMES[s.step]!r} needs the expansion")
    s.governor = r.int("governor", 0, n - 1)
    if s.phase == PHASE_SETUP and s.governor != 0:
        raise ValueError(f"state.governor must be 0 during setup (the first Governor is seat 0), got {s.governor}")
    if s.step == STEP_TERMINAL:
        if r._get("player") is not None:
            raise ValueError("state.player must be null at the end of the game")
        s.player = PLAYER_TERMINAL
    else:
        s.player = r.int("player", 0, n - 1)
    s.chooser = r.int("role_chooser", 0, n - 1)
    s.selections_done = r.int("selections_done", 0, s.selections_per_round - (s.step != STEP_TERMINAL))
    s.turns_done = r.int("turns_done", 0, n)
    s.idle_turns = r.int("idle_turns", 0, n)
    s.end_triggered = r.bool("end_triggered")

    roles = r.sub("roles")
    s.cards_taken = 0
    for c in range(NUM_ROLE_CARDS):
        s.card_taken_by[c] = -1
        s.card_doubloons[c] = 0
        if not (s.cards_in_play >> c) & 1:
            continue
        rc = roles.sub(ROLE_NAMES[c])
        s.card_doubloons[c] = rc.int("doubloons", 0, 10000)
        if rc._get("taken_by") is not None:
            s.card_taken_by[c] = rc.int("taken_by", 0, n - 1)
            s.cards_taken |= 1 << c
        rc.done()
    roles.done()

    pl = r.sub("plantations")
    _read_goods(pl, "face_up", s.face_up)
    _read_goods(pl, "stack", s.stack)
    _read_goods(pl, "discard", s.discard)
    s.to_draw = pl.int("to_draw", 0, s.face_up_count)
    pl.done()
    s.quarries = r.int("quarries", 0, SETUP[n].quarries)
    col = r.sub("colonists")
    s.colonist_supply = col.int("supply", 0, 10000)
    s.colonist_ship = col.int("ship", 0, 10000)
    col.done()
    s.vp_supply = r.int("vp_chips", 0, 10000)
    _read_goods(r, "goods", s.goods_supply)

    ships = r.list("cargo_ships")
    if len(ships) != s.n_ships:
        raise ValueError(f"state.cargo_ships must list {s.n_ships} ships, got {len(ships)}")
    for i, ship in enumerate(ships):
        sr = _Reader(ship, f"state.cargo_ships[{i}]")
        cap = sr.int("capacity", 0, 127)
        if cap != s.ship_capacity[i]:
            raise ValueError(f"state.cargo_ships[{i}].capacity must be {s.ship_capacity[i]} for "
                             f"{n} players, got {cap}")
        s.ship_good[i] = sr.choice("good", GOOD_NAMES, allow_none=True)
        s.ship_load[i] = sr.int("load", 0, cap)
        if (s.ship_good[i] < 0) != (s.ship_load[i] == 0):
            raise ValueError(f"state.cargo_ships[{i}]: a ship has a good exactly when its load is > 0")
        sr.done()
    goods_on_ships = [s.ship_good[i] for i in range(s.n_ships) if s.ship_good[i] >= 0]
    if len(set(goods_on_ships)) != len(goods_on_ships):
        raise ValueError("state.cargo_ships: no good may be on two ships")
    _read_goods(r, "trading_house", s.house, HOUSE_SPACES)
    s.house_count = sum5(s.house)
    if s.house_count > HOUSE_SPACES:
        raise ValueError(f"state.trading_house holds {s.house_count} goods; it has {HOUSE_SPACES} spaces")

    bs = r.sub("buildings")
    for b in range(NUM_BUILDINGS):
        if exp or not BUILDING[b].expansion:
            s.building_supply[b] = bs.int(BUILDING_IDS[b], 0, BUILDING[b].copies[0])
    bs.done()

    _read_turn(s, r.sub("turn"))
    _read_boards(s, r.list("boards"))
    if exp:
        _read_expansion(s, r.sub("expansion"))
    else:                                     # the base game's storage and privilege counters
        s.barrels_left = 1 if s.step in (STEP_WAREHOUSE, STEP_KEEP) else 0
        s.privilege_left = 1 if s.step == STEP_PRIVILEGE else 0

    rng = r.list("rng")
    if len(rng) != 4 or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 64 for v in rng) \
            or not any(rng):
        raise ValueError("state.rng must be 4 ints in 0..2**64-1, not all 0")
    for k in range(4):
        s.rng.s[k] = rng[k]
    hist = r.list("history") if "history" in d else []
    na = num_actions_for(s.options)
    if any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < na for v in hist):
        raise ValueError(f"state.history must be a list of action ids 0..{na - 1}")
    r.done()
    pr_derive(s)
    _check_consistency(st)
    st.game = game
    set_history(st, hist)
    return st


cdef _read_boards(PRState* s, list boards):
    cdef PRPlayer* p
    cdef int i, k, b, n = s.n_players
    if len(boards) != n:
        raise ValueError(f"state.boards must have {n} entries, got {len(boards)}")
    for i, bd in enumerate(boards):
        p = &s.players[i]
        path = f"state.boards[{i}]"
        br = _Reader(bd, path)
        p.doubloons = br.int("doubloons", 0, 30000)
        p.vp = br.int("vp_chips", 0, 30000)
        _read_goods(br, "goods", p.goods)
        isl = br.sub("island")
        for k in range(NUM_MANNED_KINDS):
            tr = isl.sub(TILE_NAMES[k])
            p.tiles[k] = tr.int("tiles", 0, ISLAND_SPACES)
            p.manned[k] = tr.int("colonists", 0, p.tiles[k])
            tr.done()
        fr = isl.sub("forest")
        p.tiles[FOREST] = fr.int("tiles", 0, FORESTS if s.options & OPT_EXPANSION else 0)  # expansion only
        fr.done()
        isl.done()
        if island_used(p) > ISLAND_SPACES:
            raise ValueError(f"{path}.island holds {island_used(p)} tiles; there are {ISLAND_SPACES} spaces")
        p.san_juan = br.int("san_juan", 0, 127)
        bld = br.sub("buildings")
        p.owned = 0
        for b in range(NUM_BUILDINGS):
            p.workers[b] = 0
            if BUILDING_IDS[b] in bld.d:
                if BUILDING[b].expansion and not (s.options & OPT_EXPANSION):
                    raise ValueError(f"{path}.buildings.{BUILDING_IDS[b]} is an expansion building; "
                                     "this game has no expansion")
                p.workers[b] = bld.int(BUILDING_IDS[b], 0, BUILDING[b].circles)
                p.owned |= (<uint64>1) << b
        bld.done()
        if city_used(p) > CITY_SPACES:
            raise ValueError(f"{path}.buildings take {city_used(p)} city spaces; there are {CITY_SPACES}")
        br.done()


cdef _read_expansion(PRState* s, e):
    cdef int n = s.n_players, b
    s.forests = e.int("forests", 0, FORESTS)
    _read_goods(e, "removed_plantations", s.removed, 12)
    violet = e.list("violet_in_play")
    names = BUILDING_IDS[FIRST_VIOLET:]
    if any(v not in names for v in violet) or len(set(violet)) != len(violet):
        raise ValueError(f"state.expansion.violet_in_play must be distinct violet building ids from "
                         f"{list(names)}, got {violet!r}")
    if not (s.options & OPT_DRAFT):
        if set(violet) != {BUILDING_IDS[b] for b in range(FIRST_VIOLET, NUM_BUILDINGS) if (s.in_play >> b) & 1}:
            raise ValueError("state.expansion.violet_in_play must be the game's building set "
                             f"{[BUILDING_IDS[b] for b in range(FIRST_VIOLET, NUM_BUILDINGS) if (s.in_play >> b) & 1]}")
    for v in violet:
        s.in_play |= (<uint64>1) << BUILDING_IDS.index(v)
    s.library_done = e.bool("library_done")
    s.privilege_left = e.int("privilege_left", 0, 2)
    _read_goods(e, "craftsman_amounts", s.craft_amount, 11)
    s.bm_left = e.int("black_market_left", 0, 3)
    s.bm_last = e.choice("black_market_last", _BM_CATEGORIES, allow_none=True)
    s.small_wharf_used = _seat_mask(e._get("small_wharf_used"), n, "state.expansion.small_wharf_used")
    s.sw_count = e.int("small_wharf_count", 0, 60)
    s.sw_last = e.choice("small_wharf_last", GOOD_NAMES, allow_none=True)
    s.barrels_left = e.int("barrels_left", 0, 4)
    _read_goods(e, "barrels", s.keep_n, 4)
    s.last_keep = e.choice("last_keep", GOOD_NAMES, allow_none=True)
    e.done()


cdef _read_turn(PRState* s, t):
    cdef int n = s.n_players
    s.hacienda_used = t.bool("hacienda_used")
    s.last_tile = t.choice("last_tile", TILE_NAMES, allow_none=True)
    s.to_place = t.int("to_place", 0, 127)
    s.last_slot = t.int("last_slot", 0, NUM_SLOTS - 1)
    s.last_building = t.choice("last_building", BUILDING_IDS, allow_none=True)
    s.craftsman_received = _mask(t._get("craftsman_received"), GOOD_NAMES, "state.turn.craftsman_received")
    s.wharf_used = _seat_mask(t._get("wharf_used"), n, "state.turn.wharf_used")
    s.captain_bonus_given = t.bool("captain_bonus_given")
    s.warehouse_left = t.int("warehouse_left", 0, 3)
    s.last_warehouse = t.choice("last_warehouse", GOOD_NAMES, allow_none=True)
    s.kept = _mask(t._get("kept"), GOOD_NAMES, "state.turn.kept")
    # the Mayor's score hold exists only while a player places colonists, so older dicts
    # (which never have it) still load everywhere else, and a dict round-trips exactly
    if s.step == STEP_MAYOR:
        if "held_bonus_vp" not in t.d:
            raise ValueError("state.turn: missing key 'held_bonus_vp' (needed at the mayor step)")
        s.held_bonus = t.int("held_bonus_vp", 0, 30000)
    elif "held_bonus_vp" in t.d:
        raise ValueError("state.turn.held_bonus_vp is only allowed at the mayor step "
                         f"(the placement of colonists), not at step {STEP_NAMES[s.step]!r}")
    else:
        s.held_bonus = 0
    t.done()


def _check_consistency(PuertoRicoState st):
    """Conservation of every component and the flow invariants (raises ValueError)."""
    cdef PRState* s = &st.s
    cdef int n = s.n_players, i, k, b, total
    cdef int16 buf[MAX_LEGAL]
    cdef PRPlayer* p
    cdef const SetupInfo* su = &SETUP[n]
    variant = s.options & OPT_ALL_COLONISTS_AND_VP
    colonists = s.colonist_supply + s.colonist_ship + sum(colonists_on_board(&s.players[i]) for i in range(n))
    if s.step == STEP_MAYOR:
        if s.to_place == 0:
            raise ValueError("the Mayor placement step needs turn.to_place >= 1")
        colonists += s.to_place
    elif s.to_place:
        raise ValueError("state.turn.to_place must be 0 outside the Mayor's placement")
    elif s.held_bonus:
        raise ValueError("state.turn.held_bonus_vp must be 0 outside the Mayor's placement")
    expected = MAX_COLONISTS_VARIANT if variant else su.colonists_total
    if colonists != expected:
        raise ValueError(f"colonists are not conserved: supply + ship + boards = {colonists}, "
                         f"the game has {expected}")
    for k in range(NUM_GOODS):
        total = s.goods_supply[k] + s.house[k] + sum(s.players[i].goods[k] for i in range(n))
        total += sum(s.ship_load[i] for i in range(s.n_ships) if s.ship_good[i] == k)
        if total != su.goods[k]:
            raise ValueError(f"{GOOD_NAMES[k]} goods are not conserved: supply + trading house + ships "
                             f"+ players = {total}, the game has {su.goods[k]}")
        total = s.face_up[k] + s.stack[k] + s.discard[k] + s.removed[k] + sum(s.players[i].tiles[k] for i in range(n))
        if total != su.plantations[k]:
            raise ValueError(f"{GOOD_NAMES[k]} plantations are not conserved: face up + stack + discard "
                             f"+ removed + islands = {total}, the game has {su.plantations[k]}")
    total = s.quarries + sum(s.players[i].tiles[QUARRY] for i in range(n))
    if total != su.quarries:
        raise ValueError(f"quarries are not conserved: supply + islands = {total}, the game has {su.quarries}")
    exp = bool(s.options & OPT_EXPANSION)
    if exp:
        _check_expansion(st)
    for b in range(NUM_BUILDINGS):
        if BUILDING[b].expansion and not exp:
            continue
        copies = copies_of(s, b)
        total = s.building_supply[b] + sum(1 for i in range(n) if owns(&s.players[i], b))
        if total != copies:
            raise ValueError(f"building {BUILDING_IDS[b]} is not conserved: supply + owners = {total}, "
                             f"the game has {copies}"
                             + ("" if copies or not exp else " (not in this game's building set)"))
    vp_total = MAX_VP_VARIANT if variant else su.vp_total
    held = sum(s.players[i].vp for i in range(n))
    if (s.vp_supply > 0 and s.vp_supply + held != vp_total) or (s.vp_supply == 0 and held < vp_total):
        raise ValueError(f"VP chips are not conserved: pool {s.vp_supply} + players {held}, the game has "
                         f"{vp_total} (players may hold more only once the pool is empty)")
    if s.vp_supply == 0 and not variant and not s.end_triggered:
        raise ValueError("the VP chips are gone, so state.end_triggered must be true")
    # the flow
    taken = popcount64(s.cards_taken)
    in_phase = s.phase < PHASE_ROLE_SELECTION
    if s.step != STEP_TERMINAL and taken != s.selections_done + (1 if in_phase else 0):
        raise ValueError(f"{taken} role cards are taken, but {s.selections_done} selections are done"
                         f"{' and a phase is running' if in_phase else ''}")
    if s.step == STEP_TERMINAL and taken:
        raise ValueError("no role card can be taken at the end of the game")
    if in_phase:
        c = s.phase
        if not any(s.card_taken_by[cc] == s.chooser and (cc == c or (c == PROSPECTOR and cc == PROSPECTOR_2))
                   for cc in range(NUM_ROLE_CARDS)):
            raise ValueError(f"state.role_chooser {s.chooser} did not take the {PHASE_NAMES[c]} card")
    if s.step == STEP_ROLE and s.player != (s.governor + s.selections_done) % n:
        raise ValueError(f"seat {(s.governor + s.selections_done) % n} chooses the next role, not {s.player}")
    if s.step in (STEP_SETTLE, STEP_HOSPICE, STEP_DRAW_HACIENDA, STEP_MAYOR, STEP_BUILD, STEP_UNIVERSITY, STEP_SELL,
                  STEP_WAREHOUSE, STEP_KEEP, STEP_BLACK_MARKET) and s.player != (s.chooser + s.turns_done) % n:
        raise ValueError(f"in this phase seat {(s.chooser + s.turns_done) % n} is to act "
                         f"(role_chooser + turns_done), not {s.player}")
    if s.step == STEP_PRIVILEGE and s.player != s.chooser:
        raise ValueError("the Craftsman's privilege belongs to the role chooser")
    if s.step == STEP_HOSPICE and not (0 <= s.last_tile <= QUARRY or (exp and s.last_tile == FOREST)):
        raise ValueError("the Hospice step needs turn.last_tile (a plantation, quarry or forest)")
    if s.step == STEP_UNIVERSITY and (s.last_building < 0 or not owns(&s.players[s.player], s.last_building)):
        raise ValueError("the University step needs turn.last_building owned by the player")
    p = &s.players[s.player] if s.step != STEP_TERMINAL else NULL
    if s.step == STEP_HOSPICE and not (works(p, HOSPICE) and colonist_available(s)
                                       and (s.last_tile == FOREST or exp
                                            or p.manned[s.last_tile] < p.tiles[s.last_tile])):
        raise ValueError("the Hospice step needs an occupied Hospice, a colonist in the supply or on "
                         "the ship, and a free circle on turn.last_tile")
    if s.step == STEP_UNIVERSITY and not (works(p, UNIVERSITY) and colonist_available(s)
                                          and (BUILDING[s.last_building].circles == 0 or exp
                                               or p.workers[s.last_building] < BUILDING[s.last_building].circles)):
        raise ValueError("the University step needs an occupied University, a colonist in the supply or "
                         "on the ship, and a free circle on turn.last_building")
    if s.step == STEP_DRAW_HACIENDA and not (works(p, HACIENDA) and island_used(p) < ISLAND_SPACES):
        raise ValueError("a Hacienda draw needs an occupied Hacienda and a free island space")
    if s.step == STEP_DRAW_FACE_UP and s.to_draw == 0:
        raise ValueError("a face-up draw needs plantations.to_draw >= 1")
    if s.step == STEP_WAREHOUSE and s.warehouse_left > warehouse_kinds(p):
        raise ValueError(f"seat {s.player} has warehouse room for {warehouse_kinds(p)} kinds, "
                         f"not turn.warehouse_left = {s.warehouse_left}")
    if s.step == STEP_LOAD and s.idle_turns >= n:
        raise ValueError(f"loading has ended after {n} idle turns; turn.idle_turns must be < {n}")
    if s.step == STEP_ROLE and s.selections_done >= s.selections_per_round:
        raise ValueError(f"all {s.selections_per_round} roles of the round are taken")
    if s.step in (STEP_SETTLE, STEP_HOSPICE, STEP_DRAW_HACIENDA, STEP_MAYOR, STEP_BUILD, STEP_UNIVERSITY,
                  STEP_SELL, STEP_WAREHOUSE, STEP_KEEP, STEP_BLACK_MARKET) and s.turns_done >= n:
        raise ValueError(f"every player has had his turn: turns_done must be < {n}")
    if s.step != STEP_TERMINAL and pr_legal_actions(s, buf) == 0:
        raise ValueError(f"no action is legal at step {STEP_NAMES[s.step]!r}: the state is inconsistent")


def _check_expansion(PuertoRicoState st):
    """Expansion invariants: forests, removed plantations, the building set / draft, and the
    expansion steps (raises ValueError)."""
    cdef PRState* s = &st.s
    cdef int n = s.n_players, i, k, b, c
    cdef int16 buf[NUM_SLOTS]
    cdef PRPlayer* p
    on_islands = sum(s.players[i].tiles[FOREST] for i in range(n))
    if s.forests + on_islands != FORESTS:
        raise ValueError(f"forests are not conserved: supply + islands = {s.forests + on_islands}, "
                         f"the game has {FORESTS}")
    if sum5(s.removed) != on_islands:
        raise ValueError(f"every forest taken removes one face-up plantation: {on_islands} forests on islands, "
                         f"{sum5(s.removed)} plantations removed")
    placed = [b for b in range(FIRST_VIOLET, NUM_BUILDINGS) if (s.in_play >> b) & 1]
    if s.options & OPT_DRAFT:
        for c in range(11):
            used = sum(1 for b in placed if BUILDING[b].cost == c)
            if used > DRAFT_SLOTS[c]:
                raise ValueError(f"the draft has {DRAFT_SLOTS[c]} slot(s) of cost {c}, "
                                 f"but {used} kinds of that cost are in play")
        names = {BUILDING_IDS[b] for b in placed}
        for x, y in (("hacienda", "forest_house"), ("office", "trading_post")):
            if x in names and y in names and not (s.options & OPT_NO_EXCLUSIONS):
                raise ValueError(f"the draft excludes {x} together with {y} (OPEN-27/28)")
        if s.step == STEP_DRAFT:
            if s.player != len(placed) % n or s.governor != 0:
                raise ValueError(f"in the draft seat {len(placed) % n} picks next (from the first Governor, seat 0)")
        elif s.phase == PHASE_SETUP:
            if placed:
                raise ValueError("the draft follows the first face-up draws: no violet kind is placed yet")
        elif len(placed) != DRAFT_KINDS:
            raise ValueError(f"after the draft {DRAFT_KINDS} violet kinds are in play, not {len(placed)}")
    if s.step != STEP_BLACK_MARKET and (s.bm_left or s.bm_last >= 0):
        raise ValueError("black_market_left/last must be 0/null outside the Black-market step")
    if s.step != STEP_SMALL_WHARF and (s.sw_count or s.sw_last >= 0):
        raise ValueError("small_wharf_count/last must be 0/null outside the Small-wharf step")
    if s.step not in (STEP_WAREHOUSE, STEP_KEEP) and (s.barrels_left or s.last_keep >= 0 or sum5(s.keep_n)):
        raise ValueError("barrels_left, barrels and last_keep must be 0/null outside the storage steps")
    if s.step != STEP_PRIVILEGE and s.privilege_left:
        raise ValueError("privilege_left must be 0 outside the Craftsman's privilege step")
    if s.step == STEP_DRAFT:
        return
    p = &s.players[s.player] if s.step != STEP_TERMINAL else NULL
    if s.step == STEP_PRIVILEGE and not 1 <= s.privilege_left <= (2 if works(&s.players[s.chooser], LIBRARY) else 1):
        raise ValueError("privilege_left must be 1 (2 with the Craftsman's occupied Library)")
    if s.step in (STEP_WAREHOUSE, STEP_KEEP):
        if not 1 <= s.barrels_left + sum5(s.keep_n) <= (4 if works(p, STOREHOUSE) else 1) or s.barrels_left < 1:
            raise ValueError("barrels_left + barrels kept must be 1 (4 with an occupied Storehouse), "
                             "with at least one barrel left")
        for k in range(NUM_GOODS):
            if s.keep_n[k] > p.goods[k] or (s.keep_n[k] and (s.kept >> k) & 1) or (s.keep_n[k] and k > s.last_keep):
                raise ValueError(f"expansion.barrels.{GOOD_NAMES[k]} is inconsistent with the goods, "
                                 "the warehouse kinds and last_keep")
    if s.step == STEP_LIBRARY:
        if s.player != s.chooser or s.turns_done != n or not s.library_done or not works(p, LIBRARY):
            raise ValueError("the Library pick belongs to the Settler (role chooser) with an occupied Library, "
                             "after every turn (turns_done = players, library_done true)")
    elif s.phase == PHASE_SETTLER and s.step != STEP_DRAW_FACE_UP and s.library_done:
        raise ValueError("library_done is set only once every player has had his Settler turn")
    if s.step == STEP_BLACK_MARKET:
        b = s.last_building
        if not 1 <= s.bm_left <= 3 or b < 0 or owns(p, b) or s.building_supply[b] == 0 \
                or not works(p, BLACK_MARKET):
            raise ValueError("the Black-market step needs an occupied Black market, turn.last_building still "
                             "in the supply and not owned, and 1..3 items left that cover the shortfall")
    if s.step == STEP_SMALL_WHARF and not (s.sw_count >= 1 and works(p, SMALL_WHARF)
                                           and (s.small_wharf_used >> s.player) & 1):
        raise ValueError("the Small-wharf step needs an occupied Small wharf marked used and >= 1 good shipped")
    if s.step == STEP_GUEST:
        if s.phase == PHASE_CAPTAIN:
            if s.idle_turns >= n:
                raise ValueError(f"loading has ended after {n} idle turns; turn.idle_turns must be < {n}")
        elif s.phase == PHASE_SETTLER and s.turns_done == n:
            if s.player != s.chooser or not s.library_done:
                raise ValueError("after every Settler turn the guests step belongs to the Settler "
                                 "(role chooser, library_done true)")
        elif s.turns_done >= n or s.player != (s.chooser + s.turns_done) % n:
            raise ValueError(f"in this phase seat {(s.chooser + s.turns_done) % n} is to act "
                             f"(role_chooser + turns_done < players), not {s.player}")
        if turn_can_act(s) or guest_turn_moves(s, buf) == 0:
            raise ValueError("the guests step is a turn the player would skip (no choice) that a "
                             "Guest-house guest move can open")


# --- a readable board ------------------------------------------------------------

def _render(PuertoRicoState st):
    st = st.clone()          # one position throughout, whatever other threads do
    d = _to_dict(st)
    cdef PRScore sc
    n = d["options"]["players"]
    cur = pr_current_player(&st.s)
    who = {PLAYER_CHANCE: "chance", PLAYER_TERMINAL: "game over"}.get(cur, f"seat {cur}")
    lines = [f"Puerto Rico, {n} players | phase {d['phase']}, step {d['step']} | "
             f"Governor: seat {d['governor']} | to act: {who}"]
    roles = []
    for name, r in d["roles"].items():
        taken = f" (seat {r['taken_by']})" if r["taken_by"] is not None else ""
        roles.append(f"{name.replace('_', ' ')} {r['doubloons']}${taken}")
    lines.append("Roles: " + ", ".join(roles))

    def fmt(g):
        return ", ".join(f"{k} {v}" for k, v in g.items() if v) or "none"

    pl = d["plantations"]
    lines.append(f"Plantations face up: {fmt(pl['face_up'])} | stack {sum(pl['stack'].values())}, "
                 f"discard {sum(pl['discard'].values())} | quarries {d['quarries']}")
    lines.append(f"Colonists: supply {d['colonists']['supply']}, ship {d['colonists']['ship']} | "
                 f"VP chips left {d['vp_chips']} | goods supply: {fmt(d['goods'])}")
    if "expansion" in d:
        e = d["expansion"]
        lines.append(f"Expansion: forests {e['forests']} | removed plantations: {fmt(e['removed_plantations'])} | "
                     f"violet in play ({len(e['violet_in_play'])}): "
                     + ", ".join(_building_label(BUILDING_IDS.index(v)) for v in e["violet_in_play"]))
    ships = []
    for sh in d["cargo_ships"]:
        ships.append(f"[{sh['capacity']}: {sh['load']} {sh['good']}]" if sh["good"] else f"[{sh['capacity']}: empty]")
    lines.append("Cargo ships: " + " ".join(ships) + f" | trading house: {fmt(d['trading_house'])}")
    for i, b in enumerate(d["boards"]):
        pr_score(&st.s, i, &sc)
        marks = ("G" if i == d["governor"] else " ") + (">" if i == cur else " ")
        isl = ", ".join(f"{k} {v['colonists']}/{v['tiles']}" if k != "forest" else f"forest {v['tiles']}"
                        for k, v in b["island"].items() if v["tiles"])
        blds = ", ".join(f"{_building_label(BUILDING_IDS.index(k))} {v}/{BUILDING[BUILDING_IDS.index(k)].circles}"
                         for k, v in b["buildings"].items())
        lines.append(f"{marks}seat {i}: {_counted(b['doubloons'], 'doubloon', 'doubloons')}, "
                     f"{_counted(b['vp_chips'], 'VP chip', 'VP chips')} "
                     f"(total {sc.total}) | goods: {fmt(b['goods'])} | San Juan {b['san_juan']}")
        lines.append(f"     island: {isl or 'empty'}")
        lines.append(f"     city: {blds or 'empty'}")
    return "\n".join(lines)
