# cython: language_level=3, preliminary_late_includes_cy28=True
"""Cuba core (module ``caribsim.cuba._core``): the rules in C (nogil) over one CUState struct.

What lives here (with ``_core.pxd``, which holds the struct, the enums, the action
encoding and the small inline board queries and item moves):
  1. fixed geometry and the packing of component data (CubaTables) from Python,
     and the item / character / step names
  2. small board queries and item moves (the few that the state module uses too are
     inline functions in _core.pxd)
  3. the flow: setup, rounds, laps, parliament, law execution, end of round;
     each *_seek / continue function leaves `step` at a decision, a chance
     event or the end
  4. legal actions and apply (one atomic decision per action)
  5. chance, scoring, determinization, observation, playouts, the C game interface
     (the GameVTable, exported by cuba_vtable()) and the accessors of the module's C tables

The Python state class, the dict codec, rendering and the Python-callable drivers are in
``caribsim.cuba._state``, which cimports this module.

May import: the shared C declarations (caribsim._types, caribsim._rng, caribsim._game)
and libc; no Python module of caribsim, and nothing of _state.

The component data (costs, ships, laws, market, plantation, constants) is a
CubaTables block inside every state: games loaded from different data folders
never share tables, and a clone is one memcpy.
"""
from libc.string cimport memset, memcpy
from caribsim._types cimport int8, int16, int32, uint8, uint16, uint32, uint64, popcount64, ctz64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport Rng, rng_seed, rng_below, rng_next
from caribsim._game cimport GameVTable, split_win

# ---------------------------------------------------------------------------
# 1. Geometry and names
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    #include <string.h>
    #define BYTE_OF(v) ((unsigned char)((v) < 127 ? (v) : 127))   /* v >= 0 */
    /* bit k: a[k] == v, for the 24 bytes a[0..23] (three 8-byte words, each byte tested
       at once: y = w ^ v..v has a zero byte where equal, turned into 0x80 exactly there and
       gathered into 8 bits by one multiplication) */
    static inline unsigned int cu_bytes_equal24(const signed char* a, int v) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        const unsigned long long lo7 = 0x7F7F7F7F7F7F7F7FULL;
        const unsigned long long pat = 0x0101010101010101ULL * (unsigned char)v;
        unsigned long long w, y, t;
        unsigned int m = 0;
        int j;
        for (j = 0; j < 3; j++) {
            memcpy(&w, a + 8 * j, 8);
            y = w ^ pat;
            t = ~(((y & lo7) + lo7) | y | lo7);
            m |= (unsigned int)(((t >> 7) * 0x0102040810204080ULL) >> 56) << (8 * j);
        }
        return m;
    #else
        unsigned int m = 0;
        int k;
        for (k = 0; k < 24; k++)
            m |= (unsigned int)(a[k] == (signed char)v) << k;
        return m;
    #endif
    }
    """
    uint8 BYTE_OF(int v) noexcept nogil
    uint32 cu_bytes_equal24(const int8* a, int v) noexcept nogil

DEF ALL_USES = 0xFFFFFF                 # the 23 building bits and USE_WAREHOUSE (bit 23)
cdef uint16 CROSS[NUM_FIELDS]            # fields in the row and column of each field (itself included)
cdef int _f, _g
for _f in range(NUM_FIELDS):
    CROSS[_f] = 0
    for _g in range(NUM_FIELDS):
        if _g // NUM_COLS == _f // NUM_COLS or _g % NUM_COLS == _f % NUM_COLS:
            CROSS[_f] |= <uint16>(1 << _g)

# the six pairs of stacks an enactment can choose (A_ENACT + pair)
cdef int8 PAIR_A[6]
cdef int8 PAIR_B[6]
PAIR_A[:] = [0, 0, 0, 1, 1, 2]
PAIR_B[:] = [1, 2, 3, 2, 3, 3]

# Effect values printed in the building texts (cuba_buildings.csv `effect`, status rules).
cdef int8 CONVERT_VP[NUM_BUILDINGS]     # VP per unit of the converters
cdef int8 PICK_KINDS[NUM_BUILDINGS]     # bit i: item i may be picked (0: not a pick building)
for _f in range(NUM_BUILDINGS):
    CONVERT_VP[_f] = 0
    PICK_KINDS[_f] = 0
CONVERT_VP[CEMENT_FACTORY] = 1
CONVERT_VP[SAWMILL] = 1
CONVERT_VP[GOLF_COURSE] = 1
CONVERT_VP[ABBEY] = 1
CONVERT_VP[TAVERN] = 2
CONVERT_VP[SMOKING_LOUNGE] = 2
PICK_KINDS[CEMENT_FACTORY] = 1 << STONE
PICK_KINDS[SAWMILL] = 1 << WOOD
PICK_KINDS[GOLF_COURSE] = 1 << WATER
PICK_KINDS[ABBEY] = 0x07
PICK_KINDS[TAVERN] = 1 << RUM
PICK_KINDS[SMOKING_LOUNGE] = 1 << CIGAR
PICK_KINDS[MAIN_WAREHOUSE] = 0x18
PICK_KINDS[PRODUCTION_BUILDING] = 0x07
PICK_KINDS[SUPPLY_DEPOT] = 0xE0
PICK_KINDS[CIGAR_FACTORY] = 1 << TOBACCO
PICK_KINDS[DISTILLERY] = 1 << SUGAR
PICK_KINDS[BLACK_MARKET] = 0x1F
PICK_KINDS[STORAGE] = 0x07
DEF MAIN_WAREHOUSE_PESOS = 6
DEF PRODUCTION_PESOS = 4
DEF DEPOT_PESOS = 2
DEF HOTEL_VP = 2
DEF INN_VP = 1
DEF SMALL_BANK_PESOS = 2
DEF LARGE_BANK_PESOS = 4
DEF DAM_WATER = 2
DEF LARGE_OFFICE_ITEMS = 2
DEF UNLIMITED = 127

ITEM_NAMES = ("sugar", "citrus", "tobacco", "rum", "cigar", "wood", "stone", "water")
CARGO_NAMES = ITEM_NAMES[:5]
CROP_NAMES = ITEM_NAMES[:3]
MATERIAL_NAMES = ITEM_NAMES[5:]
CHARACTER_NAMES = ("worker", "trader", "architect", "foreman", "mayor")
BUILDING_IDS = ("cement_factory", "sawmill", "golf_course", "abbey", "tavern", "smoking_lounge",
                "small_office", "large_office", "hotel", "inn", "main_warehouse", "production_building",
                "supply_depot", "small_bank", "large_bank", "cigar_factory", "distillery", "black_market",
                "lighthouse", "storage", "dam", "church", "town_hall")
LAW_KINDS = ("tax", "tax_per_building", "levy", "subsidy", "market_loses", "market_gains", "drought",
             "building_law", "harbour_law", "corruption")
SUBSIDY_COUNTS = ("buildings", "free_crop_fields", "free_material_fields", "water", "pesos",
                  "character_votes")
STACK_NAMES = ("I", "II", "III", "IV")
MARKER_NAMES = ("trader_material", "trader_crop", "architect_2vp", "architect_1vp", "mayor_4pesos",
                "mayor_2pesos")
PHASE_NAMES = ("setup", "proposals", "actions", "parliament", "law_execution", "end_of_round", "end")
STEP_NAMES = ("start_player", "ship_draw", "law_draw", "setup_item", "character", "pawn", "harvest",
              "trade", "build", "place", "foreman_mode", "foreman", "pick", "receive", "lighthouse",
              "veto", "load", "bid", "enact", "tax", "levy", "terminal")
RESUME_NAMES = ("none", "setup", "turn_end", "foreman", "new_round")
LOAD_NAMES = ("mayor", "small_office", "large_office")
PAIR_STACKS = tuple((PAIR_A[i], PAIR_B[i]) for i in range(6))


def field_name(int f):
    return f"{f // NUM_COLS + 1},{f % NUM_COLS + 1}"


def pack_tables(spec):
    """Turn a validated component-data spec (built by caribsim.cuba from the csv files)
    into the bytes of a CubaTables block."""
    cdef CubaTables t
    cdef int b, k, law, i
    memset(&t, 0, sizeof(CubaTables))
    for b in range(NUM_BUILDINGS):
        row = spec["buildings"][b]
        for k in range(4):
            if not 0 <= row["cost"][k] <= 127:    # build_options compares them as bytes
                raise ValueError(f"building {b}: cost {row['cost'][k]} is not in 0..127")
            t.cost[b][k] = row["cost"][k]
        t.copies[b] = row["copies"]
        t.limit[b] = row["limit"] if row["limit"] is not None else UNLIMITED
    for i in range(NUM_SHIPS):
        row = spec["ships"][i]
        for k in range(NUM_CARGO):
            t.slots[i][k] = row["slots"][k]
        t.ship_total[i] = sum(row["slots"])
    for law in range(NUM_LAWS):
        row = spec["laws"][law]
        t.law_kind[law] = row["kind"]
        t.law_stack[law] = row["stack"]
        for k in range(NUM_ITEMS):
            t.law_param[law][k] = row["param"][k]
    for k in range(NUM_CARGO):
        row = spec["market"][k]
        t.n_prices[k] = len(row["prices"])
        for i, p in enumerate(row["prices"]):
            t.prices[k][i] = p
        t.start_covered[k] = row["start_covered"]
    for i in range(NUM_FIELDS):
        t.field[i] = spec["plantation"][i]
        if t.field[i] == FIELD_WAREHOUSE:
            t.warehouse_field = i
    su = spec["setup"]
    t.rounds = su["rounds"]
    t.cards_played = su["cards_played_per_round"]
    for k in range(NUM_CHARACTERS):
        t.votes[k] = su["character_votes"][k]
    t.start_pesos = su["start_pesos"]
    t.start_materials = su["start_materials_chosen"]
    t.start_crops = su["start_crops_chosen"]
    t.yield_per_field = su["plantation_yield_per_field"]
    t.free_crop_fields = su["worker_free_crop_fields"]
    t.irrigation_water = su["irrigation_water_per_extra_crop_field"]
    t.trader_alt_materials = su["trader_alt_material_count"]
    t.trader_alt_crops = su["trader_alt_cheapest_crop_count"]
    t.arch_alt[0], t.arch_alt[1] = su["architect_alt_vp"]
    t.mayor_alt[0], t.mayor_alt[1] = su["mayor_alt_pesos"]
    t.buy_supply_price = su["market_buy_from_supply_price"]
    t.sell_supply_crop = su["market_sell_to_supply_price_crop"]
    t.sell_supply_good = su["market_sell_to_supply_price_good"]
    for k in range(NUM_DOCKS):
        t.dock_vp[k] = su["dock_vp_per_item"][k]
    t.tax_vp = su["tax_vp"]
    t.levy_vp = su["levy_vp"]
    t.levy_bonus_vp = su["levy_bonus_vp_if_tax_paid"]
    t.vote_price = su["vote_price_pesos"]
    t.town_hall_votes = su["town_hall_votes"]
    t.storage_capacity = su["storage_capacity_crops"]
    t.end_vp_per_building = su["end_vp_per_building"]
    t.initial_tax = su["initial_tax"]
    for k in range(NUM_ITEMS):
        t.initial_levy[k] = su["initial_levy"][k]
        t.supply_count[k] = su["supply_count"][k]
    t.coins = su["coins"]
    return (<char*>&t)[:sizeof(CubaTables)]


# ---------------------------------------------------------------------------
# 2. Board queries and item moves
# ---------------------------------------------------------------------------
# (stock, storage_held, owns, n_buildings, is_chance_step, tax_due, levy_items, can_deliver
# and refill_needed are inline functions in _core.pxd: the state module uses them too)

cdef inline int crops_in_yard(const CubaPlayer* p) noexcept nogil:
    return p.yard[SUGAR] + p.yard[CITRUS] + p.yard[TOBACCO]

cdef inline bint limited(const CUState* s) noexcept nogil:
    return s.options & OPT_SUPPLY_LIMITED

cdef inline int avail(const CUState* s, int i) noexcept nogil:
    """Items of kind i the supply can give (unlimited by default, D46)."""
    if s.options & OPT_SUPPLY_LIMITED:
        return s.supply[i] if s.supply[i] > 0 else 0
    return 30000

cdef inline void use_item(CUState* s, CubaPlayer* p, int i, int n, bint to_supply) noexcept nogil:
    """Remove n of kind i from p's stock: yard first, then Storage, then warehouse (D48)."""
    cdef int m
    if to_supply:
        s.supply[i] += n
    m = p.yard[i] if p.yard[i] < n else n
    p.yard[i] -= m
    n -= m
    if n and i < NUM_CROPS:
        m = p.storage[i] if p.storage[i] < n else n
        p.storage[i] -= m
        n -= m
        p.warehouse[i] -= n

cdef inline int gain_item(CUState* s, CubaPlayer* p, int i, int n) noexcept nogil:
    """n of kind i from the supply to p's yard (fewer if the limited supply runs short)."""
    cdef int a = avail(s, i)
    if n > a:
        n = a
    p.yard[i] += n
    s.supply[i] -= n
    return n

cdef inline void gain_pesos(CUState* s, CubaPlayer* p, int n) noexcept nogil:
    if s.options & OPT_PESOS_LIMITED and n > s.bank:
        n = s.bank if s.bank > 0 else 0
    p.pesos += n
    s.bank -= n

cdef inline void pay(CUState* s, CubaPlayer* p, int n) noexcept nogil:
    p.pesos -= n
    s.bank += n

cdef inline int law_kind_in(const CUState* s, int stack) noexcept nogil:
    cdef int law = s.law_in_force[stack]
    if law < 0:
        return law
    return s.t.law_kind[law]

cdef inline bint law_iv(const CUState* s, int kind) noexcept nogil:
    return law_kind_in(s, 3) == kind

cdef inline int buy_price(const CUState* s, int k) noexcept nogil:
    cdef int c = s.covered[k]
    return s.t.prices[k][c - 1] if c > 0 else s.t.buy_supply_price

cdef inline int sell_price(const CUState* s, int k) noexcept nogil:
    cdef int c = s.covered[k]
    if c < s.t.n_prices[k]:
        return s.t.prices[k][c]
    return s.t.sell_supply_crop if k < NUM_CROPS else s.t.sell_supply_good

cdef inline int building_law_pesos(const CUState* s) noexcept nogil:
    """What the building law in force adds to every building's pesos (0 without one)."""
    cdef int law = s.law_in_force[3]
    if law >= 0 and s.t.law_kind[law] == LAW_BUILDING:
        return s.t.law_param[law][0]
    return 0

cdef inline int building_pesos(const CUState* s, int b) noexcept nogil:
    return s.t.cost[b][3] + building_law_pesos(s)

cdef inline int free_fields_of(const CUState* s, const CubaPlayer* p, int lo, int hi) noexcept nogil:
    """Fields of an item kind lo..hi-1 not covered by a building."""
    cdef int f, n = 0
    for f in range(NUM_FIELDS):
        if p.building_at[f] < 0 and lo <= s.t.field[f] < hi:
            n += 1
    return n

cdef inline bint ship_full(const CUState* s, int d) noexcept nogil:
    cdef int k, sh = s.dock[d]
    if sh < 0:
        return False
    for k in range(NUM_CARGO):
        if s.cargo[d][k] < s.t.slots[sh][k]:
            return False
    return True

cdef inline bint can_load(const CUState* s, const CubaPlayer* p, int k, int d) noexcept nogil:
    cdef int sh = s.dock[d]
    return sh >= 0 and s.cargo[d][k] < s.t.slots[sh][k] and stock(p, k) > 0

cdef inline int next_seat(const CUState* s, int seat) noexcept nogil:
    return seat + 1 if seat + 1 < s.n_players else 0


# ---------------------------------------------------------------------------
# 3. The flow
# ---------------------------------------------------------------------------

cdef void cu_new_game(CUState* s, const CubaTables* t, int n_players, int options, int start,
                      uint64 seed) noexcept nogil:
    """Setup (§3): market, supply, ship draws (chance), laws, players. Leaves the
    state at the first ship draw."""
    cdef int i, k, f
    cdef CubaPlayer* p
    memset(s, 0, sizeof(CUState))
    memcpy(&s.t, t, sizeof(CubaTables))
    s.n_players = n_players
    s.options = options
    s.fixed_start = start
    s.round = 1
    s.phase = PHASE_SETUP
    s.start_player = start if start >= 0 else 0
    s.character = -1
    s.town_hall_user = -1
    s.vetoed = -1
    s.winner = -1
    s.build_pending = -1
    s.cur_building = -1
    s.load_dock = -1
    s.load_last = -1
    s.trade_last = -1
    s.harvest_last = -1
    s.pick_item = -1
    s.setup_last = -1
    s.bank = t.coins
    for k in range(NUM_ITEMS):
        s.supply[k] = t.supply_count[k]
    for k in range(NUM_CARGO):
        s.covered[k] = t.start_covered[k]
        s.supply[k] -= t.start_covered[k]
    for k in range(NUM_DOCKS):
        s.dock[k] = -1
    s.at_sea = -1
    s.unseen = (1 << NUM_SHIPS) - 1
    s.law_in_force[0] = LAW_INITIAL
    s.law_in_force[1] = LAW_INITIAL
    s.law_in_force[2] = -1
    s.law_in_force[3] = -1
    for k in range(NUM_STACKS):
        s.proposal[k] = -1
    for i in range(n_players):
        p = &s.players[i]
        p.pesos = t.start_pesos
        s.bank -= t.start_pesos
        p.pawn = t.warehouse_field
        for f in range(NUM_FIELDS):
            p.building_at[f] = -1
        p.hand = (1 << NUM_CHARACTERS) - 1
        p.fourth = -1
        p.church_stack = -1
    rng_seed(&s.rng, seed, 0)
    s.setup_fill = 1
    s.resume = RESUME_SETUP
    refill_continue(s)


cdef void resume_after_refill(CUState* s) noexcept nogil:
    cdef int r = s.resume
    s.resume = RESUME_NONE
    if r == RESUME_SETUP:
        s.setup_fill = 0
        if s.fixed_start < 0:
            s.step = STEP_START_PLAYER
        else:
            begin_setup_items(s)
    elif r == RESUME_TURN_END:
        end_turn(s)
    elif r == RESUME_FOREMAN:
        foreman_continue(s)
    else:
        begin_round(s)


cdef void place_drawn(CUState* s, int ship) noexcept nogil:
    """Put a drawn ship where the refill needs it next."""
    cdef int d
    if s.setup_fill:
        if s.dock[0] < 0:
            s.dock[0] = ship
        elif s.dock[1] < 0:
            s.dock[1] = ship
        else:
            s.at_sea = ship
        return
    for d in range(NUM_DOCKS - 1, -1, -1):
        if s.dock[d] < 0:
            s.dock[d] = ship
            return
    s.at_sea = ship


cdef void refill_continue(CUState* s) noexcept nogil:
    """Draw ships until the docks and the at-sea space are full (§10 steps 5-6): a chance
    node while the deck has never-seen cards, else the returned cards in order (E.2 C3)."""
    cdef int i
    while refill_needed(s):
        if s.unseen:
            s.step = STEP_SHIP_DRAW
            return
        place_drawn(s, s.queue[0])
        s.queue_len -= 1
        for i in range(s.queue_len):
            s.queue[i] = s.queue[i + 1]
    resume_after_refill(s)


cdef void depart(CUState* s, int d) noexcept nogil:
    """A ship leaves: cargo to the supply, card to the bottom of the deck."""
    cdef int k
    for k in range(NUM_CARGO):
        s.supply[k] += s.cargo[d][k]
        s.cargo[d][k] = 0
    s.queue[s.queue_len] = s.dock[d]
    s.queue_len += 1
    s.dock[d] = -1


cdef void move_up_and_enter(CUState* s) noexcept nogil:
    """§10 steps 3-4: remaining ships move to the highest docks in order; the at-sea ship
    enters the highest free dock."""
    cdef int d, j = NUM_DOCKS - 1, k
    for d in range(NUM_DOCKS - 1, -1, -1):
        if s.dock[d] >= 0:
            if d != j:
                s.dock[j] = s.dock[d]
                s.dock[d] = -1
                for k in range(NUM_CARGO):
                    s.cargo[j][k] = s.cargo[d][k]
                    s.cargo[d][k] = 0
            j -= 1
    if j >= 0 and s.at_sea >= 0:
        s.dock[j] = s.at_sea
        s.at_sea = -1


cdef void harbour_departure(CUState* s, int d, int resume) noexcept nogil:
    """Harbour law (§9.5, D31, D59): the full ship leaves at once; the harbour refills."""
    depart(s, d)
    move_up_and_enter(s)
    s.resume = resume
    refill_continue(s)


cdef void begin_setup_items(CUState* s) noexcept nogil:
    s.phase = PHASE_SETUP
    s.player = s.start_player
    s.turn = 0
    s.setup_left = s.t.start_materials + s.t.start_crops
    s.setup_last = -1
    setup_seek(s)


cdef void setup_seek(CUState* s) noexcept nogil:
    while s.setup_left == 0:
        s.turn += 1
        if s.turn >= s.n_players:
            begin_round(s)
            return
        s.player = next_seat(s, s.player)
        s.setup_left = s.t.start_materials + s.t.start_crops
        s.setup_last = -1
    s.step = STEP_SETUP_ITEM


cdef void begin_round(CUState* s) noexcept nogil:
    s.phase = PHASE_PROPOSALS
    s.law_next = 0
    s.step = STEP_LAW_DRAW


cdef void begin_actions(CUState* s) noexcept nogil:
    s.phase = PHASE_ACTIONS
    s.lap = 0
    s.turn = 0
    s.player = s.start_player
    s.character = -1
    s.step = STEP_CHARACTER


cdef void clear_turn(CUState* s) noexcept nogil:
    s.character = -1
    s.harvest_count = 0
    s.harvest_last = -1
    s.harvest_mask = 0
    s.trade_last = -1
    s.sold = 0
    s.build_pending = -1
    s.built = 0
    s.activated = 0
    s.used = 0
    s.cur_building = -1
    s.pick_left = 0
    s.pick_count = 0
    s.pick_last = 0
    s.pick_item = -1
    s.load_ctx = 0
    s.load_dock = -1
    s.load_left = 0
    s.load_count = 0
    s.load_last = -1


cdef void end_turn(CUState* s) noexcept nogil:
    clear_turn(s)
    s.turn += 1
    if s.turn >= s.n_players:
        s.turn = 0
        s.lap += 1
        if s.lap >= s.t.cards_played:
            change_start_player(s)
            begin_parliament(s)
            return
    s.player = (s.start_player + s.turn) % s.n_players
    s.step = STEP_CHARACTER


cdef void change_start_player(CUState* s) noexcept nogil:
    """§6.9: the most votes on the 4th card; ties: the latest played in lap 4 (D19: at once)."""
    cdef int j, q, v, best = -1, who = s.start_player
    for j in range(s.n_players):
        q = (s.start_player + j) % s.n_players
        v = s.t.votes[s.players[q].fourth]
        if v >= best:
            best = v
            who = q
    s.start_player = who


# --- parliament (§8) ----------------------------------------------------------

cdef int proximity_winner(const CUState* s, uint8 among) noexcept nogil:
    """CU-8.6 step 2: the tied player nearest to the start player clockwise, him first."""
    cdef int j, q
    for j in range(s.n_players):
        q = (s.start_player + j) % s.n_players
        if (among >> q) & 1:
            return q
    return s.start_player


cdef uint8 most_votes(const CUState* s, uint8 among) noexcept nogil:
    cdef int q, best = -1
    cdef uint8 m = 0
    for q in range(s.n_players):
        if (among >> q) & 1:
            if s.players[q].votes > best:
                best = s.players[q].votes
                m = 0
            if s.players[q].votes == best:
                m |= 1 << q
    return m


cdef void begin_parliament(CUState* s) noexcept nogil:
    cdef int q
    cdef CubaPlayer* p
    cdef uint8 top
    s.phase = PHASE_PARLIAMENT
    s.rebid = 0
    s.tied = 0
    s.winner = -1
    for q in range(s.n_players):
        p = &s.players[q]
        p.votes = s.t.votes[p.fourth] + (s.t.town_hall_votes if s.town_hall_user == q else 0)
        p.bought = 0
        p.bid = 0
    if law_iv(s, LAW_CORRUPTION):             # CU-8.7: no bids, ties to proximity
        top = most_votes(s, (1 << s.n_players) - 1)
        s.winner = proximity_winner(s, top)
        begin_enact(s)
        return
    s.bidders = (1 << s.n_players) - 1
    bid_seek(s)


cdef void bid_seek(CUState* s) noexcept nogil:
    """The next bidder from the start player clockwise; a player without pesos bids 0."""
    cdef int j, q
    for j in range(s.n_players):
        q = (s.start_player + j) % s.n_players
        if (s.bidders >> q) & 1:
            if s.players[q].pesos <= 0:
                s.players[q].bid = 0
                s.bidders &= ~(1 << q)
                continue
            s.player = q
            s.step = STEP_BID
            return
    reveal_bids(s)


cdef void reveal_bids(CUState* s) noexcept nogil:
    cdef int q, v
    cdef uint8 bidding = s.tied if s.rebid else (1 << s.n_players) - 1
    cdef uint8 top
    cdef CubaPlayer* p
    for q in range(s.n_players):
        if (bidding >> q) & 1:
            p = &s.players[q]
            v = p.bid // s.t.vote_price if s.t.vote_price > 0 else p.bid
            pay(s, p, p.bid)
            p.votes += v
            p.bought += v
            p.bid = 0
    top = most_votes(s, bidding)
    if popcount64(top) == 1:
        s.winner = ctz64(top)
    elif not s.rebid:                          # CU-8.6 step 1: one re-bid of the tied players
        s.rebid = 1
        s.tied = top
        s.bidders = top
        bid_seek(s)
        return
    else:
        s.winner = proximity_winner(s, top)
    begin_enact(s)


cdef void begin_enact(CUState* s) noexcept nogil:
    s.bidders = 0
    s.player = s.winner
    s.step = STEP_ENACT


cdef inline bint proposal_available(const CUState* s, int st) noexcept nogil:
    return s.proposal[st] >= 0 and s.vetoed != st


# --- law execution (§9) ---------------------------------------------------------

cdef void begin_laws(CUState* s) noexcept nogil:
    s.phase = PHASE_LAWS
    s.turn = 0
    tax_seek(s)


cdef void tax_seek(CUState* s) noexcept nogil:
    cdef int q, due
    cdef CubaPlayer* p
    while s.turn < s.n_players:
        q = (s.start_player + s.turn) % s.n_players
        p = &s.players[q]
        due = tax_due(s, p)
        if due == 0:                           # D47: counts as paid
            p.paid_tax = 1
            p.vp += s.t.tax_vp
        elif p.pesos >= due:
            s.player = q
            s.step = STEP_TAX
            return
        s.turn += 1
    s.turn = 0
    levy_seek(s)


cdef void levy_seek(CUState* s) noexcept nogil:
    cdef int q
    while s.turn < s.n_players:
        q = (s.start_player + s.turn) % s.n_players
        if can_deliver(s, &s.players[q]):
            s.player = q
            s.step = STEP_LEVY
            return
        s.turn += 1
    s.turn = 0
    subsidy_and_other(s)


cdef int subsidy_vp(const CUState* s, int q) noexcept nogil:
    cdef int law = s.law_in_force[2]
    cdef const CubaPlayer* p = &s.players[q]
    cdef int count = 0, kind, unit, vp, cap
    if law < 0:
        return 0
    kind = s.t.law_param[law][0]
    unit = s.t.law_param[law][1]
    vp = s.t.law_param[law][2]
    cap = s.t.law_param[law][3]
    if kind == SUB_BUILDINGS:
        count = n_buildings(p)
    elif kind == SUB_FREE_CROP_FIELDS:
        count = free_fields_of(s, p, SUGAR, RUM)
    elif kind == SUB_FREE_MATERIAL_FIELDS:
        count = free_fields_of(s, p, WOOD, FIELD_WAREHOUSE)
    elif kind == SUB_WATER:
        count = stock(p, WATER)
    elif kind == SUB_PESOS:
        count = p.pesos
    elif kind == SUB_CHARACTER_VOTES:
        count = s.t.votes[p.fourth] if p.fourth >= 0 else 0
    if unit < 1:
        unit = 1
    vp = (count // unit) * vp
    if cap >= 0 and vp > cap:
        vp = cap
    return vp


cdef void subsidy_and_other(CUState* s) noexcept nogil:
    cdef int q, k, n, law
    for q in range(s.n_players):
        s.players[q].vp += subsidy_vp(s, q)
    law = s.law_in_force[3]
    if law >= 0 and s.t.law_kind[law] == LAW_MARKET_LOSES:
        for k in range(NUM_CROPS):
            n = s.t.law_param[law][0]
            if n > s.covered[k]:
                n = s.covered[k]
            s.covered[k] -= n
            s.supply[k] += n
    elif law >= 0 and s.t.law_kind[law] == LAW_MARKET_GAINS:
        for k in range(NUM_CROPS):
            n = s.t.law_param[law][0]
            if n > s.t.n_prices[k] - s.covered[k]:
                n = s.t.n_prices[k] - s.covered[k]
            if n > avail(s, k):
                n = avail(s, k)
            s.covered[k] += n
            s.supply[k] -= n
    end_round(s)


cdef void end_round(CUState* s) noexcept nogil:
    """§10: crops in the yard to the supply; departures; move up; refill; reset."""
    cdef int q, k, d
    cdef CubaPlayer* p
    s.phase = PHASE_END_OF_ROUND
    for q in range(s.n_players):
        p = &s.players[q]
        for k in range(NUM_CROPS):
            s.supply[k] += p.yard[k]
            p.yard[k] = 0
        p.hand = (1 << NUM_CHARACTERS) - 1
        p.fourth = -1
        p.paid_tax = 0
        p.bought = 0
        p.votes = 0
        p.bid = 0
    s.markers = 0
    s.town_hall_user = -1
    s.vetoed = -1
    s.winner = -1
    s.rebid = 0
    s.tied = 0
    s.turn = 0
    s.lap = 0
    for k in range(NUM_STACKS):
        s.proposal[k] = -1
    if s.round >= s.t.rounds:                # CU-12.1: the game ends (no ship flow: it cannot matter)
        s.phase = PHASE_END
        s.step = STEP_TERMINAL
        s.player = PLAYER_TERMINAL
        return
    s.round += 1
    for d in range(NUM_DOCKS):
        if s.dock[d] >= 0 and (ship_full(s, d) or d == NUM_DOCKS - 1):
            depart(s, d)
    move_up_and_enter(s)
    s.resume = RESUME_NEW_ROUND
    refill_continue(s)


# --- turn helpers -----------------------------------------------------------------

cdef bint usable(const CUState* s, const CubaPlayer* p, int b) noexcept nogil:
    """The Foreman can use building b (or the warehouse, b = USE_WAREHOUSE) with some effect."""
    cdef int k, d, st
    if b == USE_WAREHOUSE:
        return crops_in_yard(p) > 0
    if PICK_KINDS[b]:
        if b == STORAGE:
            return crops_in_yard(p) > 0 and storage_held(p) < s.t.storage_capacity
        if limited(s) and b == CIGAR_FACTORY and avail(s, CIGAR) == 0:
            return False
        if limited(s) and b == DISTILLERY and avail(s, RUM) == 0:
            return False
        for k in range(NUM_ITEMS):
            if (PICK_KINDS[b] >> k) & 1 and stock(p, k) > 0:
                return True
        return False
    if b == SMALL_OFFICE or b == LARGE_OFFICE:
        for k in range(NUM_CARGO):
            for d in range(NUM_DOCKS):
                if can_load(s, p, k, d):
                    return True
        return False
    if b == LIGHTHOUSE:
        return s.unseen != 0 or s.queue_len > 0
    if b == CHURCH:
        for st in range(NUM_STACKS):
            if proposal_available(s, st) and st != p.church_stack:
                return True
        return False
    if b == TOWN_HALL:
        return s.town_hall_user < 0
    return True                                  # Hotel, Inn, banks, Dam


cdef void foreman_continue(CUState* s) noexcept nogil:
    cdef const CubaPlayer* p = &s.players[s.player]
    cdef uint32 m = s.activated & ~s.used
    s.cur_building = -1
    s.step = STEP_FOREMAN
    while m:
        if usable(s, p, ctz64(m)):
            return
        m &= m - 1
    end_turn(s)


cdef void use_building(CUState* s, int b) noexcept nogil:
    cdef CubaPlayer* p = &s.players[s.player]
    cdef int k
    s.used |= (<uint32>1) << b
    if b == USE_WAREHOUSE:                    # D49: all yard crops
        for k in range(NUM_CROPS):
            p.warehouse[k] += p.yard[k]
            p.yard[k] = 0
    elif PICK_KINDS[b]:
        s.cur_building = b
        s.pick_left = s.t.limit[b]
        if b == STORAGE:                      # D16: up to the free capacity
            s.pick_left = s.t.storage_capacity - storage_held(p)
        elif b == BLACK_MARKET:
            s.pick_left = 1
        s.pick_count = 0
        s.pick_last = 0
        s.step = STEP_PICK
        return
    elif b == SMALL_OFFICE or b == LARGE_OFFICE:
        s.cur_building = b
        s.load_ctx = LOAD_SMALL_OFFICE if b == SMALL_OFFICE else LOAD_LARGE_OFFICE
        s.load_dock = -1
        s.load_left = 1 if b == SMALL_OFFICE else LARGE_OFFICE_ITEMS
        s.load_count = 0
        s.load_last = -1
        s.step = STEP_LOAD
        return
    elif b == LIGHTHOUSE:
        s.cur_building = b
        s.step = STEP_LIGHTHOUSE
        return
    elif b == CHURCH:
        s.cur_building = b
        s.step = STEP_VETO
        return
    elif b == HOTEL:
        p.vp += HOTEL_VP
    elif b == INN:
        p.vp += INN_VP
    elif b == SMALL_BANK:
        gain_pesos(s, p, SMALL_BANK_PESOS)
    elif b == LARGE_BANK:
        gain_pesos(s, p, LARGE_BANK_PESOS)
    elif b == DAM:
        gain_item(s, p, WATER, DAM_WATER)
    elif b == TOWN_HALL:
        s.town_hall_user = s.player
    foreman_continue(s)


cdef inline bint pick_legal(const CUState* s, int i) noexcept nogil:
    cdef const CubaPlayer* p = &s.players[s.player]
    cdef int b = s.cur_building
    if not (PICK_KINDS[b] >> i) & 1 or i < s.pick_last or s.pick_left <= 0:
        return False
    if b == STORAGE:
        return p.yard[i] > 0
    if stock(p, i) <= 0:
        return False
    if limited(s):
        if b == CIGAR_FACTORY:
            return avail(s, CIGAR) > 0
        if b == DISTILLERY:
            return avail(s, RUM) > 0
        if b == BLACK_MARKET:
            if i < NUM_CROPS:
                return avail(s, RUM) > 0 or avail(s, CIGAR) > 0
            return avail(s, SUGAR) > 0 or avail(s, CITRUS) > 0 or avail(s, TOBACCO) > 0
    return True


cdef void after_pick(CUState* s) noexcept nogil:
    cdef int i
    if s.pick_left > 0:
        for i in range(s.pick_last, NUM_ITEMS):
            if pick_legal(s, i):
                return
    foreman_continue(s)


cdef int load_options(const CUState* s, int16* out) noexcept nogil:
    """The loads legal now (A_LOAD + kind * 3 + dock, ascending) written to out; returns how
    many. Mayor: kinds from the last one loaded on; large office: the kind of its first item;
    the dock of the first item; an item in stock, a ship on the dock with a free slot."""
    cdef const CubaPlayer* p = &s.players[s.player]
    cdef int k, d, sh, n = 0, lo = 0, hi = NUM_CARGO, dlo = 0, dhi = NUM_DOCKS
    if s.load_left <= 0:
        return 0
    if s.load_ctx == LOAD_MAYOR:
        if s.load_last > 0:
            lo = s.load_last
    elif s.load_ctx == LOAD_LARGE_OFFICE and s.load_last >= 0:
        lo = s.load_last
        hi = lo + 1
    if s.load_dock >= 0:
        dlo = s.load_dock
        dhi = dlo + 1 if dlo < NUM_DOCKS else dlo
    if hi > NUM_CARGO:
        hi = NUM_CARGO
    for k in range(lo, hi):
        if stock(p, k) <= 0:
            continue
        for d in range(dlo, dhi):
            sh = s.dock[d]
            if sh >= 0 and s.cargo[d][k] < s.t.slots[sh][k]:
                out[n] = A_LOAD + k * NUM_DOCKS + d
                n += 1
    return n


cdef void after_load(CUState* s) noexcept nogil:
    cdef int16 buf[NUM_CARGO * NUM_DOCKS]
    if load_options(s, buf) == 0:
        finish_load(s)


cdef void finish_load(CUState* s) noexcept nogil:
    if s.load_ctx == LOAD_MAYOR:
        end_turn(s)
    else:
        foreman_continue(s)


cdef void begin_character(CUState* s, int c) noexcept nogil:
    cdef CubaPlayer* p = &s.players[s.player]
    p.hand &= ~(1 << c)
    if s.lap == s.t.cards_played - 1:
        p.fourth = c
    clear_turn(s)
    s.character = c
    if c == WORKER:
        s.step = STEP_PAWN
    elif c == TRADER:
        s.step = STEP_TRADE
    elif c == ARCHITECT:
        s.step = STEP_BUILD
    elif c == FOREMAN:
        s.step = STEP_FOREMAN_MODE
    else:
        s.load_ctx = LOAD_MAYOR
        s.load_left = UNLIMITED
        s.load_last = 0
        s.step = STEP_LOAD


cdef inline int free_crop_fields_now(const CUState* s) noexcept nogil:
    cdef int law = s.law_in_force[3]
    if law >= 0 and s.t.law_kind[law] == LAW_DROUGHT:
        return s.t.law_param[law][0]
    return s.t.free_crop_fields


cdef inline int harvest_options(const CUState* s, const CubaPlayer* p, int16* out) noexcept nogil:
    """The crop fields the Worker can harvest now (activated, after the last one harvested;
    a free one with the yield in the supply, or one more with the irrigation water) written
    to out as A_HARVEST + field, ascending; returns how many."""
    cdef uint32 m = s.harvest_mask & ((<uint32>0xFFFF) << (s.harvest_last + 1))
    cdef int f, n = 0
    if s.harvest_count < free_crop_fields_now(s):
        while m:
            f = ctz64(m)
            m &= m - 1
            if not limited(s) or avail(s, s.t.field[f]) >= s.t.yield_per_field:
                out[n] = A_HARVEST + f
                n += 1
    elif p.yard[WATER] >= s.t.irrigation_water:
        while m:
            out[n] = A_HARVEST + ctz64(m)
            n += 1
            m &= m - 1
    return n


cdef void work(CUState* s, int f) noexcept nogil:
    """Worker steps 1-3: move, activate, produce materials; then the harvest choice."""
    cdef CubaPlayer* p = &s.players[s.player]
    cdef uint16 m = CROSS[f]
    cdef int g, kind
    p.pawn = f
    s.harvest_mask = 0
    while m:
        g = ctz64(m)
        m &= m - 1
        if p.building_at[g] >= 0:
            continue
        kind = s.t.field[g]
        if kind >= WOOD and kind < FIELD_WAREHOUSE:
            gain_item(s, p, kind, s.t.yield_per_field)
        elif kind < RUM:
            s.harvest_mask |= <uint16>(1 << g)
    s.harvest_count = 0
    s.harvest_last = -1
    s.step = STEP_HARVEST


cdef inline int cheapest_crop_price(const CUState* s) noexcept nogil:
    cdef int k, best = 1000, v
    for k in range(NUM_CROPS):
        v = buy_price(s, k)
        if v < best:
            best = v
    return best


cdef inline int use_options(const CUState* s, const CubaPlayer* p, uint32 m, int16* out,
                            int n) noexcept nogil:
    """Append A_USE + b for the buildings b of mask m (bit USE_WAREHOUSE: the warehouse)
    that the Foreman can use with some effect, ascending; returns the new length."""
    while m:
        if usable(s, p, ctz64(m)):
            out[n] = A_USE + ctz64(m)
            n += 1
        m &= m - 1
    return n


cdef int foreman_mode_options(const CUState* s, const CubaPlayer* p, int16* out) noexcept nogil:
    """Mode A (the row and column of the pawn) if a building there or the warehouse can be
    used, then every usable building of his (and the warehouse), ascending. Each building
    is asked once."""
    cdef uint32 cross = 0, u = 0, m
    cdef uint32 mine = (p.owned | ((<uint32>1) << USE_WAREHOUSE)) & ALL_USES
    cdef uint16 fm = CROSS[p.pawn]
    cdef int f, b, n = 0
    while fm:                                  # what stands in the pawn's row and column
        f = ctz64(fm)
        fm &= fm - 1
        if f == s.t.warehouse_field:
            cross |= (<uint32>1) << USE_WAREHOUSE
        elif p.building_at[f] >= 0:
            cross |= (<uint32>1) << p.building_at[f]
    m = mine | cross
    while m:
        b = ctz64(m)
        m &= m - 1
        if usable(s, p, b):
            u |= (<uint32>1) << b
    if u & cross:
        out[n] = A_CROSS
        n += 1
    u &= mine
    while u:
        out[n] = A_USE + ctz64(u)
        n += 1
        u &= u - 1
    return n


# ---------------------------------------------------------------------------
# 4. Legal actions and apply
# ---------------------------------------------------------------------------

cdef int cu_current_player(const CUState* s) noexcept nogil:
    if s.step == STEP_TERMINAL:
        return PLAYER_TERMINAL
    if is_chance_step(s.step):
        return PLAYER_CHANCE
    return s.player


cdef int cu_legal_actions(const CUState* s, int16* out) noexcept nogil:
    """Sorted legal action ids; chance outcomes at a chance node."""
    cdef int n = 0, k, f, st, i, hi, lo, m
    cdef int step = s.step
    cdef const CubaPlayer* p
    cdef int32 w[NUM_LAWS]
    if is_chance_step(step):
        return cu_chance_outcomes(s, out, w)
    if step == STEP_TERMINAL:
        return 0
    p = &s.players[s.player]
    if step == STEP_SETUP_ITEM:
        if s.setup_left > s.t.start_crops:
            lo = WOOD if s.setup_last < WOOD else s.setup_last
            for k in range(lo, FIELD_WAREHOUSE):
                if avail(s, k) > 0:
                    out[n] = A_TAKE + k
                    n += 1
        else:
            lo = 0 if s.setup_last < 0 or s.setup_last >= WOOD else s.setup_last
            for k in range(lo, NUM_CROPS):
                if avail(s, k) > 0:
                    out[n] = A_TAKE + k
                    n += 1
        if n == 0:
            out[n] = A_PASS                  # limited supply ran out
            n += 1
        return n
    if step == STEP_CHARACTER:
        m = p.hand & ((1 << NUM_CHARACTERS) - 1)   # the cards in hand, as bits
        while m:
            out[n] = A_PLAY + ctz64(m)
            n += 1
            m &= m - 1
        return n
    if step == STEP_PAWN:
        for f in range(NUM_FIELDS):
            out[n] = A_PAWN + f
            n += 1
        out[n] = A_PASS
        return n + 1
    if step == STEP_HARVEST:
        n = harvest_options(s, p, out)
        out[n] = A_PASS
        return n + 1
    if step == STEP_TRADE:
        for k in range(NUM_CARGO):
            if k >= s.trade_last and stock(p, k) > 0:
                out[n] = A_SELL + k
                n += 1
        for k in range(NUM_CARGO):
            if NUM_CARGO + k >= s.trade_last and not (s.sold >> k) & 1 and p.pesos >= buy_price(s, k) \
                    and (s.covered[k] > 0 or avail(s, k) > 0):
                out[n] = A_BUY + k
                n += 1
        if s.trade_last < 0:
            if not (s.markers >> MK_TRADER_MATERIAL) & 1:
                for k in range(NUM_MATERIALS):
                    if avail(s, WOOD + k) > 0:
                        out[n] = A_TRADER_MATERIAL + k
                        n += 1
            if not (s.markers >> MK_TRADER_CROP) & 1:
                hi = cheapest_crop_price(s)
                for k in range(NUM_CROPS):
                    if buy_price(s, k) == hi and avail(s, k) > 0:
                        out[n] = A_TRADER_CROP + k
                        n += 1
        out[n] = A_PASS
        return n + 1
    if step == STEP_BUILD:
        if n_buildings(p) < NUM_FIELDS - 1:
            n = build_options(s, p, out, n)
        if (s.markers >> MK_ARCH_2) & 1 == 0 or (s.markers >> MK_ARCH_1) & 1 == 0:
            out[n] = A_ARCH_ALT
            n += 1
        out[n] = A_PASS
        return n + 1
    if step == STEP_PLACE:
        for f in range(NUM_FIELDS):
            if f != s.t.warehouse_field and p.building_at[f] < 0:
                out[n] = A_PLACE + f
                n += 1
        return n
    if step == STEP_FOREMAN_MODE:
        n = foreman_mode_options(s, p, out)
        out[n] = A_PASS
        return n + 1
    if step == STEP_FOREMAN:
        n = use_options(s, p, s.activated & ~s.used & ALL_USES, out, 0)
        out[n] = A_PASS
        return n + 1
    if step == STEP_PICK:
        for i in range(NUM_ITEMS):
            if pick_legal(s, i):
                out[n] = A_PICK + i
                n += 1
        if s.pick_count > 0:
            out[n] = A_PASS
            n += 1
        return n
    if step == STEP_RECEIVE:
        if s.pick_item < NUM_CROPS:
            lo, hi = RUM, NUM_CARGO
        else:
            lo, hi = 0, NUM_CROPS
        for k in range(lo, hi):
            if avail(s, k) > 0:
                out[n] = A_RECEIVE + k
                n += 1
        return n
    if step == STEP_LIGHTHOUSE:
        for k in range(NUM_SHIPS):
            if (s.unseen >> k) & 1 or in_queue(s, k):
                out[n] = A_LIGHTHOUSE + k
                n += 1
        return n
    if step == STEP_VETO:
        for st in range(NUM_STACKS):
            if proposal_available(s, st) and st != p.church_stack:
                out[n] = A_VETO + st
                n += 1
        return n
    if step == STEP_LOAD:
        n = load_options(s, out)
        if s.load_ctx == LOAD_MAYOR and s.load_count == 0 and \
                ((s.markers >> MK_MAYOR_4) & 1 == 0 or (s.markers >> MK_MAYOR_2) & 1 == 0):
            out[n] = A_MAYOR_ALT
            n += 1
        if s.load_ctx == LOAD_MAYOR or s.load_count > 0:
            out[n] = A_PASS
            n += 1
        return n
    if step == STEP_ENACT:
        for i in range(6):
            if proposal_available(s, PAIR_A[i]) and proposal_available(s, PAIR_B[i]):
                out[n] = A_ENACT + i
                n += 1
        return n
    if step == STEP_TAX:
        out[0] = A_PAY_TAX
        out[1] = A_PASS
        return 2
    if step == STEP_LEVY:
        out[0] = A_DELIVER_LEVY
        out[1] = A_PASS
        return 2
    if step == STEP_BID:
        hi = p.pesos if p.pesos < MAX_BID else MAX_BID
        for i in range(hi + 1):
            out[i] = A_BID + i
        return hi + 1
    return 0


cdef inline bint in_queue(const CUState* s, int k) noexcept nogil:
    cdef int i
    for i in range(s.queue_len):
        if s.queue[i] == k:
            return True
    return False


cdef int build_options(const CUState* s, const CubaPlayer* p, int16* out, int n) noexcept nogil:
    """Append the buildings `p` can build now (not his, a copy left, the materials and the
    pesos) to out[:n]; returns the new length. The owners are counted once for all kinds;
    the four costs are compared at once, one byte each (costs are 0..20, pack_tables)."""
    cdef int8 owners[NUM_BUILDINGS]
    cdef uint8 have[4]
    cdef int q, b
    cdef int pesos = p.pesos - building_law_pesos(s)
    cdef uint32 want, room
    cdef uint64 m
    if pesos < 0:                              # no cost is below 0
        return n
    have[0] = BYTE_OF(p.yard[WOOD])
    have[1] = BYTE_OF(p.yard[STONE])
    have[2] = BYTE_OF(p.yard[WATER])
    have[3] = BYTE_OF(pesos)
    memcpy(&room, have, 4)
    room |= 0x80808080u                        # byte i: 128 + have[i] (have and costs 0..127)
    memset(owners, 0, sizeof(owners))
    for q in range(s.n_players):
        m = s.players[q].owned
        while m:
            owners[ctz64(m)] += 1
            m &= m - 1
    m = ~(<uint64>p.owned) & (((<uint64>1) << NUM_BUILDINGS) - 1)
    while m:
        # branch-free: which kinds he can pay for is unpredictable; each id is written and
        # kept only if buildable (out[n] past the end is scratch, as for every legal list).
        # (room - cost) keeps bit 7 of byte i set exactly when have[i] >= cost[i], and no
        # byte borrows from the next one
        b = ctz64(m)
        m &= m - 1
        memcpy(&want, s.t.cost[b], 4)
        out[n] = A_BUILD + b
        n += (owners[b] < s.t.copies[b]) & (((room - want) & 0x80808080u) == 0x80808080u)
    return n


cdef void apply_pass(CUState* s) noexcept nogil:
    cdef int step = s.step
    if step == STEP_PICK:
        foreman_continue(s)
    elif step == STEP_LOAD:
        finish_load(s)
    elif step == STEP_TAX:
        s.turn += 1
        tax_seek(s)
    elif step == STEP_LEVY:
        s.turn += 1
        levy_seek(s)
    elif step == STEP_SETUP_ITEM:
        s.setup_left = 0
        setup_seek(s)
    else:                                      # a character action ends
        end_turn(s)


cdef void cu_apply(CUState* s, int a) noexcept nogil:
    """Apply a legal action (decision or chance outcome), then skip every pass-only decision."""
    if cu_current_player(s) == PLAYER_CHANCE:
        rng_next(&s.rng)                     # every chance event advances the RNG by one step
    apply_one(s, a)
    settle(s)


cdef inline int settle_list(CUState* s, int16* out) noexcept nogil:
    """A player whose only legal action would be `pass` is skipped (no decision). Returns
    the length of the legal list written to out for the position it stops at, or -1 where
    that position did not need one (a step that never has a lone pass)."""
    cdef int step, n
    while True:
        step = s.step
        if step != STEP_HARVEST and step != STEP_TRADE and step != STEP_BUILD and \
                step != STEP_FOREMAN_MODE and step != STEP_FOREMAN and step != STEP_LOAD and \
                step != STEP_SETUP_ITEM:
            return -1
        n = cu_legal_actions(s, out)
        if n != 1 or out[0] != A_PASS:
            return n
        apply_pass(s)


cdef void settle(CUState* s) noexcept nogil:
    cdef int16 buf[64]                         # the longest list of those steps: 26
    settle_list(s, buf)


cdef void apply_one(CUState* s, int a) noexcept nogil:
    cdef CubaPlayer* p
    cdef int k, d, f, b, i, v, st
    if a < A_SHIP:                                    # round-1 start player (C1)
        s.start_player = a - A_START
        begin_setup_items(s)
        return
    if a < A_LAW:                                     # a ship drawn (C3)
        k = a - A_SHIP
        s.unseen &= ~(1 << k)
        place_drawn(s, k)
        refill_continue(s)
        return
    if a < A_TAKE:                                    # a proposal revealed (C2)
        k = a - A_LAW
        s.revealed |= (<uint32>1) << k
        s.proposal[s.t.law_stack[k]] = k
        s.law_next += 1
        if s.law_next >= NUM_STACKS:
            begin_actions(s)
        return
    p = &s.players[s.player]
    if a == A_PASS:
        apply_pass(s)
        return
    if a < A_PLAY:                                    # a starting item
        k = a - A_TAKE
        gain_item(s, p, k, 1)
        s.setup_left -= 1
        s.setup_last = k
        if s.setup_left == s.t.start_crops:
            s.setup_last = -1
        setup_seek(s)
        return
    if a < A_PAWN:
        begin_character(s, a - A_PLAY)
        return
    if a < A_HARVEST:
        work(s, a - A_PAWN)
        return
    if a < A_SELL:
        f = a - A_HARVEST
        if s.harvest_count >= free_crop_fields_now(s):
            use_item(s, p, WATER, s.t.irrigation_water, True)
        gain_item(s, p, s.t.field[f], s.t.yield_per_field)
        s.harvest_count += 1
        s.harvest_last = f
        return
    if a < A_BUY:                                     # sell one item
        k = a - A_SELL
        v = sell_price(s, k)
        use_item(s, p, k, 1, s.covered[k] >= s.t.n_prices[k])
        if s.covered[k] < s.t.n_prices[k]:
            s.covered[k] += 1
        gain_pesos(s, p, v)
        s.sold |= 1 << k
        s.trade_last = k
        return
    if a < A_TRADER_MATERIAL:                         # buy one item
        k = a - A_BUY
        pay(s, p, buy_price(s, k))
        if s.covered[k] > 0:
            s.covered[k] -= 1
            p.yard[k] += 1
        else:
            gain_item(s, p, k, 1)
        s.trade_last = NUM_CARGO + k
        return
    if a < A_TRADER_CROP:                             # alternative (a)
        gain_item(s, p, WOOD + a - A_TRADER_MATERIAL, s.t.trader_alt_materials)
        s.markers |= 1 << MK_TRADER_MATERIAL
        end_turn(s)
        return
    if a < A_BUILD:                                   # alternative (b)
        gain_item(s, p, a - A_TRADER_CROP, s.t.trader_alt_crops)
        s.markers |= 1 << MK_TRADER_CROP
        end_turn(s)
        return
    if a < A_PLACE:                                   # pay for a building
        b = a - A_BUILD
        use_item(s, p, WOOD, s.t.cost[b][0], True)
        use_item(s, p, STONE, s.t.cost[b][1], True)
        use_item(s, p, WATER, s.t.cost[b][2], True)
        pay(s, p, building_pesos(s, b))
        s.build_pending = b
        s.step = STEP_PLACE
        return
    if a < A_ARCH_ALT:                                # place it
        f = a - A_PLACE
        b = s.build_pending
        p.building_at[f] = b
        p.owned |= (<uint32>1) << b
        s.build_pending = -1
        s.built = 1
        end_turn(s)
        return
    if a == A_ARCH_ALT:
        if not (s.markers >> MK_ARCH_2) & 1:
            p.vp += s.t.arch_alt[0]
            s.markers |= 1 << MK_ARCH_2
        else:
            p.vp += s.t.arch_alt[1]
            s.markers |= 1 << MK_ARCH_1
        end_turn(s)
        return
    if a == A_CROSS:                                  # Foreman mode A (D14)
        s.activated = 0
        for f in range(NUM_FIELDS):
            if (CROSS[p.pawn] >> f) & 1:
                if f == s.t.warehouse_field:
                    s.activated |= (<uint32>1) << USE_WAREHOUSE
                elif p.building_at[f] >= 0:
                    s.activated |= (<uint32>1) << p.building_at[f]
        s.used = 0
        foreman_continue(s)
        return
    if a < A_PICK:                                    # use a building (mode B from the mode step)
        b = a - A_USE
        if s.step == STEP_FOREMAN_MODE:
            s.activated = (<uint32>1) << b
            s.used = 0
        use_building(s, b)
        return
    if a < A_RECEIVE:
        pick(s, p, a - A_PICK)
        return
    if a < A_LIGHTHOUSE:                              # Black market: the item received
        gain_item(s, p, a - A_RECEIVE, 1)
        s.pick_left = 0
        foreman_continue(s)
        return
    if a < A_VETO:                                    # Lighthouse (D37, D51)
        k = a - A_LIGHTHOUSE
        if (s.unseen >> k) & 1:
            s.unseen &= ~(1 << k)
        else:
            i = 0
            while i < s.queue_len and s.queue[i] != k:
                i += 1
            s.queue_len -= 1
            while i < s.queue_len:
                s.queue[i] = s.queue[i + 1]
                i += 1
        s.queue[s.queue_len] = s.at_sea
        s.queue_len += 1
        s.at_sea = k
        foreman_continue(s)
        return
    if a < A_LOAD:                                    # Church veto (D39)
        st = a - A_VETO
        s.vetoed = st
        p.church_stack = st
        foreman_continue(s)
        return
    if a < A_MAYOR_ALT:                               # load one item
        k = (a - A_LOAD) // NUM_DOCKS
        d = (a - A_LOAD) % NUM_DOCKS
        use_item(s, p, k, 1, False)
        s.cargo[d][k] += 1
        p.vp += s.t.dock_vp[d]
        s.load_dock = d
        s.load_count += 1
        s.load_left -= 1
        s.load_last = k
        if ship_full(s, d) and law_iv(s, LAW_HARBOUR):
            harbour_departure(s, d, RESUME_TURN_END if s.load_ctx == LOAD_MAYOR else RESUME_FOREMAN)
            return
        after_load(s)
        return
    if a == A_MAYOR_ALT:
        if not (s.markers >> MK_MAYOR_4) & 1:
            gain_pesos(s, p, s.t.mayor_alt[0])
            s.markers |= 1 << MK_MAYOR_4
        else:
            gain_pesos(s, p, s.t.mayor_alt[1])
            s.markers |= 1 << MK_MAYOR_2
        end_turn(s)
        return
    if a < A_PAY_TAX:                                 # enactment (CU-8.8)
        i = a - A_ENACT
        s.law_in_force[PAIR_A[i]] = s.proposal[PAIR_A[i]]
        s.law_in_force[PAIR_B[i]] = s.proposal[PAIR_B[i]]
        for st in range(NUM_STACKS):
            s.proposal[st] = -1
        s.vetoed = -1
        begin_laws(s)
        return
    if a == A_PAY_TAX:
        pay(s, p, tax_due(s, p))
        p.paid_tax = 1
        p.vp += s.t.tax_vp
        s.turn += 1
        tax_seek(s)
        return
    if a == A_DELIVER_LEVY:
        for i in range(NUM_ITEMS):
            if levy_items(s)[i]:
                use_item(s, p, i, levy_items(s)[i], True)
        p.vp += s.t.levy_vp + (s.t.levy_bonus_vp if p.paid_tax else 0)
        s.turn += 1
        levy_seek(s)
        return
    # a secret bid
    p.bid = a - A_BID
    s.bidders &= ~(1 << s.player)
    bid_seek(s)


cdef void pick(CUState* s, CubaPlayer* p, int i) noexcept nogil:
    cdef int b = s.cur_building
    s.pick_left -= 1
    s.pick_count += 1
    s.pick_last = i
    if b == STORAGE:
        p.yard[i] -= 1
        p.storage[i] += 1
    elif b == BLACK_MARKET:
        use_item(s, p, i, 1, True)
        s.pick_item = i
        s.step = STEP_RECEIVE
        return
    else:
        use_item(s, p, i, 1, True)
        if CONVERT_VP[b]:
            p.vp += CONVERT_VP[b]
        elif b == MAIN_WAREHOUSE:
            gain_pesos(s, p, MAIN_WAREHOUSE_PESOS)
        elif b == PRODUCTION_BUILDING:
            gain_pesos(s, p, PRODUCTION_PESOS)
        elif b == SUPPLY_DEPOT:
            gain_pesos(s, p, DEPOT_PESOS)
        elif b == CIGAR_FACTORY:
            gain_item(s, p, CIGAR, 1)
        elif b == DISTILLERY:
            gain_item(s, p, RUM, 1)
    after_pick(s)


# ---------------------------------------------------------------------------
# 5. Chance, scoring, determinization, observation, playouts
# ---------------------------------------------------------------------------

cdef inline uint32 chance_mask(const CUState* s) noexcept nogil:
    """The chance outcomes as bits (their offset from A_START, A_SHIP or A_LAW): the seats
    (C1), the unseen ships (C3), the unrevealed cards of stack law_next (C2)."""
    if s.step == STEP_START_PLAYER:
        return ((<uint32>1) << s.n_players) - 1
    if s.step == STEP_SHIP_DRAW:
        return s.unseen & (((<uint32>1) << NUM_SHIPS) - 1)
    if s.step == STEP_LAW_DRAW:                  # the stacks' cards lie in any order
        return cu_bytes_equal24(s.t.law_stack, s.law_next) & ~s.revealed
    return 0


cdef inline int chance_base(int step) noexcept nogil:
    return A_START if step == STEP_START_PLAYER else A_SHIP if step == STEP_SHIP_DRAW else A_LAW


cdef int cu_chance_outcomes(const CUState* s, int16* actions, int32* weights) noexcept nogil:
    """Uniform outcomes: a seat (C1), an unseen ship (C3), an unrevealed card of the stack (C2)."""
    cdef uint32 m = chance_mask(s)
    cdef int n = 0, base = chance_base(s.step)
    while m:
        actions[n] = base + ctz64(m)
        weights[n] = 1
        n += 1
        m &= m - 1
    return n


cdef int cu_sample_chance(CUState* s) noexcept nogil:
    """The outcome the state's RNG draws (uniform over cu_chance_outcomes' list, without
    advancing the RNG: applying the outcome does that)."""
    cdef uint32 m = chance_mask(s)
    cdef int n = cu_popcount32(m), i
    cdef Rng r = s.rng                       # a copy: applying the outcome advances the RNG one step
    if n > 1:
        i = rng_below(&r, n)
        while i:                             # the i-th bit
            m &= m - 1
            i -= 1
    return chance_base(s.step) + ctz64(m)


cdef void cu_score(const CUState* s, int seat, CubaScore* out) noexcept nogil:
    """CU-12: VP + 2 VP per building; tie-break: pesos."""
    cdef const CubaPlayer* p = &s.players[seat]
    out.vp = p.vp
    out.building_vp = n_buildings(p) * s.t.end_vp_per_building
    out.total = out.vp + out.building_vp
    out.tiebreak = p.pesos


cdef void cu_returns(const CUState* s, double* out) noexcept nogil:
    """1 for the winner, a shared win split equally (D42); 0 before the end."""
    cdef CubaScore sc
    cdef int32 total[MAX_PLAYERS]
    cdef int32 tie[MAX_PLAYERS]
    cdef int i
    for i in range(s.n_players):
        out[i] = 0.0
    if s.step != STEP_TERMINAL:
        return
    for i in range(s.n_players):
        cu_score(s, i, &sc)
        total[i] = sc.total
        tie[i] = sc.tiebreak
    split_win(s.n_players, total, tie, out)

cdef int32 cu_random_playout(CUState* s) noexcept nogil:
    """Uniformly random decisions (chance sampled) to the end; returns the decisions.
    cu_apply's steps, with the legal list that settle made kept for the next decision."""
    cdef int16 legal[MAX_LEGAL]
    cdef int n = -1, a
    cdef int32 decisions = 0
    while s.step != STEP_TERMINAL:
        if is_chance_step(s.step):
            a = cu_sample_chance(s)
            rng_next(&s.rng)                   # as cu_apply: a chance event advances the RNG
            apply_one(s, a)
        else:
            if n < 0:
                n = cu_legal_actions(s, legal)
            if n == 0:                         # cannot happen from a validated state; never loop
                break
            apply_one(s, legal[rng_below(&s.rng, n)] if n > 1 else legal[0])
            decisions += 1
        n = settle_list(s, legal)
    return decisions


cdef void cu_determinize(CUState* s, int observer) noexcept nogil:
    """Resample what `observer` cannot see: the secret bids of the players who have
    already bid in the current bidding (E.1), uniformly in 0..min(pesos, MAX_BID).
    Everything else is public or chance."""
    cdef int q, hi
    cdef uint8 bidding
    if s.step != STEP_BID:
        return
    bidding = s.tied if s.rebid else (1 << s.n_players) - 1
    for q in range(s.n_players):
        if q != observer and (bidding >> q) & 1 and not (s.bidders >> q) & 1:
            hi = s.players[q].pesos if s.players[q].pesos < MAX_BID else MAX_BID
            s.players[q].bid = rng_below(&s.rng, hi + 1) if hi > 0 else 0


cdef inline int put(float* out, int i, double v) noexcept nogil:
    if out != NULL:
        out[i] = <float>v
    return i + 1

cdef inline int one_hot(float* out, int i, int value, int size) noexcept nogil:
    cdef int j
    for j in range(size):
        i = put(out, i, 1.0 if j == value else 0.0)
    return i

# The features written here, in this order, with their true bounds: _observation_layout() in
# src/caribsim/cuba/game.py (observation_bounds, the normalised view, the docs' table).
# Change both together: tests/embed/test_observation_bounds.py checks the length and plays
# random games against the bounds.
cdef int write_observation(const CUState* s, int seat, float* out) noexcept nogil:
    """The public state plus the seat's own secret bid; the players are listed from
    `seat` on. Other players' bids are never written (only whether they have bid).
    With out == NULL only counts the entries."""
    cdef int i = 0, j, k, f, d, q, pos, law, _, n = s.n_players
    cdef int cur = cu_current_player(s)
    cdef const CubaPlayer* p
    cdef uint8 bidding = (s.tied if s.rebid else (1 << n) - 1) if s.step == STEP_BID else 0
    for j in range(MAX_PLAYERS):
        if j >= n:                             # fixed size: absent seats are zeros
            for _ in range(NUM_ITEMS + 2 * NUM_CROPS + 2 + NUM_FIELDS * (NUM_BUILDINGS + 1)
                           + 2 * NUM_CHARACTERS + NUM_STACKS + 10):
                i = put(out, i, 0.0)
            continue
        q = (seat + j) % n
        p = &s.players[q]
        i = put(out, i, p.pesos)
        i = put(out, i, p.vp)
        for k in range(NUM_ITEMS):
            i = put(out, i, p.yard[k])
        for k in range(NUM_CROPS):
            i = put(out, i, p.warehouse[k])
            i = put(out, i, p.storage[k])
        for f in range(NUM_FIELDS):
            i = put(out, i, 1.0 if p.pawn == f else 0.0)
            i = one_hot(out, i, p.building_at[f], NUM_BUILDINGS)
        for k in range(NUM_CHARACTERS):
            i = put(out, i, 1.0 if (p.hand >> k) & 1 else 0.0)
        i = one_hot(out, i, p.fourth, NUM_CHARACTERS)
        i = one_hot(out, i, p.church_stack, NUM_STACKS)
        i = put(out, i, p.paid_tax)
        i = put(out, i, p.bought)
        i = put(out, i, p.votes)
        i = put(out, i, 1.0 if (bidding >> q) & 1 and not (s.bidders >> q) & 1 else 0.0)   # has bid
        i = put(out, i, p.bid if q == seat and (bidding >> q) & 1 and not (s.bidders >> q) & 1 else 0.0)
        i = put(out, i, 1.0 if q == cur else 0.0)
        i = put(out, i, 1.0 if q == s.start_player else 0.0)
        i = put(out, i, 1.0 if q == s.town_hall_user else 0.0)
        i = put(out, i, 1.0 if (s.tied >> q) & 1 else 0.0)
        i = put(out, i, 1.0 if q == s.winner else 0.0)
    i = one_hot(out, i, s.round - 1, MAX_ROUNDS)
    i = one_hot(out, i, s.phase, NUM_PHASES)
    i = one_hot(out, i, s.step, NUM_STEPS)
    i = put(out, i, s.lap)
    i = put(out, i, s.turn)
    i = one_hot(out, i, s.character, NUM_CHARACTERS)
    for k in range(NUM_MARKERS):
        i = put(out, i, 1.0 if (s.markers >> k) & 1 else 0.0)
    for k in range(NUM_CARGO):
        i = put(out, i, s.covered[k])
        i = put(out, i, buy_price(s, k))
        i = put(out, i, sell_price(s, k))
    for d in range(NUM_DOCKS):
        i = one_hot(out, i, s.dock[d], NUM_SHIPS)
        for k in range(NUM_CARGO):
            i = put(out, i, s.cargo[d][k])
            i = put(out, i, s.t.slots[s.dock[d]][k] - s.cargo[d][k] if s.dock[d] >= 0 else 0)
    i = one_hot(out, i, s.at_sea, NUM_SHIPS)
    for k in range(NUM_SHIPS):
        i = put(out, i, 1.0 if (s.unseen >> k) & 1 else 0.0)
        pos = 0
        for j in range(s.queue_len):
            if s.queue[j] == k:
                pos = j + 1
        i = put(out, i, pos)                     # position in the returned part of the deck (1 = next)
    for law in range(NUM_LAWS):
        i = put(out, i, 1.0 if s.law_in_force[s.t.law_stack[law]] == law else 0.0)
        i = put(out, i, 1.0 if s.proposal[s.t.law_stack[law]] == law else 0.0)
        i = put(out, i, 1.0 if s.proposal[s.t.law_stack[law]] == law and s.vetoed == s.t.law_stack[law] else 0.0)
        i = put(out, i, 1.0 if (s.revealed >> law) & 1 else 0.0)
    i = put(out, i, 1.0 if s.law_in_force[0] == LAW_INITIAL else 0.0)
    i = put(out, i, 1.0 if s.law_in_force[1] == LAW_INITIAL else 0.0)
    i = put(out, i, s.rebid)
    # the running action's state
    i = put(out, i, s.setup_left)
    i = put(out, i, s.setup_last + 1)
    i = put(out, i, s.harvest_count)
    i = put(out, i, s.harvest_last + 1)
    for f in range(NUM_FIELDS):
        i = put(out, i, 1.0 if (s.harvest_mask >> f) & 1 else 0.0)
    i = put(out, i, s.trade_last + 1)
    for k in range(NUM_CARGO):
        i = put(out, i, 1.0 if (s.sold >> k) & 1 else 0.0)
    i = one_hot(out, i, s.build_pending, NUM_BUILDINGS)
    for k in range(NUM_BUILDINGS + 1):
        i = put(out, i, 1.0 if (s.activated >> k) & 1 else 0.0)
        i = put(out, i, 1.0 if (s.used >> k) & 1 else 0.0)
    i = one_hot(out, i, s.cur_building, NUM_BUILDINGS)
    i = put(out, i, s.pick_left)
    i = put(out, i, s.pick_count)
    i = put(out, i, s.pick_last)
    i = put(out, i, s.pick_item + 1)
    i = one_hot(out, i, s.load_ctx, 3)
    i = put(out, i, s.load_dock + 1)
    i = put(out, i, s.load_left)
    i = put(out, i, s.load_count)
    i = put(out, i, s.load_last + 1)
    return i

cdef void cu_observation(const CUState* s, int seat, float* out) noexcept nogil:
    write_observation(s, seat, out)

cdef int cu_observation_size(int n_players) noexcept nogil:
    cdef CUState s
    memset(&s, 0, sizeof(CUState))
    s.n_players = n_players
    s.round = 1
    return write_observation(&s, 0, NULL)


# ---------------------------------------------------------------------------
# 5b. The C game interface (caribsim._game.GameVTable) for the search
# ---------------------------------------------------------------------------

cdef void _vt_scores(const void* s, double* out) noexcept nogil:
    cdef CubaScore sc
    cdef int i
    for i in range(MAX_PLAYERS):
        out[i] = 0.0
    for i in range((<const CUState*>s).n_players):
        cu_score(<const CUState*>s, i, &sc)
        out[i] = sc.total

cdef void _vt_reseed(void* s, uint64 seed, uint64 stream) noexcept nogil:
    rng_seed(&(<CUState*>s).rng, seed, stream)

cdef int _heuristic_value(const CUState* s, int a) noexcept nogil:
    """Greedy preference of the rollout heuristic (higher is better)."""
    cdef const CubaPlayer* p = &s.players[s.player]
    if a == A_PASS:
        return 0
    if a >= A_BID:
        return 8 - (a - A_BID) if a - A_BID < 8 else 0          # small bids
    if a >= A_PLAY and a < A_PAWN:
        return 2
    if a >= A_PAWN and a < A_HARVEST:
        return 1 + popcount64(CROSS[a - A_PAWN])                 # any field; all rows alike
    if a >= A_HARVEST and a < A_SELL:
        return 6
    if a >= A_SELL and a < A_BUY:
        return 3 if a - A_SELL >= RUM or p.pesos < 6 else 1
    if a >= A_BUY and a < A_TRADER_MATERIAL:
        return 1
    if a >= A_TRADER_MATERIAL and a < A_BUILD:
        return 5
    if a >= A_BUILD and a < A_PLACE:
        return 9 + s.t.cost[a - A_BUILD][3]
    if a == A_ARCH_ALT:
        return 5
    if a >= A_LOAD and a < A_MAYOR_ALT:
        return 7 + (a - A_LOAD) % NUM_DOCKS
    if a == A_MAYOR_ALT:
        return 4
    if a == A_PAY_TAX or a == A_DELIVER_LEVY:
        return 6
    return 5

cdef int cu_heuristic_action(CUState* s, const int16* legal, int n) noexcept nogil:
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

cdef void cu_evaluate(const CUState* s, double* out) noexcept nogil:
    """Static value per seat in [0, 1]: the returns at the end; before it, total VP plus
    a third of the pesos, scaled between the last and the first player."""
    cdef CubaScore sc
    cdef double v[MAX_PLAYERS]
    cdef double lo = 1e9, hi = -1e9
    cdef int i, n = s.n_players
    if s.step == STEP_TERMINAL:
        cu_returns(s, out)
        return
    for i in range(n):
        cu_score(s, i, &sc)
        v[i] = sc.total + sc.tiebreak / 3.0
        lo = v[i] if v[i] < lo else lo
        hi = v[i] if v[i] > hi else hi
    for i in range(n):
        out[i] = 0.5 if hi == lo else (v[i] - lo) / (hi - lo)

cdef int _vt_observation_size(const void* s) noexcept nogil:
    return cu_observation_size((<const CUState*>s).n_players)

# the shims that cast void* to CUState* and call the cu_* functions (_game.pxd)
cdef extern from *:
    """
    CARIBSIM_VT_SHIMS(CUState, cu)
    CARIBSIM_VT_DETERMINIZE(CUState, cu)
    #define cu_vt_fill(t) CARIBSIM_VT_FILL(t, cu)
    """
    void cu_vt_fill(GameVTable* t) noexcept nogil
    void cu_vt_determinize(void* s, int observer) noexcept nogil

cdef GameVTable CUBA_VTABLE
CUBA_VTABLE.name = b"cuba"
CUBA_VTABLE.state_size = sizeof(CUState)
CUBA_VTABLE.num_actions = NUM_ACTIONS
CUBA_VTABLE.max_chance_outcomes = NUM_LAWS
CUBA_VTABLE.max_players = MAX_PLAYERS
cu_vt_fill(&CUBA_VTABLE)
CUBA_VTABLE.scores = _vt_scores
CUBA_VTABLE.reseed = _vt_reseed
CUBA_VTABLE.determinize = cu_vt_determinize
CUBA_VTABLE.observation_size = _vt_observation_size


# The module's C data for other modules (module-level C variables cannot be cimported).
cdef const GameVTable* cuba_vtable() noexcept nogil:
    return &CUBA_VTABLE

cdef const int8* cu_pair_a() noexcept nogil:
    return PAIR_A

cdef const int8* cu_pair_b() noexcept nogil:
    return PAIR_B
