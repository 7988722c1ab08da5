# cython: language_level=3, preliminary_late_includes_cy28=True
"""Cuba core: rules in C (nogil) over one CubaState struct.

Layout of this file:
  1. fixed geometry and the packing of component data (CubaTables) from Python
  2. small board queries and item moves
  3. the flow: setup, rounds, laps, parliament, law execution, end of round;
     each *_seek / continue function leaves `step` at a decision, a chance
     event or the end
  4. legal actions and apply (one atomic decision per action)
  5. chance, scoring, determinization, observation, playouts, the C game interface
  6. the Python API: the compiled State class, action names, the dict codec,
     the readable board and the threaded playout driver

The component data (costs, ships, laws, market, plantation, constants) is a
CubaTables block inside every state: games loaded from different data folders
never share tables, and a clone is one memcpy.
"""
cimport cython
from libc.string cimport memcmp, memset, memcpy
from caribsim._types cimport int8, int16, int32, uint8, uint16, uint32, uint64, popcount64, ctz64
from caribsim._types cimport PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport Rng, rng_seed, rng_below, rng_next
from caribsim._game cimport GameVTable, GameState, chain_list, history_slot

# ---------------------------------------------------------------------------
# 1. Geometry and names
# ---------------------------------------------------------------------------

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
    cdef int b, k, l, i
    memset(&t, 0, sizeof(CubaTables))
    for b in range(NUM_BUILDINGS):
        row = spec["buildings"][b]
        for k in range(4):
            t.cost[b][k] = row["cost"][k]
        t.copies[b] = row["copies"]
        t.limit[b] = row["limit"] if row["limit"] is not None else UNLIMITED
    for i in range(NUM_SHIPS):
        row = spec["ships"][i]
        for k in range(NUM_CARGO):
            t.slots[i][k] = row["slots"][k]
        t.ship_total[i] = sum(row["slots"])
    for l in range(NUM_LAWS):
        row = spec["laws"][l]
        t.law_kind[l] = row["kind"]
        t.law_stack[l] = row["stack"]
        for k in range(NUM_ITEMS):
            t.law_param[l][k] = row["param"][k]
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


cdef inline void unpack_tables(CubaTables* t, bytes data):
    if len(data) != sizeof(CubaTables):
        raise ValueError("component tables have the wrong size")
    memcpy(t, <const char*>data, sizeof(CubaTables))


# ---------------------------------------------------------------------------
# 2. Board queries and item moves
# ---------------------------------------------------------------------------

cdef inline int stock(const CubaPlayer* p, int i) noexcept nogil:
    """Yard + Storage + warehouse (only crops are ever stored)."""
    if i < NUM_CROPS:
        return p.yard[i] + p.storage[i] + p.warehouse[i]
    return p.yard[i]

cdef inline int crops_in_yard(const CubaPlayer* p) noexcept nogil:
    return p.yard[SUGAR] + p.yard[CITRUS] + p.yard[TOBACCO]

cdef inline int storage_held(const CubaPlayer* p) noexcept nogil:
    return p.storage[SUGAR] + p.storage[CITRUS] + p.storage[TOBACCO]

cdef inline bint owns(const CubaPlayer* p, int b) noexcept nogil:
    return (p.owned >> b) & 1

cdef inline int n_buildings(const CubaPlayer* p) noexcept nogil:
    return popcount64(p.owned)

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
    cdef int l = s.law_in_force[stack]
    if l < 0:
        return l
    return s.t.law_kind[l]

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

cdef inline int building_pesos(const CUState* s, int b) noexcept nogil:
    cdef int c = s.t.cost[b][3]
    cdef int l = s.law_in_force[3]
    if l >= 0 and s.t.law_kind[l] == LAW_BUILDING:
        c += s.t.law_param[l][0]
    return c

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

cdef inline bint is_chance_step(int step) noexcept nogil:
    return step <= STEP_LAW_DRAW

cdef inline int tax_due(const CUState* s, const CubaPlayer* p) noexcept nogil:
    cdef int l = s.law_in_force[0]
    if l < 0:
        return s.t.initial_tax if l == LAW_INITIAL else 0
    if s.t.law_kind[l] == LAW_TAX_PER_BUILDING:
        return s.t.law_param[l][0] * n_buildings(p)
    return s.t.law_param[l][0]

cdef inline const int8* levy_items(const CUState* s) noexcept nogil:
    cdef int l = s.law_in_force[1]
    if l < 0:
        return s.t.initial_levy
    return s.t.law_param[l]

cdef inline bint can_deliver(const CUState* s, const CubaPlayer* p) noexcept nogil:
    cdef const int8* need = levy_items(s)
    cdef int i, any_ = 0
    for i in range(NUM_ITEMS):
        if need[i] > stock(p, i):
            return False
        any_ += need[i]
    return any_ > 0


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


cdef inline bint refill_needed(const CUState* s) noexcept nogil:
    if s.setup_fill:
        return s.dock[0] < 0 or s.dock[1] < 0 or s.at_sea < 0
    return s.dock[0] < 0 or s.dock[1] < 0 or s.dock[2] < 0 or s.at_sea < 0


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
    cdef int l = s.law_in_force[2]
    cdef const CubaPlayer* p = &s.players[q]
    cdef int count = 0, kind, unit, vp, cap
    if l < 0:
        return 0
    kind = s.t.law_param[l][0]
    unit = s.t.law_param[l][1]
    vp = s.t.law_param[l][2]
    cap = s.t.law_param[l][3]
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
    cdef int q, k, n, l
    for q in range(s.n_players):
        s.players[q].vp += subsidy_vp(s, q)
    l = s.law_in_force[3]
    if l >= 0 and s.t.law_kind[l] == LAW_MARKET_LOSES:
        for k in range(NUM_CROPS):
            n = s.t.law_param[l][0]
            if n > s.covered[k]:
                n = s.covered[k]
            s.covered[k] -= n
            s.supply[k] += n
    elif l >= 0 and s.t.law_kind[l] == LAW_MARKET_GAINS:
        for k in range(NUM_CROPS):
            n = s.t.law_param[l][0]
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


cdef inline bint load_legal(const CUState* s, int k, int d) noexcept nogil:
    if s.load_dock >= 0 and d != s.load_dock:
        return False
    if s.load_left <= 0:
        return False
    if s.load_ctx == LOAD_MAYOR:
        if k < s.load_last:
            return False
    elif s.load_ctx == LOAD_LARGE_OFFICE:
        if s.load_last >= 0 and k != s.load_last:
            return False
    return can_load(s, &s.players[s.player], k, d)


cdef void after_load(CUState* s) noexcept nogil:
    cdef int k, d
    for k in range(NUM_CARGO):
        for d in range(NUM_DOCKS):
            if load_legal(s, k, d):
                return
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
    cdef int l = s.law_in_force[3]
    if l >= 0 and s.t.law_kind[l] == LAW_DROUGHT:
        return s.t.law_param[l][0]
    return s.t.free_crop_fields


cdef inline bint harvest_legal(const CUState* s, int f) noexcept nogil:
    if not (s.harvest_mask >> f) & 1 or f <= s.harvest_last:
        return False
    if s.harvest_count < free_crop_fields_now(s):
        return avail(s, s.t.field[f]) >= s.t.yield_per_field or not limited(s)
    return s.players[s.player].yard[WATER] >= s.t.irrigation_water


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
    cdef int n = 0, k, d, f, b, st, i, c, hi, lo, m
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
        for c in range(NUM_CHARACTERS):
            if (p.hand >> c) & 1:
                out[n] = A_PLAY + c
                n += 1
        return n
    if step == STEP_PAWN:
        for f in range(NUM_FIELDS):
            out[n] = A_PAWN + f
            n += 1
        out[n] = A_PASS
        return n + 1
    if step == STEP_HARVEST:
        for f in range(NUM_FIELDS):
            if harvest_legal(s, f):
                out[n] = A_HARVEST + f
                n += 1
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
            for b in range(NUM_BUILDINGS):
                if can_build(s, p, b):
                    out[n] = A_BUILD + b
                    n += 1
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
        m = 0
        for f in range(NUM_FIELDS):
            if (CROSS[p.pawn] >> f) & 1:
                if f == s.t.warehouse_field:
                    if usable(s, p, USE_WAREHOUSE):
                        m = 1
                elif p.building_at[f] >= 0 and usable(s, p, p.building_at[f]):
                    m = 1
        if m:
            out[n] = A_CROSS
            n += 1
        for b in range(NUM_BUILDINGS + 1):
            if (b == USE_WAREHOUSE or owns(p, b)) and usable(s, p, b):
                out[n] = A_USE + b
                n += 1
        out[n] = A_PASS
        return n + 1
    if step == STEP_FOREMAN:
        for b in range(NUM_BUILDINGS + 1):
            if (s.activated >> b) & 1 and not (s.used >> b) & 1 and usable(s, p, b):
                out[n] = A_USE + b
                n += 1
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
        for k in range(NUM_CARGO):
            for d in range(NUM_DOCKS):
                if load_legal(s, k, d):
                    out[n] = A_LOAD + k * NUM_DOCKS + d
                    n += 1
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


cdef inline bint can_build(const CUState* s, const CubaPlayer* p, int b) noexcept nogil:
    cdef int copies_left = s.t.copies[b]
    cdef int q
    if owns(p, b):
        return False
    for q in range(s.n_players):
        if owns(&s.players[q], b):
            copies_left -= 1
    if copies_left <= 0:
        return False
    return (p.yard[WOOD] >= s.t.cost[b][0] and p.yard[STONE] >= s.t.cost[b][1]
            and p.yard[WATER] >= s.t.cost[b][2] and p.pesos >= building_pesos(s, b))


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


cdef void settle(CUState* s) noexcept nogil:
    """A player whose only legal action would be `pass` is skipped (no decision)."""
    cdef int16 buf[64]
    cdef int step, n
    while True:
        step = s.step
        if step != STEP_HARVEST and step != STEP_TRADE and step != STEP_BUILD and \
                step != STEP_FOREMAN_MODE and step != STEP_FOREMAN and step != STEP_LOAD and \
                step != STEP_SETUP_ITEM:
            return
        n = cu_legal_actions(s, buf)
        if n != 1 or buf[0] != A_PASS:
            return
        apply_pass(s)


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

cdef int cu_chance_outcomes(const CUState* s, int16* actions, int32* weights) noexcept nogil:
    """Uniform outcomes: a seat (C1), an unseen ship (C3), an unrevealed card of the stack (C2)."""
    cdef int k, n = 0
    if s.step == STEP_START_PLAYER:
        for k in range(s.n_players):
            actions[n] = A_START + k
            weights[n] = 1
            n += 1
    elif s.step == STEP_SHIP_DRAW:
        for k in range(NUM_SHIPS):
            if (s.unseen >> k) & 1:
                actions[n] = A_SHIP + k
                weights[n] = 1
                n += 1
    elif s.step == STEP_LAW_DRAW:
        for k in range(NUM_LAWS):
            if s.t.law_stack[k] == s.law_next and not (s.revealed >> k) & 1:
                actions[n] = A_LAW + k
                weights[n] = 1
                n += 1
    return n


cdef int cu_sample_chance(CUState* s) noexcept nogil:
    cdef int16 acts[NUM_LAWS]
    cdef int32 w[NUM_LAWS]
    cdef int n = cu_chance_outcomes(s, acts, w)
    cdef Rng r = s.rng                       # a copy: applying the outcome advances the RNG one step
    if n <= 1:
        return acts[0]
    return acts[rng_below(&r, n)]


cdef void cu_score(const CUState* s, int seat, CubaScore* out) noexcept nogil:
    """CU-12: VP + 2 VP per building; tie-break: pesos."""
    cdef const CubaPlayer* p = &s.players[seat]
    out.vp = p.vp
    out.building_vp = n_buildings(p) * s.t.end_vp_per_building
    out.total = out.vp + out.building_vp
    out.tiebreak = p.pesos


cdef void cu_returns(const CUState* s, double* out) noexcept nogil:
    """1 for the winner, a shared win split equally (D42); 0 before the end."""
    cdef CubaScore sc[MAX_PLAYERS]
    cdef int i, winners = 0, best_total = -1000000, best_tie = -1000000
    for i in range(s.n_players):
        out[i] = 0.0
    if s.step != STEP_TERMINAL:
        return
    for i in range(s.n_players):
        cu_score(s, i, &sc[i])
        if sc[i].total > best_total or (sc[i].total == best_total and sc[i].tiebreak > best_tie):
            best_total = sc[i].total
            best_tie = sc[i].tiebreak
    for i in range(s.n_players):
        if sc[i].total == best_total and sc[i].tiebreak == best_tie:
            winners += 1
    for i in range(s.n_players):
        if sc[i].total == best_total and sc[i].tiebreak == best_tie:
            out[i] = 1.0 / winners


cdef int32 cu_random_playout(CUState* s) noexcept nogil:
    """Uniformly random decisions (chance sampled) to the end; returns the decisions."""
    cdef int16 legal[MAX_LEGAL]
    cdef int n
    cdef int32 decisions = 0
    while s.step != STEP_TERMINAL:
        if is_chance_step(s.step):
            cu_apply(s, cu_sample_chance(s))
        else:
            n = cu_legal_actions(s, legal)
            if n == 0:                         # cannot happen from a validated state; never loop
                break
            cu_apply(s, legal[rng_below(&s.rng, n)] if n > 1 else legal[0])
            decisions += 1
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

cdef int write_observation(const CUState* s, int seat, float* out) noexcept nogil:
    """The public state plus the seat's own secret bid; the players are listed from
    `seat` on. Other players' bids are never written (only whether they have bid).
    With out == NULL only counts the entries."""
    cdef int i = 0, j, k, f, d, q, l, n = s.n_players
    cdef int cur = cu_current_player(s)
    cdef const CubaPlayer* p
    cdef uint8 bidding = (s.tied if s.rebid else (1 << n) - 1) if s.step == STEP_BID else 0
    for j in range(MAX_PLAYERS):
        if j >= n:                             # fixed size: absent seats are zeros
            for k in range(NUM_ITEMS + 2 * NUM_CROPS + 2 + NUM_FIELDS * (NUM_BUILDINGS + 1)
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
        l = 0
        for j in range(s.queue_len):
            if s.queue[j] == k:
                l = j + 1
        i = put(out, i, l)                     # position in the returned part of the deck (1 = next)
    for l in range(NUM_LAWS):
        i = put(out, i, 1.0 if s.law_in_force[s.t.law_stack[l]] == l else 0.0)
        i = put(out, i, 1.0 if s.proposal[s.t.law_stack[l]] == l else 0.0)
        i = put(out, i, 1.0 if s.proposal[s.t.law_stack[l]] == l and s.vetoed == s.t.law_stack[l] else 0.0)
        i = put(out, i, 1.0 if (s.revealed >> l) & 1 else 0.0)
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


# ---------------------------------------------------------------------------
# 6. Python API: the compiled State class, action names, the dict codec
# ---------------------------------------------------------------------------
import operator
import numpy as np
cimport numpy as cnp
cnp.import_array()

from caribsim._common import _check_options, _int_in, _Reader, _seat_mask

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
        self.vtable = &CUBA_VTABLE

    cdef void* _raw(self) noexcept:
        return &self.s

    def apply_action(self, action):
        """Apply a legal action id (a decision, or a chance outcome at a chance node)."""
        cdef int16 buf[MAX_LEGAL]
        cdef int i, n
        self._ready()
        cdef int a = _int_in(action, "action", 0, NUM_ACTIONS - 1)
        slot = history_slot()
        if self.s.step == STEP_TERMINAL:     # from here to _push no Python runs: one atomic move
            raise ValueError("the game is over: no action is legal")
        n = cu_legal_actions(&self.s, buf)
        for i in range(n):
            if buf[i] == a:
                break
        else:
            names = self.game._action_names
            legal = ", ".join(f"{buf[i]} ({names[buf[i]]})" for i in range(min(n, 40)))
            more = f" ... ({n} in all)" if n > 40 else ""
            raise ValueError(f"action {a} ({names[a]}) is not legal at step "
                             f"{STEP_NAMES[self.s.step]!r}; legal: {legal}{more}")
        cu_apply(&self.s, a)
        self._push(slot, a)

    cpdef CubaState clone(self):
        self._ready()
        cdef CubaState c = CubaState.__new__(CubaState)
        memcpy(&c.s, &self.s, sizeof(CUState))     # with the history below: no Python in between
        c.game = self.game
        c._hist = self._hist
        return c

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



from caribsim._game import _check_seat, _restore   # _restore here too: older pickles name it in this module


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
    hist = st._hist
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
        "history": chain_list(hist),
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
    cdef int i, k, f, dk, n, l
    cdef int16 tmp[NUM_ITEMS]
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
        for l in range(NUM_LAWS):
            if (s.law_in_force[k] == l or s.proposal[k] == l) and not (s.revealed >> l) & 1:
                raise ValueError(f"law {laws[l]} is in force or proposed, so it must be in state.laws.revealed")
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
    h = None
    for a in hist:
        h = (h, a)
    st_._hist = h
    return st_


@cython.infer_types(False)
def _check_consistency(CubaState st):
    """Conservation of every component and the flow invariants (raises ValueError)."""
    cdef CUState* s = &st.s
    cdef CubaPlayer* p
    cdef int n = s.n_players, i, k, l, b, d, total, cnt, expected, pos, done
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
    for l in range(NUM_LAWS):
        if (s.revealed >> l) & 1:
            continue
        for k in range(NUM_STACKS):
            if s.law_in_force[k] == l or s.proposal[k] == l:
                raise ValueError(f"law {laws[l]} is in force or proposed but not revealed")
    for k in range(NUM_STACKS):
        cnt = 0
        for l in range(NUM_LAWS):
            if s.t.law_stack[l] == k and (s.revealed >> l) & 1:
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
        played = s.lap + (1 if s.character >= 0 or s.step != STEP_CHARACTER else 0)
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
    if s.round == 1 and s.phase < PHASE_LAWS and (s.law_in_force[0] != LAW_INITIAL or s.law_in_force[1] !=
                                                 LAW_INITIAL or s.law_in_force[2] >= 0 or s.law_in_force[3] >= 0):
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
    fmt = lambda g: ", ".join(f"{k} {v}" for k, v in g.items() if v) or "none"
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
        lines.append(f"{marks}seat {i}: {b['pesos']} pesos, {b['vp']} VP (total {sc.total}) | pawn {b['pawn']} | "
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
