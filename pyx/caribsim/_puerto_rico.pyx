# cython: language_level=3, preliminary_late_includes_cy28=True
"""Puerto Rico core: rules in C (nogil) over one PRState struct.

Layout of this file:
  1. component tables, read from the data files at import
  2. small board queries
  3. the flow of a round: phases and turns, each ending at the next decision
  4. legal actions and apply (one atomic decision per action)
  5. chance, scoring, observation, random playouts
  6. the Python API: the compiled State class, action names, the dict codec,
     the readable board and the threaded playout driver
"""
cimport cython
from libc.string cimport memset, memcpy
from caribsim._types cimport int8, int16, int32, uint8, uint32, uint64, popcount64, ctz64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport Rng, rng_seed, rng_below, rng_next
from caribsim._game cimport GameVTable, GameState, chain_list, history_slot

# ---------------------------------------------------------------------------
# 1. Component tables (filled by load_tables() at import, read-only after)
# ---------------------------------------------------------------------------

ctypedef struct BuildingInfo:
    int8 kind              # SMALL_PRODUCTION .. LARGE_VIOLET
    int8 produces          # good made by a production building, -1 otherwise
    int8 cost
    int8 vp
    int8 circles
    int8 column            # caps the quarry discount (§4.3)
    int8 spaces            # city spaces taken: 1, or 2 for large buildings
    int8 copies[2]         # copies in the supply: [3-5 players, 2 players]
    int8 expansion         # 1 for the 14 expansion buildings

ctypedef struct SetupInfo:
    int8 start_doubloons
    int8 prospectors       # Prospector cards in play
    int8 selections        # role selections per round
    int8 quarries
    int8 plantations[NUM_GOODS]
    int8 start_tile[MAX_PLAYERS]   # starting plantation by seat
    int8 face_up
    int16 colonist_supply
    int16 colonist_ship
    int16 colonists_total
    int16 vp_total
    int8 goods[NUM_GOODS]
    int8 n_ships
    int8 ship_capacity[MAX_SHIPS]

cdef BuildingInfo BUILDING[NUM_BUILDINGS]
cdef SetupInfo SETUP[MAX_PLAYERS + 1]          # indexed by player count 2..5
cdef int8 PRICE[NUM_GOODS]                      # trading-house price (§1.7)
cdef uint64 PRODUCERS[NUM_GOODS]                # buildings producing each good
cdef uint64 VIOLET_MASK
cdef uint64 COST_MASK[11]                       # violet buildings by cost (the draft's slots)
cdef uint64 BASE_MASK
cdef uint64 LARGE_MASK                          # buildings taking 2 city spaces (the others take 1)
cdef int16 MAX_COLONISTS_VARIANT                # §8.3.2: all 100 colonists
cdef int16 MAX_VP_VARIANT                       # §8.3.2: all 122 VP

# Rule tables that are part of the printed building texts (§6.1.9, §6.2.2).
cdef int8 FACTORY_PAY[6]
FACTORY_PAY[:] = [0, 0, 1, 2, 3, 5]             # by kinds received
cdef int8 RESIDENCE_BONUS[13]
RESIDENCE_BONUS[:] = [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 6, 7]   # by filled island spaces
cdef int8 CLOISTER_BONUS[5]
CLOISTER_BONUS[:] = [0, 1, 3, 6, 10]            # §8.5.14: by sets of 3 identical island tiles
# §8.2: the draft's cost slots: small violet places cost 1,2,2,3,4,5,5,6,7,8,8,9; 5 large cost 10
# (a C constant, so that the compiler unrolls draft_mask's loops over it)
cdef extern from *:
    """
    static const signed char caribsim_pr_draft_slots[11] = {0, 1, 2, 1, 1, 2, 1, 1, 2, 1, 5};
    """
    const int8 DRAFT_SLOTS "caribsim_pr_draft_slots"[11]

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
    cdef int b, g, n, i, cost
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

cdef inline bint owns(const PRPlayer* p, int b) noexcept nogil:
    return (p.owned >> b) & 1

cdef inline bint works(const PRPlayer* p, int b) noexcept nogil:
    """Occupied building: only those work (§2.2)."""
    return p.workers[b] > 0

cdef inline int island_used(const PRPlayer* p) noexcept nogil:
    cdef int k, n = 0
    for k in range(NUM_TILE_KINDS):
        n += p.tiles[k]
    return n

cdef inline int city_used(const PRPlayer* p) noexcept nogil:
    """City spaces taken: 1 per building, 2 per large one (no loop: the builder asks often)."""
    return bit_count(p.owned) + bit_count(p.owned & LARGE_MASK)

cdef inline int goods_held(const PRPlayer* p) noexcept nogil:
    cdef int k, n = 0
    for k in range(NUM_GOODS):
        n += p.goods[k]
    return n

cdef inline int sum5(const int8* a) noexcept nogil:
    return a[0] + a[1] + a[2] + a[3] + a[4]

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

cdef int circles_owned(const PRPlayer* p) noexcept nogil:
    cdef int k, n = 0
    cdef uint64 m = p.owned
    for k in range(NUM_MANNED_KINDS):
        n += p.tiles[k]
    while m:
        n += BUILDING[ctz64(m)].circles
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

cdef inline int colonist_available(const PRState* s) noexcept nogil:
    """Hospice and University take from the supply, else the ship (§6.1.5)."""
    return s.colonist_supply > 0 or s.colonist_ship > 0

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


cdef void begin_round(PRState* s) noexcept nogil:
    s.selections_done = 0
    s.phase = PHASE_ROLE_SELECTION
    s.player = s.governor
    s.step = STEP_ROLE


cdef void end_round(PRState* s) noexcept nogil:
    """§3.4: +1 doubloon on every card not taken, then the end or a new Governor."""
    cdef int c
    for c in range(NUM_ROLE_CARDS):
        if (s.cards_in_play >> c) & 1 and not (s.cards_taken >> c) & 1:
            s.card_doubloons[c] += 1
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
    s.player = (s.governor + s.selections_done) % s.n_players
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
        s.player = (s.chooser + s.turns_done) % s.n_players
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

cdef int mayor_slots(const PRState* s, int16* out) noexcept nogil:
    """Legal slots for the next colonist of `player`.

    Placements go in non-decreasing slot order, so each arrangement is generated
    once; a slot is legal only if the colonists left can still all be placed on
    circles at or after it (the must-fill rule, §4.2.3)."""
    cdef const PRPlayer* p = &s.players[s.player]
    cdef int8 free[NUM_SLOTS]
    cdef int slot, b, i, m = 0, total = 0
    cdef uint64 bits = p.owned
    # branch-free: each slot is written and kept only if it has a free circle
    for slot in range(s.last_slot, NUM_MANNED_KINDS):
        out[m] = slot
        free[m] = p.tiles[slot] - p.manned[slot]
        m += free[m] > 0
    if s.last_slot > NUM_MANNED_KINDS:
        bits &= ~(((<uint64>1) << (s.last_slot - NUM_MANNED_KINDS)) - 1)
    while bits:
        b = ctz64(bits)
        out[m] = NUM_MANNED_KINDS + b
        free[m] = BUILDING[b].circles - p.workers[b]
        m += free[m] > 0
        bits &= bits - 1
    # free circles at or after a slot shrink along the list: the legal slots are a prefix
    for i in range(m - 1, -1, -1):
        total += free[i]
        if total >= s.to_place:
            return i + 1
    return 0

cdef inline void place_colonist(PRState* s, int slot) noexcept nogil:
    cdef PRPlayer* p = &s.players[s.player]
    if slot < NUM_MANNED_KINDS:
        p.manned[slot] += 1
    else:
        p.workers[slot - NUM_MANNED_KINDS] += 1
    s.to_place -= 1
    s.last_slot = slot

cdef bint mayor_autoplace(PRState* s) noexcept nogil:
    """Play forced placements; True when the player has none left to place."""
    cdef int16 slots[NUM_SLOTS]
    while s.to_place > 0:
        if mayor_slots(s, slots) != 1:
            return False
        place_colonist(s, slots[0])
    return True

cdef void mayor_seek(PRState* s) noexcept nogil:
    cdef PRPlayer* p
    cdef int colonists, circles, k, b
    cdef uint64 m
    while s.turns_done < s.n_players:
        s.player = (s.chooser + s.turns_done) % s.n_players
        p = &s.players[s.player]
        # take every colonist off the board, then place them again
        colonists = colonists_on_board(p)
        circles = circles_owned(p)
        if colonists < circles:              # he will place them: his score holds meanwhile
            s.held_bonus = large_bonus(p)
        for k in range(NUM_MANNED_KINDS):
            p.manned[k] = 0
        m = p.owned
        while m:
            p.workers[ctz64(m)] = 0
            m &= m - 1
        if colonists >= circles:             # every circle filled, the rest to San Juan
            for k in range(NUM_MANNED_KINDS):
                p.manned[k] = p.tiles[k]
            m = p.owned
            while m:
                b = ctz64(m)
                p.workers[b] = BUILDING[b].circles
                m &= m - 1
            p.san_juan = colonists - circles
        else:
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
    """Buildings `seat` may build now (§4.3), as action ids; with out == NULL stops at the first."""
    cdef const PRPlayer* p = &s.players[seat]
    cdef int b, n = 0, reach = p.doubloons, price, col
    cdef int free_city = CITY_SPACES - city_used(p)
    cdef int q = p.manned[QUARRY], discount = 0     # building_price(), split into its parts
    cdef uint64 m = s.in_play & ~p.owned
    if free_city <= 0:
        return 0
    if seat == s.chooser:
        discount = 2 if works(p, LIBRARY) else 1
    if s.options & OPT_EXPANSION:
        # §8.5.2: a Forest house (occupied or not) takes 1 per 2 forests (branch-free: which
        # seat has one is unpredictable; base games have neither forests nor Forest houses)
        discount += (p.tiles[FOREST] // 2) & -<int>owns(p, FOREST_HOUSE)
        if works(p, BLACK_MARKET):
            # §8.5.3: Black-market items (at most 3, one per category) cover a shortfall, so
            # the reach grows by their number: one test per building
            reach += black_market_items(p)
    if out == NULL:                           # any building at all: stop at the first
        while m:
            b = ctz64(m)
            m &= m - 1
            col = BUILDING[b].column
            price = BUILDING[b].cost - discount - (q if q < col else col)
            if s.building_supply[b] != 0 and BUILDING[b].spaces <= free_city and price <= reach:
                return 1
        return 0
    # the list, branch-free: affordability does not follow the id order (with the expansion,
    # costs rise twice along it), so each building is written and kept only if it can be built;
    # out[n] is scratch (the caller appends the pass there)
    while m:
        b = ctz64(m)
        m &= m - 1
        col = BUILDING[b].column
        price = BUILDING[b].cost - discount - (q if q < col else col)
        out[n] = A_BUILD + b
        n += (s.building_supply[b] != 0) & (BUILDING[b].spaces <= free_city) & (price <= reach)
    return n

cdef void builder_seek(PRState* s) noexcept nogil:
    while s.turns_done < s.n_players:
        s.player = (s.chooser + s.turns_done) % s.n_players
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

cdef inline uint8 production(const PRState* s, const PRPlayer* p, int8* amounts) noexcept nogil:
    """What p's board produces now (Aqueduct included, limited by the supply) into
    `amounts`; returns the kinds received as bits."""
    cdef int k, amount, capacity
    cdef uint64 m
    cdef uint8 received = 0
    cdef bint aqueduct = works(p, AQUEDUCT)
    for k in range(NUM_GOODS):
        if k == CORN:
            amount = p.manned[CORN]
        else:
            capacity = 0
            m = p.owned & PRODUCERS[k]
            while m:
                capacity += p.workers[ctz64(m)]
                m &= m - 1
            amount = p.manned[k] if p.manned[k] < capacity else capacity
            # §8.5.1, OPEN-14: output goes to the large plant first, +1 if it produced
            if aqueduct and amount > 0 and (k == INDIGO or k == SUGAR) \
                    and p.workers[INDIGO_PLANT if k == INDIGO else SUGAR_MILL] > 0:
                amount += 1
        if amount > s.goods_supply[k]:
            amount = s.goods_supply[k]
        amounts[k] = amount
        if amount > 0:
            received |= 1 << k
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
        s.player = (s.chooser + s.turns_done) % s.n_players
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
        s.player = (s.chooser + s.turns_done) % s.n_players
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

cdef inline int ship_for(const PRState* s, int k) noexcept nogil:
    """Index of the ship carrying kind k, or -1."""
    cdef int i
    for i in range(s.n_ships):
        if s.ship_good[i] == k:
            return i
    return -1

cdef int cargo_options(const PRState* s, int seat, int16* out) noexcept nogil:
    """(good, ship) loads allowed for `seat`: the ship carrying the good, else the
    empty ships that take the most of it (§4.6)."""
    cdef const PRPlayer* p = &s.players[seat]
    cdef int k, i, held, best, load, n = 0
    for k in range(NUM_GOODS):
        held = p.goods[k]
        if held == 0:
            continue
        i = ship_for(s, k)
        if i >= 0:
            if s.ship_load[i] < s.ship_capacity[i]:
                if out != NULL:
                    out[n] = A_SHIP + k * MAX_SHIPS + i
                n += 1
            continue
        best = 0
        for i in range(s.n_ships):
            if s.ship_good[i] < 0:
                load = held if held < s.ship_capacity[i] else s.ship_capacity[i]
                if load > best:
                    best = load
        if best == 0:
            continue
        for i in range(s.n_ships):
            if s.ship_good[i] < 0:
                load = held if held < s.ship_capacity[i] else s.ship_capacity[i]
                if load == best:
                    if out != NULL:
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
    cdef int i, k, vp, seat
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
            for i in range(s.n_players):                 # OPEN-23: Union hall, before loading
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
        s.player = (s.chooser + s.turns_done) % s.n_players
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
    return owns(p, slot - NUM_MANNED_KINDS) and BUILDING[slot - NUM_MANNED_KINDS].circles > p.workers[slot - NUM_MANNED_KINDS]

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
    cdef int n = 0, k, b, step = s.step, seat = s.player
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


cdef int legal_actions_impl(const PRState* s, int16* out) noexcept nogil:
    """Sorted legal ids. Expansion games add, at the base steps, their own actions (ids
    above 142, after the base ones) and then the Guest-house moves (the highest ids)."""
    cdef int n = 0, k, c, b, seat = s.player
    cdef const PRPlayer* p = &s.players[seat]
    cdef int step = s.step
    cdef bint exp = s.options & OPT_EXPANSION
    if step >= STEP_DRAFT:
        return expansion_legal_actions(s, out)
    if step == STEP_ROLE:
        for c in range(NUM_ROLE_CARDS):
            if (s.cards_in_play >> c) & 1 and not (s.cards_taken >> c) & 1:
                # the two Prospector cards differ only by their doubloons
                if c == PROSPECTOR_2 and not (s.cards_taken >> PROSPECTOR) & 1 \
                        and s.card_doubloons[PROSPECTOR] == s.card_doubloons[PROSPECTOR_2]:
                    continue
                out[n] = A_ROLE + c
                n += 1
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
        n = mayor_slots(s, out)
        for k in range(n):
            out[k] += A_MAYOR
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
        if wharf_ready(s, seat):
            for k in range(NUM_GOODS):
                if p.goods[k] > 0:
                    out[n] = A_WHARF + k
                    n += 1
        if cargo_options(s, seat, NULL) == 0:  # passing is allowed only when no ship can load
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
        place_colonist(s, a - A_MAYOR)
        if mayor_autoplace(s):
            s.turns_done += 1
            mayor_seek(s)
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
    cdef PRScore sc[MAX_PLAYERS]
    cdef int i, winners = 0, best_total = -1, best_tie = -1
    for i in range(s.n_players):
        out[i] = 0.0
    if s.step != STEP_TERMINAL:
        return
    for i in range(s.n_players):
        pr_score(s, i, &sc[i])
        if sc[i].total > best_total or (sc[i].total == best_total and sc[i].tiebreak > best_tie):
            best_total = sc[i].total
            best_tie = sc[i].tiebreak
    for i in range(s.n_players):
        if sc[i].total == best_total and sc[i].tiebreak == best_tie:
            winners += 1
    for i in range(s.n_players):
        if sc[i].total == best_total and sc[i].tiebreak == best_tie:
            out[i] = 1.0 / winners


cdef int32 pr_random_playout(PRState* s) noexcept nogil:
    """Play uniformly random decisions (chance sampled) to the end; returns the decisions."""
    cdef int16 legal[MAX_LEGAL]
    cdef int n, k
    cdef int32 decisions = 0
    cdef uint64 m
    while s.step != STEP_TERMINAL:
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
                    for k in range(<int>rng_below(&s.rng, n)):
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
# 6. Python API: the compiled State class, action names, the dict codec
# ---------------------------------------------------------------------------
import operator
from caribsim._common import _Reader, _check_options, _int_in, _seat_mask   # shared with the other games
import numpy as np
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
        self.vtable = &PR_VTABLE

    cdef void* _raw(self) noexcept:
        return &self.s

    cdef inline int _n_actions(self):
        return NUM_ACTIONS if self.s.options & OPT_EXPANSION else NUM_BASE_ACTIONS

    cdef void _set_vtable(self):
        self.vtable = &PR_EXP_VTABLE if self.s.options & OPT_EXPANSION else &PR_VTABLE

    # --- the OpenSpiel-style interface ---------------------------------------
    def apply_action(self, action):
        """Apply a legal action id (a decision, or a chance outcome at a chance node)."""
        cdef int16 buf[MAX_LEGAL]
        cdef int i, n
        self._ready()
        cdef int a = _action_id(action, self._n_actions())
        slot = history_slot()
        if self.s.step == STEP_TERMINAL:     # from here to _push no Python runs: one atomic move
            raise ValueError("the game is over: no action is legal")
        n = pr_legal_actions(&self.s, buf)
        for i in range(n):
            if buf[i] == a:
                break
        else:
            self._illegal(a, buf, n)
        pr_apply(&self.s, a)
        self._push(slot, a)

    cdef _illegal(self, int a, int16* buf, int n):
        caps = self._capacities()
        na = self._n_actions()
        what = _action_name(a, caps, na)
        legal = ", ".join(f"{buf[i]} ({_action_name(buf[i], caps, na)})" for i in range(n))
        raise ValueError(f"action {a} ({what}) is not legal at step "
                         f"{STEP_NAMES[self.s.step]!r}; legal: {legal}")

    cpdef PuertoRicoState clone(self):
        self._ready()
        cdef PuertoRicoState c = PuertoRicoState.__new__(PuertoRicoState)
        memcpy(&c.s, &self.s, sizeof(PRState))     # with the history below: no Python in between
        c.vtable = self.vtable
        c.game = self.game
        c._hist = self._hist
        return c

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



from caribsim._game import _check_seat, _restore   # _restore here too: older pickles name it in this module


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
    hist = st._hist
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
        "history": chain_list(hist),
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
    cdef PRPlayer* p
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
    _check_consistency(st)
    st.game = game
    h = None
    for a in hist:
        h = (h, a)
    st._hist = h
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
    cdef SetupInfo* su = &SETUP[n]
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
    if s.step in (STEP_SETTLE, STEP_HOSPICE, STEP_DRAW_HACIENDA, STEP_MAYOR, STEP_BUILD, STEP_UNIVERSITY,
                  STEP_SELL, STEP_WAREHOUSE, STEP_KEEP, STEP_BLACK_MARKET) and s.player != (s.chooser + s.turns_done) % n:
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
                                       and (s.last_tile == FOREST or exp or p.manned[s.last_tile] < p.tiles[s.last_tile])):
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
    fmt = lambda g: ", ".join(f"{k} {v}" for k, v in g.items() if v) or "none"
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
        lines.append(f"{marks}seat {i}: {b['doubloons']} doubloons, {b['vp_chips']} VP chips "
                     f"(total {sc.total}) | goods: {fmt(b['goods'])} | San Juan {b['san_juan']}")
        lines.append(f"     island: {isl or 'empty'}")
        lines.append(f"     city: {blds or 'empty'}")
    return "\n".join(lines)



