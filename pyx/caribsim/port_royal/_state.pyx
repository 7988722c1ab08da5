# cython: language_level=3
"""Port Royal state (module ``caribsim.port_royal._state``): the Python side of the
compiled game.

What lives here: the ``PortRoyalState`` class (a GameState over one PRYState struct),
action names, the dict codec with its validation and consistency checks, the readable
board, ``new_state`` and the audited random games of the property tests. Every
Python-level name of the former single module ``caribsim._port_royal`` is here (the core's
constants re-exported), so the old name, an alias of this module, keeps working.

May import: ``caribsim.port_royal._core`` (cimport: the struct, enums, rules, tables and
vtable; import: its Python constants), numpy and caribsim's shared modules
(``caribsim._game``, ``caribsim._common``). The rules stay in the core: this module only
calls them.
"""
cimport cython
from libc.string cimport memset, memcpy, memcmp
from caribsim._types cimport int8, int16, int32, uint8, uint64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport rng_seed, rng_below
from caribsim._game cimport GameVTable, GameState, history_list, set_history
from caribsim.port_royal._core cimport (
    PRYState, PRYPlayer, PRYOp, CardInfo, PRYTables,
    NUM_VARIANTS, DECK_SIZE, NUM_SYMBOLS, NUM_EXPEDITIONS, NUM_PATTERNS, MAX_OPS,
    CAT_SHIP, CAT_PERSON, CAT_EXPEDITION, CAT_TAX,
    PHASE_SETUP, PHASE_DISCOVER, PHASE_TRADE, PHASE_END,
    STEP_DISCOVER, STEP_REPEL, STEP_TAKE, STEP_CHANCE, STEP_TERMINAL, STEP_FLOW,
    OP_REVEAL, OP_DRAW, OP_PAY, OP_FEE,
    R_START_TURN, R_RESOLVE, R_DISCOVER, R_TAX_DONE, R_TAKE, R_END_TURN,
    A_REVEAL, A_STOP, A_REPEL, A_DOCK, A_PASS, A_TAKE, A_EXPEDITION, A_CARD, NUM_ACTIONS, MAX_LEGAL,
    OPT_REQUIRE_EXPEDITION,
    pry_new_game, pry_current_player, pry_legal_actions, pry_apply, pry_sample_chance,
    pry_determinize, pry_observation_size, refresh_player, pry_tables, pry_vtable,
)

# The core's Python names (tables of names and ids), imported after the core has loaded
# the csv: the values load_tables() bound at its import.
from caribsim.port_royal._core import (
    COLOUR_NAMES, SYMBOL_NAMES, PHASE_NAMES, STEP_NAMES, OP_NAMES, RESUME_NAMES, _CATEGORIES,
    # _ABILITIES, CARD_ROWS, _read_csv, load_tables: unused here, re-exported (names of the old module)
    _ABILITIES, CARD_IDS, CARD_ROWS, EXPEDITION_IDS, _read_csv, load_tables,  # no-cython-lint
)

# The core's C tables, bound once (the csv is read once, at the core's import).
cdef const PRYTables* TABLES = pry_tables()
cdef const CardInfo* CARD = TABLES.card
cdef const int8* EXP_VARIANT = TABLES.exp_variant
cdef int8 FIVE_PLAYER_EXPEDITION = TABLES.five_player_expedition[0]
cdef const GameVTable* PORT_ROYAL_VTABLE = pry_vtable()

cimport numpy as cnp
cnp.import_array()
from caribsim._common import _check_options, _counted, _int_in, _Reader

NUM_DISTINCT_ACTIONS = NUM_ACTIONS
OPTION_REQUIRE_EXPEDITION = OPT_REQUIRE_EXPEDITION
DICT_VERSION = 1
CARD_ACTION_BASE = A_CARD
TAKE_ACTION_BASE = A_TAKE
EXPEDITION_ACTION_BASE = A_EXPEDITION
NUM_JOKER_PATTERNS = NUM_PATTERNS
OBSERVATION_SIZE = pry_observation_size()


def _action_id(action):
    return _int_in(action, "action", 0, NUM_ACTIONS - 1)


def _expedition_action_name(int e, int pat):
    cdef int k
    cdef const CardInfo* c = &CARD[EXP_VARIANT[e]]
    jokers = (pat % 3, (pat // 3) % 3, pat // 9)
    base = "fulfil " + EXPEDITION_IDS[e]
    if any(jokers[k] > c.req[k] for k in range(NUM_SYMBOLS)):
        return f"{base} pattern {pat}"              # never legal: more Jacks than symbols
    if not any(jokers):
        return base
    return base + " jack for " + "+".join(SYMBOL_NAMES[k] for k in range(NUM_SYMBOLS) for _ in range(jokers[k]))


def _action_name(action):
    """The stable readable name of action `a`."""
    cdef int a = _action_id(action)
    if a == A_REVEAL:
        return "reveal"
    if a == A_STOP:
        return "stop"
    if a == A_REPEL:
        return "repel"
    if a == A_DOCK:
        return "dock"
    if a == A_PASS:
        return "pass"
    if a < A_EXPEDITION:
        return "take " + CARD_IDS[a - A_TAKE]
    if a < A_CARD:
        return _expedition_action_name((a - A_EXPEDITION) // NUM_PATTERNS, (a - A_EXPEDITION) % NUM_PATTERNS)
    return "card " + CARD_IDS[a - A_CARD]


ACTION_NAMES = tuple(_action_name(a) for a in range(NUM_ACTIONS))
_ACTION_INDEX = {name: a for a, name in enumerate(ACTION_NAMES)}


def string_to_action(name):
    if not isinstance(name, str):
        raise TypeError(f"action name must be a str, got {type(name).__name__}")
    key = " ".join(name.lower().split())
    if key not in _ACTION_INDEX:
        raise ValueError(f"unknown action name {name!r}; see docs/port_royal.md")
    return _ACTION_INDEX[key]


cdef class PortRoyalState(GameState):
    """A Port Royal position. Made by ``PortRoyalGame.new_initial_state``.

    The whole position is one C struct; ``clone`` is a memcpy. Every method that
    takes input validates it and raises ``ValueError``/``TypeError`` without
    changing the state.
    """
    cdef PRYState s

    def __cinit__(self):
        self.vtable = PORT_ROYAL_VTABLE

    cdef void* _raw(self) noexcept:
        return &self.s

    # --- the OpenSpiel-style interface ---------------------------------------
    def chance_event(self):
        """At a chance node: (kind, seat), kind one of reveal, draw, pay, fee; else None."""
        self._ready()
        cdef int step = self.s.step
        cdef PRYOp op = self.s.queue[self.s.q_head]      # copied before any Python runs
        if step != STEP_CHANCE:
            return None
        return (OP_NAMES[op.kind], op.seat)

    # apply_action, clone and child are GameState's
    cdef GameState _blank(self):
        return PortRoyalState.__new__(PortRoyalState)

    cdef int _illegal(self, int a, const int16* buf, int n) except -1:
        legal = ", ".join(f"{buf[i]} ({ACTION_NAMES[buf[i]]})" for i in range(n))
        raise ValueError(f"action {a} ({ACTION_NAMES[a]}) is not legal at step "
                         f"{STEP_NAMES[self.s.step]!r}; legal: {legal}")

    def determinize(self, player, seed=None):
        """A copy in which everything `player` cannot see is resampled consistently with
        what is public: coin faces (his own too) and the draw pile, exchanged only among
        cards of the same reshuffle generation. ``seed`` reseeds the copy's RNG first
        (default: the copy continues this state's RNG stream)."""
        self._ready()
        cdef int seat = _check_seat(player, self.s.n_players)
        cdef PortRoyalState c = <PortRoyalState>self.clone()
        if seed is not None:
            rng_seed(&c.s.rng, <uint64>_int_in(seed, "seed", 0, 2 ** 64 - 1), 0x5EED)
        pry_determinize(&c.s, seat)
        return c

    def scores(self):
        """Per seat: VP of persons and of expeditions, total VP, coins (the tie-break), swords."""
        cdef PRYPlayer* p
        cdef int i
        cdef PRYState snap = (<PRYState*>self.c_state())[0]   # a copy: the loop below runs Python
        out = []
        for i in range(snap.n_players):
            p = &snap.players[i]
            exp_vp = sum(p.display[CARD_IDS.index(x)] * CARD[CARD_IDS.index(x)].vp for x in EXPEDITION_IDS)
            out.append({"person_vp": p.vp - exp_vp, "expedition_vp": exp_vp, "total": p.vp,
                        "expeditions": p.expeditions, "coins": p.n_coins, "swords": p.swords,
                        "tiebreak": p.n_coins})
        return out

    def phase(self):
        self._ready()
        return PHASE_NAMES[self.s.phase]

    def step_name(self):
        self._ready()
        return STEP_NAMES[self.s.step]

    def active_player(self):
        self._ready()
        return self.s.active

    def start_player(self):
        self._ready()
        return self.s.start_player

    def action_to_string(self, action):
        self._ready()
        return _action_name(action)

    def string_to_action(self, name):
        self._ready()
        if not isinstance(name, str):
            raise TypeError(f"action name must be a str, got {type(name).__name__}")
        key = " ".join(name.lower().split())
        if key in _ACTION_INDEX:
            return _ACTION_INDEX[key]
        legal = [ACTION_NAMES[a] for a in self.legal_actions()]
        raise ValueError(f"unknown action name {name!r}; legal here: {legal}")

    # --- the dict (serialize, pickling and == are GameState's, over it) ---------
    def to_dict(self):
        """The complete position as JSON-able data (see docs/port_royal.md)."""
        return _to_dict(self)

    def __str__(self):
        return _render(self)

    def __repr__(self):
        if self.game is None:
            return "<PortRoyalState (not initialised)>"
        cdef PRYState snap = self.s
        return (f"<PortRoyalState {snap.n_players}p phase={PHASE_NAMES[snap.phase]} "
                f"step={STEP_NAMES[snap.step]} player={pry_current_player(&snap)}>")


from caribsim._game import _check_seat, _restore   # no-cython-lint: _restore here too: old pickles name it here


def new_state(game, int players, int options, start_player, seed):
    """A new game: the setup of §1.3; the starting coins are chance nodes."""
    seed_value = _int_in(seed, "seed", 0, 2 ** 64 - 1)
    cdef int sp = -1 if start_player is None else _check_seat(start_player, players)
    cdef PortRoyalState st = PortRoyalState.__new__(PortRoyalState)
    pry_new_game(&st.s, players, options, sp, <uint64>seed_value)
    st.game = game
    st._hist = None
    return st


# --- the dict codec ------------------------------------------------------------

cdef dict _counts(const uint8* a):
    return {CARD_IDS[v]: a[v] for v in range(NUM_VARIANTS) if a[v]}


def _to_dict(PortRoyalState st):
    # Copy the struct and the history first, with no Python in between (a GC run or a
    # callback could let another thread move the state): the dict is built from the copy.
    cdef PRYState snap = (<PRYState*>st.c_state())[0]
    hist, hist_n = st._hist, st._hist_n
    cdef PRYState* s = &snap
    cdef PRYPlayer* p
    cdef int i, k
    players = []
    for i in range(s.n_players):
        p = &s.players[i]
        players.append({
            "coins": [CARD_IDS[p.coin_card[k]] for k in range(p.n_coins)],
            "coin_generations": [p.coin_gen[k] for k in range(p.n_coins)],
            "display": _counts(p.display),
        })
    return {
        "game": "port_royal",
        "version": DICT_VERSION,
        "options": st.game.options(),
        "phase": PHASE_NAMES[s.phase],
        "step": STEP_NAMES[s.step],
        "resume": RESUME_NAMES[s.resume],
        "start_player": s.start_player,
        "active": s.active,
        "player": s.player if s.step != STEP_TERMINAL else None,
        "takers_done": s.takers_done,
        "picks_left": s.picks_left,
        "revealed": s.revealed,
        "pending": CARD_IDS[s.pending] if s.pending >= 0 else None,
        "end_triggered": bool(s.end_triggered),
        "turns": s.turns,
        "generation": s.generation,
        "draw_pile": [CARD_IDS[s.draw[k]] for k in range(s.n_draw)],
        "discard_pile": [CARD_IDS[s.discard[k]] for k in range(s.n_discard)],
        "harbour": _counts(s.harbour),
        "expedition_area": [EXPEDITION_IDS[k] for k in range(NUM_EXPEDITIONS) if (s.expedition_area >> k) & 1],
        "box": [EXPEDITION_IDS[FIVE_PLAYER_EXPEDITION]] if s.in_box else [],
        "queue": [{"op": OP_NAMES[s.queue[k].kind], "seat": s.queue[k].seat, "count": s.queue[k].count}
                  for k in range(s.q_head, s.q_len) if s.queue[k].count > 0],
        "players": players,
        "rng": [int(s.rng.s[k]) for k in range(4)],
        "history": history_list(hist, hist_n),
    }


def _card(value, path):
    if value not in CARD_IDS:
        raise ValueError(f"{path}: unknown card {value!r}; cards are the ids of port_royal_deck.csv")
    return CARD_IDS.index(value)


cdef int _read_pile(list values, uint8* out, str path) except -1:
    cdef int k
    if len(values) > DECK_SIZE:
        raise ValueError(f"{path} has {len(values)} cards, at most {DECK_SIZE}")
    for k, value in enumerate(values):
        out[k] = _card(value, f"{path}[{k}]")
    return len(values)


cdef _read_counts(reader, key, uint8* out, allowed, what):
    r = reader.sub(key)
    for name in list(r.d):
        v = _card(name, f"{r.path}")
        if CARD[v].category not in allowed:
            raise ValueError(f"{r.path}: {name} is a {_CATEGORIES[CARD[v].category]}; only {what} can be here")
        out[v] = r.int(name, 1, CARD[v].count)
    r.done()


_STEP_PHASES = {STEP_DISCOVER: (PHASE_DISCOVER,), STEP_REPEL: (PHASE_DISCOVER,), STEP_TAKE: (PHASE_TRADE,),
                STEP_CHANCE: (PHASE_SETUP, PHASE_DISCOVER, PHASE_TRADE), STEP_TERMINAL: (PHASE_END,)}


@cython.infer_types(False)
def state_from_dict(game, d):
    """Build a validated state from ``to_dict`` data; raise ValueError/TypeError naming
    the first problem."""
    cdef PortRoyalState st = PortRoyalState.__new__(PortRoyalState)
    cdef PRYState* s = &st.s
    cdef PRYPlayer* p
    cdef int i, k, n, v
    r = _Reader(d)
    if r._get("game") != "port_royal":
        raise ValueError(f"state.game must be 'port_royal', got {d.get('game')!r}")
    r.int("version", DICT_VERSION, DICT_VERSION)
    _check_options(r._get("options"), game.options())
    memset(s, 0, sizeof(PRYState))
    opts = game.options()
    n = opts["players"]
    s.n_players = n
    s.options = OPT_REQUIRE_EXPEDITION if opts["require_expedition"] else 0
    s.in_box = n < 5
    s.phase = r.choice("phase", PHASE_NAMES)
    s.step = r.choice("step", STEP_NAMES)
    s.resume = r.choice("resume", RESUME_NAMES)
    s.start_player = r.int("start_player", 0, n - 1)
    if opts["start_player"] is not None and s.start_player != opts["start_player"]:
        raise ValueError(f"state.start_player must be {opts['start_player']} (the game's option)")
    s.active = r.int("active", 0, n - 1)
    if s.step == STEP_TERMINAL:
        if r._get("player") is not None:
            raise ValueError("state.player must be null at the end of the game")
        s.player = s.active
    else:
        s.player = r.int("player", 0, n - 1)
    s.takers_done = r.int("takers_done", 0, n - 1)
    s.picks_left = r.int("picks_left", 0, 60)
    s.revealed = r.int("revealed", 0, 127)
    s.pending = r.choice("pending", CARD_IDS, allow_none=True)
    s.end_triggered = r.bool("end_triggered")
    s.turns = r.int("turns", 0, 32767)
    s.generation = r.int("generation", 0, 255)
    s.n_draw = _read_pile(r.list("draw_pile"), s.draw, "state.draw_pile")
    s.n_discard = _read_pile(r.list("discard_pile"), s.discard, "state.discard_pile")
    _read_counts(r, "harbour", s.harbour, (CAT_SHIP, CAT_PERSON), "ships and persons")
    for v in range(NUM_VARIANTS):
        s.n_harbour += s.harbour[v]
        if s.harbour[v]:
            s.harbour_mask |= (<uint64>1) << v
        if CARD[v].category == CAT_SHIP and s.harbour[v]:
            if s.harbour[v] > 1 or (s.harbour_colours >> CARD[v].colour) & 1:
                raise ValueError(f"state.harbour: two {COLOUR_NAMES[CARD[v].colour]} ships (§5.3: "
                                 "a second ship of a colour busts the turn)")
            s.harbour_colours |= 1 << CARD[v].colour
    area = r.list("expedition_area")
    for name in area:
        if name not in EXPEDITION_IDS or area.count(name) > 1:
            raise ValueError(f"state.expedition_area must list distinct expeditions from {list(EXPEDITION_IDS)}, "
                             f"got {area!r}")
        s.expedition_area |= 1 << EXPEDITION_IDS.index(name)
    box = r.list("box")
    if box != ([EXPEDITION_IDS[FIVE_PLAYER_EXPEDITION]] if s.in_box else []):
        raise ValueError(f"state.box must be {[EXPEDITION_IDS[FIVE_PLAYER_EXPEDITION]] if s.in_box else []} "
                         f"with {n} players, got {box!r}")
    queue = r.list("queue")
    if len(queue) > MAX_OPS:
        raise ValueError(f"state.queue has {len(queue)} entries, at most {MAX_OPS}")
    for k, item in enumerate(queue):
        q = _Reader(item, f"state.queue[{k}]")
        s.queue[k].kind = q.choice("op", OP_NAMES)
        s.queue[k].seat = q.int("seat", 0, n - 1)
        s.queue[k].count = q.int("count", 1, DECK_SIZE)
        q.done()
    s.q_len = len(queue)
    boards = r.list("players")
    if len(boards) != n:
        raise ValueError(f"state.players must have {n} entries, got {len(boards)}")
    for i, b in enumerate(boards):
        pr = _Reader(b, f"state.players[{i}]")
        p = &s.players[i]
        coins = pr.list("coins")
        gens = pr.list("coin_generations")
        if len(gens) != len(coins):
            raise ValueError(f"state.players[{i}].coin_generations must have one entry per coin ({len(coins)})")
        p.n_coins = _read_pile(coins, p.coin_card, f"state.players[{i}].coins")
        for k, g in enumerate(gens):
            p.coin_gen[k] = _int_in(g, f"state.players[{i}].coin_generations[{k}]", 0, 255)
        _read_counts(pr, "display", p.display, (CAT_PERSON, CAT_EXPEDITION), "persons and expeditions")
        pr.done()
        refresh_player(p)
    rng = r.list("rng")
    if len(rng) != 4 or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 2 ** 64 for x in rng) \
            or not any(rng):
        raise ValueError("state.rng must be 4 ints in 0..2**64-1, not all 0")
    for k in range(4):
        s.rng.s[k] = rng[k]
    hist = r.list("history")
    for a in hist:
        _action_id(a)
    r.done()
    st.game = game
    set_history(st, list(hist))
    _check_consistency(st)
    return st


def _check_consistency(PortRoyalState st):
    """Conservation of the 120 cards and the invariants of the flow."""
    cdef PRYState* s = &st.s
    cdef int n = s.n_players, i, k, v
    cdef int16 buf[MAX_LEGAL]
    cdef PRYOp* op
    count = [0] * NUM_VARIANTS
    for k in range(s.n_draw):
        count[s.draw[k]] += 1
    for k in range(s.n_discard):
        count[s.discard[k]] += 1
    for v in range(NUM_VARIANTS):
        count[v] += s.harbour[v]
        for i in range(n):
            count[v] += s.players[i].display[v]
    for i in range(n):
        for k in range(s.players[i].n_coins):
            count[s.players[i].coin_card[k]] += 1
    for k in range(NUM_EXPEDITIONS):
        if (s.expedition_area >> k) & 1:
            count[EXP_VARIANT[k]] += 1
    if s.pending >= 0:
        count[s.pending] += 1
    for v in range(NUM_VARIANTS):
        expected = CARD[v].count
        if s.in_box and CARD[v].expedition == FIVE_PLAYER_EXPEDITION:
            expected = 0
            if count[v]:
                raise ValueError(f"{CARD_IDS[v]} is used only with 5 players (§1.3): it must stay in the box")
        elif CARD[v].expedition == FIVE_PLAYER_EXPEDITION and count[v] != expected:
            raise ValueError(f"{CARD_IDS[v]} has no coin side: it must be in the expedition area or a display")
        if count[v] != expected:
            raise ValueError(f"card conservation: {CARD_IDS[v]} appears {count[v]} times, the deck has {expected}")
    for k in range(s.n_draw):
        if CARD[s.draw[k]].expedition == FIVE_PLAYER_EXPEDITION:
            raise ValueError("the 5-player expedition never enters the draw pile")
    for i in range(n):
        for k in range(s.players[i].n_coins):
            if CARD[s.players[i].coin_card[k]].expedition == FIVE_PLAYER_EXPEDITION:
                raise ValueError("the 5-player expedition has no coin side")
    for k in range(s.n_discard):
        if CARD[s.discard[k]].expedition == FIVE_PLAYER_EXPEDITION:
            raise ValueError("the 5-player expedition never goes to the discard pile")
    # --- flow ---
    if s.phase not in _STEP_PHASES[s.step]:
        raise ValueError(f"step {STEP_NAMES[s.step]!r} cannot happen in phase {PHASE_NAMES[s.phase]!r}")
    if s.step in (STEP_DISCOVER, STEP_REPEL) and s.player != s.active:
        raise ValueError("in phase 1 only the active player decides: player must equal active")
    # at phase 2's chance steps too: the take-turn resumes with this player and takers_done
    if s.phase == PHASE_TRADE and s.player != (s.active + s.takers_done) % n:
        raise ValueError("phase 2: player must be the seat takers_done places after the active player")
    if s.phase != PHASE_TRADE and s.takers_done:
        raise ValueError("takers_done must be 0 outside phase 2")
    if s.step == STEP_CHANCE:
        if s.q_len == 0:
            raise ValueError("a chance step needs a non-empty queue")
        op = &s.queue[0]
        if op.kind in (OP_REVEAL, OP_DRAW) and s.n_draw == 0:
            raise ValueError("the next card move draws a card, but the draw pile is empty (a reshuffle comes first)")
        if op.kind in (OP_PAY, OP_FEE) and s.players[op.seat].n_coins == 0:
            raise ValueError(f"the next card move takes a coin of seat {op.seat}, who has none")
        for k in range(s.q_len):
            if s.queue[k].kind == OP_REVEAL and (s.q_len != 1 or s.resume != R_RESOLVE or s.queue[k].seat != s.active
                                                 or s.queue[k].count != 1):
                raise ValueError("a reveal (count 1, by the active player) is alone in the queue and resumes with "
                                 "'resolve'")
            if s.queue[k].kind == OP_FEE and s.queue[k].seat == s.active:
                raise ValueError("a fee is paid by a non-active player to the active player")
        if s.resume == R_RESOLVE and s.queue[0].kind != OP_REVEAL:
            raise ValueError("resume 'resolve' follows a reveal")
        allowed = {R_START_TURN: PHASE_SETUP, R_RESOLVE: PHASE_DISCOVER, R_DISCOVER: PHASE_DISCOVER,
                   R_TAX_DONE: PHASE_DISCOVER, R_TAKE: PHASE_TRADE, R_END_TURN: PHASE_DISCOVER}
        if allowed[s.resume] != s.phase:
            raise ValueError(f"resume {RESUME_NAMES[s.resume]!r} cannot follow in phase {PHASE_NAMES[s.phase]!r}")
    elif s.q_len:
        raise ValueError("the queue must be empty unless step is 'chance'")
    if s.step == STEP_CHANCE and s.resume == R_TAX_DONE:
        if s.pending < 0 or CARD[s.pending].category != CAT_TAX:
            raise ValueError("resume 'tax_done' needs the tax card as pending")
    elif s.step == STEP_REPEL:
        if s.pending < 0 or CARD[s.pending].category != CAT_SHIP:
            raise ValueError("step 'repel' needs a pending ship")
        if CARD[s.pending].skull or s.players[s.active].swords < CARD[s.pending].swords:
            raise ValueError("the pending ship cannot be repelled (skull or too few swords): it docks")
    elif s.pending >= 0:
        raise ValueError("pending must be null unless a ship awaits repel/dock or a tax card is resolved")
    if s.step in (STEP_DISCOVER, STEP_TAKE, STEP_REPEL) and pry_legal_actions(s, buf) < 1:
        raise ValueError(f"no action is legal at step {STEP_NAMES[s.step]!r}: the state is inconsistent")
    if s.step == STEP_TERMINAL and s.q_len:
        raise ValueError("the queue must be empty at the end")


# --- a readable board ------------------------------------------------------------

def _render(PortRoyalState st):
    cdef PRYPlayer* p
    st = st.clone()          # one position throughout, whatever other threads do
    d = _to_dict(st)
    n = d["options"]["players"]
    cur = pry_current_player(&st.s)
    who = {PLAYER_CHANCE: "chance", PLAYER_TERMINAL: "game over"}.get(cur, f"seat {cur}")

    def fmt(c):
        return ", ".join(f"{k}" + (f" x{v}" if v > 1 else "") for k, v in c.items()) or "empty"

    lines = [f"Port Royal, {n} players | phase {d['phase']}, step {d['step']} | start: seat "
             f"{d['start_player']} | active: seat {d['active']} | to act: {who} | turn {d['turns']}"
             + (" | END TRIGGERED" if d["end_triggered"] else "")]
    if st.s.step == STEP_CHANCE:
        ev = st.chance_event()
        lines.append(f"Chance: {ev[0]} (seat {ev[1]})")
    lines.append(f"Draw pile {len(d['draw_pile'])} | discard pile {len(d['discard_pile'])} | "
                 f"revealed this turn {d['revealed']}" + (f" | pending: {d['pending']}" if d["pending"] else ""))
    lines.append("Harbour: " + fmt(d["harbour"]))
    lines.append("Expeditions: " + (", ".join(d["expedition_area"]) or "none"))
    for i, b in enumerate(d["players"]):
        p = &st.s.players[i]
        marks = ("S" if i == d["start_player"] else " ") + (">" if i == cur else " ")
        lines.append(f"{marks}seat {i}: {_counted(p.n_coins, 'coin', 'coins')} | {p.vp} VP | "
                     f"{_counted(p.swords, 'sword', 'swords')} | "
                     f"display: {fmt(b['display'])}")
    return "\n".join(lines)


# --- audited random games (property tests) ------------------------------------------

cdef int _audit(const PRYState* s) noexcept nogil:
    """0 if the position is sound, else a code naming the first broken invariant:
    1 card conservation, 2 derived player counts, 3 harbour bookkeeping, 4 two ships of
    one colour, 5 queue/step, 6 pending card, 7 a decision without a legal action."""
    cdef int32 count[NUM_VARIANTS]
    cdef int i, k, v, expected, n_h = 0
    cdef uint64 mask = 0
    cdef uint8 colours = 0
    cdef PRYPlayer q
    cdef int16 buf[MAX_LEGAL]
    memset(count, 0, sizeof(count))
    for k in range(s.n_draw):
        count[s.draw[k]] += 1
    for k in range(s.n_discard):
        count[s.discard[k]] += 1
    for i in range(s.n_players):
        for k in range(s.players[i].n_coins):
            count[s.players[i].coin_card[k]] += 1
        for v in range(NUM_VARIANTS):
            count[v] += s.players[i].display[v]
    for v in range(NUM_VARIANTS):
        count[v] += s.harbour[v]
        n_h += s.harbour[v]
        if s.harbour[v]:
            mask |= (<uint64>1) << v
            if CARD[v].category == CAT_SHIP:
                if s.harbour[v] > 1 or (colours >> CARD[v].colour) & 1:
                    return 4
                colours |= 1 << CARD[v].colour
    for k in range(NUM_EXPEDITIONS):
        if (s.expedition_area >> k) & 1:
            count[EXP_VARIANT[k]] += 1
    if s.pending >= 0:
        count[s.pending] += 1
    for v in range(NUM_VARIANTS):
        expected = CARD[v].count
        if s.in_box and CARD[v].expedition == FIVE_PLAYER_EXPEDITION:
            expected = 0
        if count[v] != expected:
            return 1
    for i in range(s.n_players):
        memcpy(&q, &s.players[i], sizeof(PRYPlayer))
        refresh_player(&q)
        if (q.vp != s.players[i].vp or q.swords != s.players[i].swords or q.jacks != s.players[i].jacks
                or q.governors != s.players[i].governors or q.admirals != s.players[i].admirals
                or q.jesters != s.players[i].jesters or q.mademoiselles != s.players[i].mademoiselles
                or q.expeditions != s.players[i].expeditions or q.fulfils != s.players[i].fulfils
                or memcmp(q.symbols, s.players[i].symbols, sizeof(q.symbols)) != 0
                or memcmp(q.traders, s.players[i].traders, sizeof(q.traders)) != 0):
            return 2
    if n_h != s.n_harbour or mask != s.harbour_mask or colours != s.harbour_colours:
        return 3
    if (s.step == STEP_CHANCE) != (s.q_head < s.q_len):
        return 5
    if s.step == STEP_FLOW:
        return 5
    if (s.step == STEP_REPEL or (s.step == STEP_CHANCE and s.resume == R_TAX_DONE)) != (s.pending >= 0):
        return 6
    if s.step <= STEP_TAKE and pry_legal_actions(s, buf) == 0:
        return 7
    return 0


def _audited_random_games(PortRoyalState st, int n_games, uint64 seed, int max_steps=100000):
    """Play `n_games` uniformly random games from `st` in C, auditing the position after every
    step (decision or chance). Returns (games ended, total steps, longest game in steps,
    list of (game, step, code) violations, first 10 at most)."""
    cdef PRYState s
    cdef int16 legal[MAX_LEGAL]
    cdef int g, n, code, steps, ended = 0, longest = 0
    cdef long total = 0
    bad = []
    for g in range(n_games):
        memcpy(&s, &st.s, sizeof(PRYState))
        rng_seed(&s.rng, seed, <uint64>g + 1)
        steps = 0
        while s.step != STEP_TERMINAL and steps < max_steps:
            if s.step == STEP_CHANCE:
                pry_apply(&s, pry_sample_chance(&s))
            else:
                n = pry_legal_actions(&s, legal)
                if n == 0:
                    break
                pry_apply(&s, legal[rng_below(&s.rng, n)])
            steps += 1
            code = _audit(&s)
            if code and len(bad) < 10:
                bad.append((g, steps, code))
        ended += s.step == STEP_TERMINAL
        total += steps
        longest = steps if steps > longest else longest
    return ended, total, longest, bad
