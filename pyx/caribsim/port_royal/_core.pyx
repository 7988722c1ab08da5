# cython: language_level=3, preliminary_late_includes_cy28=True
"""Port Royal core (module ``caribsim.port_royal._core``): rules in C (nogil) over one
PRYState struct.

What lives here: the card table (C arrays filled from data/port_royal_deck.csv at import,
and the Python tuples of names and ids made with them), all the nogil rules, chance,
scoring, determinization, observation, the random and heuristic playouts, the static
evaluation and the game's GameVTable. The Python state class, action names, the dict
codec and rendering are in ``caribsim.port_royal._state``, which cimports this module
(``_core.pxd``); the C tables and the vtable reach it through ``pry_tables()`` and
``pry_vtable()``.

May import: the C helpers of caribsim (``_types``, ``_rng``, ``_game``) and the standard
library (to read the csv); never ``_state`` or anything above the game (no numpy, no search).

Layout of this file:
  1. the card table, read from data/port_royal_deck.csv at import
  2. small queries (abilities, expeditions) and card moves
  3. the flow of a turn: each step ends at a decision, a chance event or the end
  4. legal actions and apply (one atomic decision per action)
  5. chance, scoring, determinization, observation, playouts, the C game interface

Hidden information (rules E.1): coin faces are hidden from everyone and the draw
pile order from everyone. The engine keeps the draw pile as a multiset; every
card that leaves it (a reveal or a coin draw) is a chance event whose outcome is
the card variant, weighted by the pile's counts. Every coin that leaves a hand
(paid to the discard pile, or the 1-coin fee to the active player) is a chance
event weighted by the payer's coins. Coins remember the reshuffle generation of
the pile they came from, so that determinize() redistributes unseen cards only
among cards of the same origin (E.1: "sample them from the pre-reshuffle unseen set").
"""
from libc.string cimport memset, memcpy, memchr
from caribsim._types cimport int8, int16, int32, uint8, uint64, popcount64, ctz64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport Rng, rng_seed, rng_below, rng_next
from caribsim._game cimport GameVTable, split_win

# ---------------------------------------------------------------------------
# 1. The card table (filled by load_tables() at import, read-only after)
# ---------------------------------------------------------------------------

# CardInfo is declared in _core.pxd (with PRYTables, the view of these arrays that
# pry_tables() gives other modules).
cdef CardInfo CARD[NUM_VARIANTS]
cdef int8 EXP_VARIANT[NUM_EXPEDITIONS]
cdef int8 SYMBOL_VARIANT[NUM_SYMBOLS]           # the Captain, Priest, Settler variants
cdef int8 JACK_VARIANT
cdef int8 FIVE_PLAYER_EXPEDITION                # expedition index used only with 5 players
cdef int8 EXP_NPAT[NUM_EXPEDITIONS]
cdef int8 EXP_PAT[NUM_EXPEDITIONS][NUM_PATTERNS]   # joker patterns within each requirement
# EXP_NEED[e][k]: what pattern EXP_PAT[e][k] asks of a player: Jacks, then anchors, crosses,
# houses left to show (the requirement less the Jacks standing for them)
cdef int8 EXP_NEED[NUM_EXPEDITIONS][NUM_PATTERNS][4]

COLOUR_NAMES = ("yellow", "blue", "green", "red", "black")
SYMBOL_NAMES = ("anchor", "cross", "house")
PHASE_NAMES = ("setup", "discover", "trade", "end")
STEP_NAMES = ("discover", "repel", "take", "chance", "terminal")
OP_NAMES = ("reveal", "draw", "pay", "fee")
RESUME_NAMES = ("start_turn", "resolve", "discover", "tax_done", "take", "end_turn")
_CATEGORIES = ("ship", "person", "expedition", "tax")
_ABILITIES = ("SHIP", "TRADER", "SETTLER", "CAPTAIN", "PRIEST", "JACK_OF_ALL_TRADES", "SAILOR",
              "PIRATE", "MADEMOISELLE", "JESTER", "ADMIRAL", "GOVERNOR", "EXPEDITION",
              "TAX_MOST_SWORDS", "TAX_FEWEST_VP")
CARD_IDS = ()               # every variant id, in csv order (filled by load_tables)
CARD_ROWS = ()              # the csv rows as dicts
EXPEDITION_IDS = ()


def _read_csv(name):
    import csv, io
    from importlib.resources import files
    text = files("caribsim").joinpath("data", name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def load_tables():
    """Turn port_royal_deck.csv into the C tables. Runs once, at import."""
    global CARD_IDS, CARD_ROWS, EXPEDITION_IDS, JACK_VARIANT, FIVE_PLAYER_EXPEDITION
    cdef int v, e, k, ja, jc, jh
    rows = _read_csv("port_royal_deck.csv")
    if len(rows) != NUM_VARIANTS:
        raise RuntimeError(f"port_royal_deck.csv: expected {NUM_VARIANTS} rows, found {len(rows)}")
    if sum(int(r["count"]) for r in rows) != DECK_SIZE:
        raise RuntimeError(f"port_royal_deck.csv: the counts must add up to {DECK_SIZE} cards")
    e = 0
    JACK_VARIANT = -1
    FIVE_PLAYER_EXPEDITION = -1
    for k in range(NUM_SYMBOLS):
        SYMBOL_VARIANT[k] = -1
    for v, row in enumerate(rows):
        c = &CARD[v]
        c.category = _CATEGORIES.index(row["category"])
        c.colour = COLOUR_NAMES.index(row["colour"]) if row["colour"] else -1
        c.swords = int(row["swords"])
        c.skull = int(row["skull"])
        c.coins = int(row["coins"])
        c.cost = int(row["cost"])
        c.vp = int(row["vp"])
        c.ability = _ABILITIES.index(row["ability"])
        c.count = int(row["count"])
        c.min_players = int(row["min_players"])
        c.symbol = -1
        c.expedition = -1
        for k in range(NUM_SYMBOLS):
            c.req[k] = 0
        if c.category == CAT_PERSON and row["symbol"]:
            if row["symbol"] == "any":
                c.symbol = 3
                JACK_VARIANT = v
            else:
                c.symbol = SYMBOL_NAMES.index(row["symbol"])
                if SYMBOL_VARIANT[c.symbol] >= 0:
                    raise RuntimeError("port_royal_deck.csv: one person variant per symbol expected")
                SYMBOL_VARIANT[c.symbol] = v
        if c.category == CAT_EXPEDITION:
            for name in row["symbol"].split("+"):
                c.req[SYMBOL_NAMES.index(name)] += 1
            c.expedition = e
            EXP_VARIANT[e] = v
            if c.min_players == 5:
                FIVE_PLAYER_EXPEDITION = e
            e += 1
        if c.category == CAT_SHIP and c.colour < 0:
            raise RuntimeError(f"port_royal_deck.csv: ship {row['id']} has no colour")
    if e != NUM_EXPEDITIONS or JACK_VARIANT < 0 or min(SYMBOL_VARIANT[k] for k in range(3)) < 0:
        raise RuntimeError("port_royal_deck.csv: expected 6 expeditions, a Jack and one person per symbol")
    for e in range(NUM_EXPEDITIONS):
        EXP_NPAT[e] = 0
        c = &CARD[EXP_VARIANT[e]]
        for k in range(NUM_PATTERNS):
            ja, jc, jh = k % 3, (k // 3) % 3, k // 9
            if ja <= c.req[ANCHOR] and jc <= c.req[CROSS] and jh <= c.req[HOUSE]:
                EXP_PAT[e][EXP_NPAT[e]] = k
                EXP_NEED[e][EXP_NPAT[e]][0] = ja + jc + jh
                EXP_NEED[e][EXP_NPAT[e]][1] = c.req[ANCHOR] - ja
                EXP_NEED[e][EXP_NPAT[e]][2] = c.req[CROSS] - jc
                EXP_NEED[e][EXP_NPAT[e]][3] = c.req[HOUSE] - jh
                EXP_NPAT[e] += 1
    CARD_IDS = tuple(r["id"] for r in rows)
    CARD_ROWS = tuple(rows)
    EXPEDITION_IDS = tuple(CARD_IDS[EXP_VARIANT[e]] for e in range(NUM_EXPEDITIONS))


load_tables()

# The tables seen from other modules (module-level C variables cannot be cimported):
# pointers to the arrays above, so they are valid whenever the module is loaded.
cdef PRYTables TABLES
TABLES.card = CARD
TABLES.exp_variant = EXP_VARIANT
TABLES.symbol_variant = SYMBOL_VARIANT
TABLES.jack_variant = &JACK_VARIANT
TABLES.five_player_expedition = &FIVE_PLAYER_EXPEDITION
TABLES.exp_npat = EXP_NPAT
TABLES.exp_pat = &EXP_PAT[0][0]


cdef const PRYTables* pry_tables() noexcept nogil:
    return &TABLES

# ---------------------------------------------------------------------------
# 2. Queries and card moves
# ---------------------------------------------------------------------------

cdef inline int next_seat(const PRYState* s, int seat) noexcept nogil:
    return seat + 1 if seat + 1 < s.n_players else 0


cdef void set_fulfils(PRYPlayer* p) noexcept nogil:
    """p.fulfils from the symbols and Jacks: which expeditions some joker pattern meets."""
    cdef int e, k
    p.fulfils = 0
    for e in range(NUM_EXPEDITIONS):
        for k in range(EXP_NPAT[e]):
            if pattern_ok(p, e, k):
                p.fulfils |= 1 << e
                break


cdef void refresh_player(PRYPlayer* p) noexcept nogil:
    """Recompute the derived counts (VP, swords, abilities) from the display."""
    cdef int v, c, ab
    p.vp = 0
    p.swords = 0
    p.expeditions = 0
    p.jacks = 0
    p.mademoiselles = 0
    p.jesters = 0
    p.admirals = 0
    p.governors = 0
    memset(p.symbols, 0, sizeof(p.symbols))
    memset(p.traders, 0, sizeof(p.traders))
    for v in range(NUM_VARIANTS):
        c = p.display[v]
        if c == 0:
            continue
        p.vp += c * CARD[v].vp
        ab = CARD[v].ability
        if ab == AB_EXPEDITION:
            p.expeditions += c
        elif ab == AB_TRADER:
            p.traders[CARD[v].colour] += c
        elif ab == AB_SETTLER or ab == AB_CAPTAIN or ab == AB_PRIEST:
            p.symbols[CARD[v].symbol] += c
        elif ab == AB_JACK:
            p.jacks += c
        elif ab == AB_SAILOR or ab == AB_PIRATE:
            p.swords += c * CARD[v].swords
        elif ab == AB_MADEMOISELLE:
            p.mademoiselles += c
        elif ab == AB_JESTER:
            p.jesters += c
        elif ab == AB_ADMIRAL:
            p.admirals += c
        elif ab == AB_GOVERNOR:
            p.governors += c
    set_fulfils(p)


cdef void add_display(PRYPlayer* p, int v, int d) noexcept nogil:
    """Put d (+1 or -1) cards of variant v into / out of the display, keeping the derived counts."""
    cdef int ab = CARD[v].ability
    p.display[v] += d
    p.vp += d * CARD[v].vp
    if ab == AB_EXPEDITION:
        p.expeditions += d
    elif ab == AB_TRADER:
        p.traders[CARD[v].colour] += d
    elif ab == AB_SETTLER or ab == AB_CAPTAIN or ab == AB_PRIEST:
        p.symbols[CARD[v].symbol] += d
        set_fulfils(p)
    elif ab == AB_JACK:
        p.jacks += d
        set_fulfils(p)
    elif ab == AB_SAILOR or ab == AB_PIRATE:
        p.swords += d * CARD[v].swords
    elif ab == AB_MADEMOISELLE:
        p.mademoiselles += d
    elif ab == AB_JESTER:
        p.jesters += d
    elif ab == AB_ADMIRAL:
        p.admirals += d
    elif ab == AB_GOVERNOR:
        p.governors += d


cdef inline int hire_cost(const PRYPlayer* p, int v) noexcept nogil:
    """§7.5: printed cost minus one per Mademoiselle, not below 0."""
    cdef int c = CARD[v].cost - p.mademoiselles
    return c if c > 0 else 0


cdef inline bint can_take(const PRYState* s, int seat, int v) noexcept nogil:
    """A harbour card `seat` may take now (ships always; persons if he can pay, §7.6)."""
    cdef const PRYPlayer* p = &s.players[seat]
    if CARD[v].category == CAT_SHIP:
        return True
    return p.n_coins >= hire_cost(p, v) + (0 if seat == s.active else 1)


cdef bint any_take(const PRYState* s, int seat) noexcept nogil:
    cdef int v
    if s.n_harbour == 0:
        return False
    cdef uint64 m = s.harbour_mask
    if s.harbour_colours:
        return True
    while m:
        v = ctz64(m)
        m &= m - 1
        if can_take(s, seat, v):
            return True
    return False


cdef inline bint pattern_ok(const PRYPlayer* p, int e, int k) noexcept nogil:
    """Can `p` fulfil expedition e with Jacks standing for the symbols of its k-th pattern
    (EXP_PAT[e][k])? (Branch-free over the table: which symbols he has is unpredictable.)"""
    cdef const int8* need = EXP_NEED[e][k]
    return ((need[0] <= p.jacks) & (need[1] <= p.symbols[ANCHOR]) & (need[2] <= p.symbols[CROSS])
            & (need[3] <= p.symbols[HOUSE]))


cdef int expedition_options(const PRYState* s, int seat, int16* out) noexcept nogil:
    """Fulfil actions open to `seat` (only the active player may fulfil, §6); with
    out == NULL, 1 if there is any."""
    cdef const PRYPlayer* p = &s.players[seat]
    cdef int e, k, n = 0
    cdef uint8 m = s.expedition_area & p.fulfils
    if seat != s.active or m == 0:
        return 0
    if out == NULL:
        return 1
    while m:
        e = ctz64(m)
        m &= m - 1
        for k in range(EXP_NPAT[e]):
            if pattern_ok(p, e, k):
                out[n] = A_EXPEDITION + e * NUM_PATTERNS + EXP_PAT[e][k]
                n += 1
    return n


cdef inline void push(PRYState* s, int kind, int seat, int count) noexcept nogil:
    cdef PRYOp* op
    if count <= 0:
        return
    op = &s.queue[s.q_len]
    op.kind = kind
    op.seat = seat
    op.count = count
    s.q_len += 1


cdef inline int find_card(const uint8* pile, int n, int v) noexcept nogil:
    """The first index of variant v in pile[:n] (it must be there). (glibc's memchr: an
    inline search 8 cards at a time measured slower.)"""
    return <int>(<const uint8*>memchr(pile, v, n) - pile)


cdef inline void remove_card(uint8* pile, uint8* n, int v) noexcept nogil:
    """Take one card of variant v out of an unordered pile (it must be there): its first
    copy is replaced by the last card."""
    cdef int i = find_card(pile, n[0], v)
    n[0] -= 1
    pile[i] = pile[n[0]]


cdef inline void to_discard(PRYState* s, int v) noexcept nogil:
    s.discard[s.n_discard] = v
    s.n_discard += 1


cdef void reshuffle(PRYState* s) noexcept nogil:
    """§2.5: the discard pile becomes the new draw pile (order is not stored)."""
    memcpy(s.draw, s.discard, s.n_discard)
    s.n_draw = s.n_discard
    s.n_discard = 0
    s.generation += 1


cdef void check_end(PRYState* s, int seat) noexcept nogil:
    """§9: 12 VP (and, in the variant, an expedition) triggers the end; it stands (OPEN-PR-7)."""
    cdef const PRYPlayer* p = &s.players[seat]
    if p.vp >= WIN_VP and (not (s.options & OPT_REQUIRE_EXPEDITION) or p.expeditions > 0):
        s.end_triggered = 1


cdef inline void cont(PRYState* s, int resume) noexcept nogil:
    s.resume = resume
    s.step = STEP_FLOW

# ---------------------------------------------------------------------------
# 3. The flow. Flow functions either leave `step` at a decision (or the end),
#    or set step = STEP_FLOW with a continuation (and maybe queued card moves);
#    run() then plays the queue (stopping at each chance event) and continues.
# ---------------------------------------------------------------------------

cdef int pry_new_game(PRYState* s, int n_players, int options, int start_player, uint64 seed) except -1 nogil:
    """§1.3 setup. The starting coins are chance events (3 per player, from seat 0)."""
    cdef int v, _, i
    memset(s, 0, sizeof(PRYState))
    s.n_players = n_players
    s.options = options
    rng_seed(&s.rng, seed, 0)
    s.start_player = start_player if start_player >= 0 else <int>rng_below(&s.rng, n_players)
    s.pending = -1
    s.in_box = n_players < 5
    for v in range(NUM_VARIANTS):
        if CARD[v].expedition == FIVE_PLAYER_EXPEDITION:
            if n_players >= 5:
                s.expedition_area |= 1 << FIVE_PLAYER_EXPEDITION
            continue
        for _ in range(CARD[v].count):
            s.draw[s.n_draw] = v
            s.n_draw += 1
    s.phase = PHASE_SETUP
    s.active = s.start_player
    s.player = s.start_player
    for i in range(n_players):
        push(s, OP_DRAW, i, 3)
    cont(s, R_START_TURN)
    run(s)
    return 0


cdef void run(PRYState* s) noexcept nogil:
    cdef PRYOp* op
    while s.step == STEP_FLOW:
        if s.q_head < s.q_len:
            op = &s.queue[s.q_head]
            if op.count <= 0:
                s.q_head += 1
                continue
            if op.kind == OP_REVEAL or op.kind == OP_DRAW:
                if s.n_draw == 0:
                    if s.n_discard == 0:        # OPEN-PR-1: nothing to draw, fewer coins
                        s.q_head += 1
                        continue
                    reshuffle(s)
            elif s.players[op.seat].n_coins == 0:
                s.q_head += 1                   # cannot happen: payments are checked first
                continue
            s.step = STEP_CHANCE
            return
        s.q_head = 0
        s.q_len = 0
        dispatch(s)


cdef void dispatch(PRYState* s) noexcept nogil:
    cdef int r = s.resume
    if r == R_START_TURN:
        start_turn(s)
    elif r == R_RESOLVE:
        resolve(s)
    elif r == R_DISCOVER:
        discover_decision(s)
    elif r == R_TAX_DONE:
        to_discard(s, s.pending)
        s.pending = -1
        discover_decision(s)
    elif r == R_TAKE:
        take_decision(s)
    else:
        end_turn(s)


cdef bint frozen(const PRYState* s) noexcept nogil:
    """Ruling (deadlock): no card can be drawn and nobody can fulfil an expedition, so
    nothing can ever change again."""
    cdef int i
    if s.n_draw or s.n_discard:
        return False
    for i in range(s.n_players):
        if s.expedition_area and expedition_options_any(s, i):
            return False
    return True


cdef inline bint expedition_options_any(const PRYState* s, int seat) noexcept nogil:
    """Could `seat` fulfil an expedition lying out, were it his turn?"""
    return (s.expedition_area & s.players[seat].fulfils) != 0


cdef void start_turn(PRYState* s) noexcept nogil:
    s.phase = PHASE_DISCOVER
    s.revealed = 0
    s.takers_done = 0
    s.picks_left = 0
    s.player = s.active
    if s.turns < 32767:
        s.turns += 1
    if frozen(s):
        s.phase = PHASE_END
        s.step = STEP_TERMINAL
        return
    discover_decision(s)


cdef void discover_decision(PRYState* s) noexcept nogil:
    """§5.1: reveal or stop; the first reveal is compulsory, and with both piles empty
    stopping is forced (OPEN-PR-1). A single possible choice is played automatically."""
    cdef bint can_reveal = s.n_draw + s.n_discard > 0
    cdef bint can_stop = s.revealed > 0 or not can_reveal
    s.phase = PHASE_DISCOVER
    s.player = s.active
    if expedition_options(s, s.active, NULL) == 0:
        if not can_stop:
            push(s, OP_REVEAL, s.active, 1)
            cont(s, R_RESOLVE)
            return
        if not can_reveal:
            go_trade(s)
            return
    s.step = STEP_DISCOVER


cdef void resolve(PRYState* s) noexcept nogil:
    """§5.2-§5.5: the revealed card by type."""
    cdef int v = s.pending
    cdef const CardInfo* c = &CARD[v]
    if c.category == CAT_PERSON:
        s.harbour[v] += 1
        s.harbour_mask |= (<uint64>1) << v
        s.n_harbour += 1
        s.pending = -1
        discover_decision(s)
    elif c.category == CAT_SHIP:
        if c.skull or s.players[s.active].swords < c.swords:
            dock(s)
        else:
            s.player = s.active
            s.step = STEP_REPEL
    elif c.category == CAT_EXPEDITION:
        s.expedition_area |= 1 << c.expedition
        s.pending = -1
        discover_decision(s)
    else:
        tax(s)


cdef void dock(PRYState* s) noexcept nogil:
    cdef int v = s.pending
    cdef int colour = CARD[v].colour
    if (s.harbour_colours >> colour) & 1:
        bust(s)
        return
    s.harbour[v] += 1
    s.harbour_mask |= (<uint64>1) << v
    s.n_harbour += 1
    s.harbour_colours |= 1 << colour
    s.pending = -1
    discover_decision(s)


cdef void clear_harbour(PRYState* s) noexcept nogil:
    cdef int v, _
    cdef uint64 m = s.harbour_mask
    while m:
        v = ctz64(m)
        m &= m - 1
        for _ in range(s.harbour[v]):
            to_discard(s, v)
        s.harbour[v] = 0
    s.harbour_mask = 0
    s.n_harbour = 0
    s.harbour_colours = 0


cdef void bust(PRYState* s) noexcept nogil:
    """§5.7: the harbour (and the ship that busted it) to the discard pile; every
    Jester owner +1 coin per Jester; no phase 2."""
    cdef int _, seat = s.active
    to_discard(s, s.pending)
    s.pending = -1
    clear_harbour(s)
    for _ in range(s.n_players):
        push(s, OP_DRAW, seat, s.players[seat].jesters)
        seat = next_seat(s, seat)
    cont(s, R_END_TURN)


cdef void tax(PRYState* s) noexcept nogil:
    """§5.5 (OPEN-PR-3): halve every hand of 12+ coins, then +1 coin to every player tied
    for the most swords / the fewest VP; the card is discarded afterwards (R_TAX_DONE)."""
    cdef int i, _, seat, best
    cdef bint swords = CARD[s.pending].ability == AB_TAX_MOST_SWORDS
    seat = s.active
    for _ in range(s.n_players):
        if s.players[seat].n_coins >= TAX_THRESHOLD:
            push(s, OP_PAY, seat, s.players[seat].n_coins // 2)
        seat = next_seat(s, seat)
    best = s.players[0].swords if swords else s.players[0].vp
    for i in range(1, s.n_players):
        if swords and s.players[i].swords > best:
            best = s.players[i].swords
        elif not swords and s.players[i].vp < best:
            best = s.players[i].vp
    seat = s.active
    for _ in range(s.n_players):
        if (s.players[seat].swords if swords else s.players[seat].vp) == best:
            push(s, OP_DRAW, seat, CARD[s.pending].coins)
        seat = next_seat(s, seat)
    cont(s, R_TAX_DONE)


cdef void go_trade(PRYState* s) noexcept nogil:
    """§7.1: the active player's allowance: 1 (0-3 colours), 2 (4), 3 (5), +1 per Governor."""
    cdef int colours = popcount64(s.harbour_colours)
    s.phase = PHASE_TRADE
    s.takers_done = 0
    begin_take(s, s.active, (1 if colours <= 3 else colours - 2) + s.players[s.active].governors)


cdef void begin_take(PRYState* s, int seat, int picks) noexcept nogil:
    """§7.2: Admiral (harbour of 5+ cards: +2 per Admiral), Jester (non-active, empty harbour)."""
    cdef const PRYPlayer* p = &s.players[seat]
    s.player = seat
    s.picks_left = picks
    if s.n_harbour >= 5:
        push(s, OP_DRAW, seat, 2 * p.admirals)
    if seat != s.active and s.n_harbour == 0:
        push(s, OP_DRAW, seat, p.jesters)
    cont(s, R_TAKE)


cdef void take_decision(PRYState* s) noexcept nogil:
    """A decision if `player` can take a card, or (active) fulfil an expedition; else his
    take-turn ends (a pass-only decision is skipped)."""
    if (s.picks_left > 0 and any_take(s, s.player)) or expedition_options(s, s.player, NULL):
        s.step = STEP_TAKE
        return
    end_take(s)


cdef void end_take(PRYState* s) noexcept nogil:
    """§7.6/§7.7: the next player's take-turn, or the end of phase 2."""
    s.takers_done += 1
    if s.takers_done >= s.n_players:
        clear_harbour(s)
        end_turn(s)
        return
    begin_take(s, next_seat(s, s.player), 1 + s.players[next_seat(s, s.player)].governors)


cdef void end_turn(PRYState* s) noexcept nogil:
    """§9.1: after the turn of the start player's right neighbour a triggered end ends the game."""
    s.picks_left = 0
    s.takers_done = 0
    if s.end_triggered and next_seat(s, s.active) == s.start_player:
        s.phase = PHASE_END
        s.step = STEP_TERMINAL
        return
    s.active = next_seat(s, s.active)
    start_turn(s)


cdef void fulfil(PRYState* s, int e, int pat) noexcept nogil:
    """§6: discard one person per symbol (Jacks stand for the symbols of `pat`), take the
    expedition into the display, receive its coins."""
    cdef PRYPlayer* p = &s.players[s.active]
    cdef int v = EXP_VARIANT[e]
    cdef int k, _
    cdef int jokers[NUM_SYMBOLS]
    jokers[ANCHOR] = pat % 3
    jokers[CROSS] = (pat // 3) % 3
    jokers[HOUSE] = pat // 9
    for k in range(NUM_SYMBOLS):
        for _ in range(CARD[v].req[k] - jokers[k]):
            add_display(p, SYMBOL_VARIANT[k], -1)
            to_discard(s, SYMBOL_VARIANT[k])
        for _ in range(jokers[k]):
            add_display(p, JACK_VARIANT, -1)
            to_discard(s, JACK_VARIANT)
    s.expedition_area &= ~(1 << e)
    add_display(p, v, 1)
    check_end(s, s.active)
    push(s, OP_DRAW, s.active, CARD[v].coins)


cdef void take(PRYState* s, int v) noexcept nogil:
    """§7.3-§7.6: trade a ship or hire a person; a non-active player pays the active 1 coin."""
    cdef int seat = s.player
    cdef PRYPlayer* p = &s.players[seat]
    cdef int cost
    s.harbour[v] -= 1
    if s.harbour[v] == 0:
        s.harbour_mask &= ~((<uint64>1) << v)
    s.n_harbour -= 1
    if CARD[v].category == CAT_SHIP:
        s.harbour_colours &= ~(1 << CARD[v].colour)
        to_discard(s, v)
        push(s, OP_DRAW, seat, CARD[v].coins + p.traders[CARD[v].colour])
    else:
        cost = hire_cost(p, v)
        push(s, OP_PAY, seat, cost)
        add_display(p, v, 1)
        if CARD[v].ability == AB_GOVERNOR:
            s.picks_left += 1               # Ruling: a Governor hired now adds a card at once
        check_end(s, seat)
    if seat != s.active:
        push(s, OP_FEE, seat, 1)
    s.picks_left -= 1

# ---------------------------------------------------------------------------
# 4. Legal actions (sorted ids) and apply
# ---------------------------------------------------------------------------

cdef int pry_current_player(const PRYState* s) noexcept nogil:
    if s.step == STEP_TERMINAL:
        return PLAYER_TERMINAL
    if s.step == STEP_CHANCE:
        return PLAYER_CHANCE
    return s.player


cdef int pry_legal_actions(const PRYState* s, int16* out) noexcept nogil:
    cdef int n = 0, v
    cdef uint64 m
    cdef int32 w[NUM_VARIANTS]
    cdef bint can_reveal
    if s.step == STEP_DISCOVER:
        can_reveal = s.n_draw + s.n_discard > 0
        if can_reveal:
            out[n] = A_REVEAL
            n += 1
        if s.revealed > 0 or not can_reveal:
            out[n] = A_STOP
            n += 1
        n += expedition_options(s, s.active, out + n)
    elif s.step == STEP_REPEL:
        out[0] = A_REPEL
        out[1] = A_DOCK
        n = 2
    elif s.step == STEP_TAKE:
        out[0] = A_PASS
        n = 1
        m = s.harbour_mask if s.picks_left > 0 else 0
        while m:
            v = ctz64(m)
            m &= m - 1
            if can_take(s, s.player, v):
                out[n] = A_TAKE + v
                n += 1
        n += expedition_options(s, s.player, out + n)
    elif s.step == STEP_CHANCE:
        n = pry_chance_outcomes(s, out, w)
    return n


cdef void pry_apply(PRYState* s, int a) noexcept nogil:
    """Apply a legal action (a decision, or the chance outcome A_CARD + variant)."""
    cdef int step = s.step, e
    if step == STEP_CHANCE:
        rng_next(&s.rng)                     # every chance event advances the RNG by one step
        apply_card(s, a - A_CARD)
        s.step = STEP_FLOW
    elif a >= A_EXPEDITION:
        e = (a - A_EXPEDITION) // NUM_PATTERNS
        fulfil(s, e, (a - A_EXPEDITION) % NUM_PATTERNS)
        cont(s, R_DISCOVER if step == STEP_DISCOVER else R_TAKE)
    elif a == A_REVEAL:
        push(s, OP_REVEAL, s.active, 1)
        cont(s, R_RESOLVE)
    elif a == A_STOP:
        go_trade(s)
    elif a == A_REPEL:
        to_discard(s, s.pending)
        s.pending = -1
        discover_decision(s)
    elif a == A_DOCK:
        dock(s)
    elif a == A_PASS:
        end_take(s)
    else:
        take(s, a - A_TAKE)
        cont(s, R_TAKE)
    run(s)


cdef void apply_card(PRYState* s, int v) noexcept nogil:
    """The head card move of the queue, with the card variant the chance event gave."""
    cdef PRYOp* op = &s.queue[s.q_head]
    cdef PRYPlayer* p = &s.players[op.seat]
    cdef PRYPlayer* q
    cdef int i, gen
    op.count -= 1
    if op.kind == OP_REVEAL:
        remove_card(s.draw, &s.n_draw, v)
        s.pending = v
        if s.revealed < 127:                   # only "any card revealed yet?" matters
            s.revealed += 1
    elif op.kind == OP_DRAW:
        remove_card(s.draw, &s.n_draw, v)
        p.coin_card[p.n_coins] = v
        p.coin_gen[p.n_coins] = s.generation
        p.n_coins += 1
    else:
        i = find_card(p.coin_card, p.n_coins, v)
        gen = p.coin_gen[i]
        p.n_coins -= 1
        p.coin_card[i] = p.coin_card[p.n_coins]
        p.coin_gen[i] = p.coin_gen[p.n_coins]
        if op.kind == OP_PAY:
            to_discard(s, v)
        else:
            q = &s.players[s.active]
            q.coin_card[q.n_coins] = v
            q.coin_gen[q.n_coins] = gen
            q.n_coins += 1

# ---------------------------------------------------------------------------
# 5. Chance, scoring, determinization, observation, playouts
# ---------------------------------------------------------------------------

cdef int pry_chance_outcomes(const PRYState* s, int16* actions, int32* weights) noexcept nogil:
    """Outcomes of the head card move: a card variant, weighted by its count in the draw
    pile (reveal, coin draw) or among the payer's coins (payment, fee)."""
    cdef int v, i, n = 0, size
    cdef const uint8* pile
    cdef const PRYOp* op
    if s.step != STEP_CHANCE:
        return 0
    op = &s.queue[s.q_head]
    if op.kind == OP_REVEAL or op.kind == OP_DRAW:
        pile = s.draw
        size = s.n_draw
    else:
        pile = s.players[op.seat].coin_card
        size = s.players[op.seat].n_coins
    for v in range(NUM_VARIANTS):
        weights[v] = 0
    for i in range(size):
        weights[pile[i]] += 1
    for v in range(NUM_VARIANTS):
        if weights[v]:
            actions[n] = A_CARD + v
            weights[n] = weights[v]
            n += 1
    return n


cdef int pry_sample_chance(PRYState* s) noexcept nogil:
    """An outcome drawn from a copy of the state's RNG: applying it advances the RNG by
    one step, as applying a given outcome does (records replay to identical states)."""
    cdef const PRYOp* op = &s.queue[s.q_head]
    cdef const PRYPlayer* p
    cdef Rng r = s.rng
    if op.kind == OP_REVEAL or op.kind == OP_DRAW:
        return A_CARD + s.draw[rng_below(&r, s.n_draw)]
    p = &s.players[op.seat]
    return A_CARD + p.coin_card[rng_below(&r, p.n_coins)]


cdef inline bint eligible(const PRYState* s, int seat) noexcept nogil:
    return not (s.options & OPT_REQUIRE_EXPEDITION) or s.players[seat].expeditions > 0


cdef void pry_returns(const PRYState* s, double* out) noexcept nogil:
    """§10: most VP (variant: among players with an expedition, OPEN-PR-8; if nobody has
    one, among all), then most coins, then a shared win split equally; 0 before the end."""
    cdef int32 vp[MAX_PLAYERS]
    cdef int32 coins[MAX_PLAYERS]
    cdef int i, any_eligible = 0
    for i in range(s.n_players):
        out[i] = 0.0
        any_eligible |= eligible(s, i)
    if s.step != STEP_TERMINAL:
        return
    for i in range(s.n_players):
        # a seat that may not win (no expedition while others have one) is below every VP total
        vp[i] = s.players[i].vp if not any_eligible or eligible(s, i) else -1
        coins[i] = s.players[i].n_coins
    split_win(s.n_players, vp, coins, out)

cdef int32 pry_random_playout(PRYState* s) noexcept nogil:
    """Uniformly random decisions (chance sampled) to the end; returns the decisions."""
    cdef int16 legal[MAX_LEGAL]
    cdef int n
    cdef int32 decisions = 0
    while s.step != STEP_TERMINAL:
        if s.step == STEP_CHANCE:
            pry_apply(s, pry_sample_chance(s))
        else:
            n = pry_legal_actions(s, legal)
            if n == 0:                         # cannot happen from a validated state; never loop
                break
            pry_apply(s, legal[rng_below(&s.rng, n)] if n > 1 else legal[0])
            decisions += 1
    return decisions


cdef void pry_determinize(PRYState* s, int observer) noexcept nogil:
    """Resample what nobody can see (E.1), the same for every observer: the faces of all
    coins and the draw pile. Cards are exchanged only among cards of the same origin: the
    coins drawn from the pile of reshuffle generation g, plus the draw pile itself for the
    current generation. Every hand keeps its size (and its coins per generation), every
    public zone is untouched, so the 120 cards stay accounted for."""
    cdef uint8* where[DECK_SIZE]
    cdef uint64 seen[4]
    cdef uint64 present
    cdef uint8 per_variant[NUM_VARIANTS]
    cdef int i, j, k, n, g, _, v
    cdef PRYPlayer* p
    memset(seen, 0, sizeof(seen))
    memset(per_variant, 0, sizeof(per_variant))
    seen[s.generation >> 6] |= (<uint64>1) << (s.generation & 63)
    for i in range(s.n_players):
        p = &s.players[i]
        for k in range(p.n_coins):
            seen[p.coin_gen[k] >> 6] |= (<uint64>1) << (p.coin_gen[k] & 63)
    for g in range(256):
        if not (seen[g >> 6] >> (g & 63)) & 1:
            continue
        # The hidden cards of this origin, counted per variant: the sample is drawn from this
        # multiset, which is public, in a canonical order, not from the true hidden order, so
        # two states of one information set give the same world for the same RNG state.
        n = 0
        present = 0                            # variants with a hidden card (62 fit in 64 bits)
        for i in range(s.n_players):
            p = &s.players[i]
            for k in range(p.n_coins):
                if p.coin_gen[k] == g:
                    where[n] = &p.coin_card[k]
                    per_variant[p.coin_card[k]] += 1
                    present |= (<uint64>1) << p.coin_card[k]
                    n += 1
        if g == s.generation:
            for k in range(s.n_draw):
                where[n] = &s.draw[k]
                per_variant[s.draw[k]] += 1
                present |= (<uint64>1) << s.draw[k]
                n += 1
        # inside-out Fisher-Yates with the state's RNG: card k of the canonical sequence
        # (variants in order, each as often as it is hidden) goes to a uniform place among
        # the first k + 1, straight into the hand and pile slots
        k = 0
        while present:
            v = ctz64(present)
            present &= present - 1
            for _ in range(per_variant[v]):
                if k == 0:
                    where[0][0] = <uint8>v
                else:
                    j = rng_below(&s.rng, k + 1)
                    where[k][0] = where[j][0]
                    where[j][0] = <uint8>v
                k += 1
            per_variant[v] = 0                 # zero again for the next origin


cdef inline int put(float* out, int i, double v) noexcept nogil:
    if out != NULL:
        out[i] = <float>v
    return i + 1


cdef inline int one_hot(float* out, int i, int value, int size) noexcept nogil:
    cdef int j
    if out != NULL:
        for j in range(size):
            out[i + j] = 1.0 if j == value else 0.0
    return i + size


# The features written here, in this order, with their true bounds: _observation_layout() in
# src/caribsim/port_royal/game.py (observation_bounds, the normalised view, the docs' table).
# Change both together: tests/embed/test_observation_bounds.py checks the length and plays
# random games against the bounds.
cdef int write_observation(const PRYState* s, int seat, float* out) noexcept nogil:
    """The public position seen from `seat` (players rotated so `seat` comes first).
    Coin faces and the draw pile order are never included: only what everyone sees.
    Layout: docs/port_royal.md."""
    cdef int i = 0, r, v, k, _, seat_r
    cdef int n = s.n_players
    cdef int cur = pry_current_player(s)
    cdef int32 unseen[NUM_VARIANTS]
    cdef const PRYPlayer* p
    for v in range(NUM_VARIANTS):
        unseen[v] = 0 if (s.in_box and CARD[v].expedition == FIVE_PLAYER_EXPEDITION) else CARD[v].count
    for k in range(s.n_discard):
        unseen[s.discard[k]] -= 1
    for v in range(NUM_VARIANTS):
        unseen[v] -= s.harbour[v]
        for r in range(n):
            unseen[v] -= s.players[r].display[v]
        if CARD[v].expedition >= 0 and (s.expedition_area >> CARD[v].expedition) & 1:
            unseen[v] -= 1
    if s.pending >= 0:
        unseen[s.pending] -= 1
    for r in range(MAX_PLAYERS):                 # per player, relative to `seat`
        seat_r = (seat + r) % n if r < n else -1
        if seat_r < 0:
            for _ in range(8 + NUM_VARIANTS):
                i = put(out, i, 0.0)
            continue
        p = &s.players[seat_r]
        i = put(out, i, 1.0)
        i = put(out, i, p.n_coins)
        i = put(out, i, p.vp)
        i = put(out, i, p.swords)
        i = put(out, i, p.expeditions)
        i = put(out, i, 1.0 if seat_r == s.active else 0.0)
        i = put(out, i, 1.0 if seat_r == cur else 0.0)
        i = put(out, i, 1.0 if seat_r == s.start_player else 0.0)
        for v in range(NUM_VARIANTS):
            i = put(out, i, p.display[v])
    for v in range(NUM_VARIANTS):
        i = put(out, i, s.harbour[v])
    for k in range(NUM_EXPEDITIONS):
        i = put(out, i, (s.expedition_area >> k) & 1)
    i = one_hot(out, i, s.pending, NUM_VARIANTS)
    for v in range(NUM_VARIANTS):
        i = put(out, i, unseen[v])                # deck minus every face-up card: public
    cdef int32 dis[NUM_VARIANTS]
    for v in range(NUM_VARIANTS):
        dis[v] = 0
    for k in range(s.n_discard):
        dis[s.discard[k]] += 1
    for v in range(NUM_VARIANTS):
        i = put(out, i, dis[v])
    i = one_hot(out, i, s.step, 5)
    i = one_hot(out, i, s.phase, 4)
    i = put(out, i, s.n_draw)
    i = put(out, i, s.n_discard)
    i = put(out, i, s.revealed)
    i = put(out, i, s.picks_left if s.step == STEP_TAKE else 0)
    i = put(out, i, s.takers_done)
    i = put(out, i, s.end_triggered)
    i = put(out, i, s.options & OPT_REQUIRE_EXPEDITION)
    i = put(out, i, n)
    return i


cdef void pry_observation(const PRYState* s, int seat, float* out) noexcept nogil:
    write_observation(s, seat, out)


cdef int pry_observation_size() noexcept nogil:
    cdef PRYState s
    memset(&s, 0, sizeof(PRYState))
    s.n_players = 2
    s.pending = -1
    return write_observation(&s, 0, NULL)


cdef int _heuristic_value(const PRYState* s, int a) noexcept nogil:
    """Greedy preference of the rollout heuristic (higher is better)."""
    cdef int v
    if a >= A_EXPEDITION:
        return 100 - (a - A_EXPEDITION) % NUM_PATTERNS     # fulfil, with as few Jacks as possible
    if a == A_REPEL:
        return 10
    if a == A_REVEAL:
        return 5 if popcount64(s.harbour_colours) < 3 and s.revealed < 8 else 1
    if a == A_STOP:
        return 3
    if a >= A_TAKE:
        v = a - A_TAKE
        if CARD[v].category == CAT_SHIP:
            return 2 + CARD[v].coins + s.players[s.player].traders[CARD[v].colour]
        return 4 + 3 * CARD[v].vp
    return 0


cdef int pry_heuristic_action(PRYState* s, const int16* legal, int n) noexcept nogil:
    """Rollout policy: one time in four uniform, otherwise the highest greedy preference."""
    cdef int i, v, best = -1, count = 0, choice = legal[0]
    if n == 1:
        return legal[0]
    if rng_below(&s.rng, 4) == 0:
        return legal[rng_below(&s.rng, n)]
    for i in range(n):
        v = _heuristic_value(s, legal[i])
        if v > best:
            best = v
            count = 1
            choice = legal[i]
        elif v == best:
            count += 1
            if rng_below(&s.rng, count) == 0:
                choice = legal[i]
    return choice


cdef void pry_evaluate(const PRYState* s, double* out) noexcept nogil:
    """Static value per seat in [0, 1]: the returns at the end; before it, VP plus a
    quarter of the coins, scaled between the last and the first player."""
    cdef double v[MAX_PLAYERS]
    cdef double lo = 1e9, hi = -1e9
    cdef int i, n = s.n_players
    if s.step == STEP_TERMINAL:
        pry_returns(s, out)
        return
    for i in range(n):
        v[i] = s.players[i].vp + s.players[i].n_coins / 4.0
        lo = v[i] if v[i] < lo else lo
        hi = v[i] if v[i] > hi else hi
    for i in range(n):
        out[i] = 0.5 if hi == lo else (v[i] - lo) / (hi - lo)


# --- the C game interface (caribsim._game.GameVTable) ---------------------------

cdef void _vt_scores(const void* s, double* out) noexcept nogil:
    cdef int i
    for i in range(MAX_PLAYERS):
        out[i] = 0.0
    for i in range((<const PRYState*>s).n_players):
        out[i] = (<const PRYState*>s).players[i].vp

cdef void _vt_reseed(void* s, uint64 seed, uint64 stream) noexcept nogil:
    rng_seed(&(<PRYState*>s).rng, seed, stream)

cdef int _vt_observation_size(const void* s) noexcept nogil:
    return pry_observation_size()

# the shims that cast void* to PRYState* and call the pry_* functions (_game.pxd)
cdef extern from *:
    """
    CARIBSIM_VT_SHIMS(PRYState, pry)
    CARIBSIM_VT_DETERMINIZE(PRYState, pry)
    #define pry_vt_fill(t) CARIBSIM_VT_FILL(t, pry)
    """
    void pry_vt_fill(GameVTable* t) noexcept nogil
    void pry_vt_determinize(void* s, int observer) noexcept nogil

cdef GameVTable PORT_ROYAL_VTABLE
PORT_ROYAL_VTABLE.name = b"port_royal"
PORT_ROYAL_VTABLE.state_size = sizeof(PRYState)
PORT_ROYAL_VTABLE.num_actions = NUM_ACTIONS
PORT_ROYAL_VTABLE.max_chance_outcomes = NUM_VARIANTS
PORT_ROYAL_VTABLE.max_players = MAX_PLAYERS
pry_vt_fill(&PORT_ROYAL_VTABLE)
PORT_ROYAL_VTABLE.scores = _vt_scores
PORT_ROYAL_VTABLE.reseed = _vt_reseed
PORT_ROYAL_VTABLE.determinize = pry_vt_determinize
PORT_ROYAL_VTABLE.observation_size = _vt_observation_size


cdef const GameVTable* pry_vtable() noexcept nogil:
    return &PORT_ROYAL_VTABLE
