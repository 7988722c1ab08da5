# cython: language_level=3, preliminary_late_includes_cy28=True
"""Port Royal core: rules in C (nogil) over one PRYState struct.

Layout of this file:
  1. the card table, read from data/port_royal_deck.csv at import
  2. small queries (abilities, expeditions) and card moves
  3. the flow of a turn: each step ends at a decision, a chance event or the end
  4. legal actions and apply (one atomic decision per action)
  5. chance, scoring, determinization, observation, playouts, the C game interface
  6. the Python API: the compiled State class, action names, the dict codec,
     the readable board and the threaded playout driver

Hidden information (rules E.1): coin faces are hidden from everyone and the draw
pile order from everyone. The engine keeps the draw pile as a multiset; every
card that leaves it (a reveal or a coin draw) is a chance event whose outcome is
the card variant, weighted by the pile's counts. Every coin that leaves a hand
(paid to the discard pile, or the 1-coin fee to the active player) is a chance
event weighted by the payer's coins. Coins remember the reshuffle generation of
the pile they came from, so that determinize() redistributes unseen cards only
among cards of the same origin (E.1: "sample them from the pre-reshuffle unseen set").
"""
cimport cython
from libc.string cimport memset, memcpy, memchr, memcmp
from caribsim._types cimport int8, int16, int32, uint8, uint32, uint64, popcount64, ctz64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport Rng, rng_seed, rng_below, rng_next
from caribsim._game cimport GameVTable, GameState, chain_list, history_slot

# ---------------------------------------------------------------------------
# 1. The card table (filled by load_tables() at import, read-only after)
# ---------------------------------------------------------------------------

ctypedef struct CardInfo:
    int8 category          # CAT_*
    int8 colour            # ships and Traders: 0..4, else -1
    int8 swords            # ships: swords to repel; Sailors / Pirates: swords they give
    int8 skull
    int8 coins             # ship income, expedition reward, tax bonus
    int8 cost
    int8 vp
    int8 ability           # AB_*
    int8 symbol            # persons: ANCHOR/CROSS/HOUSE, 3 = any (Jack), else -1
    int8 req[NUM_SYMBOLS]  # expeditions: symbols required
    int8 count
    int8 min_players
    int8 expedition        # expedition index 0..5, else -1

cdef CardInfo CARD[NUM_VARIANTS]
cdef int8 EXP_VARIANT[NUM_EXPEDITIONS]
cdef int8 SYMBOL_VARIANT[NUM_SYMBOLS]           # the Captain, Priest, Settler variants
cdef int8 JACK_VARIANT
cdef int8 FIVE_PLAYER_EXPEDITION                # expedition index used only with 5 players
cdef int8 EXP_NPAT[NUM_EXPEDITIONS]
cdef int8 EXP_PAT[NUM_EXPEDITIONS][NUM_PATTERNS]   # joker patterns within each requirement

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
                EXP_NPAT[e] += 1
    CARD_IDS = tuple(r["id"] for r in rows)
    CARD_ROWS = tuple(rows)
    EXPEDITION_IDS = tuple(CARD_IDS[EXP_VARIANT[e]] for e in range(NUM_EXPEDITIONS))

load_tables()

# ---------------------------------------------------------------------------
# 2. Queries and card moves
# ---------------------------------------------------------------------------

cdef inline int next_seat(const PRYState* s, int seat) noexcept nogil:
    return seat + 1 if seat + 1 < s.n_players else 0


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
    elif ab == AB_JACK:
        p.jacks += d
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


cdef inline bint pattern_ok(const PRYPlayer* p, int e, int pat) noexcept nogil:
    """Can `p` fulfil expedition e with Jacks standing for the symbols of `pat`?"""
    cdef const CardInfo* c = &CARD[EXP_VARIANT[e]]
    cdef int ja = pat % 3, jc = (pat // 3) % 3, jh = pat // 9
    return (ja + jc + jh <= p.jacks and c.req[ANCHOR] - ja <= p.symbols[ANCHOR]
            and c.req[CROSS] - jc <= p.symbols[CROSS] and c.req[HOUSE] - jh <= p.symbols[HOUSE])


cdef int expedition_options(const PRYState* s, int seat, int16* out) noexcept nogil:
    """Fulfil actions open to `seat` (only the active player may fulfil, §6)."""
    cdef const PRYPlayer* p = &s.players[seat]
    cdef int e, k, n = 0
    cdef uint8 m = s.expedition_area
    if seat != s.active or m == 0 or p.symbols[0] + p.symbols[1] + p.symbols[2] + p.jacks < 2:
        return 0
    while m:
        e = ctz64(m)
        m &= m - 1
        for k in range(EXP_NPAT[e]):
            if pattern_ok(p, e, EXP_PAT[e][k]):
                if out != NULL:
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


cdef inline void remove_card(uint8* pile, uint8* n, int v) noexcept nogil:
    """Take one card of variant v out of an unordered pile (it must be there)."""
    cdef uint8* at = <uint8*>memchr(pile, v, n[0])
    cdef int i = at - pile
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
    cdef int v, k, i
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
        for k in range(CARD[v].count):
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


cdef bint expedition_options_any(const PRYState* s, int seat) noexcept nogil:
    cdef const PRYPlayer* p = &s.players[seat]
    cdef int e, k
    cdef uint8 m = s.expedition_area
    while m:
        e = ctz64(m)
        m &= m - 1
        for k in range(EXP_NPAT[e]):
            if pattern_ok(p, e, EXP_PAT[e][k]):
                return True
    return False


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
    cdef int v, k
    cdef uint64 m = s.harbour_mask
    while m:
        v = ctz64(m)
        m &= m - 1
        for k in range(s.harbour[v]):
            to_discard(s, v)
        s.harbour[v] = 0
    s.harbour_mask = 0
    s.n_harbour = 0
    s.harbour_colours = 0


cdef void bust(PRYState* s) noexcept nogil:
    """§5.7: the harbour (and the ship that busted it) to the discard pile; every
    Jester owner +1 coin per Jester; no phase 2."""
    cdef int i, seat = s.active
    to_discard(s, s.pending)
    s.pending = -1
    clear_harbour(s)
    for i in range(s.n_players):
        push(s, OP_DRAW, seat, s.players[seat].jesters)
        seat = next_seat(s, seat)
    cont(s, R_END_TURN)


cdef void tax(PRYState* s) noexcept nogil:
    """§5.5 (OPEN-PR-3): halve every hand of 12+ coins, then +1 coin to every player tied
    for the most swords / the fewest VP; the card is discarded afterwards (R_TAX_DONE)."""
    cdef int i, seat, best
    cdef bint swords = CARD[s.pending].ability == AB_TAX_MOST_SWORDS
    seat = s.active
    for i in range(s.n_players):
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
    for i in range(s.n_players):
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
    cdef int k, j
    cdef int jokers[NUM_SYMBOLS]
    jokers[ANCHOR] = pat % 3
    jokers[CROSS] = (pat // 3) % 3
    jokers[HOUSE] = pat // 9
    for k in range(NUM_SYMBOLS):
        for j in range(CARD[v].req[k] - jokers[k]):
            add_display(p, SYMBOL_VARIANT[k], -1)
            to_discard(s, SYMBOL_VARIANT[k])
        for j in range(jokers[k]):
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
        i = <uint8*>memchr(p.coin_card, v, p.n_coins) - p.coin_card
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
    cdef int i, winners = 0, best_vp = -1, best_coins = -1, any_eligible = 0
    for i in range(s.n_players):
        out[i] = 0.0
        any_eligible |= eligible(s, i)
    if s.step != STEP_TERMINAL:
        return
    for i in range(s.n_players):
        if any_eligible and not eligible(s, i):
            continue
        if s.players[i].vp > best_vp or (s.players[i].vp == best_vp and s.players[i].n_coins > best_coins):
            best_vp = s.players[i].vp
            best_coins = s.players[i].n_coins
    for i in range(s.n_players):
        if (not any_eligible or eligible(s, i)) and s.players[i].vp == best_vp and s.players[i].n_coins == best_coins:
            winners += 1
    for i in range(s.n_players):
        if (not any_eligible or eligible(s, i)) and s.players[i].vp == best_vp and s.players[i].n_coins == best_coins:
            out[i] = 1.0 / winners


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
    cdef uint8 pool[DECK_SIZE]
    cdef uint8* where[DECK_SIZE]
    cdef uint64 seen[4]
    cdef int i, j, k, n, g, t
    cdef PRYPlayer* p
    memset(seen, 0, sizeof(seen))
    seen[s.generation >> 6] |= (<uint64>1) << (s.generation & 63)
    for i in range(s.n_players):
        p = &s.players[i]
        for k in range(p.n_coins):
            seen[p.coin_gen[k] >> 6] |= (<uint64>1) << (p.coin_gen[k] & 63)
    for g in range(256):
        if not (seen[g >> 6] >> (g & 63)) & 1:
            continue
        n = 0
        for i in range(s.n_players):
            p = &s.players[i]
            for k in range(p.n_coins):
                if p.coin_gen[k] == g:
                    where[n] = &p.coin_card[k]
                    pool[n] = p.coin_card[k]
                    n += 1
        if g == s.generation:
            for k in range(s.n_draw):
                where[n] = &s.draw[k]
                pool[n] = s.draw[k]
                n += 1
        for k in range(n - 1, 0, -1):          # Fisher-Yates with the state's RNG
            j = rng_below(&s.rng, k + 1)
            t = pool[k]
            pool[k] = pool[j]
            pool[j] = t
        for k in range(n):
            where[k][0] = pool[k]


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


cdef int write_observation(const PRYState* s, int seat, float* out) noexcept nogil:
    """The public position seen from `seat` (players rotated so `seat` comes first).
    Coin faces and the draw pile order are never included: only what everyone sees.
    Layout: docs/port_royal.md."""
    cdef int i = 0, r, v, k, seat_r
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
            for k in range(8 + NUM_VARIANTS):
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



# ---------------------------------------------------------------------------
# 6. Python API: the compiled State class, action names, the dict codec
# ---------------------------------------------------------------------------
import operator
import numpy as np
cimport numpy as cnp
cnp.import_array()
from caribsim._common import _check_options, _int_in, _Reader

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
        self.vtable = &PORT_ROYAL_VTABLE

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

    def apply_action(self, action):
        """Apply a legal action id (a decision, or a chance outcome at a chance node)."""
        cdef int16 buf[MAX_LEGAL]
        cdef int i, n
        self._ready()
        cdef int a = _action_id(action)
        slot = history_slot()
        if self.s.step == STEP_TERMINAL:     # from here to _push no Python runs: one atomic move
            raise ValueError("the game is over: no action is legal")
        n = pry_legal_actions(&self.s, buf)
        for i in range(n):
            if buf[i] == a:
                break
        else:
            legal = ", ".join(f"{buf[i]} ({ACTION_NAMES[buf[i]]})" for i in range(n))
            raise ValueError(f"action {a} ({ACTION_NAMES[a]}) is not legal at step "
                             f"{STEP_NAMES[self.s.step]!r}; legal: {legal}")
        pry_apply(&self.s, a)
        self._push(slot, a)

    cpdef PortRoyalState clone(self):
        self._ready()
        cdef PortRoyalState c = PortRoyalState.__new__(PortRoyalState)
        memcpy(&c.s, &self.s, sizeof(PRYState))     # with the history below: no Python in between
        c.game = self.game
        c._hist = self._hist
        return c

    def determinize(self, player, seed=None):
        """A copy in which everything `player` cannot see is resampled consistently with
        what is public: coin faces (his own too) and the draw pile, exchanged only among
        cards of the same reshuffle generation. ``seed`` reseeds the copy's RNG first
        (default: the copy continues this state's RNG stream)."""
        self._ready()
        cdef int seat = _check_seat(player, self.s.n_players)
        cdef PortRoyalState c = self.clone()
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



from caribsim._game import _check_seat, _restore   # _restore here too: older pickles name it in this module


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
    hist = st._hist
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
        "history": chain_list(hist),
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
    for k, name in enumerate(area):
        if name not in EXPEDITION_IDS or area.count(name) > 1:
            raise ValueError(f"state.expedition_area must list distinct expeditions from {list(EXPEDITION_IDS)}, got {area!r}")
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
    st._hist = None
    for a in hist:
        st._hist = (st._hist, a)
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
                raise ValueError("a reveal (count 1, by the active player) is alone in the queue and resumes with 'resolve'")
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
    fmt = lambda c: ", ".join(f"{k}" + (f" x{v}" if v > 1 else "") for k, v in c.items()) or "empty"
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
        lines.append(f"{marks}seat {i}: {p.n_coins} coins | {p.vp} VP | {p.swords} swords | "
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
                or q.expeditions != s.players[i].expeditions
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



