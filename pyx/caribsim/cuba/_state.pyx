# cython: language_level=3
"""Cuba state module (``caribsim.cuba._state``): the Python side of the compiled game.

What lives here: the ``CubaState`` class (a GameState over the core's CUState struct),
action names and ACTION_RANGES, the dict codec (``to_dict`` / ``state_from_dict``) with its
validation and consistency checks, the readable board, ``new_state``, ``observation_size``,
``check_random_games`` (the invariant checks over random games). It re-exports the core's
Python names (the item / step names, ``field_name``, ``pack_tables``), so that it exposes
every name of the former single module ``caribsim._cuba`` (now an alias of this module:
old pickles name ``caribsim._cuba.CubaState`` and ``caribsim._cuba._restore``).

The rules are not here: every rule, chance, score and observation function is the core's
(``caribsim.cuba._core``, cimported: its functions through Cython's C-API, its vtable and
C tables through accessor functions). The search and the batch drivers never go through
this module.

May import: caribsim.cuba._core, the shared modules (caribsim._types, _rng, _game,
_common) and numpy; nothing of search, human, embed, scale, nor caribsim.cuba.game.
"""
cimport cython
from libc.string cimport memcmp, memcpy
from caribsim._types cimport int8, int16, uint32, uint64, popcount64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport rng_seed, rng_below
from caribsim._game cimport GameState, history_list, set_history
from caribsim.cuba._core cimport *

# the core's Python names (module constants set once at the core's import)
# (LAW_KINDS, SUBSIDY_COUNTS, PAIR_STACKS, pack_tables: unused here, re-exported for cuba.game and the stubs)
from caribsim.cuba._core import (
    ITEM_NAMES, CARGO_NAMES, CROP_NAMES, MATERIAL_NAMES, CHARACTER_NAMES, BUILDING_IDS,
    LAW_KINDS, SUBSIDY_COUNTS,  # no-cython-lint
    STACK_NAMES, MARKER_NAMES, PHASE_NAMES, STEP_NAMES, RESUME_NAMES, LOAD_NAMES,
    PAIR_STACKS, field_name, pack_tables,  # no-cython-lint
)

# the core's C tables used here, bound once
cdef const int8* PAIR_A = cu_pair_a()
cdef const int8* PAIR_B = cu_pair_b()


cdef inline void unpack_tables(CubaTables* t, bytes data):
    if len(data) != sizeof(CubaTables):
        raise ValueError("component tables have the wrong size")
    memcpy(t, <const char*>data, sizeof(CubaTables))


# ---------------------------------------------------------------------------
# 6. Python API: the compiled State class, action names, the dict codec
# ---------------------------------------------------------------------------
cimport numpy as cnp
cnp.import_array()

from caribsim._common import _check_options, _counted, _int_in, _Reader, _seat_mask

NUM_DISTINCT_ACTIONS = NUM_ACTIONS
MAX_CHANCE_OUTCOMES = NUM_LAWS
MAX_BID_PESOS = MAX_BID
OPTION_SUPPLY_LIMITED = OPT_SUPPLY_LIMITED
OPTION_PESOS_LIMITED = OPT_PESOS_LIMITED
DICT_VERSION = 1
STATE_BYTES = sizeof(CUState)
TABLE_BYTES = sizeof(CubaTables)
NUM_BUILDING_KINDS = NUM_BUILDINGS
NUM_SHIP_CARDS = NUM_SHIPS
NUM_LAW_CARDS = NUM_LAWS
FIELD_WAREHOUSE_KIND = FIELD_WAREHOUSE
LAW_INITIAL_CODE = LAW_INITIAL


def action_names(ship_ids, law_ids):
    """All action names, indexed by id (ship and law ids come from the game's data)."""
    names = []
    for a in range(NUM_ACTIONS):
        names.append(_name(a, ship_ids, law_ids))
    return names


def _name(int a, ship_ids, law_ids):
    if a < A_SHIP:
        return f"start player seat {a - A_START}"
    if a < A_LAW:
        return f"ship draw {ship_ids[a - A_SHIP]}"
    if a < A_TAKE:
        return f"law draw {law_ids[a - A_LAW]}"
    if a < A_PLAY:
        return f"take {ITEM_NAMES[a - A_TAKE]}"
    if a < A_PAWN:
        return f"play {CHARACTER_NAMES[a - A_PLAY]}"
    if a < A_HARVEST:
        return f"pawn to {field_name(a - A_PAWN)}"
    if a < A_SELL:
        return f"harvest {field_name(a - A_HARVEST)}"
    if a < A_BUY:
        return f"sell {CARGO_NAMES[a - A_SELL]}"
    if a < A_TRADER_MATERIAL:
        return f"buy {CARGO_NAMES[a - A_BUY]}"
    if a < A_TRADER_CROP:
        return f"trader take {MATERIAL_NAMES[a - A_TRADER_MATERIAL]}"
    if a < A_BUILD:
        return f"trader take cheapest {CROP_NAMES[a - A_TRADER_CROP]}"
    if a < A_PLACE:
        return "build " + BUILDING_IDS[a - A_BUILD].replace("_", " ")
    if a < A_ARCH_ALT:
        return f"place on {field_name(a - A_PLACE)}"
    if a == A_ARCH_ALT:
        return "architect alternative"
    if a == A_CROSS:
        return "foreman row and column"
    if a < A_PICK:
        b = a - A_USE
        return "use warehouse" if b == USE_WAREHOUSE else "use " + BUILDING_IDS[b].replace("_", " ")
    if a < A_RECEIVE:
        return f"pick {ITEM_NAMES[a - A_PICK]}"
    if a < A_LIGHTHOUSE:
        return f"receive {CARGO_NAMES[a - A_RECEIVE]}"
    if a < A_VETO:
        return f"lighthouse {ship_ids[a - A_LIGHTHOUSE]}"
    if a < A_LOAD:
        return f"veto {STACK_NAMES[a - A_VETO]}"
    if a < A_MAYOR_ALT:
        k, d = divmod(a - A_LOAD, NUM_DOCKS)
        return f"load {CARGO_NAMES[k]} on dock {d + 1}"
    if a == A_MAYOR_ALT:
        return "mayor alternative"
    if a < A_PAY_TAX:
        i = a - A_ENACT
        return f"enact {STACK_NAMES[PAIR_A[i]]} and {STACK_NAMES[PAIR_B[i]]}"
    if a == A_PAY_TAX:
        return "pay tax"
    if a == A_DELIVER_LEVY:
        return "deliver levy"
    if a == A_PASS:
        return "pass"
    return f"bid {a - A_BID}"


ACTION_RANGES = {
    "start_player": (A_START, MAX_PLAYERS), "ship_draw": (A_SHIP, NUM_SHIPS), "law_draw": (A_LAW, NUM_LAWS),
    "take": (A_TAKE, NUM_ITEMS), "play": (A_PLAY, NUM_CHARACTERS), "pawn": (A_PAWN, NUM_FIELDS),
    "harvest": (A_HARVEST, NUM_FIELDS), "sell": (A_SELL, NUM_CARGO), "buy": (A_BUY, NUM_CARGO),
    "trader_material": (A_TRADER_MATERIAL, NUM_MATERIALS), "trader_crop": (A_TRADER_CROP, NUM_CROPS),
    "build": (A_BUILD, NUM_BUILDINGS), "place": (A_PLACE, NUM_FIELDS), "architect_alternative": (A_ARCH_ALT, 1),
    "foreman_cross": (A_CROSS, 1), "use": (A_USE, NUM_BUILDINGS + 1), "pick": (A_PICK, NUM_ITEMS),
    "receive": (A_RECEIVE, NUM_CARGO), "lighthouse": (A_LIGHTHOUSE, NUM_SHIPS), "veto": (A_VETO, NUM_STACKS),
    "load": (A_LOAD, NUM_CARGO * NUM_DOCKS), "mayor_alternative": (A_MAYOR_ALT, 1), "enact": (A_ENACT, 6),
    "pay_tax": (A_PAY_TAX, 1), "deliver_levy": (A_DELIVER_LEVY, 1), "pass": (A_PASS, 1),
    "bid": (A_BID, MAX_BID + 1),
}


cdef class CubaState(GameState):
    """A Cuba game position. Made by ``CubaGame.new_initial_state``.

    The whole position is one C struct (component tables included); ``clone`` is a
    memcpy. Every method that takes input validates it and raises
    ``ValueError``/``TypeError`` without changing the state.
    """
    cdef CUState s

    def __cinit__(self):
        self.vtable = cuba_vtable()

    cdef void* _raw(self) noexcept:
        return &self.s

    # apply_action, clone and child are GameState's
    cdef GameState _blank(self):
        return CubaState.__new__(CubaState)

    cdef int _illegal(self, int a, const int16* buf, int n) except -1:
        names = self.game._action_names
        legal = ", ".join(f"{buf[i]} ({names[buf[i]]})" for i in range(min(n, 40)))
        more = f" ... ({n} in all)" if n > 40 else ""
        raise ValueError(f"action {a} ({names[a]}) is not legal at step "
                         f"{STEP_NAMES[self.s.step]!r}; legal: {legal}{more}")

    def scores(self):
        """Per seat: VP, building VP (2 per building), total and the tie-break (pesos)."""
        cdef CubaScore sc
        cdef CUState snap = (<CUState*>self.c_state())[0]   # a copy: the loop below runs Python
        out = []
        for i in range(snap.n_players):
            cu_score(&snap, i, &sc)
            out.append({"vp": sc.vp, "building_vp": sc.building_vp, "total": sc.total,
                        "tiebreak": sc.tiebreak})
        return out

    def phase(self):
        self._ready()
        return PHASE_NAMES[self.s.phase]

    def step_name(self):
        self._ready()
        return STEP_NAMES[self.s.step]

    def round(self):
        self._ready()
        return self.s.round

    def action_to_string(self, action):
        self._ready()
        return self.game.action_to_string(action)

    def string_to_action(self, name):
        self._ready()
        if not isinstance(name, str):
            raise TypeError(f"action name must be a str, got {type(name).__name__}")
        key = " ".join(name.lower().split())
        names = self.game._action_names
        if key not in self.game._lookup:
            legal = [names[a] for a in self.legal_actions()][:40]
            raise ValueError(f"unknown action name {name!r}; legal here: {legal}")
        return self.game._lookup[key]

    def information_state_tensor(self, player=None):
        """Same as observation_tensor: the observation already is the player's information state
        (everything public plus his own secret bid)."""
        self._ready()
        return self.observation_tensor(player)

    def determinize(self, observer, seed=None):
        """A copy in which what `observer` cannot see (the other players' secret bids of the
        running bidding) is resampled consistently with the public information."""
        self._ready()
        cdef int o = _check_seat(observer, self.s.n_players)
        c = self.clone()
        cdef CubaState cs = <CubaState>c
        if seed is not None:
            rng_seed(&cs.s.rng, <uint64>_int_in(seed, "seed", 0, 2 ** 64 - 1), 7)
        cu_determinize(&cs.s, o)
        return c

    def hidden_bids_pending(self):
        """Seats whose secret bid is made but not yet revealed."""
        self._ready()
        cdef int step = self.s.step, n = self.s.n_players     # copied before any Python runs
        cdef uint64 bidding = self.s.tied if self.s.rebid else (1 << n) - 1
        cdef uint64 pending = bidding & ~(<uint64>self.s.bidders)
        if step != STEP_BID:
            return []
        return [q for q in range(n) if (pending >> q) & 1]

    def to_dict(self):
        """The complete position as JSON-able data (see docs/cuba.md). It includes the secret
        bids: it is the full state, not a player's view."""
        return _to_dict(self)

    def __str__(self):
        return _render(self)

    def __repr__(self):
        if self.game is None:
            return "<CubaState (not initialised)>"
        cdef int n = self.s.n_players, rnd = self.s.round, phase = self.s.phase, step = self.s.step
        cdef int cur = cu_current_player(&self.s)
        return (f"<CubaState {n}p round={rnd} phase={PHASE_NAMES[phase]} "
                f"step={STEP_NAMES[step]} player={cur}>")


from caribsim._game import _check_seat, _restore   # no-cython-lint: _restore here too: old pickles name it here


def new_state(game, bytes tables, int players, int options, int start, seed):
    seed_value = _int_in(seed, "seed", 0, 2 ** 64 - 1)
    cdef CubaTables t
    unpack_tables(&t, tables)
    cdef CubaState st = CubaState.__new__(CubaState)
    cu_new_game(&st.s, &t, players, options, start, <uint64>seed_value)
    st.game = game
    st._hist = None
    return st


def observation_size(int players):
    return cu_observation_size(players)


# --- the dict codec ------------------------------------------------------------

def _to_dict(CubaState st):
    # Copy the struct and the history first, with no Python in between (a GC run or a
    # callback could let another thread move the state): the dict is built from the copy.
    cdef CUState snap = (<CUState*>st.c_state())[0]
    hist, hist_n = st._hist, st._hist_n
    cdef CUState* s = &snap
    cdef CubaPlayer* p
    cdef int i, k, f, d
    g = st.game
    ships, laws = g._ship_ids, g._law_ids
    boards = []
    for i in range(s.n_players):
        p = &s.players[i]
        boards.append({
            "pesos": p.pesos,
            "vp": p.vp,
            "yard": {ITEM_NAMES[k]: p.yard[k] for k in range(NUM_ITEMS)},
            "warehouse": {CROP_NAMES[k]: p.warehouse[k] for k in range(NUM_CROPS)},
            "storage": {CROP_NAMES[k]: p.storage[k] for k in range(NUM_CROPS)},
            "pawn": field_name(p.pawn),
            "buildings": {BUILDING_IDS[p.building_at[f]]: field_name(f) for f in range(NUM_FIELDS)
                          if p.building_at[f] >= 0},
            "hand": [CHARACTER_NAMES[k] for k in range(NUM_CHARACTERS) if (p.hand >> k) & 1],
            "fourth": CHARACTER_NAMES[p.fourth] if p.fourth >= 0 else None,
            "church_stack": STACK_NAMES[p.church_stack] if p.church_stack >= 0 else None,
            "paid_tax": bool(p.paid_tax),
            "bid": p.bid,
            "bought": p.bought,
            "votes": p.votes,
        })

    def law_name(int l):
        if l == LAW_INITIAL:
            return "initial"
        return laws[l] if l >= 0 else None

    terminal = s.step == STEP_TERMINAL
    return {
        "game": "cuba",
        "version": DICT_VERSION,
        "options": g.options(),
        "round": s.round,
        "phase": PHASE_NAMES[s.phase],
        "step": STEP_NAMES[s.step],
        "player": None if terminal or is_chance_step(s.step) else s.player,
        "start_player": s.start_player,
        "lap": s.lap,
        "turn": s.turn,
        "character": CHARACTER_NAMES[s.character] if s.character >= 0 else None,
        "markers": [MARKER_NAMES[k] for k in range(NUM_MARKERS) if (s.markers >> k) & 1],
        "town_hall_user": s.town_hall_user if s.town_hall_user >= 0 else None,
        "market": {CARGO_NAMES[k]: s.covered[k] for k in range(NUM_CARGO)},
        "supply": {ITEM_NAMES[k]: s.supply[k] for k in range(NUM_ITEMS)},
        "bank": s.bank,
        "harbour": {
            "docks": [None if s.dock[d] < 0 else
                      {"ship": ships[s.dock[d]], "cargo": {CARGO_NAMES[k]: s.cargo[d][k] for k in range(NUM_CARGO)}}
                      for d in range(NUM_DOCKS)],
            "at_sea": ships[s.at_sea] if s.at_sea >= 0 else None,
            "deck_unseen": [ships[k] for k in range(NUM_SHIPS) if (s.unseen >> k) & 1],
            "deck_returned": [ships[s.queue[k]] for k in range(s.queue_len)],
            "refill": RESUME_NAMES[s.resume],
            "setup_fill": bool(s.setup_fill),
        },
        "laws": {
            "in_force": {STACK_NAMES[k]: law_name(s.law_in_force[k]) for k in range(NUM_STACKS)},
            "proposals": {STACK_NAMES[k]: law_name(s.proposal[k]) for k in range(NUM_STACKS)},
            "vetoed": STACK_NAMES[s.vetoed] if s.vetoed >= 0 else None,
            "revealed": [laws[k] for k in range(NUM_LAWS) if (s.revealed >> k) & 1],
            "next_stack": s.law_next,
        },
        "setup": {"left": s.setup_left, "last": ITEM_NAMES[s.setup_last] if s.setup_last >= 0 else None,
                  "fixed_start": s.fixed_start if s.fixed_start >= 0 else None},
        "action": {
            "harvest_count": s.harvest_count,
            "harvest_last": field_name(s.harvest_last) if s.harvest_last >= 0 else None,
            "harvest_fields": [field_name(f) for f in range(NUM_FIELDS) if (s.harvest_mask >> f) & 1],
            "trade_last": s.trade_last,
            "sold": [CARGO_NAMES[k] for k in range(NUM_CARGO) if (s.sold >> k) & 1],
            "build_pending": BUILDING_IDS[s.build_pending] if s.build_pending >= 0 else None,
            "built": bool(s.built),
            "activated": [_use_name(k) for k in range(NUM_BUILDINGS + 1) if (s.activated >> k) & 1],
            "used": [_use_name(k) for k in range(NUM_BUILDINGS + 1) if (s.used >> k) & 1],
            "building": BUILDING_IDS[s.cur_building] if s.cur_building >= 0 else None,
            "pick_left": s.pick_left,
            "pick_count": s.pick_count,
            "pick_last": ITEM_NAMES[s.pick_last],
            "pick_item": ITEM_NAMES[s.pick_item] if s.pick_item >= 0 else None,
            "load": LOAD_NAMES[s.load_ctx],
            "load_dock": s.load_dock + 1 if s.load_dock >= 0 else None,
            "load_left": s.load_left,
            "load_count": s.load_count,
            "load_last": CARGO_NAMES[s.load_last] if s.load_last >= 0 else None,
        },
        "parliament": {
            "bidders": [q for q in range(s.n_players) if (s.bidders >> q) & 1],
            "tied": [q for q in range(s.n_players) if (s.tied >> q) & 1],
            "rebid": bool(s.rebid),
            "winner": s.winner if s.winner >= 0 else None,
        },
        "boards": boards,
        "rng": [int(s.rng.s[k]) for k in range(4)],
        "history": history_list(hist, hist_n),
    }


def _use_name(int k):
    return "warehouse" if k == USE_WAREHOUSE else BUILDING_IDS[k]


_FIELDS = {field_name(x): x for x in range(NUM_FIELDS)}


def _field(v, what):
    if not isinstance(v, str):
        raise TypeError(f"{what} must be a field 'row,col', got {v!r}")
    if v not in _FIELDS:
        raise ValueError(f"{what} must be a field 'row,col' as to_dict writes it (rows 1-3, columns 1-4, "
                         f"e.g. '2,3'), got {v!r}")
    return _FIELDS[v]


def _mask_of(values, what, names=None):
    """The bitmask of a set-like list (names, or fields when names is None); a repeat is an error,
    not silently collapsed."""
    m = 0
    for x in values:
        k = _field(x, what + "[]") if names is None else _name_list(x, names, what + "[]")
        if (m >> k) & 1:
            raise ValueError(f"{what} lists {x!r} twice; each may appear once")
        m |= 1 << k
    return m


def _name_list(v, names, what, allow_none=False):
    if v is None and allow_none:
        return -1
    if v not in names:
        raise ValueError(f"{what} must be one of {list(names)}{' or null' if allow_none else ''}, got {v!r}")
    return list(names).index(v)


cdef _counts(r, key, names, int16* out, int lo=0, int hi=10000):
    sub = r.sub(key)
    for k, name in enumerate(names):
        out[k] = sub.int(name, lo, hi)
    sub.done()


@cython.infer_types(False)
def state_from_dict(game, d):
    """Build a validated state from ``to_dict`` data; raise ValueError/TypeError naming the
    first problem (types, ranges, unknown keys, conservation of every component, the flow)."""
    cdef CubaTables t
    cdef CubaState st_ = CubaState.__new__(CubaState)
    cdef CUState* s = &st_.s
    cdef CubaPlayer* p
    cdef int i, k, f, dk, n, law
    opts = game.options()
    r = _Reader(d)
    if r._get("game") != "cuba":
        raise ValueError(f"state.game must be 'cuba', got {d.get('game')!r}")
    version = r._get("version")
    if type(version) is not int or version != DICT_VERSION:
        raise ValueError(f"state.version must be the int {DICT_VERSION}, got {version!r}")
    _check_options(r._get("options"), opts)
    unpack_tables(&t, game._tables)
    n = game.num_players()
    cu_new_game(s, &t, n, game._option_bits(), game._start_option(), 0)
    ships, laws = list(game._ship_ids), list(game._law_ids)
    s.round = r.int("round", 1, t.rounds)
    s.phase = r.choice("phase", PHASE_NAMES)
    s.step = r.choice("step", STEP_NAMES)
    if s.step == STEP_TERMINAL or is_chance_step(s.step):
        if r._get("player") is not None:
            raise ValueError("state.player must be null at a chance node and at the end")
        s.player = PLAYER_TERMINAL if s.step == STEP_TERMINAL else 0
    else:
        s.player = r.int("player", 0, n - 1)
    s.start_player = r.int("start_player", 0, n - 1)
    s.lap = r.int("lap", 0, t.cards_played)
    s.turn = r.int("turn", 0, n)
    if is_chance_step(s.step) and s.phase == PHASE_ACTIONS:
        s.player = (s.start_player + s.turn) % n     # a Harbour-law refill returns to the player on turn
    s.character = r.choice("character", CHARACTER_NAMES, allow_none=True)
    s.markers = _mask_of(r.list("markers"), "state.markers", MARKER_NAMES)
    th = r._get("town_hall_user")
    s.town_hall_user = -1 if th is None else _int_in(th, "state.town_hall_user", 0, n - 1)
    mkt = r.sub("market")
    for k in range(NUM_CARGO):
        s.covered[k] = mkt.int(CARGO_NAMES[k], 0, t.n_prices[k])
    mkt.done()
    _counts(r, "supply", ITEM_NAMES, s.supply, -30000, 30000)
    s.bank = r.int("bank", -30000, 30000)

    hb = r.sub("harbour")
    docks = hb.list("docks")
    if len(docks) != NUM_DOCKS:
        raise ValueError(f"state.harbour.docks must list {NUM_DOCKS} docks (null for an empty one)")
    for dk in range(NUM_DOCKS):
        s.dock[dk] = -1
        for k in range(NUM_CARGO):
            s.cargo[dk][k] = 0
        if docks[dk] is None:
            continue
        dr = _Reader(docks[dk], f"state.harbour.docks[{dk}]")
        s.dock[dk] = _name_list(dr._get("ship"), ships, f"state.harbour.docks[{dk}].ship")
        cg = dr.sub("cargo")
        for k in range(NUM_CARGO):
            s.cargo[dk][k] = cg.int(CARGO_NAMES[k], 0, t.slots[s.dock[dk]][k])
        cg.done()
        dr.done()
    sea = hb._get("at_sea")
    s.at_sea = _name_list(sea, ships, "state.harbour.at_sea", allow_none=True)
    s.unseen = _mask_of(hb.list("deck_unseen"), "state.harbour.deck_unseen", ships)
    q = hb.list("deck_returned")
    if len(q) > NUM_SHIPS:
        raise ValueError("state.harbour.deck_returned is too long")
    s.queue_len = len(q)
    for i, x in enumerate(q):
        s.queue[i] = _name_list(x, ships, "state.harbour.deck_returned[]")
    s.resume = hb.choice("refill", RESUME_NAMES)
    s.setup_fill = hb.bool("setup_fill")
    hb.done()
    places = [s.dock[x] for x in range(NUM_DOCKS) if s.dock[x] >= 0] + ([s.at_sea] if s.at_sea >= 0 else []) \
        + [k for k in range(NUM_SHIPS) if (s.unseen >> k) & 1] + [s.queue[i] for i in range(s.queue_len)]
    if sorted(places) != list(range(NUM_SHIPS)):
        missing = [ships[k] for k in range(NUM_SHIPS) if k not in places]
        twice = sorted({ships[k] for k in places if places.count(k) > 1})
        raise ValueError(f"ship cards are not conserved: each of the {NUM_SHIPS} must be in exactly one of "
                         f"docks, at sea, deck_unseen, deck_returned (missing {missing}, twice {twice})")

    lw = r.sub("laws")
    inf = lw.sub("in_force")
    for k in range(NUM_STACKS):
        v = inf._get(STACK_NAMES[k])
        if v == "initial" and k < 2:
            s.law_in_force[k] = LAW_INITIAL
        elif v is None and k >= 2:
            s.law_in_force[k] = -1
        else:
            s.law_in_force[k] = _name_list(v, laws, f"state.laws.in_force.{STACK_NAMES[k]}")
            if t.law_stack[s.law_in_force[k]] != k:
                raise ValueError(f"state.laws.in_force.{STACK_NAMES[k]}: {v} is not a stack-{STACK_NAMES[k]} law")
    inf.done()
    pr = lw.sub("proposals")
    for k in range(NUM_STACKS):
        v = pr._get(STACK_NAMES[k])
        s.proposal[k] = _name_list(v, laws, f"state.laws.proposals.{STACK_NAMES[k]}", allow_none=True)
        if s.proposal[k] >= 0 and t.law_stack[s.proposal[k]] != k:
            raise ValueError(f"state.laws.proposals.{STACK_NAMES[k]}: {v} is not a stack-{STACK_NAMES[k]} law")
    pr.done()
    s.vetoed = _name_list(lw._get("vetoed"), STACK_NAMES, "state.laws.vetoed", allow_none=True)
    s.revealed = _mask_of(lw.list("revealed"), "state.laws.revealed", laws)
    s.law_next = lw.int("next_stack", 0, NUM_STACKS)
    lw.done()
    for k in range(NUM_STACKS):
        for law in range(NUM_LAWS):
            if (s.law_in_force[k] == law or s.proposal[k] == law) and not (s.revealed >> law) & 1:
                raise ValueError(f"law {laws[law]} is in force or proposed, so it must be in state.laws.revealed")
    for k in range(NUM_STACKS):
        if s.law_in_force[k] >= 0 and s.law_in_force[k] == s.proposal[k]:
            raise ValueError("a law card cannot be in force and proposed at once")

    su = r.sub("setup")
    s.setup_left = su.int("left", 0, t.start_materials + t.start_crops)
    s.setup_last = su.choice("last", ITEM_NAMES, allow_none=True)
    fs = su._get("fixed_start")
    if fs is not None and (isinstance(fs, bool) or not isinstance(fs, int)):
        raise TypeError(f"state.setup.fixed_start must be an int seat or null, got {type(fs).__name__}")
    if (fs if fs is not None else -1) != game._start_option():
        raise ValueError("state.setup.fixed_start must match the game's start_player option")
    su.done()

    ac = r.sub("action")
    s.harvest_count = ac.int("harvest_count", 0, NUM_FIELDS)
    hl = ac._get("harvest_last")
    s.harvest_last = -1 if hl is None else _field(hl, "state.action.harvest_last")
    s.harvest_mask = _mask_of(ac.list("harvest_fields"), "state.action.harvest_fields")
    s.trade_last = ac.int("trade_last", -1, 2 * NUM_CARGO - 1)
    s.sold = _mask_of(ac.list("sold"), "state.action.sold", CARGO_NAMES)
    s.build_pending = ac.choice("build_pending", BUILDING_IDS, allow_none=True)
    s.built = ac.bool("built")
    use_names = BUILDING_IDS + ("warehouse",)
    s.activated = _mask_of(ac.list("activated"), "state.action.activated", use_names)
    s.used = _mask_of(ac.list("used"), "state.action.used", use_names)
    s.cur_building = ac.choice("building", BUILDING_IDS, allow_none=True)
    s.pick_left = ac.int("pick_left", 0, 127)
    s.pick_count = ac.int("pick_count", 0, 127)
    s.pick_last = ac.choice("pick_last", ITEM_NAMES)
    s.pick_item = ac.choice("pick_item", ITEM_NAMES, allow_none=True)
    s.load_ctx = ac.choice("load", LOAD_NAMES)
    ld = ac._get("load_dock")
    s.load_dock = -1 if ld is None else _int_in(ld, "state.action.load_dock", 1, NUM_DOCKS) - 1
    s.load_left = ac.int("load_left", 0, 127)
    s.load_count = ac.int("load_count", 0, 127)
    s.load_last = ac.choice("load_last", CARGO_NAMES, allow_none=True)
    ac.done()

    pa = r.sub("parliament")
    s.bidders = _seat_mask(pa._get("bidders"), n, "state.parliament.bidders")
    s.tied = _seat_mask(pa._get("tied"), n, "state.parliament.tied")
    s.rebid = pa.bool("rebid")
    w = pa._get("winner")
    s.winner = -1 if w is None else _int_in(w, "state.parliament.winner", 0, n - 1)
    pa.done()

    boards = r.list("boards")
    if len(boards) != n:
        raise ValueError(f"state.boards must list {n} players, got {len(boards)}")
    for i in range(n):
        p = &s.players[i]
        br = _Reader(boards[i], f"state.boards[{i}]")
        p.pesos = br.int("pesos", 0, 30000)
        p.vp = br.int("vp", -30000, 30000)
        _counts(br, "yard", ITEM_NAMES, p.yard)
        _counts(br, "warehouse", CROP_NAMES, p.warehouse)
        _counts(br, "storage", CROP_NAMES, p.storage)
        p.pawn = _field(br._get("pawn"), f"state.boards[{i}].pawn")
        bl = br._get("buildings")
        if not isinstance(bl, dict):
            raise TypeError(f"state.boards[{i}].buildings must be a dict building -> field")
        for f in range(NUM_FIELDS):
            p.building_at[f] = -1
        p.owned = 0
        for bname, fv in bl.items():
            b = _name_list(bname, BUILDING_IDS, f"state.boards[{i}].buildings key")
            f = _field(fv, f"state.boards[{i}].buildings.{bname}")
            if f == t.warehouse_field:
                raise ValueError(f"state.boards[{i}].buildings.{bname}: no building on the warehouse field")
            if p.building_at[f] >= 0:
                raise ValueError(f"state.boards[{i}].buildings: two buildings on field {fv}")
            p.building_at[f] = b
            p.owned |= (<uint32>1) << b
        p.hand = _mask_of(br.list("hand"), f"state.boards[{i}].hand", CHARACTER_NAMES)
        p.fourth = br.choice("fourth", CHARACTER_NAMES, allow_none=True)
        p.church_stack = br.choice("church_stack", STACK_NAMES, allow_none=True)
        p.paid_tax = br.bool("paid_tax")
        p.bid = br.int("bid", 0, MAX_BID)
        p.bought = br.int("bought", 0, 30000)
        p.votes = br.int("votes", 0, 30000)
        br.done()
        if storage_held(p) > t.storage_capacity:
            raise ValueError(f"state.boards[{i}].storage holds {storage_held(p)} crops; capacity {t.storage_capacity}")
        if storage_held(p) and not owns(p, STORAGE):
            raise ValueError(f"state.boards[{i}].storage holds crops but the player owns no Storage")

    rng = r.list("rng")
    if len(rng) != 4 or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2 ** 64 for v in rng) \
            or not any(rng):
        raise ValueError("state.rng must be 4 ints in 0..2**64-1, not all 0")
    for k in range(4):
        s.rng.s[k] = rng[k]
    hist = r.list("history") if "history" in d else []
    if any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < NUM_ACTIONS for v in hist):
        raise ValueError(f"state.history must be a list of action ids 0..{NUM_ACTIONS - 1}")
    r.done()
    st_.game = game
    _check_consistency(st_)
    set_history(st_, list(hist))
    return st_


@cython.infer_types(False)
def _check_consistency(CubaState st):
    """Conservation of every component and the flow invariants (raises ValueError)."""
    cdef CUState* s = &st.s
    cdef CubaPlayer* p
    cdef int n = s.n_players, i, k, law, b, d, total, cnt, expected, pos, done
    cdef int16 buf[MAX_LEGAL]
    cdef CUState cleared
    laws = st.game._law_ids
    if s.phase not in _STEP_PHASES[s.step]:
        raise ValueError(f"step {STEP_NAMES[s.step]!r} cannot happen in phase {PHASE_NAMES[s.phase]!r}")
    limited_items = bool(s.options & OPT_SUPPLY_LIMITED)
    for k in range(NUM_ITEMS):
        total = s.supply[k] + (s.covered[k] if k < NUM_CARGO else 0)
        if k < NUM_CARGO:
            for d in range(NUM_DOCKS):
                total += s.cargo[d][k]
        for i in range(n):
            total += stock(&s.players[i], k)
        if total != s.t.supply_count[k]:
            raise ValueError(f"{ITEM_NAMES[k]} is not conserved: supply {s.supply[k]} + market + ships + players "
                             f"= {total}, the game counts {s.t.supply_count[k]} (the supply may go below 0 "
                             f"only when it is unlimited)")
        if limited_items and s.supply[k] < 0:
            raise ValueError(f"state.supply.{ITEM_NAMES[k]} is negative, but the supply is limited")
    total = s.bank
    for i in range(n):
        total += s.players[i].pesos
    if total != s.t.coins:
        raise ValueError(f"pesos are not conserved: bank {s.bank} + players = {total}, the game counts {s.t.coins}")
    if s.options & OPT_PESOS_LIMITED and s.bank < 0:
        raise ValueError("state.bank is negative, but the bank is limited")
    for b in range(NUM_BUILDINGS):
        total = 0
        for i in range(n):
            total += owns(&s.players[i], b)
        if total > s.t.copies[b]:
            raise ValueError(f"building {BUILDING_IDS[b]}: {total} owners, the game has {s.t.copies[b]} tile(s)")
    for i in range(n):
        p = &s.players[i]
        for k in range(NUM_ITEMS):
            if p.yard[k] < 0:
                raise ValueError(f"state.boards[{i}].yard.{ITEM_NAMES[k]} is negative")
        if s.phase == PHASE_SETUP or s.phase == PHASE_PROPOSALS:
            if p.hand != (1 << NUM_CHARACTERS) - 1:
                raise ValueError(f"state.boards[{i}].hand must hold all 5 characters before the action phase")
    if s.phase == PHASE_PARLIAMENT or s.phase == PHASE_LAWS:
        for i in range(n):
            if s.players[i].fourth < 0:
                raise ValueError(f"state.boards[{i}].fourth (the 4th card played) is needed after the action phase")
    # laws: every card in exactly one place
    for law in range(NUM_LAWS):
        if (s.revealed >> law) & 1:
            continue
        for k in range(NUM_STACKS):
            if s.law_in_force[k] == law or s.proposal[k] == law:
                raise ValueError(f"law {laws[law]} is in force or proposed but not revealed")
    for k in range(NUM_STACKS):
        cnt = 0
        for law in range(NUM_LAWS):
            if s.t.law_stack[law] == k and (s.revealed >> law) & 1:
                cnt += 1
        expected = s.round - (1 if s.phase == PHASE_PROPOSALS and s.law_next <= k else 0) \
            - (1 if s.phase == PHASE_SETUP else 0)
        if s.phase == PHASE_END_OF_ROUND and s.step == STEP_SHIP_DRAW:
            expected = s.round - 1
        if cnt != expected:
            raise ValueError(f"stack {STACK_NAMES[k]}: {cnt} cards revealed, round {s.round} at this point "
                             f"needs {expected}")
    if s.phase == PHASE_ACTIONS or s.phase == PHASE_PARLIAMENT:
        for k in range(NUM_STACKS):
            if s.proposal[k] < 0:
                raise ValueError(f"state.laws.proposals.{STACK_NAMES[k]} is missing during {PHASE_NAMES[s.phase]}")
    elif s.phase != PHASE_PROPOSALS:
        for k in range(NUM_STACKS):
            if s.proposal[k] >= 0:
                raise ValueError(f"no proposals lie out during {PHASE_NAMES[s.phase]}")
    # the flow
    if s.phase == PHASE_ACTIONS and not is_chance_step(s.step):
        for i in range(n):
            pos = (i - s.start_player + n) % n
            done = s.lap + (1 if pos < s.turn or (pos == s.turn and s.step != STEP_CHARACTER) else 0)
            if popcount64(s.players[i].hand) != NUM_CHARACTERS - done:
                raise ValueError(f"state.boards[{i}].hand: in lap {s.lap + 1}, turn {s.turn} seat {i} has played "
                                 f"{done} cards, so holds {NUM_CHARACTERS - done}")
        if s.player != (s.start_player + s.turn) % n:
            raise ValueError(f"seat {(s.start_player + s.turn) % n} is on turn (start_player + turn), not {s.player}")
    if s.step in (STEP_PAWN, STEP_HARVEST, STEP_TRADE, STEP_BUILD, STEP_PLACE, STEP_FOREMAN_MODE, STEP_FOREMAN,
                  STEP_PICK, STEP_RECEIVE, STEP_LIGHTHOUSE, STEP_VETO, STEP_LOAD) and s.character < 0:
        raise ValueError(f"step {STEP_NAMES[s.step]!r} needs state.character")
    if s.step == STEP_PLACE and s.build_pending < 0:
        raise ValueError("the place step needs state.action.build_pending")
    if s.step == STEP_PLACE:
        total = 0
        for i in range(n):
            total += owns(&s.players[i], s.build_pending)
        if owns(&s.players[s.player], s.build_pending) or total >= s.t.copies[s.build_pending]:
            raise ValueError(f"state.action.build_pending {BUILDING_IDS[s.build_pending]!r} must be a building the "
                             f"player does not own, with a tile left ({total} of {s.t.copies[s.build_pending]} "
                             f"owned)")
    if s.step in (STEP_PICK, STEP_RECEIVE, STEP_LIGHTHOUSE, STEP_VETO) and s.cur_building < 0:
        raise ValueError(f"step {STEP_NAMES[s.step]!r} needs state.action.building")
    if s.step in (STEP_PICK, STEP_RECEIVE, STEP_LIGHTHOUSE, STEP_VETO) and \
            not owns(&s.players[s.player], s.cur_building):
        raise ValueError("state.action.building must be owned by the player")
    if s.step == STEP_RECEIVE and not 0 <= s.pick_item < NUM_CARGO:
        raise ValueError("the receive step needs state.action.pick_item (a crop or good)")
    if s.step == STEP_ENACT and s.player != s.winner:
        raise ValueError("the enactment belongs to state.parliament.winner")
    if s.step == STEP_BID and not (s.bidders >> s.player) & 1:
        raise ValueError("the bidding player must be in state.parliament.bidders")
    if s.step == STEP_TAX and s.player != (s.start_player + s.turn) % n:
        raise ValueError("the tax decision belongs to seat start_player + turn")
    if s.step == STEP_LEVY and s.player != (s.start_player + s.turn) % n:
        raise ValueError("the levy decision belongs to seat start_player + turn")
    if s.step == STEP_TAX and not (0 < tax_due(s, &s.players[s.player]) <= s.players[s.player].pesos):
        raise ValueError("the tax decision needs a tax due > 0 that the player can pay")
    if s.step == STEP_LEVY and not can_deliver(s, &s.players[s.player]):
        raise ValueError("the levy decision needs a player who holds the levy")
    if s.step == STEP_SHIP_DRAW and (s.unseen == 0 or not refill_needed(s) or s.resume == RESUME_NONE):
        raise ValueError("a ship draw needs unseen deck cards, a free dock or at-sea space and a refill in progress")
    if s.step != STEP_SHIP_DRAW and (s.resume != RESUME_NONE or s.setup_fill):
        raise ValueError("state.harbour.refill must be 'none' outside a ship draw")
    if s.step == STEP_LAW_DRAW and s.phase != PHASE_PROPOSALS:
        raise ValueError("law draws happen in the proposals phase")
    if s.step == STEP_START_PLAYER and s.fixed_start >= 0:
        raise ValueError("the start player is configured: no start-player chance node")
    _check_setup(st)
    _check_turn(st)
    _check_harbour_and_laws(st)
    _check_parliament(st)
    _check_round_marks(st)
    if s.phase != PHASE_ACTIONS or s.step == STEP_CHARACTER:    # between turns: clear_turn's values
        memcpy(&cleared, s, sizeof(CUState))
        clear_turn(&cleared)
        if memcmp(&cleared, s, sizeof(CUState)) != 0:
            raise ValueError("state.character and state.action.* must be clear (null, 0, [], false; pick_last "
                             "'sugar', load 'mayor') between turns, here at step " + repr(STEP_NAMES[s.step]))
    if s.step != STEP_TERMINAL and cu_legal_actions(s, buf) == 0:
        raise ValueError(f"no action is legal at step {STEP_NAMES[s.step]!r}: the state is inconsistent")


@cython.infer_types(False)
def _check_setup(CubaState st):
    """The starting items (§3): a setup_item step has items left to take, in the engine's order."""
    cdef CUState* s = &st.s
    cdef int n = s.n_players, total = s.t.start_materials + s.t.start_crops
    if s.phase == PHASE_SETUP:
        if s.round != 1:
            raise ValueError(f"the setup phase is in round 1, not round {s.round}")
        if s.fixed_start >= 0 and s.start_player != s.fixed_start:
            raise ValueError(f"state.start_player must be the configured start player {s.fixed_start} in setup")
    if s.step == STEP_SETUP_ITEM:
        if not 1 <= s.setup_left <= total:
            raise ValueError(f"state.setup.left must be 1..{total} (items still to take) at the setup_item step, "
                             f"got {s.setup_left}")
        if s.turn >= n or s.player != (s.start_player + s.turn) % n:
            raise ValueError(f"at the setup_item step seat start_player + turn takes, turn 0..{n - 1}")
        if s.setup_left == total or s.setup_left == s.t.start_crops:
            if s.setup_last >= 0:
                raise ValueError("state.setup.last must be null before a player's first material or first crop")
        elif s.setup_left > s.t.start_crops:
            if s.setup_last < WOOD:
                raise ValueError("state.setup.last must be the material just taken while materials are taken")
        elif not 0 <= s.setup_last < NUM_CROPS:
            raise ValueError("state.setup.last must be the crop just taken while crops are taken")
    elif s.setup_left:
        raise ValueError(f"state.setup.left must be 0 outside the setup_item step, got {s.setup_left}")
    if NUM_CROPS <= s.setup_last < WOOD:
        raise ValueError(f"state.setup.last cannot be {ITEM_NAMES[s.setup_last]!r}: goods are not starting items")


_STEP_CHARACTER = {STEP_PAWN: WORKER, STEP_HARVEST: WORKER, STEP_TRADE: TRADER, STEP_BUILD: ARCHITECT,
                   STEP_PLACE: ARCHITECT, STEP_FOREMAN_MODE: FOREMAN, STEP_FOREMAN: FOREMAN, STEP_PICK: FOREMAN,
                   STEP_RECEIVE: FOREMAN, STEP_LIGHTHOUSE: FOREMAN, STEP_VETO: FOREMAN}


@cython.infer_types(False)
def _check_turn(CubaState st):
    """A character's turn in progress (§6): the step belongs to the character played, the
    Foreman's buildings are the player's, the harvest fields are his uncovered crop fields."""
    cdef CUState* s = &st.s
    cdef CubaPlayer* p
    cdef int f
    cdef uint32 mine
    if s.phase != PHASE_ACTIONS or s.step == STEP_CHARACTER:
        return                                    # clear between turns (checked by the caller)
    p = &s.players[s.player]
    want = _STEP_CHARACTER.get(s.step, -1)
    if s.step == STEP_LOAD:
        want = MAYOR if s.load_ctx == LOAD_MAYOR else FOREMAN
        if s.load_ctx != LOAD_MAYOR and s.cur_building != (SMALL_OFFICE if s.load_ctx == LOAD_SMALL_OFFICE
                                                           else LARGE_OFFICE):
            raise ValueError(f"loading by {LOAD_NAMES[s.load_ctx]!r} needs that office as state.action.building")
    if want >= 0 and s.character != want:
        raise ValueError(f"step {STEP_NAMES[s.step]!r} (load {LOAD_NAMES[s.load_ctx]!r}) belongs to the "
                         f"{CHARACTER_NAMES[want]}, not to state.character "
                         f"{CHARACTER_NAMES[s.character] if s.character >= 0 else None!r}")
    foreman = s.character == FOREMAN and s.step != STEP_FOREMAN_MODE
    if foreman:
        mine = <uint32>p.owned | ((<uint32>1) << USE_WAREHOUSE)
        if s.activated & ~mine or s.used & ~s.activated:
            raise ValueError("state.action.activated must be the player's buildings (or the warehouse) and "
                             "used among them")
        if s.cur_building >= 0 and not (s.used >> s.cur_building) & 1:
            raise ValueError("state.action.building must be one of state.action.used")
    elif s.activated or s.used or s.cur_building >= 0:
        raise ValueError("state.action.activated/used/building are set only while the Foreman uses buildings")
    if s.step == STEP_HARVEST:
        for f in range(NUM_FIELDS):
            if (s.harvest_mask >> f) & 1 and (s.t.field[f] >= NUM_CROPS or p.building_at[f] >= 0):
                raise ValueError(f"state.action.harvest_fields: {field_name(f)} is not an uncovered crop field "
                                 f"of the player")
        if (s.harvest_last >= 0) != (s.harvest_count > 0) or (s.harvest_last >= 0 and (
                not (s.harvest_mask >> s.harvest_last) & 1
                or s.harvest_count > popcount64(s.harvest_mask & ((2 << s.harvest_last) - 1)))):
            raise ValueError("state.action.harvest_last must be the last of the harvest_count fields harvested "
                             "(null when none)")
    elif s.harvest_mask or s.harvest_count or s.harvest_last >= 0:
        raise ValueError("state.action.harvest_* are set only at the harvest step")


@cython.infer_types(False)
def _check_harbour_and_laws(CubaState st):
    """Where the ships are at each step (§10), and the law cards by phase (§7, §9)."""
    cdef CUState* s = &st.s
    cdef int k
    if s.step == STEP_SHIP_DRAW:
        allowed = {PHASE_SETUP: (RESUME_SETUP,), PHASE_ACTIONS: (RESUME_TURN_END, RESUME_FOREMAN),
                   PHASE_END_OF_ROUND: (RESUME_NEW_ROUND,)}[s.phase]
        if s.resume not in allowed:
            raise ValueError(f"a ship draw in phase {PHASE_NAMES[s.phase]!r} resumes with state.harbour.refill "
                             f"{[RESUME_NAMES[x] for x in allowed]}, got {RESUME_NAMES[s.resume]!r}")
        if bool(s.setup_fill) != (s.resume == RESUME_SETUP):
            raise ValueError("state.harbour.setup_fill must be true exactly for the setup refill (refill 'setup')")
        if s.setup_fill:
            if s.dock[2] >= 0 or (s.dock[1] >= 0 and s.dock[0] < 0) or (s.at_sea >= 0 and s.dock[1] < 0):
                raise ValueError("the setup refill fills dock 1, dock 2, then the at-sea space; dock 3 stays empty")
        elif (s.dock[1] >= 0 and s.dock[2] < 0) or (s.dock[0] >= 0 and s.dock[1] < 0) or \
                (s.at_sea >= 0 and s.dock[0] < 0):
            raise ValueError("a refill fills the highest free dock first, then the at-sea space")
    elif s.dock[0] < 0 or s.dock[1] < 0 or s.at_sea < 0:
        raise ValueError("outside ship draws docks 1 and 2 and the at-sea space hold ships")
    if s.phase == PHASE_PROPOSALS:
        if s.law_next >= NUM_STACKS:
            raise ValueError(f"state.laws.next_stack must be 0..{NUM_STACKS - 1} during the proposals")
        for k in range(NUM_STACKS):
            if (s.proposal[k] >= 0) != (k < s.law_next):
                raise ValueError(f"state.laws.proposals: stacks before next_stack ({s.law_next}) have their "
                                 f"proposal, the others none (stack {STACK_NAMES[k]})")
    elif s.law_next != (0 if s.phase == PHASE_SETUP else NUM_STACKS):
        raise ValueError(f"state.laws.next_stack must be {0 if s.phase == PHASE_SETUP else NUM_STACKS} "
                         f"in phase {PHASE_NAMES[s.phase]!r}")
    if s.round == 1 and s.phase < PHASE_LAWS and (s.law_in_force[0] != LAW_INITIAL or s.law_in_force[1] != LAW_INITIAL
                                                  or s.law_in_force[2] >= 0 or s.law_in_force[3] >= 0):
        raise ValueError("until round 1's law phase the initial laws are in force (I, II 'initial'; III, IV null)")
    if s.vetoed >= 0 and not (s.phase == PHASE_ACTIONS or s.phase == PHASE_PARLIAMENT):
        raise ValueError("state.laws.vetoed must be null outside the action and parliament phases")


@cython.infer_types(False)
def _check_parliament(CubaState st):
    """The vote (§8): the secret bids of the bidding, its order, the votes."""
    cdef CUState* s = &st.s
    cdef CubaPlayer* p
    cdef int n = s.n_players, q, j, first = -1
    cdef int everyone = (1 << n) - 1
    cdef int bidding = everyone
    if s.phase == PHASE_PARLIAMENT or s.phase == PHASE_LAWS:     # kept until the round end
        if s.rebid:
            bidding = s.tied
            if popcount64(s.tied) < 2:
                raise ValueError("a re-bid needs at least 2 seats in state.parliament.tied")
        elif s.tied:
            raise ValueError("state.parliament.tied must be empty unless rebid is true")
    elif s.rebid or s.tied:
        raise ValueError("state.parliament.rebid/tied must be false/empty outside the parliament and law phases")
    if s.step == STEP_BID:
        if s.bidders & ~bidding:
            raise ValueError("state.parliament.bidders must be among the seats of this bidding (tied on a re-bid)")
        for j in range(n):
            q = (s.start_player + j) % n
            if (s.bidders >> q) & 1:
                first = q
                break
        if s.player != first:
            raise ValueError(f"the bidder on turn is the first seat of state.parliament.bidders from the start "
                             f"player clockwise (seat {first}), not {s.player}")
    elif s.bidders:
        raise ValueError("state.parliament.bidders must be empty outside the bid step")
    if (s.step == STEP_ENACT or s.phase == PHASE_LAWS) != (s.winner >= 0):
        raise ValueError("state.parliament.winner is set exactly at the enactment and in the law phase")
    for q in range(n):
        p = &s.players[q]
        if p.bid and (s.step != STEP_BID or not (bidding >> q) & 1 or (s.bidders >> q) & 1):
            raise ValueError(f"state.boards[{q}].bid must be 0: only a seat that has bid in a pending bidding "
                             f"holds a bid")
        if p.bid > p.pesos:
            raise ValueError(f"state.boards[{q}].bid {p.bid} is more than the seat's {p.pesos} pesos")
        if (p.votes or p.bought) and not (s.phase == PHASE_PARLIAMENT or s.phase == PHASE_LAWS):
            raise ValueError(f"state.boards[{q}].votes and bought must be 0 before the parliament phase")


@cython.infer_types(False)
def _check_round_marks(CubaState st):
    """What the round end resets (§10): hands, 4th cards, markers, Town hall, taxes paid."""
    cdef CUState* s = &st.s
    cdef CubaPlayer* p
    cdef int n = s.n_players, q, pos, done
    cdef int full = (1 << NUM_CHARACTERS) - 1
    in_round = PHASE_ACTIONS <= s.phase <= PHASE_LAWS
    if not in_round and (s.markers or s.town_hall_user >= 0):
        raise ValueError(f"state.markers and town_hall_user must be empty in phase {PHASE_NAMES[s.phase]!r}")
    for q in range(n):
        p = &s.players[q]
        if p.paid_tax and s.phase != PHASE_LAWS:
            raise ValueError(f"state.boards[{q}].paid_tax must be false outside the law phase")
        if p.fourth >= 0 and (p.hand >> p.fourth) & 1:
            raise ValueError(f"state.boards[{q}].fourth was played: it cannot be in the hand")
        if not in_round:
            if p.hand != full or p.fourth >= 0:
                raise ValueError(f"state.boards[{q}]: all 5 characters in hand and no 4th card in phase "
                                 f"{PHASE_NAMES[s.phase]!r}")
        elif s.phase != PHASE_ACTIONS:
            if popcount64(p.hand) != NUM_CHARACTERS - s.t.cards_played:
                raise ValueError(f"state.boards[{q}].hand holds {NUM_CHARACTERS - s.t.cards_played} cards after "
                                 f"the action phase")
        elif not is_chance_step(s.step):
            pos = (q - s.start_player + n) % n
            done = s.lap + (1 if pos < s.turn or (pos == s.turn and s.step != STEP_CHARACTER) else 0)
            if (p.fourth >= 0) != (done == s.t.cards_played):
                raise ValueError(f"state.boards[{q}].fourth is set exactly once the seat has played its "
                                 f"{s.t.cards_played}th card")


_STEP_PHASES = {
    STEP_START_PLAYER: (PHASE_SETUP,), STEP_SHIP_DRAW: (PHASE_SETUP, PHASE_ACTIONS, PHASE_END_OF_ROUND),
    STEP_LAW_DRAW: (PHASE_PROPOSALS,), STEP_SETUP_ITEM: (PHASE_SETUP,), STEP_CHARACTER: (PHASE_ACTIONS,),
    STEP_PAWN: (PHASE_ACTIONS,), STEP_HARVEST: (PHASE_ACTIONS,), STEP_TRADE: (PHASE_ACTIONS,),
    STEP_BUILD: (PHASE_ACTIONS,), STEP_PLACE: (PHASE_ACTIONS,), STEP_FOREMAN_MODE: (PHASE_ACTIONS,),
    STEP_FOREMAN: (PHASE_ACTIONS,), STEP_PICK: (PHASE_ACTIONS,), STEP_RECEIVE: (PHASE_ACTIONS,),
    STEP_LIGHTHOUSE: (PHASE_ACTIONS,), STEP_VETO: (PHASE_ACTIONS,), STEP_LOAD: (PHASE_ACTIONS,),
    STEP_BID: (PHASE_PARLIAMENT,), STEP_ENACT: (PHASE_PARLIAMENT,), STEP_TAX: (PHASE_LAWS,),
    STEP_LEVY: (PHASE_LAWS,), STEP_TERMINAL: (PHASE_END,),
}


# --- a readable board ------------------------------------------------------------

def _render(CubaState st):
    st = st.clone()          # one position throughout, whatever other threads do
    d = _to_dict(st)
    cdef CubaScore sc
    n = d["options"]["players"]
    cur = cu_current_player(&st.s)
    who = {PLAYER_CHANCE: "chance", PLAYER_TERMINAL: "game over"}.get(cur, f"seat {cur}")

    def fmt(g):
        return ", ".join(f"{k} {v}" for k, v in g.items() if v) or "none"

    lines = [f"Cuba, {n} players | round {d['round']}, phase {d['phase']}, step {d['step']} | "
             f"start player: seat {d['start_player']} | to act: {who}"
             + (f" ({d['character']})" if d["character"] else "")]
    lines.append("Market (tokens): " + ", ".join(f"{k} {v}" for k, v in d["market"].items())
                 + " | markers: " + (", ".join(d["markers"]) or "none")
                 + (f" | Town hall used by seat {d['town_hall_user']}" if d["town_hall_user"] is not None else ""))
    h = d["harbour"]
    docks = []
    for i, dk in enumerate(h["docks"]):
        docks.append(f"dock {i + 1}: " + ("empty" if dk is None else f"{dk['ship']} [{fmt(dk['cargo'])}]"))
    lines.append("Harbour: " + "; ".join(docks) + f"; at sea: {h['at_sea']} | deck: {len(h['deck_unseen'])} unseen"
                 + (", returned " + " ".join(h["deck_returned"]) if h["deck_returned"] else ""))
    lw = d["laws"]
    lines.append("Laws in force: " + ", ".join(f"{k} {v or '-'}" for k, v in lw["in_force"].items())
                 + " | proposals: " + ", ".join(f"{k} {v}" for k, v in lw["proposals"].items() if v)
                 + (f" (vetoed {lw['vetoed']})" if lw["vetoed"] else ""))
    for i, b in enumerate(d["boards"]):
        cu_score(&st.s, i, &sc)
        marks = ("S" if i == d["start_player"] else " ") + (">" if i == cur else " ")
        lines.append(f"{marks}seat {i}: {_counted(b['pesos'], 'peso', 'pesos')}, {b['vp']} VP (total {sc.total}) | "
                     f"pawn {b['pawn']} | "
                     f"hand {'/'.join(c[:2] for c in b['hand'])}"
                     + (f" | 4th {b['fourth']}" if b["fourth"] else "")
                     + (f" | votes {b['votes']}" if d["phase"] == "parliament" else ""))
        lines.append(f"     yard: {fmt(b['yard'])} | warehouse: {fmt(b['warehouse'])}"
                     + (f" | storage: {fmt(b['storage'])}" if any(b["storage"].values()) else ""))
        if b["buildings"]:
            lines.append("     buildings: " + ", ".join(f"{k}@{v}" for k, v in b["buildings"].items()))
    return "\n".join(lines)


# --- invariant checks over many random games (used by the property tests) ---------

cdef int invariant_violation(const CUState* s) noexcept nogil:
    """0 if the position keeps every invariant, else a code (see INVARIANT_MESSAGES)."""
    cdef int i, k, d, total, seen
    cdef uint32 ships = 0
    cdef const CubaPlayer* p
    for i in range(s.n_players):
        p = &s.players[i]
        if p.pesos < 0:
            return 1
        for k in range(NUM_ITEMS):
            if p.yard[k] < 0:
                return 2
        for k in range(NUM_CROPS):
            if p.warehouse[k] < 0 or p.storage[k] < 0:
                return 2
        if storage_held(p) > s.t.storage_capacity:
            return 3
    for k in range(NUM_CARGO):
        if s.covered[k] < 0 or s.covered[k] > s.t.n_prices[k]:
            return 4
    for k in range(NUM_ITEMS):
        total = s.supply[k]
        if k < NUM_CARGO:
            total += s.covered[k]
            for d in range(NUM_DOCKS):
                total += s.cargo[d][k]
        for i in range(s.n_players):
            total += stock(&s.players[i], k)
        if total != s.t.supply_count[k]:
            return 5
        if s.options & OPT_SUPPLY_LIMITED and s.supply[k] < 0:
            return 5
    total = s.bank
    for i in range(s.n_players):
        total += s.players[i].pesos
    if total != s.t.coins:
        return 6
    seen = 0
    for d in range(NUM_DOCKS):
        if s.dock[d] >= 0:
            ships |= (<uint32>1) << s.dock[d]
            seen += 1
            for k in range(NUM_CARGO):
                if s.cargo[d][k] > s.t.slots[s.dock[d]][k] or s.cargo[d][k] < 0:
                    return 7
        else:
            for k in range(NUM_CARGO):
                if s.cargo[d][k] != 0:
                    return 7
    if s.at_sea >= 0:
        ships |= (<uint32>1) << s.at_sea
        seen += 1
    for i in range(s.queue_len):
        ships |= (<uint32>1) << s.queue[i]
        seen += 1
    seen += popcount64(s.unseen)
    ships |= s.unseen
    if seen != NUM_SHIPS or ships != (1 << NUM_SHIPS) - 1:
        return 8
    if s.round < 1 or s.round > s.t.rounds:
        return 9
    if s.step == STEP_TERMINAL and s.round != s.t.rounds:
        return 10
    if s.phase == PHASE_ACTIONS and not is_chance_step(s.step) and \
            (s.dock[0] < 0 or s.dock[1] < 0 or s.at_sea < 0 or (s.round > 1 and s.dock[2] < 0)):
        return 11
    return 0


INVARIANT_MESSAGES = {1: "negative pesos", 2: "negative stock", 3: "Storage over capacity",
                      4: "market track out of range", 5: "items not conserved", 6: "pesos not conserved",
                      7: "ship cargo out of range", 8: "ship cards not conserved",
                      9: "round out of range", 10: "game ended before the last round",
                      11: "harbour incomplete during the action phase", 12: "no legal action",
                      13: "game too long"}


def check_random_games(CubaState st, int n_games, seed):
    """Play n_games uniformly random games from `st` in C and check the invariants at every
    step. Returns (games, steps, decisions, rounds_seen_at_end, first violation or None)."""
    cdef CUState s
    cdef int16 legal[MAX_LEGAL]
    cdef int g = 0, n, code = 0, at_step = 0
    cdef long steps = 0, decisions = 0, game_steps
    cdef uint64 seed_value = <uint64>_int_in(seed, "seed", 0, 2 ** 64 - 1)
    ends = {}
    with nogil:
        for g in range(n_games):
            memcpy(&s, &st.s, sizeof(CUState))
            rng_seed(&s.rng, seed_value, <uint64>g + 1)
            game_steps = 0
            while s.step != STEP_TERMINAL:
                code = invariant_violation(&s)
                if code:
                    break
                if is_chance_step(s.step):
                    cu_apply(&s, cu_sample_chance(&s))
                else:
                    n = cu_legal_actions(&s, legal)
                    if n == 0:
                        code = 12
                        break
                    cu_apply(&s, legal[rng_below(&s.rng, n)])
                    decisions += 1
                steps += 1
                game_steps += 1
                if game_steps > 100000:
                    code = 13
                    break
            if code == 0:
                code = invariant_violation(&s)
            if code:
                at_step = game_steps
                break
            with gil:
                ends[s.round] = ends.get(s.round, 0) + 1
    failure = None
    if code:
        failure = f"game {g}: {INVARIANT_MESSAGES[code]} at step {at_step} (step {STEP_NAMES[s.step]})"
    return g + (0 if code else 1) if n_games else 0, steps, decisions, ends, failure
