# cython: language_level=3, preliminary_late_includes_cy28=True
"""Puerto Rico core (module ``caribsim.puerto_rico._core``): the rules in C (nogil) over one
PRState struct, and the game's tables of the C game interface.

What lives here (the struct, the enums and the action encoding are in _core.pxd):
  1. component tables, read from the data files at import (load_tables)
  2. small board queries
  3. the flow of a round: phases and turns, each ending at the next decision
  4. legal actions and apply (one atomic decision per action)
  5. chance, scoring, observation, random and heuristic playouts, evaluation,
     and the GameVTables (pr_vtable) that the search and the batch drivers use
The Python state class, action names, the dict codec and rendering are in
``caribsim.puerto_rico._state``, which cimports this module's .pxd.

May import: caribsim._types, caribsim._rng, caribsim._game (the GameVTable only) and the
standard library; no Python object is touched by the rules.
"""
from libc.string cimport memset, memcpy
from caribsim._types cimport int8, int16, int32, uint8, uint32, uint64, popcount64, ctz64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport Rng, rng_seed, rng_below, rng_next
from caribsim._game cimport GameVTable, split_win

# ---------------------------------------------------------------------------
# 1. Component tables (filled by load_tables() at import, read-only after)
# ---------------------------------------------------------------------------

cdef BuildingInfo BUILDING[NUM_BUILDINGS]
cdef SetupInfo SETUP[MAX_PLAYERS + 1]          # indexed by player count 2..5
cdef int8 PRICE[NUM_GOODS]                      # trading-house price (§1.7)
cdef uint64 PRODUCERS[NUM_GOODS]                # buildings producing each good
cdef uint64 VIOLET_MASK
cdef uint64 COST_MASK[11]                       # violet buildings by cost (the draft's slots)
cdef uint64 BASE_MASK
cdef uint64 LARGE_MASK                          # buildings taking 2 city spaces (the others take 1)
cdef enum:
    LARGE_SHIFT = 27                            # city_used: large building b counted again at bit b + 27
# AFFORD[q][t]: buildings whose cost less the quarry discount (q manned quarries, capped by
# the column) is at most t, so that the Builder's options are one mask (q and t capped)
cdef uint64 AFFORD[5][AFFORD_REACH]
cdef int16 MAX_COLONISTS_VARIANT                # §8.3.2: all 100 colonists
cdef int16 MAX_VP_VARIANT                       # §8.3.2: all 122 VP
cdef PRTables TABLES                            # the tables above for _state (pr_tables)

# Rule tables that are part of the printed building texts (§6.1.9, §6.2.2).
cdef int8 FACTORY_PAY[6]
FACTORY_PAY[:] = [0, 0, 1, 2, 3, 5]             # by kinds received
cdef int8 RESIDENCE_BONUS[13]
RESIDENCE_BONUS[:] = [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 6, 7]   # by filled island spaces
cdef int8 CLOISTER_BONUS[5]
CLOISTER_BONUS[:] = [0, 1, 3, 6, 10]            # §8.5.14: by sets of 3 identical island tiles
# (DRAFT_SLOTS, the draft's cost slots, is a C constant in _core.pxd)

GOOD_NAMES = ("corn", "indigo", "sugar", "tobacco", "coffee")
TILE_NAMES = GOOD_NAMES + ("quarry", "forest")
ROLE_NAMES = ("settler", "mayor", "builder", "craftsman", "trader", "captain",
              "prospector", "prospector_2")
PHASE_NAMES = ("settler", "mayor", "builder", "craftsman", "trader", "captain",
               "prospector", "role_selection", "setup", "end")
STEP_NAMES = ("role", "settle", "hospice", "mayor", "build", "university", "privilege",
              "sell", "load", "warehouse", "keep", "draw_face_up", "draw_hacienda", "terminal",
              "draft", "library", "black_market", "small_wharf", "guests")
_KIND_CODES = {"small_production": SMALL_PRODUCTION, "large_production": LARGE_PRODUCTION,
               "small_violet": SMALL_VIOLET, "large_violet": LARGE_VIOLET}
_ENUM_IDS = ("small_indigo_plant", "small_sugar_mill", "indigo_plant", "sugar_mill",
             "tobacco_storage", "coffee_roaster", "small_market", "hacienda", "construction_hut",
             "small_warehouse", "hospice", "office", "large_market", "large_warehouse", "factory",
             "university", "harbor", "wharf", "guild_hall", "residence", "fortress",
             "customs_house", "city_hall", "aqueduct", "forest_house", "black_market", "storehouse",
             "guest_house", "trading_post", "church", "small_wharf", "lighthouse",
             "specialty_factory", "library", "union_hall", "statue", "cloister")
BUILDING_IDS = ()           # every building id, in table order (filled by load_tables)
BUILDING_ROWS = ()          # the csv rows as dicts, for names and documentation


def _read_csv(name):
    import csv, io
    from importlib.resources import files
    text = files("caribsim").joinpath("data", name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def load_tables():
    """Turn the data files into the C tables. Runs once, at import."""
    global BUILDING_IDS, BUILDING_ROWS, VIOLET_MASK, BASE_MASK, LARGE_MASK, MAX_COLONISTS_VARIANT, MAX_VP_VARIANT
    cdef int b, g, n, i, cost, q, t
    for cost in range(11):
        COST_MASK[cost] = 0
    rows = _read_csv("puerto_rico_buildings.csv")
    if len(rows) != NUM_BUILDINGS:
        raise RuntimeError(f"puerto_rico_buildings.csv: expected {NUM_BUILDINGS} rows, found {len(rows)}")
    for b, name in enumerate(_ENUM_IDS):
        if rows[b]["id"] != name:
            raise RuntimeError(f"puerto_rico_buildings.csv row {b + 2}: expected {name!r}, found {rows[b]['id']!r}")
    VIOLET_MASK = 0
    BASE_MASK = 0
    LARGE_MASK = 0
    for g in range(NUM_GOODS):
        PRODUCERS[g] = 0
    for b, row in enumerate(rows):
        BUILDING[b].kind = _KIND_CODES[row["kind"]]
        BUILDING[b].produces = GOOD_NAMES.index(row["produces"]) if row["produces"] else -1
        BUILDING[b].cost = int(row["cost"])
        BUILDING[b].vp = int(row["vp"])
        BUILDING[b].circles = int(row["circles"])
        BUILDING[b].column = int(row["column"])
        BUILDING[b].spaces = int(row["city_spaces"])
        BUILDING[b].copies[0] = int(row["copies_3to5p"])
        BUILDING[b].copies[1] = int(row["copies_2p"])
        BUILDING[b].expansion = row["set"] == "expansion"
        if BUILDING[b].produces >= 0:
            PRODUCERS[BUILDING[b].produces] |= (<uint64>1) << b
        if BUILDING[b].kind >= SMALL_VIOLET:
            VIOLET_MASK |= (<uint64>1) << b
            COST_MASK[BUILDING[b].cost] |= (<uint64>1) << b
        if not BUILDING[b].expansion:
            BASE_MASK |= (<uint64>1) << b
        if BUILDING[b].spaces == 2:
            LARGE_MASK |= (<uint64>1) << b
        elif BUILDING[b].spaces != 1:
            raise RuntimeError(f"puerto_rico_buildings.csv row {b + 2}: city_spaces must be 1 or 2")
    for b in range(NUM_BUILDINGS):
        if (LARGE_MASK >> b) & 1 and not NUM_BUILDINGS <= b + LARGE_SHIFT <= 63:
            raise RuntimeError(f"puerto_rico_buildings.csv row {b + 2}: a large building must be row "
                               f"{NUM_BUILDINGS - LARGE_SHIFT + 2} or later (city_used counts its bit shifted)")
    for q in range(5):
        for t in range(AFFORD_REACH):
            AFFORD[q][t] = 0
            for b in range(NUM_BUILDINGS):
                if BUILDING[b].cost - min(q, BUILDING[b].column) <= t:
                    AFFORD[q][t] |= (<uint64>1) << b
    if max(BUILDING[b].cost for b in range(NUM_BUILDINGS)) >= AFFORD_REACH or \
            max(BUILDING[b].column for b in range(NUM_BUILDINGS)) > 4:
        raise RuntimeError(f"puerto_rico_buildings.csv: costs must be below {AFFORD_REACH}, columns 1..4")
    for cost in range(11):                      # (draft_mask handles 1..5 slots per cost)
        if COST_MASK[cost] and not 1 <= DRAFT_SLOTS[cost] <= 5:
            raise RuntimeError(f"violet buildings of cost {cost} need 1..5 draft slots")
    BUILDING_IDS = tuple(r["id"] for r in rows)
    BUILDING_ROWS = tuple(rows)

    for row in _read_csv("puerto_rico_setup.csv"):
        n = int(row["players"])
        SETUP[n].start_doubloons = int(row["start_doubloons_each"])
        SETUP[n].prospectors = int(row["prospector_cards"])
        SETUP[n].selections = int(row["role_selections_per_round"])
        SETUP[n].quarries = int(row["quarries"])
        for g, good in enumerate(GOOD_NAMES):
            SETUP[n].plantations[g] = int(row["plantations_" + good])
            SETUP[n].goods[g] = int(row["goods_" + good])
        starts = row["start_plantations_by_seat"].split(";")
        for i in range(n):
            SETUP[n].start_tile[i] = GOOD_NAMES.index(starts[i])
        SETUP[n].face_up = int(row["face_up_plantations"])
        SETUP[n].colonist_supply = int(row["colonists_supply"])
        SETUP[n].colonist_ship = int(row["colonists_ship_start"])
        SETUP[n].colonists_total = int(row["colonists_total"])
        SETUP[n].vp_total = int(row["vp_total"])
        caps = [int(c) for c in row["cargo_ship_capacities"].split(";")]
        SETUP[n].n_ships = len(caps)
        for i in range(len(caps)):
            SETUP[n].ship_capacity[i] = caps[i]
    MAX_COLONISTS_VARIANT = max(SETUP[n].colonists_total for n in range(2, 6))
    MAX_VP_VARIANT = max(SETUP[n].vp_total for n in range(2, 6))
    for row in _read_csv("puerto_rico_prices.csv"):
        PRICE[GOOD_NAMES.index(row["good"])] = int(row["price"])
    TABLES.building = BUILDING
    TABLES.setup = SETUP
    TABLES.price = PRICE
    TABLES.max_colonists_variant = MAX_COLONISTS_VARIANT
    TABLES.max_vp_variant = MAX_VP_VARIANT


load_tables()

# ---------------------------------------------------------------------------
# 2. Board queries
# ---------------------------------------------------------------------------

cdef inline int bit_count(uint64 x) noexcept nogil:
    """popcount64 without its library call (the module is built without -mpopcnt)."""
    x = x - ((x >> 1) & <uint64>0x5555555555555555)
    x = (x & <uint64>0x3333333333333333) + ((x >> 2) & <uint64>0x3333333333333333)
    x = (x + (x >> 4)) & <uint64>0x0F0F0F0F0F0F0F0F
    return <int>((x * <uint64>0x0101010101010101) >> 56)

# owns, works, island_used, sum5 and colonist_available: inline in _core.pxd (shared
# with _state)

cdef inline int city_used(const PRPlayer* p) noexcept nogil:
    """City spaces taken: 1 per building, 2 per large one, in one bit count: the large ones'
    bits again, shifted above the 37 building bits (checked in load_tables)."""
    return bit_count(p.owned | ((p.owned & LARGE_MASK) << LARGE_SHIFT))

cdef inline int goods_held(const PRPlayer* p) noexcept nogil:
    cdef int k, n = 0
    for k in range(NUM_GOODS):
        n += p.goods[k]
    return n

cdef inline int append_kinds(int16* out, int n, int first_id, const int8* counts) noexcept nogil:
    """Append first_id + k for each kind k with counts[k] > 0; returns the new length.
    Branch-free (which kinds are there is unpredictable): every id is written and kept only
    if present, so out[n] past the end is scratch; the legal buffers hold NUM_ACTIONS ids,
    far more than a decision ever has."""
    cdef int k
    for k in range(NUM_GOODS):
        out[n] = first_id + k
        n += counts[k] > 0
    return n

cdef int colonists_on_board(const PRPlayer* p) noexcept nogil:
    """Colonists on circles and in San Juan."""
    cdef int k, n = p.san_juan
    cdef uint64 m = p.owned
    for k in range(NUM_MANNED_KINDS):
        n += p.manned[k]
    while m:
        n += p.workers[ctz64(m)]
        m &= m - 1
    return n

cdef int empty_building_circles(const PRPlayer* p) noexcept nogil:
    cdef int b, n = 0
    cdef uint64 m = p.owned
    while m:
        b = ctz64(m)
        n += BUILDING[b].circles - p.workers[b]
        m &= m - 1
    return n

cdef inline int building_price(const PRState* s, int seat, int b) noexcept nogil:
    """§4.3: cost less the Builder's privilege (Library: 2), the quarries (capped by
    column) and, with a Forest house (occupied or not), 1 per 2 forests (§8.5.2)."""
    cdef const PRPlayer* p = &s.players[seat]
    cdef int price = BUILDING[b].cost
    cdef int q = p.manned[QUARRY]
    if seat == s.chooser:
        price -= 2 if works(p, LIBRARY) else 1
    price -= q if q < BUILDING[b].column else BUILDING[b].column
    if owns(p, FOREST_HOUSE):
        price -= p.tiles[FOREST] // 2
    return price if price > 0 else 0

cdef inline bint is_chance_step(int step) noexcept nogil:
    return step == STEP_DRAW_FACE_UP or step == STEP_DRAW_HACIENDA

cdef inline int copies_of(const PRState* s, int b) noexcept nogil:
    """Copies of building b in this game (§1.3, §8.2, §8.3.1), 0 if not in play."""
    if not (s.in_play >> b) & 1:
        return 0
    if (s.options & OPT_ALL_31) and BUILDING[b].kind >= SMALL_VIOLET:
        return 1
    return BUILDING[b].copies[1 if s.n_players == 2 else 0]

cdef inline int vp_total(const PRState* s) noexcept nogil:
    return MAX_VP_VARIANT if s.options & OPT_ALL_COLONISTS_AND_VP else SETUP[s.n_players].vp_total

cdef inline int privilege_factor(const PRState* s) noexcept nogil:
    """2 if the role chooser's Library is occupied (§8.5.11), else 1."""
    return 2 if works(&s.players[s.chooser], LIBRARY) else 1

cdef inline void take_colonist(PRState* s) noexcept nogil:
    if s.colonist_supply > 0:
        s.colonist_supply -= 1
    else:
        s.colonist_ship -= 1

cdef void award_vp(PRState* s, int seat, int vp) noexcept nogil:
    """VP chips: never capped; taking the last chip is an end trigger (OPEN-9)."""
    if vp <= 0:
        return
    s.players[seat].vp += vp
    if s.vp_supply > 0:
        s.vp_supply -= vp if vp < s.vp_supply else s.vp_supply
        if s.vp_supply == 0 and not (s.options & OPT_ALL_COLONISTS_AND_VP):
            s.end_triggered = 1

cdef inline int seat_from(const PRState* s, int seat, int k) noexcept nogil:
    """The seat k places clockwise from `seat` (both below n: no division)."""
    seat += k
    return seat - s.n_players if seat >= s.n_players else seat

cdef inline int next_seat(const PRState* s, int seat) noexcept nogil:
    seat += 1
    return 0 if seat == s.n_players else seat

# ---------------------------------------------------------------------------
# 3. The flow of a round. Each *_seek function moves to the next seat that has
#    a decision in the current phase, resolving what is automatic on the way,
#    and leaves `step` at a decision, a chance event, or the end.
# ---------------------------------------------------------------------------

cdef int pr_new_game(PRState* s, int n_players, int options, uint64 violet_set, uint64 seed) except -1 nogil:
    """A new game. With the expansion, `violet_set` is the violet kinds in play when there
    is no draft (a user's set); the draft (OPT_DRAFT) and the all-31 variant ignore it."""
    cdef int i, b, k
    if n_players < 2 or n_players > MAX_PLAYERS:
        with gil:
            raise ValueError(f"players must be 2..{MAX_PLAYERS}, got {n_players}")
    memset(s, 0, sizeof(PRState))
    cdef const SetupInfo* su = &SETUP[n_players]
    s.n_players = n_players
    s.options = options
    s.n_ships = su.n_ships
    for i in range(MAX_SHIPS):
        s.ship_capacity[i] = su.ship_capacity[i] if i < su.n_ships else 0
        s.ship_good[i] = -1
    s.face_up_count = su.face_up
    s.selections_per_round = su.selections
    s.cards_in_play = 0x3F                      # settler .. captain
    for i in range(su.prospectors):
        s.cards_in_play |= 1 << (PROSPECTOR + i)
    for i in range(NUM_ROLE_CARDS):
        s.card_taken_by[i] = -1
    for k in range(NUM_GOODS):
        s.stack[k] = su.plantations[k]
        s.goods_supply[k] = su.goods[k]
    for i in range(n_players):
        s.players[i].doubloons = su.start_doubloons
        k = su.start_tile[i]
        s.players[i].tiles[k] = 1
        s.stack[k] -= 1
    s.quarries = su.quarries
    s.colonist_ship = su.colonist_ship
    if options & OPT_ALL_COLONISTS_AND_VP:
        s.colonist_supply = MAX_COLONISTS_VARIANT - su.colonist_ship
        s.vp_supply = MAX_VP_VARIANT
    else:
        s.colonist_supply = su.colonist_supply
        s.vp_supply = su.vp_total
    if not (options & OPT_EXPANSION):
        s.in_play = BASE_MASK
    else:
        s.in_play = PRODUCERS[INDIGO] | PRODUCERS[SUGAR] | PRODUCERS[TOBACCO] | PRODUCERS[COFFEE]
        if options & OPT_ALL_31:
            s.in_play |= VIOLET_MASK
        elif not (options & OPT_DRAFT):
            s.in_play |= violet_set & VIOLET_MASK
        s.forests = FORESTS
    for b in range(NUM_BUILDINGS):
        s.building_supply[b] = copies_of(s, b)
    pr_derive(s)
    s.governor = 0
    s.last_tile = -1
    s.last_building = -1
    s.last_warehouse = -1
    s.last_keep = -1
    s.bm_last = -1
    s.sw_last = -1
    rng_seed(&s.rng, seed, 0)
    s.phase = PHASE_SETUP
    s.to_draw = s.face_up_count
    draw_face_up_or_finish(s)
    return 0


cdef void pr_derive(PRState* s) noexcept nogil:
    """The derived fields (in_supply, the Mayor's slot list) from the others: a new game,
    and a state read from a dict."""
    cdef int b
    s.in_supply = 0
    for b in range(NUM_BUILDINGS):
        if s.building_supply[b] > 0:
            s.in_supply |= (<uint64>1) << b
    if s.step == STEP_MAYOR:
        mayor_list(s)
    else:
        s.mayor_first = 0
        s.mayor_count = 0


cdef void begin_round(PRState* s) noexcept nogil:
    s.selections_done = 0
    s.phase = PHASE_ROLE_SELECTION
    s.player = s.governor
    s.step = STEP_ROLE


cdef void end_round(PRState* s) noexcept nogil:
    """§3.4: +1 doubloon on every card not taken, then the end or a new Governor."""
    cdef int c
    for c in range(NUM_ROLE_CARDS):               # branch-free: which cards are left is random
        s.card_doubloons[c] += ((s.cards_in_play & ~s.cards_taken) >> c) & 1
        s.card_taken_by[c] = -1
    s.cards_taken = 0
    if s.end_triggered:
        s.phase = PHASE_END
        s.step = STEP_TERMINAL
        s.player = PLAYER_TERMINAL
        return
    s.governor = next_seat(s, s.governor)
    begin_round(s)


cdef void end_phase(PRState* s) noexcept nogil:
    s.selections_done += 1
    if s.selections_done == s.selections_per_round:
        end_round(s)
        return
    s.phase = PHASE_ROLE_SELECTION
    s.player = (s.governor + s.selections_done) % s.n_players   # (2 players: 6 selections)
    s.step = STEP_ROLE


cdef void start_phase(PRState* s, int card) noexcept nogil:
    cdef PRPlayer* p = &s.players[s.player]
    p.doubloons += s.card_doubloons[card]
    s.card_doubloons[card] = 0
    s.cards_taken |= 1 << card
    s.card_taken_by[card] = s.player
    s.chooser = s.player
    s.turns_done = 0
    s.phase = card if card < PROSPECTOR else PROSPECTOR
    if s.phase == PHASE_SETTLER:
        s.library_done = 0
        settler_seek(s)
    elif s.phase == PHASE_MAYOR:
        start_mayor(s)
    elif s.phase == PHASE_BUILDER:
        builder_seek(s)
    elif s.phase == PHASE_CRAFTSMAN:
        craftsman(s)
    elif s.phase == PHASE_TRADER:
        trader_seek(s)
    elif s.phase == PHASE_CAPTAIN:
        start_captain(s)
    else:
        p.doubloons += privilege_factor(s)   # Prospector's privilege (§4.7; Library: 2)
        end_phase(s)


cdef inline void turn_done(PRState* s) noexcept nogil:
    """The current seat's turn in a one-turn-each phase is over: go to the next."""
    s.turns_done += 1
    if s.phase == PHASE_SETTLER:
        settler_seek(s)
    elif s.phase == PHASE_MAYOR:
        mayor_seek(s)
    elif s.phase == PHASE_BUILDER:
        builder_seek(s)
    elif s.phase == PHASE_TRADER:
        trader_seek(s)
    else:
        storage_seek(s)


# --- Settler (§4.1) ---------------------------------------------------------

cdef inline bint can_take_quarry(const PRState* s, int seat) noexcept nogil:
    return s.quarries > 0 and (seat == s.chooser or works(&s.players[seat], CONSTRUCTION_HUT))

cdef inline bint can_draw_hacienda(const PRState* s, int seat) noexcept nogil:
    """§6.1.2, OPEN-30: before the pick, with a free space and a tile left."""
    return (not s.hacienda_used and works(&s.players[seat], HACIENDA)
            and sum5(s.stack) + sum5(s.discard) > 0)

cdef inline bint can_take_forest(const PRState* s, int seat) noexcept nogil:
    """§8.5.2: occupied Forest house, a forest left and a face-up plantation to remove."""
    return (s.forests > 0) & works(&s.players[seat], FOREST_HOUSE) & (sum5(s.face_up) > 0)

cdef bint settler_can_act(const PRState* s, int seat) noexcept nogil:
    if island_used(&s.players[seat]) >= ISLAND_SPACES:
        return False
    return sum5(s.face_up) > 0 or can_take_quarry(s, seat) or can_draw_hacienda(s, seat)

cdef inline bint library_quarry(const PRState* s) noexcept nogil:
    """The Library second pick takes a quarry only with an occupied Construction hut (OPEN-16)."""
    return s.quarries > 0 and works(&s.players[s.chooser], CONSTRUCTION_HUT)

cdef bint library_can_act(const PRState* s) noexcept nogil:
    cdef const PRPlayer* p = &s.players[s.chooser]
    if not works(p, LIBRARY) or island_used(p) >= ISLAND_SPACES:
        return False
    return sum5(s.face_up) > 0 or library_quarry(s)

cdef void settler_seek(PRState* s) noexcept nogil:
    cdef int k
    while s.turns_done < s.n_players:
        s.player = seat_from(s, s.chooser, s.turns_done)
        s.hacienda_used = 0
        if settler_can_act(s, s.player):
            s.step = STEP_SETTLE
            return
        if guest_turn(s):
            return
        s.turns_done += 1
    if not s.library_done:                   # §8.5.11: the Settler's Library second pick
        s.library_done = 1
        if library_can_act(s):
            s.player = s.chooser
            s.step = STEP_LIBRARY
            return
        if s.players[s.chooser].workers[GUEST_HOUSE]:
            k = s.player
            s.player = s.chooser
            if guest_turn(s):
                return
            s.player = k
    # §4.1.5: discard what is left, turn up N + 1 new plantations
    for k in range(NUM_GOODS):
        s.discard[k] += s.face_up[k]
        s.face_up[k] = 0
    s.to_draw = s.face_up_count
    draw_face_up_or_finish(s)

cdef inline void reshuffle_if_empty(PRState* s) noexcept nogil:
    """An empty stack takes the discard pile (its order is random: draws are chance events)."""
    cdef int k
    if sum5(s.stack) == 0:
        for k in range(NUM_GOODS):
            s.stack[k] = s.discard[k]
            s.discard[k] = 0

cdef void draw_face_up_or_finish(PRState* s) noexcept nogil:
    if s.to_draw > 0 and sum5(s.stack) + sum5(s.discard) > 0:
        reshuffle_if_empty(s)
        s.step = STEP_DRAW_FACE_UP
        return
    s.to_draw = 0
    if s.phase == PHASE_SETUP:
        if (s.options & OPT_DRAFT) and bit_count(s.in_play & VIOLET_MASK) < DRAFT_KINDS:
            s.step = STEP_DRAFT             # §8.2: the draft, from the first Governor
            s.player = bit_count(s.in_play & VIOLET_MASK) % s.n_players
        else:
            begin_round(s)
    else:
        end_phase(s)

cdef void took_tile(PRState* s, int kind) noexcept nogil:
    """After a pick: the Hospice may man the new tile (§6.1.5; a forest: San Juan)."""
    s.last_tile = kind
    if s.step == STEP_LIBRARY:               # no Hospice colonist for the second pick
        s.step = STEP_SETTLE
        settler_seek(s)
    elif works(&s.players[s.player], HOSPICE) and colonist_available(s):
        s.step = STEP_HOSPICE
    else:
        turn_done(s)


# --- Mayor (§4.2) -----------------------------------------------------------

cdef void start_mayor(PRState* s) noexcept nogil:
    cdef int i, n = s.n_players, ship = s.colonist_ship
    cdef int extra = privilege_factor(s)      # privilege: from the supply, not the ship (Library: 2)
    if extra > s.colonist_supply:
        extra = s.colonist_supply
    s.colonist_supply -= extra
    s.players[s.chooser].san_juan += extra
    for i in range(n):                        # one at a time from the Mayor, clockwise
        s.players[(s.chooser + i) % n].san_juan += ship // n + (1 if i < ship % n else 0)
    s.colonist_ship = 0
    mayor_seek(s)

cdef void mayor_list(PRState* s) noexcept nogil:
    """Make the slot list of `player` (see PRState.mayor_slot): the slots from last_slot on
    with a free circle, and the free circles at or after each."""
    cdef const PRPlayer* p = &s.players[s.player]
    cdef int slot, b, i, m = 0, total = 0
    cdef uint64 bits = p.owned
    # branch-free: each slot is written and kept only if it has a free circle (a write past
    # the kept ones lands on the next entry: at most MAYOR_LIST slots have circles)
    for slot in range(s.last_slot, NUM_MANNED_KINDS):
        s.mayor_slot[m] = slot
        s.mayor_left[m] = p.tiles[slot] - p.manned[slot]
        m += s.mayor_left[m] > 0
    if s.last_slot > NUM_MANNED_KINDS:
        bits &= ~(((<uint64>1) << (s.last_slot - NUM_MANNED_KINDS)) - 1)
    while bits:
        b = ctz64(bits)
        s.mayor_slot[m] = NUM_MANNED_KINDS + b
        s.mayor_left[m] = BUILDING[b].circles - p.workers[b]
        m += s.mayor_left[m] > 0
        bits &= bits - 1
    for i in range(m - 1, -1, -1):          # (the sum in a register: no store-to-load chain)
        total += s.mayor_left[i]
        s.mayor_left[i] = total
    s.mayor_first = 0
    s.mayor_count = m

cdef inline int mayor_choices(const PRState* s) noexcept nogil:
    """How many slots the next colonist may go to: placements go in non-decreasing slot
    order, so each arrangement is generated once, and a slot is legal only if the colonists
    left can still all be placed on circles at or after it (the must-fill rule, §4.2.3).
    Those are the first entries of the list from mayor_first on."""
    cdef int i = s.mayor_first
    while i < s.mayor_count and s.mayor_left[i] >= s.to_place:
        i += 1
    return i - s.mayor_first

cdef inline void place_at(PRState* s, int i) noexcept nogil:
    """The next colonist on the slot of list entry i (an open one)."""
    cdef PRPlayer* p = &s.players[s.player]
    cdef int slot = s.mayor_slot[i]
    if slot < NUM_MANNED_KINDS:
        p.manned[slot] += 1
    else:
        p.workers[slot - NUM_MANNED_KINDS] += 1
    s.mayor_left[i] -= 1
    # the entries before it are passed; it stays open while it has a free circle itself
    s.mayor_first = i + (s.mayor_left[i] == (s.mayor_left[i + 1] if i + 1 < s.mayor_count else 0))
    s.to_place -= 1
    s.last_slot = slot

cdef bint mayor_autoplace(PRState* s) noexcept nogil:
    """Play forced placements; True when the player has none left to place."""
    cdef int i, j, slot, free
    cdef PRPlayer* p
    while s.to_place > 0:
        i = s.mayor_first
        if i >= s.mayor_count or s.mayor_left[i] < s.to_place:
            return False                       # no slot (not from a consistent state)
        if s.mayor_left[i] == s.to_place:      # as many colonists as free circles: all forced,
            p = &s.players[s.player]           # every circle from here on takes one (in one pass)
            for j in range(i, s.mayor_count):
                slot = s.mayor_slot[j]
                free = s.mayor_left[j] - (s.mayor_left[j + 1] if j + 1 < s.mayor_count else 0)
                if slot < NUM_MANNED_KINDS:
                    p.manned[slot] += free
                else:
                    p.workers[slot - NUM_MANNED_KINDS] += free
                s.mayor_left[j] -= free
            s.last_slot = s.mayor_slot[s.mayor_count - 1]
            s.mayor_first = s.mayor_count
            s.to_place = 0
            return True
        if i + 1 < s.mayor_count and s.mayor_left[i + 1] >= s.to_place:
            return False                       # a choice
        place_at(s, i)
    return True

cdef void mayor_place(PRState* s, int i) noexcept nogil:
    """The Mayor decision: the next colonist on list entry i (one of the legal), then the
    forced ones; the next player's placement when his are all placed."""
    place_at(s, i)
    if mayor_autoplace(s):
        s.turns_done += 1
        mayor_seek(s)

cdef void mayor_seek(PRState* s) noexcept nogil:
    cdef PRPlayer* p
    cdef int colonists, circles, k, b, m, c
    cdef uint64 bits
    while s.turns_done < s.n_players:
        s.player = seat_from(s, s.chooser, s.turns_done)
        p = &s.players[s.player]
        # take every colonist off the board, then place them again
        colonists = p.san_juan
        circles = 0
        for k in range(NUM_MANNED_KINDS):
            colonists += p.manned[k]
            circles += p.tiles[k]
        bits = p.owned
        while bits:
            b = ctz64(bits)
            colonists += p.workers[b]
            circles += BUILDING[b].circles
            bits &= bits - 1
        if colonists >= circles:             # every circle filled, the rest to San Juan
            for k in range(NUM_MANNED_KINDS):
                p.manned[k] = p.tiles[k]
            bits = p.owned
            while bits:
                b = ctz64(bits)
                p.workers[b] = BUILDING[b].circles
                bits &= bits - 1
            p.san_juan = colonists - circles
            s.turns_done += 1
            continue
        s.held_bonus = large_bonus(p)        # he will place them: his score holds meanwhile
        # the board emptied and, as every circle is free now, the slot list (mayor_list's)
        m = 0
        for k in range(NUM_MANNED_KINDS):
            p.manned[k] = 0
            s.mayor_slot[m] = k
            s.mayor_left[m] = p.tiles[k]
            m += p.tiles[k] > 0
        bits = p.owned
        while bits:
            b = ctz64(bits)
            p.workers[b] = 0
            c = BUILDING[b].circles
            s.mayor_slot[m] = NUM_MANNED_KINDS + b
            s.mayor_left[m] = c
            m += c > 0
            bits &= bits - 1
        c = 0
        for k in range(m - 1, -1, -1):      # (the sum in a register: no store-to-load chain)
            c += s.mayor_left[k]
            s.mayor_left[k] = c
        s.mayor_first = 0
        s.mayor_count = m
        p.san_juan = 0
        s.to_place = colonists
        s.last_slot = 0
        if not mayor_autoplace(s):
            s.step = STEP_MAYOR
            return
        s.turns_done += 1
    s.held_bonus = 0
    mayor_refill(s)
    end_phase(s)

cdef void mayor_refill(PRState* s) noexcept nogil:
    """§4.2.4 and OPEN-7: need = max(N, empty building circles); a short supply ends the game."""
    cdef int i, need = 0
    for i in range(s.n_players):
        need += empty_building_circles(&s.players[i])
    if need < s.n_players:
        need = s.n_players
    if s.colonist_supply >= need:
        s.colonist_supply -= need
        s.colonist_ship += need
    else:
        s.colonist_ship += s.colonist_supply
        s.colonist_supply = 0
        if not (s.options & OPT_ALL_COLONISTS_AND_VP):
            s.end_triggered = 1


# --- Builder (§4.3) ---------------------------------------------------------

cdef inline bint other_colonist(const PRPlayer* p, int b) noexcept nogil:
    """colonists_on_board(p) > p.workers[b]: a colonist anywhere but on building b. Looks at
    San Juan and the tiles first, which almost always settle it."""
    cdef uint64 m
    if p.san_juan + p.manned[0] + p.manned[1] + p.manned[2] + p.manned[3] + p.manned[4] + p.manned[5] > 0:
        return True
    m = p.owned & ~((<uint64>1) << b)
    while m:
        if p.workers[ctz64(m)] > 0:
            return True
        m &= m - 1
    return False

cdef inline int black_market_items(const PRPlayer* p) noexcept nogil:
    """Item categories an occupied Black market can return (§8.5.3): VP chip, colonist
    (not its own), good. The caller checks that the Black market is occupied."""
    return (p.vp > 0) + other_colonist(p, BLACK_MARKET) + (goods_held(p) > 0)

cdef int build_options(const PRState* s, int seat, int16* out) noexcept nogil:
    """Buildings `seat` may build now (§4.3), as action ids; with out == NULL, 1 if there is
    any. One mask: in play, not owned, in the supply, room in the city, affordable."""
    cdef const PRPlayer* p = &s.players[seat]
    cdef int n = 0, reach = p.doubloons
    cdef int free_city = CITY_SPACES - city_used(p)
    cdef int q = p.manned[QUARRY]
    cdef uint64 m = s.in_play & s.in_supply & ~p.owned
    if free_city <= 0:
        return 0
    if free_city < 2:
        m &= ~LARGE_MASK
    if seat == s.chooser:                     # the privilege (Library: 2)
        reach += 2 if works(p, LIBRARY) else 1
    if s.options & OPT_EXPANSION:
        # §8.5.2: a Forest house (occupied or not) takes 1 per 2 forests (branch-free: which
        # seat has one is unpredictable; base games have neither forests nor Forest houses)
        reach += (p.tiles[FOREST] // 2) & -<int>owns(p, FOREST_HOUSE)
        if works(p, BLACK_MARKET):
            # §8.5.3: Black-market items (at most 3, one per category) cover a shortfall, so
            # the reach grows by their number
            reach += black_market_items(p)
    # price = cost - discount - min(q, column) <= doubloons: cost - min(q, column) <= reach
    m &= AFFORD[q if q < 4 else 4][reach if reach < AFFORD_REACH else AFFORD_REACH - 1]
    if out == NULL:
        return m != 0
    while m:
        out[n] = A_BUILD + ctz64(m)
        n += 1
        m &= m - 1
    return n

cdef void builder_seek(PRState* s) noexcept nogil:
    while s.turns_done < s.n_players:
        s.player = seat_from(s, s.chooser, s.turns_done)
        if build_options(s, s.player, NULL):
            s.step = STEP_BUILD
            return
        if guest_turn(s):
            return
        s.turns_done += 1
    end_phase(s)

cdef void build(PRState* s, int b) noexcept nogil:
    cdef PRPlayer* p = &s.players[s.player]
    cdef int price = building_price(s, s.player, b)
    if price > p.doubloons:                  # §8.5.3: the Black market covers the shortfall first
        s.last_building = b
        s.bm_left = price - p.doubloons
        s.bm_last = -1
        s.step = STEP_BLACK_MARKET
        return
    p.doubloons -= price
    place_building(s, b)

cdef bint city_fillable(const PRState* s) noexcept nogil:
    """Engine decision for the §8.3.2 variant, whose only end trigger is a full city: can any
    player still fill his 12 city spaces with the buildings left in the supply? Supplies only
    shrink, so once no one can, the game could never end; the end is then triggered."""
    cdef int i, b, free, small, large, l
    cdef const PRPlayer* p
    for i in range(s.n_players):
        p = &s.players[i]
        free = CITY_SPACES - city_used(p)
        small = 0
        large = 0
        for b in range(NUM_BUILDINGS):
            if s.building_supply[b] > 0 and not owns(p, b):
                if BUILDING[b].spaces == 1:
                    small += 1
                else:
                    large += 1
        l = large if large < free // 2 else free // 2
        if free - 2 * l <= small:
            return True
    return False

cdef void place_building(PRState* s, int b) noexcept nogil:
    cdef PRPlayer* p = &s.players[s.player]
    cdef int col
    p.owned |= (<uint64>1) << b
    p.workers[b] = 0
    s.building_supply[b] -= 1
    if s.building_supply[b] == 0:
        s.in_supply &= ~((<uint64>1) << b)
    s.last_building = b
    if city_used(p) == CITY_SPACES:           # city trigger (§7.1.2), also in the variant
        s.end_triggered = 1
    elif (s.options & OPT_ALL_COLONISTS_AND_VP) and not s.end_triggered and not city_fillable(s):
        s.end_triggered = 1                   # the variant could never end otherwise (see city_fillable)
    if b != CHURCH and works(p, CHURCH):      # §8.5.7, OPEN-18
        col = BUILDING[b].column
        award_vp(s, s.player, 2 if col == 4 else (1 if col >= 2 else 0))
    if works(p, UNIVERSITY) and colonist_available(s):
        s.step = STEP_UNIVERSITY
    else:
        turn_done(s)


# --- Craftsman (§4.4, §5) ---------------------------------------------------

cdef inline int specialty_pay(const int8* amounts) noexcept nogil:
    """§8.5.10: the largest number of one non-corn kind received, less 1 (0 if none)."""
    cdef int k, best = 0
    for k in range(1, NUM_GOODS):
        if amounts[k] > best:
            best = amounts[k]
    return best - 1 if best > 0 else 0

cdef inline int good_amount(const PRState* s, const PRPlayer* p, int k, bint aqueduct) noexcept nogil:
    """What p's board makes of good k now: its occupied plantations, up to the occupied
    circles of its plants (corn needs none), the Aqueduct's +1, the supply's limit."""
    cdef int amount, capacity = 0
    cdef uint64 m
    if k == CORN:
        amount = p.manned[CORN]
    else:
        m = p.owned & PRODUCERS[k]
        while m:
            capacity += p.workers[ctz64(m)]
            m &= m - 1
        amount = p.manned[k] if p.manned[k] < capacity else capacity
        # §8.5.1, OPEN-14: output goes to the large plant first, +1 if it produced
        if aqueduct and amount > 0 and (k == INDIGO or k == SUGAR) \
                and p.workers[INDIGO_PLANT if k == INDIGO else SUGAR_MILL] > 0:
            amount += 1
    return amount if amount < s.goods_supply[k] else s.goods_supply[k]

cdef inline uint8 production(const PRState* s, const PRPlayer* p, int8* amounts) noexcept nogil:
    """What p's board produces now (Aqueduct included, limited by the supply) into
    `amounts`; returns the kinds received as bits."""
    cdef int k
    cdef uint8 received = 0
    cdef bint aqueduct = works(p, AQUEDUCT)
    for k in range(NUM_GOODS):
        amounts[k] = good_amount(s, p, k, aqueduct)
        received |= (amounts[k] > 0) << k
    return received


cdef uint8 produce(PRState* s, int seat) noexcept nogil:
    """Give `seat` his production (Aqueduct included); pay his Factory and, unless he is
    the Craftsman, his Specialty factory. Returns the kinds received."""
    cdef PRPlayer* p = &s.players[seat]
    cdef int k
    cdef int8 amounts[NUM_GOODS]
    cdef uint8 received = production(s, p, amounts)
    for k in range(NUM_GOODS):
        p.goods[k] += amounts[k]
        s.goods_supply[k] -= amounts[k]
    if works(p, FACTORY):
        p.doubloons += FACTORY_PAY[bit_count(received)]
    if seat == s.chooser:
        for k in range(NUM_GOODS):
            s.craft_amount[k] = amounts[k]
    elif works(p, SPECIALTY_FACTORY):
        p.doubloons += specialty_pay(amounts)
    return received

cdef inline void craft_turn(PRState* s) noexcept nogil:
    """Production of the seat at turns_done, then the next seat."""
    cdef uint8 k = produce(s, s.player)
    if s.turns_done == 0:
        s.craftsman_received = k
    s.turns_done += 1

cdef void craftsman(PRState* s) noexcept nogil:
    """Production clockwise from the Craftsman (§4.4); just before his own, a Guest-house
    owner may move guests (§8.5.5)."""
    while s.turns_done < s.n_players:
        s.player = seat_from(s, s.chooser, s.turns_done)
        if (s.options & OPT_EXPANSION) and guest_turn(s):
            return
        craft_turn(s)
    s.turns_done = 0
    s.player = s.chooser
    s.privilege_left = privilege_factor(s)
    craftsman_privilege_or_end(s)

cdef void craftsman_privilege_or_end(PRState* s) noexcept nogil:
    """The Craftsman's next privilege good (Library: two), then his Specialty factory (OPEN-15)."""
    cdef int k
    cdef PRPlayer* p = &s.players[s.chooser]
    if s.privilege_left > 0:
        for k in range(NUM_GOODS):
            if (s.craftsman_received >> k) & 1 and s.goods_supply[k] > 0:
                s.step = STEP_PRIVILEGE
                return
    s.privilege_left = 0
    if works(p, SPECIALTY_FACTORY):
        p.doubloons += specialty_pay(s.craft_amount)
    end_phase(s)


# --- Trader (§4.5) ----------------------------------------------------------

cdef inline bint can_sell(const PRState* s, int seat, int k) noexcept nogil:
    return (s.players[seat].goods[k] > 0 and s.house_count < HOUSE_SPACES
            and (s.house[k] == 0 or works(&s.players[seat], OFFICE)))

cdef bint trader_can_act(const PRState* s, int seat) noexcept nogil:
    cdef int k
    if works(&s.players[seat], TRADING_POST) and goods_held(&s.players[seat]) > 0:
        return True                           # §8.5.6, OPEN-20: even with a full house
    for k in range(NUM_GOODS):
        if can_sell(s, seat, k):
            return True
    return False

cdef void trader_seek(PRState* s) noexcept nogil:
    cdef int k
    while s.turns_done < s.n_players:
        s.player = seat_from(s, s.chooser, s.turns_done)
        if trader_can_act(s, s.player):
            s.step = STEP_SELL
            return
        if guest_turn(s):
            return
        s.turns_done += 1
    if s.house_count == HOUSE_SPACES:          # a full house is emptied at the end of the phase
        for k in range(NUM_GOODS):
            s.goods_supply[k] += s.house[k]
            s.house[k] = 0
        s.house_count = 0
    end_phase(s)

cdef void sell(PRState* s, int k) noexcept nogil:
    cdef PRPlayer* p = &s.players[s.player]
    cdef int price = PRICE[k]
    if s.player == s.chooser:
        price += privilege_factor(s)
    if works(p, SMALL_MARKET):
        price += 1
    if works(p, LARGE_MARKET):
        price += 2
    p.goods[k] -= 1
    p.doubloons += price
    s.house[k] += 1
    s.house_count += 1
    turn_done(s)

cdef void sell_to_post(PRState* s, int k) noexcept nogil:
    """§8.5.6: price + the Trader's privilege, no market bonus; the good goes to the supply."""
    cdef PRPlayer* p = &s.players[s.player]
    cdef int price = PRICE[k]
    if s.player == s.chooser:
        price += privilege_factor(s)
    p.goods[k] -= 1
    s.goods_supply[k] += 1
    p.doubloons += price
    turn_done(s)


# --- Captain (§4.6) ---------------------------------------------------------

cdef int cargo_options(const PRState* s, int seat, int16* out) noexcept nogil:
    """(good, ship) loads allowed for `seat`: the ship carrying the good, else the
    empty ships that take the most of it (§4.6); with out == NULL, 1 if there is any."""
    cdef const PRPlayer* p = &s.players[seat]
    cdef int k, i, held, best, load, n = 0
    cdef int8 carrier[NUM_GOODS]              # the ship carrying each kind, -1 if none
    cdef int empty = 0                        # bit i: ship i is empty
    carrier[0] = carrier[1] = carrier[2] = carrier[3] = carrier[4] = -1
    for i in range(s.n_ships):
        if s.ship_good[i] >= 0:
            carrier[s.ship_good[i]] = i
        else:
            empty |= 1 << i
    for k in range(NUM_GOODS):
        held = p.goods[k]
        if held == 0:
            continue
        i = carrier[k]
        if i >= 0:
            if s.ship_load[i] < s.ship_capacity[i]:
                if out == NULL:
                    return 1
                out[n] = A_SHIP + k * MAX_SHIPS + i
                n += 1
            continue
        if empty == 0:
            continue
        if out == NULL:                       # an empty ship takes any kind no ship carries
            return 1
        best = 0
        for i in range(s.n_ships):
            if (empty >> i) & 1:
                load = held if held < s.ship_capacity[i] else s.ship_capacity[i]
                if load > best:
                    best = load
        for i in range(s.n_ships):
            if (empty >> i) & 1:
                load = held if held < s.ship_capacity[i] else s.ship_capacity[i]
                if load == best:
                    out[n] = A_SHIP + k * MAX_SHIPS + i
                    n += 1
    return n

cdef inline bint wharf_ready(const PRState* s, int seat) noexcept nogil:
    return works(&s.players[seat], WHARF) and not (s.wharf_used >> seat) & 1 \
        and goods_held(&s.players[seat]) > 0

cdef inline bint small_wharf_ready(const PRState* s, int seat) noexcept nogil:
    return works(&s.players[seat], SMALL_WHARF) and not (s.small_wharf_used >> seat) & 1 \
        and goods_held(&s.players[seat]) > 0

cdef void start_captain(PRState* s) noexcept nogil:
    cdef int i, _, k, vp, seat
    cdef PRPlayer* p
    s.idle_turns = 0
    s.wharf_used = 0
    s.small_wharf_used = 0
    s.captain_bonus_given = 0
    if s.options & OPT_EXPANSION:
        if works(&s.players[s.chooser], LIGHTHOUSE):     # OPEN-22: never doubled
            s.players[s.chooser].doubloons += 1
        vp = 0
        for i in range(s.n_players):                     # usually no one has an occupied Union hall
            vp |= s.players[i].workers[UNION_HALL]
        if vp:
            seat = s.chooser
            for _ in range(s.n_players):                 # OPEN-23: Union hall, before loading
                p = &s.players[seat]
                if works(p, UNION_HALL):
                    vp = 0
                    for k in range(NUM_GOODS):
                        vp += p.goods[k] // 2
                    award_vp(s, seat, vp)
                seat = next_seat(s, seat)
    s.player = s.chooser
    captain_seek(s)

cdef inline bint captain_can_act(const PRState* s, int seat) noexcept nogil:
    return cargo_options(s, seat, NULL) > 0 or wharf_ready(s, seat) or small_wharf_ready(s, seat)

cdef void captain_seek(PRState* s) noexcept nogil:
    """Loading goes round until a full cycle passes with no loading action."""
    while s.idle_turns < s.n_players:
        if captain_can_act(s, s.player):
            s.step = STEP_LOAD
            return
        if guest_turn(s):
            return
        s.idle_turns += 1
        s.player = next_seat(s, s.player)
    s.turns_done = 0
    storage_seek(s)

cdef void shipped(PRState* s, int vp) noexcept nogil:
    """VP for one loading action: `vp` for the goods, Harbor +1, the Captain's first +1
    (Library: +2); an occupied Lighthouse pays 1 doubloon."""
    cdef PRPlayer* p = &s.players[s.player]
    if works(p, HARBOR):
        vp += 1
    if works(p, LIGHTHOUSE):
        p.doubloons += 1
    if s.player == s.chooser and not s.captain_bonus_given:
        vp += privilege_factor(s)
        s.captain_bonus_given = 1
    award_vp(s, s.player, vp)
    s.idle_turns = 0
    s.player = next_seat(s, s.player)
    captain_seek(s)


# --- Storage at the end of the Captain phase (§4.6) --------------------------

cdef int warehouse_kinds(const PRPlayer* p) noexcept nogil:
    return (1 if works(p, SMALL_WAREHOUSE) else 0) + (2 if works(p, LARGE_WAREHOUSE) else 0)

cdef inline bint can_keep(const PRState* s, const PRPlayer* p, int k) noexcept nogil:
    """One more single barrel of kind k (kinds in non-decreasing order)."""
    return k >= s.last_keep and p.goods[k] > s.keep_n[k] and not (s.kept >> k) & 1

cdef inline bint barrel_choice(const PRState* s) noexcept nogil:
    cdef const PRPlayer* p = &s.players[s.player]
    cdef int k
    if s.barrels_left <= 0:
        return False
    for k in range(NUM_GOODS):
        if can_keep(s, p, k):
            return True
    return False

cdef inline bint warehouse_choice(const PRState* s) noexcept nogil:
    cdef const PRPlayer* p = &s.players[s.player]
    cdef int k
    if s.warehouse_left == 0:
        return False
    for k in range(s.last_warehouse + 1, NUM_GOODS):
        if p.goods[k] > 0:
            return True
    return False

cdef void storage_seek(PRState* s) noexcept nogil:
    """Each player with goods chooses what to keep; then full ships are emptied."""
    cdef int k, i
    while s.turns_done < s.n_players:
        s.player = seat_from(s, s.chooser, s.turns_done)
        if goods_held(&s.players[s.player]) > 0:
            s.kept = 0
            s.last_warehouse = -1
            s.warehouse_left = warehouse_kinds(&s.players[s.player])
            s.barrels_left = 4 if works(&s.players[s.player], STOREHOUSE) else 1   # §8.5.4
            s.last_keep = -1
            for k in range(NUM_GOODS):
                s.keep_n[k] = 0
            s.step = STEP_WAREHOUSE if warehouse_choice(s) else STEP_KEEP
            return
        s.turns_done += 1
    for i in range(s.n_ships):
        if s.ship_load[i] == s.ship_capacity[i]:
            s.goods_supply[s.ship_good[i]] += s.ship_load[i]
            s.ship_load[i] = 0
            s.ship_good[i] = -1
    s.kept = 0
    s.warehouse_left = 0
    s.last_warehouse = -1
    s.barrels_left = 0
    s.last_keep = -1
    for k in range(NUM_GOODS):
        s.keep_n[k] = 0
    end_phase(s)

cdef void finish_storage(PRState* s) noexcept nogil:
    """Return every good not kept (warehouse kinds and the single barrels stay)."""
    cdef PRPlayer* p = &s.players[s.player]
    cdef int k, back
    for k in range(NUM_GOODS):
        if (s.kept >> k) & 1:
            continue
        back = p.goods[k] - s.keep_n[k]
        p.goods[k] -= back
        s.goods_supply[k] += back
        s.keep_n[k] = 0
    s.barrels_left = 0
    s.last_keep = -1
    turn_done(s)


# ---------------------------------------------------------------------------
# 4. Legal actions (sorted ids) and apply
# ---------------------------------------------------------------------------

cdef int pr_current_player(const PRState* s) noexcept nogil:
    if s.step == STEP_TERMINAL:
        return PLAYER_TERMINAL
    if is_chance_step(s.step):
        return PLAYER_CHANCE
    return s.player


cdef uint64 draft_mask(const PRState* s) noexcept nogil:
    """§8.2: the violet kinds not placed, not excluded, whose cost has an empty slot, as a
    building mask (slots counted once)."""
    cdef uint64 placed = s.in_play & VIOLET_MASK
    cdef uint64 m, x, open_ = 0
    cdef int c, j
    # without branches (both loops unroll over the constant slot counts): x drops the first
    # DRAFT_SLOTS[c] - 1 kinds placed of cost c, so x == 0 means a slot of cost c is open
    for c in range(1, 11):
        x = placed & COST_MASK[c]
        for j in range(1, 5):                 # (at most 5 slots per cost)
            x &= x - (j < DRAFT_SLOTS[c])
        open_ |= COST_MASK[c] & ((<uint64>(x != 0)) - 1)
    m = open_ & ~placed
    # OPEN-27/28 exclusions, as masks (none with exclusions=False)
    placed &= (<uint64>((s.options & OPT_NO_EXCLUSIONS) != 0)) - 1
    m &= ~(((placed >> HACIENDA) & 1) << FOREST_HOUSE)
    m &= ~(((placed >> FOREST_HOUSE) & 1) << HACIENDA)
    m &= ~(((placed >> OFFICE) & 1) << TRADING_POST)
    return m & ~(((placed >> TRADING_POST) & 1) << OFFICE)

cdef int draft_options(const PRState* s, int16* out) noexcept nogil:
    """The draft_mask kinds as action ids (sorted)."""
    cdef uint64 m = draft_mask(s)
    cdef int n = 0
    while m:
        out[n] = A_DRAFT + ctz64(m) - FIRST_VIOLET
        n += 1
        m &= m - 1
    return n

cdef int guest_moves(const PRState* s, int16* out) noexcept nogil:
    """OPEN-19: at the start of his own decisions outside the Mayor phase the owner may move
    a guest to a free circle of a tile or another building (one move per action).
    Branch-free (which circles are free is unpredictable): every candidate is written and
    kept only if free, so out[n] (one past the moves) is scratch; the legal buffers hold
    NUM_ACTIONS ids, far more than a decision ever has."""
    cdef const PRPlayer* p = &s.players[s.player]
    cdef int k, b, n = 0
    cdef uint64 m
    if p.workers[GUEST_HOUSE] == 0 or s.phase == PHASE_MAYOR:
        return 0
    for k in range(NUM_MANNED_KINDS):
        out[n] = A_GUEST + k
        n += p.tiles[k] > p.manned[k]
    m = p.owned & ~((<uint64>1) << GUEST_HOUSE)
    while m:
        b = ctz64(m)
        out[n] = A_GUEST + NUM_MANNED_KINDS + b
        n += BUILDING[b].circles > p.workers[b]
        m &= m - 1
    return n

# --- Guest moves at a turn he would skip (§8.5.5: "at any time during any of his turns") ---
# Only circles whose occupation decides whether he has a choice at that turn are tried:
# Settler Hacienda / Construction hut / Library (second pick), Builder quarry / Library /
# Black market, Trader Office / Trading post, Captain Wharf / Small wharf. Every other
# building only changes what a choice yields, and those moves go with the decision itself.
# Just before his Craftsman production (automatic) an owner may move guests to the
# circles that change what he produces or is paid.

cdef uint64 guest_turn_slots(const PRState* s) noexcept nogil:
    """The slots (bit = slot) whose guest can open a choice in the current phase."""
    cdef uint64 one = 1
    if s.phase == PHASE_SETTLER:
        return (one << (NUM_MANNED_KINDS + HACIENDA)) | (one << (NUM_MANNED_KINDS + CONSTRUCTION_HUT)) \
            | (one << (NUM_MANNED_KINDS + LIBRARY))
    if s.phase == PHASE_BUILDER:
        return (one << QUARRY) | (one << (NUM_MANNED_KINDS + LIBRARY)) | (one << (NUM_MANNED_KINDS + BLACK_MARKET))
    if s.phase == PHASE_TRADER:
        return (one << (NUM_MANNED_KINDS + OFFICE)) | (one << (NUM_MANNED_KINDS + TRADING_POST))
    if s.phase == PHASE_CAPTAIN:
        return (one << (NUM_MANNED_KINDS + WHARF)) | (one << (NUM_MANNED_KINDS + SMALL_WHARF))
    if s.phase == PHASE_CRAFTSMAN:            # plantations, production buildings, their bonuses
        return 0x1F | (((PRODUCERS[0] | PRODUCERS[1] | PRODUCERS[2] | PRODUCERS[3] | PRODUCERS[4]
                         | (one << AQUEDUCT) | (one << FACTORY) | (one << SPECIALTY_FACTORY))
                        & s.players[s.player].owned) << NUM_MANNED_KINDS)
    return 0

cdef bint turn_can_act(const PRState* s) noexcept nogil:
    """Whether `player` has a choice at his turn of the current phase (the seek tests)."""
    if s.phase == PHASE_SETTLER:
        return library_can_act(s) if s.turns_done >= s.n_players else settler_can_act(s, s.player)
    if s.phase == PHASE_BUILDER:
        return build_options(s, s.player, NULL) > 0
    if s.phase == PHASE_TRADER:
        return trader_can_act(s, s.player)
    if s.phase == PHASE_CRAFTSMAN:
        return False
    return captain_can_act(s, s.player)

cdef inline void move_guest(PRPlayer* p, int slot) noexcept nogil:
    p.workers[GUEST_HOUSE] -= 1
    if slot < NUM_MANNED_KINDS:
        p.manned[slot] += 1
    else:
        p.workers[slot - NUM_MANNED_KINDS] += 1

cdef inline bint slot_free(const PRPlayer* p, int slot) noexcept nogil:
    if slot < NUM_MANNED_KINDS:
        return p.tiles[slot] > p.manned[slot]
    return (owns(p, slot - NUM_MANNED_KINDS)
            and BUILDING[slot - NUM_MANNED_KINDS].circles > p.workers[slot - NUM_MANNED_KINDS])

cdef uint64 guest_outcome(const PRState* s, int slot, int slot2) noexcept nogil:
    """What guests to `slot` and `slot2` (-1: none) give `player` at this turn: whether he
    has a choice; before his Craftsman production, his goods per kind and the doubloons of
    his Factory and Specialty factory, as one number."""
    cdef PRState c
    cdef PRPlayer q
    cdef int8 amounts[NUM_GOODS]
    cdef int k
    cdef uint8 received
    cdef uint64 v = 0
    if s.phase != PHASE_CRAFTSMAN:
        if slot < 0 and slot2 < 0:            # no guest moved: the state itself, no copy
            return turn_can_act(s)
        memcpy(&c, s, sizeof(PRState))
        if slot >= 0:
            move_guest(&c.players[c.player], slot)
        if slot2 >= 0:
            move_guest(&c.players[c.player], slot2)
        return turn_can_act(&c)
    q = s.players[s.player]                   # (production reads only his board and the supply)
    if slot >= 0:
        move_guest(&q, slot)
    if slot2 >= 0:
        move_guest(&q, slot2)
    received = production(s, &q, amounts)
    if works(&q, FACTORY):
        v += FACTORY_PAY[bit_count(received)]
    if works(&q, SPECIALTY_FACTORY):
        v += specialty_pay(amounts)
    for k in range(NUM_GOODS):
        v = v * 32 + amounts[k]               # (goods of a kind < 32: 11 at most)
    return v

cdef int guest_turn_moves(const PRState* s, int16* out, bint first=False) noexcept nogil:
    """The guest moves that change what `player` gets at a turn he would skip (a choice) or
    at his Craftsman production, alone or added to his other guest's move; a move whose
    partner would do as much alone is left out (ids, sorted; with `first`, the first)."""
    cdef PRState c
    cdef const PRPlayer* p = &s.players[s.player]
    cdef uint64 cand = 0, m = guest_turn_slots(s), m2
    cdef uint64 single[NUM_SLOTS]
    cdef uint64 base
    cdef int x, y, n = 0
    cdef bint helps
    if not (s.options & OPT_EXPANSION) or p.workers[GUEST_HOUSE] == 0:
        return 0
    while m:                                  # the free circles that may matter
        x = ctz64(m)
        if slot_free(p, x):
            cand |= (<uint64>1) << x
        m &= m - 1
    if cand == 0:
        return 0
    base = guest_outcome(s, -1, -1)
    m = cand
    while m:                                  # each move alone, once
        x = ctz64(m)
        single[x] = guest_outcome(s, x, -1)
        if first and single[x] != base:
            out[0] = A_GUEST + x
            return 1
        m &= m - 1
    m = cand
    while m:
        x = ctz64(m)
        helps = single[x] != base
        if not helps and p.workers[GUEST_HOUSE] >= 2:
            memcpy(&c, s, sizeof(PRState))
            move_guest(&c.players[c.player], x)
            m2 = cand
            while m2 and not helps:
                y = ctz64(m2)
                helps = slot_free(&c.players[c.player], y) and guest_outcome(s, x, y) != single[y]
                m2 &= m2 - 1
        if helps:
            out[n] = A_GUEST + x
            n += 1
            if first:
                return n
        m &= m - 1
    return n

cdef inline bint guest_turn(PRState* s) noexcept nogil:
    """At a turn `player` has no choice: stop at STEP_GUEST if a guest move would open one."""
    cdef int16 buf[NUM_SLOTS]
    if s.players[s.player].workers[GUEST_HOUSE] == 0 or guest_turn_moves(s, buf, True) == 0:
        return False
    s.step = STEP_GUEST
    return True

cdef void guest_turn_resume(PRState* s, bint passed) noexcept nogil:
    """After a move at STEP_GUEST: his decision if he now has one, else STEP_GUEST again (his
    second guest must follow); after `pass` the turn is skipped as it would have been."""
    cdef int16 buf[NUM_SLOTS]
    if s.phase == PHASE_CRAFTSMAN:           # his production, then the next seat's turn
        if passed or s.players[s.player].workers[GUEST_HOUSE] == 0 or guest_turn_moves(s, buf, True) == 0:
            craft_turn(s)
            craftsman(s)
        return
    if not passed:
        if turn_can_act(s):
            if s.phase == PHASE_SETTLER:
                s.step = STEP_LIBRARY if s.turns_done >= s.n_players else STEP_SETTLE
            elif s.phase == PHASE_BUILDER:
                s.step = STEP_BUILD
            elif s.phase == PHASE_TRADER:
                s.step = STEP_SELL
            else:
                s.step = STEP_LOAD
        return
    if s.phase == PHASE_CAPTAIN:
        s.idle_turns += 1
        s.player = next_seat(s, s.player)
        captain_seek(s)
        return
    if s.turns_done < s.n_players:
        s.turns_done += 1
    if s.phase == PHASE_SETTLER:
        settler_seek(s)
    elif s.phase == PHASE_BUILDER:
        builder_seek(s)
    else:
        trader_seek(s)


cdef int black_market_options(const PRState* s, int16* out) noexcept nogil:
    """Black-market items (§8.5.3): categories 0 VP chip, 1 colonist, 2 good go in increasing
    order, and the categories after the one chosen must still cover the rest of the shortfall."""
    cdef const PRPlayer* p = &s.players[s.player]
    cdef int n = 0, k, b, need = s.bm_left - 1
    cdef uint64 m
    cdef bint vp_ok = p.vp > 0                                        # availability, once
    cdef bint colonist_ok = other_colonist(p, BLACK_MARKET)
    cdef bint good_ok = goods_held(p) > 0
    if s.bm_last < 0 and vp_ok and colonist_ok + good_ok >= need:
        out[n] = A_BM_VP
        n += 1
    if s.bm_last < 2 and good_ok and 0 >= need:
        n = append_kinds(out, n, A_BM_GOOD, p.goods)
    if s.bm_last < 1 and colonist_ok and good_ok >= need:
        for k in range(NUM_MANNED_KINDS):     # (branch-free, as append_kinds)
            out[n] = A_BM_COLONIST + k
            n += p.manned[k] > 0
        m = p.owned & ~((<uint64>1) << BLACK_MARKET)
        while m:
            b = ctz64(m)
            out[n] = A_BM_COLONIST + NUM_MANNED_KINDS + b
            n += p.workers[b] > 0
            m &= m - 1
        out[n] = A_BM_COLONIST + NUM_SLOTS
        n += p.san_juan > 0
    return n


cdef int pr_legal_actions(const PRState* s, int16* out) noexcept nogil:
    return legal_actions_impl(s, out)


cdef inline bint guests_may_move(const PRState* s, const PRPlayer* p, int step) noexcept nogil:
    """OPEN-19: guest moves go with the player's decisions, only at their start."""
    return (p.workers[GUEST_HOUSE] and step != STEP_MAYOR and step != STEP_BLACK_MARKET
            and step != STEP_SMALL_WHARF
            and not ((step == STEP_WAREHOUSE or step == STEP_KEEP)
                     and (s.kept or s.last_keep >= 0 or s.last_warehouse >= 0)))


cdef int expansion_legal_actions(const PRState* s, int16* out) noexcept nogil:
    """The expansion-only steps (draft, library, black_market, small_wharf)."""
    cdef int n = 0, k, step = s.step, seat = s.player
    cdef const PRPlayer* p = &s.players[seat]
    if step == STEP_DRAFT:
        return draft_options(s, out)
    if step == STEP_GUEST:
        out[0] = A_PASS
        return 1 + guest_turn_moves(s, out + 1)
    if step == STEP_LIBRARY:
        if island_used(p) < ISLAND_SPACES:
            n = append_kinds(out, n, A_SETTLE, s.face_up)
            if library_quarry(s):
                out[n] = A_QUARRY
                n += 1
        out[n] = A_PASS
        n += 1
        if island_used(p) < ISLAND_SPACES and can_take_forest(s, seat):
            n = append_kinds(out, n, A_FOREST, s.face_up)
    elif step == STEP_BLACK_MARKET:
        n = black_market_options(s, out)
    elif step == STEP_SMALL_WHARF:
        for k in range(s.sw_last, NUM_GOODS):
            if p.goods[k] > 0:
                out[n] = A_SWHARF + k
                n += 1
        out[n] = A_SWHARF_DONE
        n += 1
    if guests_may_move(s, p, step):
        n += guest_moves(s, out + n)
    return n


cdef inline uint32 role_choices(const PRState* s) noexcept nogil:
    """The role cards that may be taken, as bits."""
    cdef uint32 roles = s.cards_in_play & ~s.cards_taken
    # the two Prospector cards differ only by their doubloons
    if (roles >> PROSPECTOR_2) & 1 and not (s.cards_taken >> PROSPECTOR) & 1 \
            and s.card_doubloons[PROSPECTOR] == s.card_doubloons[PROSPECTOR_2]:
        roles &= ~(1 << PROSPECTOR_2)
    return roles


cdef int legal_actions_impl(const PRState* s, int16* out) noexcept nogil:
    """Sorted legal ids. Expansion games add, at the base steps, their own actions (ids
    above 142, after the base ones) and then the Guest-house moves (the highest ids)."""
    cdef int n = 0, k, c, b, seat = s.player
    cdef const PRPlayer* p = &s.players[seat]
    cdef int step = s.step
    cdef bint exp = s.options & OPT_EXPANSION
    cdef uint32 roles
    if step >= STEP_DRAFT:
        return expansion_legal_actions(s, out)
    if step == STEP_ROLE:
        roles = role_choices(s)
        while roles:
            out[n] = A_ROLE + ctz64(roles)
            n += 1
            roles &= roles - 1
    elif step == STEP_SETTLE:
        if island_used(p) < ISLAND_SPACES:
            n = append_kinds(out, n, A_SETTLE, s.face_up)
            if can_take_quarry(s, seat):
                out[n] = A_QUARRY
                n += 1
            if can_draw_hacienda(s, seat):
                out[n] = A_HACIENDA
                n += 1
        out[n] = A_PASS
        n += 1
        if exp and can_take_forest(s, seat) and island_used(p) < ISLAND_SPACES:
            n = append_kinds(out, n, A_FOREST, s.face_up)
    elif step == STEP_HOSPICE:
        # (a guest may have taken the new tile's circle meanwhile; a forest: San Juan)
        if s.last_tile == FOREST or p.manned[s.last_tile] < p.tiles[s.last_tile]:
            out[n] = A_HOSPICE
            n += 1
        out[n] = A_PASS
        n += 1
    elif step == STEP_MAYOR:
        n = mayor_choices(s)
        for k in range(n):
            out[k] = A_MAYOR + s.mayor_slot[s.mayor_first + k]
    elif step == STEP_BUILD:
        n = build_options(s, seat, out)
        out[n] = A_PASS
        n += 1
    elif step == STEP_UNIVERSITY:
        b = s.last_building
        if BUILDING[b].circles == 0 or p.workers[b] < BUILDING[b].circles:
            out[n] = A_UNIVERSITY
            n += 1
        out[n] = A_PASS
        n += 1
    elif step == STEP_PRIVILEGE:
        for k in range(NUM_GOODS):
            if (s.craftsman_received >> k) & 1 and s.goods_supply[k] > 0:
                out[n] = A_PRIVILEGE + k
                n += 1
        out[n] = A_PASS                       # privileges are voluntary (§3.3)
        n += 1
    elif step == STEP_SELL:
        for k in range(NUM_GOODS):
            if can_sell(s, seat, k):
                out[n] = A_SELL + k
                n += 1
        out[n] = A_PASS
        n += 1
        if exp and works(p, TRADING_POST):
            n = append_kinds(out, n, A_POST, p.goods)
    elif step == STEP_LOAD:
        n = cargo_options(s, seat, out)
        c = n
        if wharf_ready(s, seat):
            for k in range(NUM_GOODS):
                if p.goods[k] > 0:
                    out[n] = A_WHARF + k
                    n += 1
        if c == 0:                            # passing is allowed only when no ship can load
            out[n] = A_PASS
            n += 1
        if exp and small_wharf_ready(s, seat):
            n = append_kinds(out, n, A_SWHARF, p.goods)
    elif step == STEP_WAREHOUSE:
        for k in range(s.last_warehouse + 1, NUM_GOODS):
            if p.goods[k] > 0:
                out[n] = A_WAREHOUSE + k
                n += 1
        out[n] = A_PASS
        n += 1
    elif step == STEP_KEEP:
        for k in range(NUM_GOODS):
            if can_keep(s, p, k):
                out[n] = A_KEEP + k
                n += 1
        out[n] = A_PASS
        n += 1
    elif step == STEP_DRAW_FACE_UP or step == STEP_DRAW_HACIENDA:
        for k in range(NUM_GOODS):
            if s.stack[k] > 0:
                out[n] = A_DRAW + k
                n += 1
        return n
    if exp and step != STEP_TERMINAL and guests_may_move(s, p, step):
        n += guest_moves(s, out + n)
    return n


cdef void pr_apply(PRState* s, int a) noexcept nogil:
    """Apply a legal action (the caller has checked legality)."""
    cdef int step = s.step, k, amount
    cdef PRPlayer* p = &s.players[s.player]
    if step == STEP_DRAW_FACE_UP or step == STEP_DRAW_HACIENDA:
        rng_next(&s.rng)                     # every chance event advances the RNG by one step
    if a >= A_DRAFT and step != STEP_DRAW_FACE_UP and step != STEP_DRAW_HACIENDA:
        apply_expansion(s, a)
        return
    if step == STEP_ROLE:
        start_phase(s, a - A_ROLE)
    elif step == STEP_SETTLE or step == STEP_LIBRARY:
        if a == A_PASS:
            if step == STEP_LIBRARY:
                s.step = STEP_SETTLE
                settler_seek(s)
            else:
                turn_done(s)
        elif a == A_HACIENDA:
            s.hacienda_used = 1
            reshuffle_if_empty(s)
            s.step = STEP_DRAW_HACIENDA
        elif a == A_QUARRY:
            s.quarries -= 1
            p.tiles[QUARRY] += 1
            took_tile(s, QUARRY)
        else:
            k = a - A_SETTLE
            s.face_up[k] -= 1
            p.tiles[k] += 1
            took_tile(s, k)
    elif step == STEP_HOSPICE:
        if a == A_HOSPICE:
            take_colonist(s)
            if s.last_tile == FOREST:          # §8.4: a forest has no circle
                p.san_juan += 1
            else:
                p.manned[s.last_tile] += 1
        turn_done(s)
    elif step == STEP_MAYOR:
        k = s.mayor_first                  # the entry of the slot (a legal one: it is listed)
        while s.mayor_slot[k] != a - A_MAYOR:
            k += 1
        mayor_place(s, k)
    elif step == STEP_BUILD:
        if a == A_PASS:
            turn_done(s)
        else:
            build(s, a - A_BUILD)
    elif step == STEP_UNIVERSITY:
        if a == A_UNIVERSITY:
            take_colonist(s)
            if BUILDING[s.last_building].circles == 0:   # Statue: to San Juan (§8.5.13)
                p.san_juan += 1
            else:
                p.workers[s.last_building] += 1
        turn_done(s)
    elif step == STEP_PRIVILEGE:
        if a != A_PASS:
            k = a - A_PRIVILEGE
            s.goods_supply[k] -= 1
            p.goods[k] += 1
            s.craft_amount[k] += 1
            s.privilege_left -= 1
        else:
            s.privilege_left = 0
        craftsman_privilege_or_end(s)
    elif step == STEP_SELL:
        if a == A_PASS:
            turn_done(s)
        else:
            sell(s, a - A_SELL)
    elif step == STEP_LOAD:
        if a == A_PASS:
            s.idle_turns += 1
            s.player = next_seat(s, s.player)
            captain_seek(s)
        elif a >= A_WHARF:
            k = a - A_WHARF
            s.goods_supply[k] += p.goods[k]
            s.wharf_used |= 1 << s.player
            amount = p.goods[k]
            p.goods[k] = 0
            shipped(s, amount)
        else:
            load_cargo(s, (a - A_SHIP) // MAX_SHIPS, (a - A_SHIP) % MAX_SHIPS)
    elif step == STEP_WAREHOUSE:
        if a == A_PASS:
            s.warehouse_left = 0
        else:
            k = a - A_WAREHOUSE
            s.kept |= 1 << k
            s.last_warehouse = k
            s.warehouse_left -= 1
        if not warehouse_choice(s):
            if barrel_choice(s):
                s.step = STEP_KEEP
            else:
                finish_storage(s)
    elif step == STEP_KEEP:
        if a == A_PASS:
            finish_storage(s)
        else:
            k = a - A_KEEP
            s.keep_n[k] += 1
            s.barrels_left -= 1
            s.last_keep = k
            if not barrel_choice(s):
                finish_storage(s)
    elif step == STEP_DRAW_FACE_UP:
        k = a - A_DRAW
        s.stack[k] -= 1
        s.face_up[k] += 1
        s.to_draw -= 1
        draw_face_up_or_finish(s)
    elif step == STEP_GUEST:                # pass: the turn is skipped as it would have been
        guest_turn_resume(s, True)
    elif step == STEP_DRAW_HACIENDA:
        k = a - A_DRAW
        s.stack[k] -= 1
        p.tiles[k] += 1                    # the drawn tile is never manned by the Hospice
        if settler_can_act(s, s.player):
            s.step = STEP_SETTLE
        else:
            turn_done(s)


cdef void apply_expansion(PRState* s, int a) noexcept nogil:
    """Apply an expansion action (ids A_DRAFT and above)."""
    cdef PRPlayer* p = &s.players[s.player]
    cdef int k, slot, b, placed
    if a >= A_GUEST:                           # OPEN-19: the decision itself stays pending
        move_guest(p, a - A_GUEST)
        # the guest works at once: refresh what the pending decision offers
        if s.step == STEP_GUEST:
            guest_turn_resume(s, False)
        elif s.step == STEP_WAREHOUSE or s.step == STEP_KEEP:
            s.warehouse_left = warehouse_kinds(p)
            s.barrels_left = 4 if works(p, STOREHOUSE) else 1
            s.step = STEP_WAREHOUSE if warehouse_choice(s) else STEP_KEEP
        elif s.step == STEP_PRIVILEGE:
            s.privilege_left = privilege_factor(s)
    elif a < A_FOREST:                         # draft (§8.2)
        b = a - A_DRAFT + FIRST_VIOLET
        s.in_play |= (<uint64>1) << b
        s.building_supply[b] = copies_of(s, b)
        s.in_supply |= (<uint64>1) << b
        placed = bit_count(s.in_play & VIOLET_MASK)
        if placed == DRAFT_KINDS:
            begin_round(s)
        else:                                  # seat placed % n (checked for loaded states)
            s.player = next_seat(s, s.player)
    elif a < A_POST:                           # forest, removing a face-up plantation (§8.5.2)
        k = a - A_FOREST
        s.face_up[k] -= 1
        s.removed[k] += 1
        s.forests -= 1
        p.tiles[FOREST] += 1
        took_tile(s, FOREST)
    elif a < A_SWHARF:
        sell_to_post(s, a - A_POST)
    elif a < A_SWHARF_DONE:                    # one more good into the Small wharf (§8.5.8)
        k = a - A_SWHARF
        p.goods[k] -= 1
        s.goods_supply[k] += 1
        s.sw_count += 1
        s.sw_last = k
        if s.step == STEP_LOAD:
            s.small_wharf_used |= 1 << s.player
            s.step = STEP_SMALL_WHARF
    elif a == A_SWHARF_DONE:
        k = s.sw_count
        s.sw_count = 0
        s.sw_last = -1
        s.step = STEP_LOAD
        shipped(s, k // 2)
    else:                                      # a Black-market item (§8.5.3, OPEN-17)
        if a == A_BM_VP:
            p.vp -= 1
            s.bm_last = 0
            if s.vp_supply > 0 or sum_vp(s) < vp_total(s):
                s.vp_supply = vp_total(s) - sum_vp(s)
        elif a < A_BM_COLONIST:
            k = a - A_BM_GOOD
            p.goods[k] -= 1
            s.goods_supply[k] += 1
            s.bm_last = 2
        else:
            slot = a - A_BM_COLONIST
            if slot == NUM_SLOTS:
                p.san_juan -= 1
            elif slot < NUM_MANNED_KINDS:
                p.manned[slot] -= 1
            else:
                p.workers[slot - NUM_MANNED_KINDS] -= 1
            s.colonist_supply += 1
            s.bm_last = 1
        s.bm_left -= 1
        if s.bm_left == 0:
            s.bm_last = -1
            p.doubloons = 0
            s.step = STEP_BUILD
            place_building(s, s.last_building)

cdef inline int sum_vp(const PRState* s) noexcept nogil:
    cdef int i, n = 0
    for i in range(s.n_players):
        n += s.players[i].vp
    return n


cdef void load_cargo(PRState* s, int k, int i) noexcept nogil:
    cdef PRPlayer* p = &s.players[s.player]
    cdef int room = s.ship_capacity[i] - s.ship_load[i]
    cdef int amount = p.goods[k] if p.goods[k] < room else room
    p.goods[k] -= amount
    s.ship_load[i] += amount
    s.ship_good[i] = k
    shipped(s, amount)


# ---------------------------------------------------------------------------
# 5. Chance, scoring, observation, playouts
# ---------------------------------------------------------------------------

cdef int pr_chance_outcomes(const PRState* s, int16* actions, int32* weights) noexcept nogil:
    """Outcomes of a draw: each plantation kind, weighted by its count in the stack."""
    cdef int k, n = 0
    for k in range(NUM_GOODS):
        if s.stack[k] > 0:
            actions[n] = A_DRAW + k
            weights[n] = s.stack[k]
            n += 1
    return n


cdef int pr_sample_chance(PRState* s) noexcept nogil:
    """An outcome drawn from a copy of the state's RNG: applying it advances the RNG by
    one step, as applying a given outcome does (records replay to identical states)."""
    cdef Rng r_copy = s.rng
    cdef int k, r = rng_below(&r_copy, sum5(s.stack))
    for k in range(NUM_GOODS):
        r -= s.stack[k]
        if r < 0:
            return A_DRAW + k
    return A_DRAW + NUM_GOODS - 1


cdef int large_bonus(const PRPlayer* p) noexcept nogil:
    """§6.2, §8.5.14: the bonus VP of the occupied large buildings."""
    cdef int b, k, bonus = 0
    cdef uint64 m
    if works(p, GUILD_HALL):
        m = p.owned
        while m:
            b = ctz64(m)
            if BUILDING[b].kind == SMALL_PRODUCTION:
                bonus += 1
            elif BUILDING[b].kind == LARGE_PRODUCTION:
                bonus += 2
            m &= m - 1
    if works(p, RESIDENCE):
        bonus += RESIDENCE_BONUS[island_used(p)]
    if works(p, FORTRESS):
        bonus += colonists_on_board(p) // 3
    if works(p, CUSTOMS_HOUSE):
        bonus += p.vp // 4
    if works(p, CITY_HALL):
        bonus += popcount64(p.owned & VIOLET_MASK)
    if works(p, CLOISTER):                    # §8.5.14, OPEN-25: sets of 3 identical island tiles
        k = 0
        for b in range(NUM_TILE_KINDS):
            k += p.tiles[b] // 3
        bonus += CLOISTER_BONUS[k if k < 4 else 4]
    return bonus


cdef void pr_score(const PRState* s, int seat, PRScore* out) noexcept nogil:
    """§7.4: chips + printed building VP + bonuses of occupied large buildings. While a
    player places his colonists (his are lifted) his bonus is that of the arrangement he
    had when his placement began: nothing else that scores can change in the Mayor phase."""
    cdef const PRPlayer* p = &s.players[seat]
    cdef int b, building_vp = 0
    cdef int bonus = s.held_bonus if s.step == STEP_MAYOR and seat == s.player else large_bonus(p)
    cdef uint64 m = p.owned
    while m:
        b = ctz64(m)
        building_vp += BUILDING[b].vp
        m &= m - 1
    out.vp_chips = p.vp
    out.building_vp = building_vp
    out.bonus_vp = bonus
    out.total = p.vp + building_vp + bonus
    out.tiebreak = p.doubloons + goods_held(p)


cdef void pr_returns(const PRState* s, double* out) noexcept nogil:
    """1 for the winner, a shared win split equally (§7.5, OPEN-10); 0 before the end."""
    cdef PRScore sc
    cdef int32 total[MAX_PLAYERS]
    cdef int32 tie[MAX_PLAYERS]
    cdef int i
    for i in range(s.n_players):
        out[i] = 0.0
    if s.step != STEP_TERMINAL:
        return
    for i in range(s.n_players):
        pr_score(s, i, &sc)
        total[i] = sc.total
        tie[i] = sc.tiebreak
    split_win(s.n_players, total, tie, out)

cdef int32 pr_random_playout(PRState* s) noexcept nogil:
    """Play uniformly random decisions (chance sampled) to the end; returns the decisions."""
    cdef int16 legal[MAX_LEGAL]
    cdef int n, _
    cdef int32 decisions = 0
    cdef uint64 m
    cdef uint32 roles
    while s.step != STEP_TERMINAL:
        # the two most common decisions are picked without their list (the same pick as
        # legal[rng_below(n)] from the list, and the same RNG draws)
        if s.step == STEP_ROLE and not s.players[s.player].workers[GUEST_HOUSE]:   # (no guest moves)
            roles = role_choices(s)
            n = bit_count(roles)
            if n == 0:                         # (as below: never loop)
                break
            if n > 1:
                for _ in range(<int>rng_below(&s.rng, n)):
                    roles &= roles - 1
            start_phase(s, ctz64(roles))
            decisions += 1
            continue
        if s.step == STEP_MAYOR:
            n = mayor_choices(s)
            if n == 0:                         # cannot happen from a validated state; never loop
                break
            mayor_place(s, s.mayor_first + (<int>rng_below(&s.rng, n) if n > 1 else 0))
            decisions += 1
            continue
        if s.step >= STEP_DRAW_FACE_UP:        # (one test for base games: their chance steps)
            if is_chance_step(s.step):
                pr_apply(s, pr_sample_chance(s))
                continue
            if s.step == STEP_DRAFT:           # the legal ids are the set bits of draft_mask:
                m = draft_mask(s)              # take the same pick without writing the list
                n = bit_count(m)
                if n == 0:
                    break
                if n > 1:
                    for _ in range(<int>rng_below(&s.rng, n)):
                        m &= m - 1
                pr_apply(s, A_DRAFT + ctz64(m) - FIRST_VIOLET)
                decisions += 1
                continue
        n = pr_legal_actions(s, legal)
        if n == 0:                             # cannot happen from a validated state; never loop
            break
        pr_apply(s, legal[rng_below(&s.rng, n)] if n > 1 else legal[0])
        decisions += 1
    return decisions


cdef int32 pr_list_playout(PRState* s) noexcept nogil:
    """pr_random_playout's reference: the same game, every decision taken from the legal
    list (legal[rng_below(n)] when n > 1) and every chance event sampled, with no shortcut."""
    cdef int16 legal[MAX_LEGAL]
    cdef int n
    cdef int32 decisions = 0
    while s.step != STEP_TERMINAL:
        if is_chance_step(s.step):
            pr_apply(s, pr_sample_chance(s))
            continue
        n = pr_legal_actions(s, legal)
        if n == 0:
            break
        pr_apply(s, legal[rng_below(&s.rng, n)] if n > 1 else legal[0])
        decisions += 1
    return decisions


cdef inline int put(float* out, int i, float v) noexcept nogil:
    out[i] = v
    return i + 1

cdef inline int one_hot(float* out, int i, int value, int size) noexcept nogil:
    cdef int j
    for j in range(size):
        out[i + j] = 0.0
    if 0 <= value < size:
        out[i + value] = 1.0
    return i + size

# The features written here, in this order, with their true bounds: _observation_layout() in
# src/caribsim/puerto_rico/game.py (observation_bounds, the normalised view, the docs' table).
# Change both together: tests/embed/test_observation_bounds.py checks the length and plays
# random games against the bounds.
cdef int write_observation(const PRState* s, int seat, float* out) noexcept nogil:
    """Everything is public in Puerto Rico except the stack's order (E.1), so the
    observation is the whole state, with the players listed from `seat` on.
    Returns the number of entries (pr_observation_size); writes without branches,
    as the batch API calls it for every game at every step."""
    cdef int i = 0, j, k, b, q, n = s.n_players
    cdef int cur = pr_current_player(s)
    cdef const PRPlayer* p
    for j in range(n):
        q = (seat + j) % n
        p = &s.players[q]
        i = put(out, i, p.doubloons)
        i = put(out, i, p.vp)
        for k in range(NUM_GOODS):
            i = put(out, i, p.goods[k])
        for k in range(NUM_TILE_KINDS):
            i = put(out, i, p.tiles[k])
        for k in range(NUM_MANNED_KINDS):
            i = put(out, i, p.manned[k])
        i = put(out, i, p.san_juan)
        for b in range(NUM_BUILDINGS):         # branchless: the bits are unpredictable
            out[i + b] = <float>((p.owned >> b) & 1)
            out[i + NUM_BUILDINGS + b] = p.workers[b]
        i += 2 * NUM_BUILDINGS
        i = put(out, i, 1.0 if q == s.governor else 0.0)
        i = put(out, i, 1.0 if q == s.chooser and s.phase < PHASE_ROLE_SELECTION else 0.0)
        i = put(out, i, 1.0 if (s.wharf_used >> q) & 1 else 0.0)
        i = put(out, i, 1.0 if q == cur else 0.0)
    i = one_hot(out, i, s.phase, NUM_PHASES)
    i = one_hot(out, i, s.step, NUM_BASE_STEPS)
    for k in range(NUM_ROLE_CARDS):
        i = put(out, i, s.card_doubloons[k])
        i = put(out, i, 1.0 if (s.cards_in_play >> k) & 1 and not (s.cards_taken >> k) & 1 else 0.0)
    for k in range(NUM_GOODS):
        i = put(out, i, s.face_up[k])
        i = put(out, i, s.stack[k])
        i = put(out, i, s.discard[k])
        i = put(out, i, s.goods_supply[k])
        i = put(out, i, s.house[k])
        i = put(out, i, 1.0 if (s.craftsman_received >> k) & 1 else 0.0)
        i = put(out, i, 1.0 if (s.kept >> k) & 1 else 0.0)
    for k in range(MAX_SHIPS):
        i = put(out, i, s.ship_capacity[k])
        i = put(out, i, s.ship_load[k])
        i = one_hot(out, i, s.ship_good[k], NUM_GOODS)
    for b in range(NUM_BUILDINGS):
        i = put(out, i, s.building_supply[b])
    i = put(out, i, s.quarries)
    i = put(out, i, s.to_draw)
    i = put(out, i, s.colonist_supply)
    i = put(out, i, s.colonist_ship)
    i = put(out, i, s.to_place)
    i = put(out, i, s.last_slot)
    i = put(out, i, s.vp_supply)
    i = put(out, i, s.house_count)
    i = put(out, i, s.selections_done)
    i = put(out, i, s.idle_turns)
    i = put(out, i, s.end_triggered)
    i = put(out, i, s.hacienda_used)
    i = put(out, i, s.captain_bonus_given)
    i = put(out, i, s.warehouse_left)
    i = put(out, i, s.last_warehouse + 1)
    i = one_hot(out, i, s.last_tile, NUM_TILE_KINDS)
    i = one_hot(out, i, s.last_building, NUM_BUILDINGS)
    if s.options & OPT_EXPANSION:             # the expansion's state, appended
        for j in range(n):
            q = (seat + j) % n
            i = put(out, i, 1.0 if (s.small_wharf_used >> q) & 1 else 0.0)
        i = one_hot(out, i, s.step - NUM_BASE_STEPS, NUM_STEPS - NUM_BASE_STEPS)
        for b in range(FIRST_VIOLET, NUM_BUILDINGS):
            i = put(out, i, <float>((s.in_play >> b) & 1))
        i = put(out, i, s.forests)
        for k in range(NUM_GOODS):
            i = put(out, i, s.removed[k])
            i = put(out, i, s.craft_amount[k])
            i = put(out, i, s.keep_n[k])
        i = put(out, i, s.library_done)
        i = put(out, i, s.privilege_left)
        i = put(out, i, s.bm_left)
        i = put(out, i, s.bm_last + 1)
        i = put(out, i, s.sw_count)
        i = put(out, i, s.sw_last + 1)
        i = put(out, i, s.barrels_left)
        i = put(out, i, s.last_keep + 1)
    return i

cdef void pr_observation(const PRState* s, int seat, float* out) noexcept nogil:
    write_observation(s, seat, out)

cdef int pr_observation_size(int n_players, int options) noexcept nogil:
    cdef PRState s
    cdef float scratch[4096]               # larger than any observation (5 players, expansion)
    memset(&s, 0, sizeof(PRState))
    s.n_players = n_players
    s.options = options
    return write_observation(&s, 0, scratch)


# ---------------------------------------------------------------------------
# 5b. The C game interface (caribsim._game.GameVTable) for the search
# ---------------------------------------------------------------------------

cdef void _vt_scores(const void* s, double* out) noexcept nogil:
    cdef PRScore sc
    cdef int i
    for i in range(MAX_PLAYERS):
        out[i] = 0.0
    for i in range((<const PRState*>s).n_players):
        pr_score(<const PRState*>s, i, &sc)
        out[i] = sc.total

cdef void _vt_reseed(void* s, uint64 seed, uint64 stream) noexcept nogil:
    rng_seed(&(<PRState*>s).rng, seed, stream)

cdef int _heuristic_value(const PRState* s, int a) noexcept nogil:
    """Greedy preference of the rollout heuristic (higher is better)."""
    cdef const PRPlayer* p = &s.players[s.player]
    cdef int k, i
    if a == A_PASS:
        return 0
    if a >= A_DRAFT:
        if a < A_FOREST:
            return 1 + BUILDING[a - A_DRAFT + FIRST_VIOLET].cost   # draft the dearest kinds
        if a < A_POST:
            return 2                                                # a forest
        if a < A_SWHARF:
            return 1 + PRICE[a - A_POST]
        if a <= A_SWHARF_DONE:
            return 2                                                # ship via the Small wharf
        return 1                                                    # Black-market items, guests
    if a < A_SETTLE:
        return 1 + s.card_doubloons[a - A_ROLE]            # roles carrying doubloons
    if a < A_MAYOR:
        return 2                                         # take a tile, man it
    if a < A_UNIVERSITY:
        return 1 + BUILDING[a - A_BUILD].cost if a >= A_BUILD else 1   # the dearest building
    if a == A_UNIVERSITY:
        return 2
    if a < A_SELL:
        return 1 + PRICE[a - A_PRIVILEGE]
    if a < A_SHIP:
        return 1 + PRICE[a - A_SELL]
    if a < A_WHARF:
        k = (a - A_SHIP) // MAX_SHIPS
        i = (a - A_SHIP) % MAX_SHIPS
        return 1 + min(p.goods[k], s.ship_capacity[i] - s.ship_load[i])   # ship the most goods
    if a < A_WAREHOUSE:
        return 1 + p.goods[a - A_WHARF]
    if a < A_KEEP:
        return 1 + p.goods[a - A_WAREHOUSE]
    if a < A_PASS:
        return 1 + p.goods[a - A_KEEP]
    return 1

cdef int pr_heuristic_action(PRState* s, const int16* legal, int n) noexcept nogil:
    """Rollout policy: one time in four uniform, otherwise the legal action with the
    highest greedy preference (_heuristic_value), ties broken at random."""
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

cdef void pr_evaluate(const PRState* s, double* out) noexcept nogil:
    """Static value per seat in [0, 1] for cut-off rollouts: the returns at the end;
    before it, VP plus a third of doubloons and goods, scaled between the last and
    the first player."""
    cdef PRScore sc
    cdef double v[MAX_PLAYERS]
    cdef double lo = 1e9, hi = -1e9
    cdef int i, n = s.n_players
    if s.step == STEP_TERMINAL:
        pr_returns(s, out)
        return
    for i in range(n):
        pr_score(s, i, &sc)
        v[i] = sc.total + sc.tiebreak / 3.0
        lo = v[i] if v[i] < lo else lo
        hi = v[i] if v[i] > hi else hi
    for i in range(n):
        out[i] = 0.5 if hi == lo else (v[i] - lo) / (hi - lo)

cdef int _vt_observation_size(const void* s) noexcept nogil:
    return pr_observation_size((<const PRState*>s).n_players, (<const PRState*>s).options)

# the shims that cast void* to PRState* and call the pr_* functions (_game.pxd)
cdef extern from *:
    """
    CARIBSIM_VT_SHIMS(PRState, pr)
    #define pr_vt_fill(t) CARIBSIM_VT_FILL(t, pr)
    """
    void pr_vt_fill(GameVTable* t) noexcept nogil

cdef GameVTable PR_VTABLE
PR_VTABLE.name = b"puerto_rico"
PR_VTABLE.state_size = sizeof(PRState)
PR_VTABLE.num_actions = NUM_BASE_ACTIONS    # the base game never offers the expansion ids
PR_VTABLE.max_chance_outcomes = NUM_GOODS
PR_VTABLE.max_players = MAX_PLAYERS
pr_vt_fill(&PR_VTABLE)
PR_VTABLE.scores = _vt_scores
PR_VTABLE.reseed = _vt_reseed
PR_VTABLE.determinize = NULL                 # perfect information (E.1): nothing to resample
PR_VTABLE.observation_size = _vt_observation_size
# the expansion: the same functions over the larger action space
cdef GameVTable PR_EXP_VTABLE
PR_EXP_VTABLE = PR_VTABLE
PR_EXP_VTABLE.num_actions = NUM_ACTIONS


# ---------------------------------------------------------------------------
# 5c. Exported to caribsim.puerto_rico._state (module-level C variables cannot be
#     cimported, and the inline helpers below read the tables)
# ---------------------------------------------------------------------------

cdef const GameVTable* pr_vtable(bint expansion) noexcept nogil:
    return &PR_EXP_VTABLE if expansion else &PR_VTABLE

cdef const PRTables* pr_tables() noexcept nogil:
    return &TABLES

cdef int pr_city_used(const PRPlayer* p) noexcept nogil:
    return city_used(p)

cdef int pr_copies_of(const PRState* s, int b) noexcept nogil:
    return copies_of(s, b)
