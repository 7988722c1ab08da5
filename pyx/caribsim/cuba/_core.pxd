# Cuba core (caribsim.cuba._core): the whole game state as one plain C struct (copied
# by memcpy), the action encoding, the small inline board queries and item moves, and
# the nogil functions that the state module (caribsim.cuba._state) and the search call.
# Component numbers are not here: they are read from the data files (the shipped set or
# a user's folder) into a CubaTables block that is copied INTO each state, so that a
# state is self-contained plain data even when two games use different data.
# May cimport: the shared C declarations (caribsim._types, _rng, _game) only.
from caribsim._types cimport int8, int16, int32, uint8, uint16, uint32, uint64
from caribsim._rng cimport Rng
from caribsim._game cimport GameVTable

cdef enum:
    MAX_PLAYERS = 5
    NUM_ITEMS = 8            # sugar, citrus, tobacco, rum, cigar, wood, stone, water
    NUM_CARGO = 5            # crops and goods (items 0..4)
    NUM_CROPS = 3            # items 0..2
    NUM_GOODS = 2            # items 3..4
    NUM_MATERIALS = 3        # items 5..7
    NUM_FIELDS = 12          # 3 rows x 4 columns, field = (row - 1) * 4 + (col - 1)
    NUM_ROWS = 3
    NUM_COLS = 4
    NUM_CHARACTERS = 5
    NUM_BUILDINGS = 23       # building kinds (rows of cuba_buildings.csv)
    NUM_SHIPS = 15
    NUM_LAWS = 24
    NUM_STACKS = 4
    LAWS_PER_STACK = 6
    NUM_DOCKS = 3
    NUM_MARKERS = 6
    MAX_PRICES = 8           # spaces of a market track
    MAX_BID = 200            # bids are 0..MAX_BID pesos (docs/cuba.md, decision X3)
    MAX_ROUNDS = 12

# Items.
cdef enum:
    SUGAR = 0
    CITRUS = 1
    TOBACCO = 2
    RUM = 3
    CIGAR = 4
    WOOD = 5
    STONE = 6
    WATER = 7
    FIELD_WAREHOUSE = 8      # plantation field kinds: an item, or the warehouse

# Characters.
cdef enum:
    WORKER = 0
    TRADER = 1
    ARCHITECT = 2
    FOREMAN = 3
    MAYOR = 4

# Building kinds (the engine's fixed order; the csv may list them in any order).
cdef enum:
    CEMENT_FACTORY = 0
    SAWMILL = 1
    GOLF_COURSE = 2
    ABBEY = 3
    TAVERN = 4
    SMOKING_LOUNGE = 5
    SMALL_OFFICE = 6
    LARGE_OFFICE = 7
    HOTEL = 8
    INN = 9
    MAIN_WAREHOUSE = 10
    PRODUCTION_BUILDING = 11
    SUPPLY_DEPOT = 12
    SMALL_BANK = 13
    LARGE_BANK = 14
    CIGAR_FACTORY = 15
    DISTILLERY = 16
    BLACK_MARKET = 17
    LIGHTHOUSE = 18
    STORAGE = 19
    DAM = 20
    CHURCH = 21
    TOWN_HALL = 22
    USE_WAREHOUSE = 23       # bit 23 of a Foreman activation mask: the warehouse field

# Black-marker spaces (bit numbers of CubaState.markers).
cdef enum:
    MK_TRADER_MATERIAL = 0
    MK_TRADER_CROP = 1
    MK_ARCH_2 = 2
    MK_ARCH_1 = 3
    MK_MAYOR_4 = 4
    MK_MAYOR_2 = 5

# Law kinds (cuba_laws.csv `kind`).
cdef enum:
    LAW_TAX = 0
    LAW_TAX_PER_BUILDING = 1
    LAW_LEVY = 2
    LAW_SUBSIDY = 3
    LAW_MARKET_LOSES = 4
    LAW_MARKET_GAINS = 5
    LAW_DROUGHT = 6
    LAW_BUILDING = 7
    LAW_HARBOUR = 8
    LAW_CORRUPTION = 9
    LAW_INITIAL = -2         # CubaState.law_in_force value: the initial tax / levy (not a card)

# Subsidy counts (cuba_laws.csv params `count=`).
cdef enum:
    SUB_BUILDINGS = 0
    SUB_FREE_CROP_FIELDS = 1
    SUB_FREE_MATERIAL_FIELDS = 2
    SUB_WATER = 3
    SUB_PESOS = 4
    SUB_CHARACTER_VOTES = 5

# Phases of a round (plus setup and the end).
cdef enum:
    PHASE_SETUP = 0
    PHASE_PROPOSALS = 1
    PHASE_ACTIONS = 2
    PHASE_PARLIAMENT = 3
    PHASE_LAWS = 4
    PHASE_END_OF_ROUND = 5
    PHASE_END = 6
    NUM_PHASES = 7

# The pending decision (or chance event).
cdef enum:
    STEP_START_PLAYER = 0    # chance: the round-1 start player
    STEP_SHIP_DRAW = 1       # chance: the top card of the ship deck (unseen part)
    STEP_LAW_DRAW = 2        # chance: the top card of law stack `law_next`
    STEP_SETUP_ITEM = 3      # take one starting material / crop
    STEP_CHARACTER = 4       # play a character card
    STEP_PAWN = 5            # Worker: pawn field, or pass (no action)
    STEP_HARVEST = 6         # Worker: harvest one more crop field, or pass
    STEP_TRADE = 7           # Trader: sell / buy one item, an alternative, or pass
    STEP_BUILD = 8           # Architect: choose a building, the alternative, or pass
    STEP_PLACE = 9           # Architect: field for the building just paid
    STEP_FOREMAN_MODE = 10   # Foreman: row and column, one building / the warehouse, or pass
    STEP_FOREMAN = 11        # Foreman: use one more activated building, or pass
    STEP_PICK = 12           # a building's parameter: one more unit of an item kind, or pass
    STEP_RECEIVE = 13        # Black market: the item received
    STEP_LIGHTHOUSE = 14     # Lighthouse: the deck ship to put at sea
    STEP_VETO = 15           # Church: the proposal to veto
    STEP_LOAD = 16           # Mayor / offices: load one item, the Mayor alternative, or pass
    STEP_BID = 17            # parliament: a secret bid (or re-bid)
    STEP_ENACT = 18          # parliament: the winner's two laws
    STEP_TAX = 19            # law execution: pay the tax or pass
    STEP_LEVY = 20           # law execution: deliver the levy or pass
    STEP_TERMINAL = 21
    NUM_STEPS = 22

# What happens when a ship refill (its chance draws) is complete.
cdef enum:
    RESUME_NONE = 0
    RESUME_SETUP = 1         # setup draws done: the start player / starting items
    RESUME_TURN_END = 2      # a Harbour-law departure by the Mayor: his turn ends
    RESUME_FOREMAN = 3       # a Harbour-law departure by an office: back to the Foreman
    RESUME_NEW_ROUND = 4     # the round-end refill: the next round

# Loading contexts.
cdef enum:
    LOAD_MAYOR = 0
    LOAD_SMALL_OFFICE = 1
    LOAD_LARGE_OFFICE = 2

# The flat action space.
cdef enum:
    A_START = 0                                   # + seat (5): chance, round-1 start player
    A_SHIP = A_START + MAX_PLAYERS                # + ship (15): chance, the ship drawn
    A_LAW = A_SHIP + NUM_SHIPS                    # + law card (24): chance, the proposal revealed
    A_TAKE = A_LAW + NUM_LAWS                     # + item (8): setup, take a starting item
    A_PLAY = A_TAKE + NUM_ITEMS                   # + character (5)
    A_PAWN = A_PLAY + NUM_CHARACTERS              # + field (12)
    A_HARVEST = A_PAWN + NUM_FIELDS               # + field (12)
    A_SELL = A_HARVEST + NUM_FIELDS               # + cargo kind (5)
    A_BUY = A_SELL + NUM_CARGO                    # + cargo kind (5)
    A_TRADER_MATERIAL = A_BUY + NUM_CARGO         # + material - WOOD (3): alternative (a)
    A_TRADER_CROP = A_TRADER_MATERIAL + NUM_MATERIALS   # + crop (3): alternative (b)
    A_BUILD = A_TRADER_CROP + NUM_CROPS           # + building (23)
    A_PLACE = A_BUILD + NUM_BUILDINGS             # + field (12)
    A_ARCH_ALT = A_PLACE + NUM_FIELDS
    A_CROSS = A_ARCH_ALT + 1                      # Foreman mode A
    A_USE = A_CROSS + 1                           # + building (23), + 23 = the warehouse
    A_PICK = A_USE + NUM_BUILDINGS + 1            # + item (8)
    A_RECEIVE = A_PICK + NUM_ITEMS                # + cargo kind (5)
    A_LIGHTHOUSE = A_RECEIVE + NUM_CARGO          # + ship (15)
    A_VETO = A_LIGHTHOUSE + NUM_SHIPS             # + stack (4)
    A_LOAD = A_VETO + NUM_STACKS                  # + kind * 3 + dock (15)
    A_MAYOR_ALT = A_LOAD + NUM_CARGO * NUM_DOCKS
    A_ENACT = A_MAYOR_ALT + 1                     # + pair (6): I+II, I+III, I+IV, II+III, II+IV, III+IV
    A_PAY_TAX = A_ENACT + 6
    A_DELIVER_LEVY = A_PAY_TAX + 1
    A_PASS = A_DELIVER_LEVY + 1
    A_BID = A_PASS + 1                            # + pesos (0..MAX_BID)
    NUM_ACTIONS = A_BID + MAX_BID + 1
    MAX_LEGAL = NUM_ACTIONS

# Option bits.
cdef enum:
    OPT_SUPPLY_LIMITED = 1
    OPT_PESOS_LIMITED = 2


ctypedef struct CubaTables:
    # buildings, by kind
    int8 cost[NUM_BUILDINGS][4]         # wood, stone, water, pesos
    int8 copies[NUM_BUILDINGS]
    int8 limit[NUM_BUILDINGS]           # units per use (127 = unlimited)
    # ships
    int8 slots[NUM_SHIPS][NUM_CARGO]    # slots per cargo kind
    int8 ship_total[NUM_SHIPS]
    # laws (row order of cuba_laws.csv; stack-major: 6 cards of I, then II, ...)
    int8 law_kind[NUM_LAWS]
    int8 law_stack[NUM_LAWS]
    int8 law_param[NUM_LAWS][NUM_ITEMS]  # tax: [0] pesos; levy: items; subsidy: count, unit, vp, cap (-1);
    #                                      market: [0] crops each; drought: [0] free fields; building: [0] pesos
    # market
    int8 n_prices[NUM_CARGO]
    int8 prices[NUM_CARGO][MAX_PRICES]  # high to low
    int8 start_covered[NUM_CARGO]
    # plantation
    int8 field[NUM_FIELDS]              # item kind, or FIELD_WAREHOUSE
    int8 warehouse_field
    # setup constants
    int8 rounds
    int8 cards_played                   # laps per round (4)
    int8 votes[NUM_CHARACTERS]
    int16 start_pesos
    int8 start_materials
    int8 start_crops
    int8 yield_per_field
    int8 free_crop_fields
    int8 irrigation_water
    int8 trader_alt_materials
    int8 trader_alt_crops
    int8 arch_alt[2]
    int8 mayor_alt[2]
    int8 buy_supply_price
    int8 sell_supply_crop
    int8 sell_supply_good
    int8 dock_vp[NUM_DOCKS]
    int8 tax_vp
    int8 levy_vp
    int8 levy_bonus_vp
    int8 vote_price
    int8 town_hall_votes
    int8 storage_capacity
    int8 end_vp_per_building
    int8 initial_tax
    int8 initial_levy[NUM_ITEMS]
    int16 supply_count[NUM_ITEMS]       # physical counts (used as the supply with supply_limited)
    int16 coins


ctypedef struct CubaPlayer:
    int16 pesos
    int16 vp
    int16 yard[NUM_ITEMS]
    int16 warehouse[NUM_CROPS]
    int16 storage[NUM_CROPS]
    int8 pawn                           # field
    int8 building_at[NUM_FIELDS]        # building kind on each field, -1 if none
    uint32 owned                        # bit b: owns building b
    uint8 hand                          # bit c: character c still in hand
    int8 fourth                         # the 4th card played this round, -1
    int8 church_stack                   # stack of the owner's last veto, -1
    int8 paid_tax                       # paid the tax this round
    int16 bid                           # the current secret bid (hidden until all have bid)
    int16 bought                        # votes bought this round (revealed)
    int16 votes                         # total votes this round


ctypedef struct CUState "CUState":    # named in C for CARIBSIM_VT_SHIMS
    CubaTables t                        # the game's component data (copied into every state)
    # --- fixed for the game ---
    int8 n_players
    int8 options                        # OPT_* bits
    int8 fixed_start                    # configured round-1 start player, -1 = random (C1)
    # --- flow ---
    int8 round                          # 1..rounds
    int8 phase
    int8 step
    int8 player                         # seat to decide
    int8 start_player
    int8 lap                            # 0..3
    int8 turn                           # turns done in the lap
    int8 character                      # character being played, -1
    uint8 markers                       # bit m: black-marker space m covered
    int8 town_hall_user                 # seat whose Town hall was used this round, -1
    int8 resume                         # RESUME_*: where a ship refill returns to
    int8 setup_fill                     # 1 while the setup ship draws run (docks 1, 2, then at sea)
    # --- setup ---
    int8 setup_left                     # starting items `player` still takes (materials, then crops)
    int8 setup_last                     # items are taken in non-decreasing kind order
    # --- market and supply ---
    int8 covered[NUM_CARGO]             # tokens on each track
    int16 supply[NUM_ITEMS]             # physical count minus items in play (negative: unlimited supply)
    int16 bank                          # coins minus pesos in play (negative: unlimited bank)
    # --- ships ---
    int8 dock[NUM_DOCKS]                # ship on dock 1..3, -1 empty
    int8 at_sea
    int8 cargo[NUM_DOCKS][NUM_CARGO]    # loaded items per dock and kind
    uint16 unseen                       # bit k: ship k is in the shuffled, never-seen part of the deck
    int8 queue_len                      # ships returned to the bottom, top first
    int8 queue[NUM_SHIPS]
    # --- laws ---
    int8 law_in_force[NUM_STACKS]       # card, LAW_INITIAL, or -1 (none)
    int8 proposal[NUM_STACKS]           # this round's proposals, -1
    int8 vetoed                         # stack of the vetoed proposal this round, -1
    uint32 revealed                     # bit l: law card l was revealed (out of its stack)
    int8 law_next                       # proposals: the next stack to reveal
    # --- turn state ---
    int8 harvest_count                  # Worker: fields harvested
    int8 harvest_last                   # Worker: fields go in increasing order
    uint16 harvest_mask                 # Worker: activated free crop fields
    int8 trade_last                     # Trader: last code (sell k = k, buy k = 5 + k), -1 = none
    uint8 sold                          # Trader: bit k: sold kind k in this action
    int8 build_pending                  # Architect: building paid, to be placed, -1
    int8 built                          # Architect: built this turn
    uint32 activated                    # Foreman: activated buildings (+ USE_WAREHOUSE bit)
    uint32 used                         # Foreman: already used
    int8 cur_building                   # the building whose parameters are chosen, -1
    int8 pick_left
    int8 pick_count
    int8 pick_last
    int8 pick_item                      # Black market: the item given
    int8 load_ctx                       # LOAD_*
    int8 load_dock                      # dock chosen, -1
    int8 load_left
    int8 load_count
    int8 load_last                      # Mayor: kinds in non-decreasing order; offices: the kind
    # --- parliament ---
    uint8 bidders                       # seats (still) to bid in this bidding
    uint8 tied                          # seats in the re-bid
    int8 rebid                          # 1 during the re-bid
    int8 winner                         # parliament winner, -1
    Rng rng
    CubaPlayer players[MAX_PLAYERS]


ctypedef struct CubaScore:
    int32 vp
    int32 building_vp
    int32 total
    int32 tiebreak                      # pesos (CU-12.3)


cdef void cu_new_game(CUState* s, const CubaTables* t, int n_players, int options, int start,
                      uint64 seed) noexcept nogil
# C names fixed (the cnames): CARIBSIM_VT_SHIMS in _game.pxd calls them
cdef int cu_current_player "cu_current_player"(const CUState* s) noexcept nogil
cdef int cu_legal_actions "cu_legal_actions"(const CUState* s, int16* out) noexcept nogil
cdef void cu_apply "cu_apply"(CUState* s, int action) noexcept nogil
cdef int cu_chance_outcomes "cu_chance_outcomes"(const CUState* s, int16* actions, int32* weights) noexcept nogil
cdef int cu_sample_chance "cu_sample_chance"(CUState* s) noexcept nogil
cdef void cu_score(const CUState* s, int seat, CubaScore* out) noexcept nogil
cdef void cu_returns "cu_returns"(const CUState* s, double* out) noexcept nogil
cdef int32 cu_random_playout "cu_random_playout"(CUState* s) noexcept nogil
cdef void cu_determinize "cu_determinize"(CUState* s, int observer) noexcept nogil
cdef int cu_observation_size(int n_players) noexcept nogil
cdef void cu_observation "cu_observation"(const CUState* s, int seat, float* out) noexcept nogil
cdef int cu_heuristic_action "cu_heuristic_action"(CUState* s, const int16* legal, int n) noexcept nogil
cdef void cu_evaluate "cu_evaluate"(const CUState* s, double* out) noexcept nogil
cdef void clear_turn(CUState* s) noexcept nogil
# the module's C data (module-level C variables cannot be cimported)
cdef const GameVTable* cuba_vtable() noexcept nogil
cdef const int8* cu_pair_a() noexcept nogil     # PAIR_A[6]: the first stack of enactment pair i
cdef const int8* cu_pair_b() noexcept nogil     # PAIR_B[6]: the second stack


# ---------------------------------------------------------------------------
# Board queries used by both modules (inline: defined here so that _state can use them;
# the other queries and item moves are in section 2 of _core.pyx)
# ---------------------------------------------------------------------------

cdef inline int stock(const CubaPlayer* p, int i) noexcept nogil:
    """Yard + Storage + warehouse (only crops are ever stored)."""
    if i < NUM_CROPS:
        return p.yard[i] + p.storage[i] + p.warehouse[i]
    return p.yard[i]

cdef inline int storage_held(const CubaPlayer* p) noexcept nogil:
    return p.storage[SUGAR] + p.storage[CITRUS] + p.storage[TOBACCO]

cdef inline bint owns(const CubaPlayer* p, int b) noexcept nogil:
    return (p.owned >> b) & 1

cdef extern from *:
    """
    /* the bits of a 32-bit word, in a dozen instructions (the build has no popcnt
       instruction: __builtin_popcount is a call into libgcc) */
    static inline int cu_popcount32(unsigned int x) {
        x = x - ((x >> 1) & 0x55555555u);
        x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
        return (int)((((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
    }
    """
    int cu_popcount32(uint32 x) noexcept nogil

cdef inline int n_buildings(const CubaPlayer* p) noexcept nogil:
    return cu_popcount32(p.owned)

cdef inline bint is_chance_step(int step) noexcept nogil:
    return step <= STEP_LAW_DRAW

cdef inline int tax_due(const CUState* s, const CubaPlayer* p) noexcept nogil:
    cdef int law = s.law_in_force[0]
    if law < 0:
        return s.t.initial_tax if law == LAW_INITIAL else 0
    if s.t.law_kind[law] == LAW_TAX_PER_BUILDING:
        return s.t.law_param[law][0] * n_buildings(p)
    return s.t.law_param[law][0]

cdef inline const int8* levy_items(const CUState* s) noexcept nogil:
    cdef int law = s.law_in_force[1]
    if law < 0:
        return s.t.initial_levy
    return s.t.law_param[law]

cdef inline bint can_deliver(const CUState* s, const CubaPlayer* p) noexcept nogil:
    cdef const int8* need = levy_items(s)
    cdef int i, any_ = 0
    for i in range(NUM_ITEMS):
        if need[i] > stock(p, i):
            return False
        any_ += need[i]
    return any_ > 0

cdef inline bint refill_needed(const CUState* s) noexcept nogil:
    if s.setup_fill:
        return s.dock[0] < 0 or s.dock[1] < 0 or s.at_sea < 0
    return s.dock[0] < 0 or s.dock[1] < 0 or s.dock[2] < 0 or s.at_sea < 0
