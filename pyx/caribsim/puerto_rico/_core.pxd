# Puerto Rico (caribsim.puerto_rico._core): the whole game state as one plain C struct
# (copied by memcpy), the action encoding, and the nogil functions that the Python
# state class (caribsim.puerto_rico._state) and the search call. Component numbers are
# not here: they are read from the data files at import (see _core.pyx, load_tables)
# into C tables, which _state reads through pr_tables().
from caribsim._types cimport int8, int16, int32, uint8, uint64
from caribsim._rng cimport Rng
from caribsim._game cimport GameVTable

cdef enum:
    MAX_PLAYERS = 5
    NUM_GOODS = 5            # corn, indigo, sugar, tobacco, coffee (also plantation kinds 0..4)
    NUM_TILE_KINDS = 7       # the 5 plantations, quarry, forest
    NUM_MANNED_KINDS = 6     # tile kinds with a circle (forests have none)
    NUM_BUILDINGS = 37       # rows of puerto_rico_buildings.csv (23 base, 14 expansion)
    NUM_BASE_BUILDINGS = 23
    NUM_ROLE_CARDS = 8       # settler .. captain, prospector, second prospector (5p)
    MAX_SHIPS = 3
    ISLAND_SPACES = 12
    CITY_SPACES = 12
    HOUSE_SPACES = 4         # trading house
    NUM_SLOTS = NUM_MANNED_KINDS + NUM_BUILDINGS   # where a Mayor colonist can go
    MAYOR_LIST = NUM_MANNED_KINDS + CITY_SPACES    # slots with circles a player can have at once
    AFFORD_REACH = 16        # AFFORD's reach axis: 0..15 (every cost is below)

# Goods and tiles share their first five numbers.
cdef enum:
    CORN = 0
    INDIGO = 1
    SUGAR = 2
    TOBACCO = 3
    COFFEE = 4
    QUARRY = 5
    FOREST = 6

# Role cards. Card 7 is the second Prospector (5 players).
cdef enum:
    SETTLER = 0
    MAYOR = 1
    BUILDER = 2
    CRAFTSMAN = 3
    TRADER = 4
    CAPTAIN = 5
    PROSPECTOR = 6
    PROSPECTOR_2 = 7

# Building ids: the row order of puerto_rico_buildings.csv (checked at import).
cdef enum:
    SMALL_INDIGO_PLANT = 0
    SMALL_SUGAR_MILL = 1
    INDIGO_PLANT = 2
    SUGAR_MILL = 3
    TOBACCO_STORAGE = 4
    COFFEE_ROASTER = 5
    SMALL_MARKET = 6
    HACIENDA = 7
    CONSTRUCTION_HUT = 8
    SMALL_WAREHOUSE = 9
    HOSPICE = 10
    OFFICE = 11
    LARGE_MARKET = 12
    LARGE_WAREHOUSE = 13
    FACTORY = 14
    UNIVERSITY = 15
    HARBOR = 16
    WHARF = 17
    GUILD_HALL = 18
    RESIDENCE = 19
    FORTRESS = 20
    CUSTOMS_HOUSE = 21
    CITY_HALL = 22
    AQUEDUCT = 23            # expansion (§8.5)
    FOREST_HOUSE = 24
    BLACK_MARKET = 25
    STOREHOUSE = 26
    GUEST_HOUSE = 27
    TRADING_POST = 28
    CHURCH = 29
    SMALL_WHARF = 30
    LIGHTHOUSE = 31
    SPECIALTY_FACTORY = 32
    LIBRARY = 33
    UNION_HALL = 34
    STATUE = 35
    CLOISTER = 36
    FIRST_VIOLET = SMALL_MARKET      # violet buildings are rows 6..36
    NUM_VIOLET = NUM_BUILDINGS - FIRST_VIOLET
    DRAFT_KINDS = 17                 # §8.2: 12 small + 5 large violet kinds are drafted
    FORESTS = 12                     # §1.2

# Building kinds (the csv's `kind` column).
cdef enum:
    SMALL_PRODUCTION = 0
    LARGE_PRODUCTION = 1
    SMALL_VIOLET = 2
    LARGE_VIOLET = 3

# Phases: the role being played, plus setup and the end.
cdef enum:
    PHASE_SETTLER = 0        # = role card kind, so a role maps to its phase
    PHASE_MAYOR = 1
    PHASE_BUILDER = 2
    PHASE_CRAFTSMAN = 3
    PHASE_TRADER = 4
    PHASE_CAPTAIN = 5
    PHASE_PROSPECTOR = 6
    PHASE_ROLE_SELECTION = 7
    PHASE_SETUP = 8
    PHASE_END = 9
    NUM_PHASES = 10

# The pending decision (or chance event).
cdef enum:
    STEP_ROLE = 0            # choose a role card
    STEP_SETTLE = 1          # pick a plantation or quarry, draw by Hacienda, or pass
    STEP_HOSPICE = 2         # put a Hospice colonist on the tile just taken?
    STEP_MAYOR = 3           # place the next colonist
    STEP_BUILD = 4           # build a building or pass
    STEP_UNIVERSITY = 5      # put a University colonist on the new building?
    STEP_PRIVILEGE = 6       # the Craftsman's extra good
    STEP_SELL = 7            # sell one good or pass
    STEP_LOAD = 8            # load onto a cargo ship, use the Wharf, or pass
    STEP_WAREHOUSE = 9       # choose a kind to keep in a warehouse, or pass
    STEP_KEEP = 10           # choose the single barrel to keep, or pass
    STEP_DRAW_FACE_UP = 11   # chance: turn up a face-up plantation
    STEP_DRAW_HACIENDA = 12  # chance: the Hacienda tile
    STEP_TERMINAL = 13
    NUM_BASE_STEPS = 14      # the base game's steps (its observation one-hot)
    STEP_DRAFT = 14          # expansion: draft a violet kind into a cost slot (§8.2)
    STEP_LIBRARY = 15        # expansion: the Settler's Library second pick (§8.5.11)
    STEP_BLACK_MARKET = 16   # expansion: the next Black-market item (§8.5.3)
    STEP_SMALL_WHARF = 17    # expansion: the next good of a Small-wharf shipment, or done (§8.5.8)
    STEP_GUEST = 18          # expansion: a turn he would skip, unless a guest move opens a choice (§8.5.5)
    NUM_STEPS = 19

# The flat action space. Every decision is one of these ids; chance outcomes
# have their own ids (DRAW + plantation kind).
cdef enum:
    A_ROLE = 0                                   # + role card (8)
    A_SETTLE = A_ROLE + NUM_ROLE_CARDS           # + plantation kind (5)
    A_QUARRY = A_SETTLE + NUM_GOODS
    A_HACIENDA = A_QUARRY + 1
    A_HOSPICE = A_HACIENDA + 1
    A_MAYOR = A_HOSPICE + 1                      # + slot (43): tile kinds 0..5, then 6 + building
    A_BUILD = A_MAYOR + NUM_SLOTS                # + building (37)
    A_UNIVERSITY = A_BUILD + NUM_BUILDINGS
    A_PRIVILEGE = A_UNIVERSITY + 1               # + good (5)
    A_SELL = A_PRIVILEGE + NUM_GOODS             # + good (5)
    A_SHIP = A_SELL + NUM_GOODS                  # + good * MAX_SHIPS + ship slot (15)
    A_WHARF = A_SHIP + NUM_GOODS * MAX_SHIPS     # + good (5)
    A_WAREHOUSE = A_WHARF + NUM_GOODS            # + good (5)
    A_KEEP = A_WAREHOUSE + NUM_GOODS             # + good (5)
    A_PASS = A_KEEP + NUM_GOODS
    A_DRAW = A_PASS + 1                          # + plantation kind (5): chance outcomes
    NUM_BASE_ACTIONS = A_DRAW + NUM_GOODS        # 143: the base game's action space
    # expansion actions, appended (base games never offer them)
    A_DRAFT = NUM_BASE_ACTIONS                   # + violet building - FIRST_VIOLET (31)
    A_FOREST = A_DRAFT + NUM_VIOLET              # + face-up plantation kind removed (5)
    A_POST = A_FOREST + NUM_GOODS                # + good (5): sell to the own Trading post
    A_SWHARF = A_POST + NUM_GOODS                # + good (5): one more good into the Small wharf
    A_SWHARF_DONE = A_SWHARF + NUM_GOODS
    A_BM_VP = A_SWHARF_DONE + 1                  # Black market: return 1 VP chip
    A_BM_GOOD = A_BM_VP + 1                      # + good (5)
    A_BM_COLONIST = A_BM_GOOD + NUM_GOODS        # + slot (43), + NUM_SLOTS = from San Juan
    A_GUEST = A_BM_COLONIST + NUM_SLOTS + 1      # + slot (43): move a guest to that circle
    NUM_ACTIONS = A_GUEST + NUM_SLOTS
    MAX_LEGAL = NUM_ACTIONS

# Option bits of PRState.options.
cdef enum:
    OPT_ALL_COLONISTS_AND_VP = 1     # §8.3.2: full supplies, only the city trigger ends the game
    OPT_EXPANSION = 2                # §8: new buildings and forests
    OPT_ALL_31 = 4                   # §8.3.1: one copy of each of the 31 violet kinds, no draft
    OPT_DRAFT = 8                    # §8.2: the building draft runs at setup
    OPT_NO_EXCLUSIONS = 16           # §8.2: Hacienda with Forest house, Office with Trading post allowed


ctypedef struct PRPlayer:
    int16 doubloons                  # unlimited bank (OPEN-6), so may exceed the coins
    int16 vp                         # VP received as chips, including VP recorded after the chips ran out (§7.3)
    int8 goods[NUM_GOODS]            # goods on the windrose
    int8 tiles[NUM_TILE_KINDS]       # island tiles per kind (plantations, quarry, forest)
    int8 manned[NUM_MANNED_KINDS]    # how many tiles of each kind carry a colonist
    int8 san_juan                    # colonists not on a circle
    int8 workers[NUM_BUILDINGS]      # colonists on each owned building (0 if not owned)
    uint64 owned                     # bit b set: owns building b


ctypedef struct PRState "PRState":    # named in C for CARIBSIM_VT_SHIMS
    # --- fixed for the game ---
    int8 n_players                   # 2..5
    int8 n_ships                     # cargo ships in play (2 or 3)
    int8 ship_capacity[MAX_SHIPS]    # capacities, smallest first
    int8 face_up_count               # N + 1 plantations turned up per Settler phase
    int8 selections_per_round        # N, or 6 in the 2-player variant
    uint8 cards_in_play              # bit c set: role card c is used
    uint8 options                    # OPT_* bits
    # --- flow ---
    int8 phase                       # PHASE_*
    int8 step                        # STEP_*: the pending decision or chance event
    int8 governor                    # seat holding the Governor card
    int8 player                      # seat to decide (or being resolved)
    int8 chooser                     # seat that took the role being played
    int8 selections_done             # roles taken this round
    int8 turns_done                  # players whose turn in the current phase is over
    int8 idle_turns                  # Captain: consecutive turns without a loading action
    int8 end_triggered               # an end trigger fired; the game ends with this round
    uint8 cards_taken                # bit c set: card c taken this round
    int8 card_taken_by[NUM_ROLE_CARDS]    # seat that took card c this round, -1 if none
    int16 card_doubloons[NUM_ROLE_CARDS]  # doubloons lying on each card
    # --- settler ---
    int8 face_up[NUM_GOODS]          # face-up plantations by kind
    int8 stack[NUM_GOODS]            # face-down stack by kind (order is hidden: draws are chance events)
    int8 discard[NUM_GOODS]          # plantation discard pile by kind
    int8 quarries                    # quarries left in the supply
    int8 to_draw                     # face-up plantations still to turn up
    int8 hacienda_used               # the current Settler turn already drew by Hacienda
    int8 last_tile                   # kind just taken (for the Hospice)
    # --- colonists ---
    int16 colonist_supply
    int16 colonist_ship
    int8 to_place                    # Mayor: colonists of `player` still to place
    int8 last_slot                   # Mayor: placements go in non-decreasing slot order
    int16 held_bonus                 # Mayor: bonus VP of `player`'s arrangement when his placement began
    #                                  (0 at other steps)
    # Mayor, derived (mayor_list() makes it when a placement begins, pr_derive() for a loaded
    # state): `player`'s slots with a free circle from last_slot on, so that listing the legal
    # slots and finding a forced one read a few entries instead of scanning the board
    int8 mayor_slot[MAYOR_LIST]      # the slots, in increasing order
    int8 mayor_left[MAYOR_LIST]      # free circles on mayor_slot[i] and every later entry (decreasing)
    int8 mayor_first                 # first entry still open (placements never go back)
    int8 mayor_count                 # entries made
    # --- builder ---
    int8 last_building               # building just built (for the University)
    int8 building_supply[NUM_BUILDINGS]
    uint64 in_supply                 # derived: bit b set while building_supply[b] > 0
    # --- craftsman ---
    uint8 craftsman_received         # bit k: the Craftsman received good k this phase
    # --- goods, trader, captain ---
    int16 vp_supply                  # VP chips left in the pool (in VP)
    int8 goods_supply[NUM_GOODS]
    int8 house[NUM_GOODS]            # trading house contents by kind
    int8 house_count
    int8 ship_good[MAX_SHIPS]        # kind on each cargo ship, -1 if empty
    int8 ship_load[MAX_SHIPS]
    uint8 wharf_used                 # bit p: seat p used his Wharf this Captain phase
    int8 captain_bonus_given         # the Captain's +1 VP was paid this phase
    int8 warehouse_left              # storage: warehouse kinds `player` may still choose
    int8 last_warehouse              # storage: warehouse kinds are chosen in increasing order
    uint8 kept                       # storage: bit k: all goods of kind k are kept
    # --- expansion (all 0 in the base game) ---
    uint64 in_play                   # building kinds in this game (production + drafted/chosen violet)
    int8 forests                     # forest tiles left in the supply
    int8 removed[NUM_GOODS]          # face-up plantations removed from the game by forests
    int8 library_done                # Settler: the Library second pick was offered
    int8 privilege_left              # Craftsman: privilege goods still to take (Library: 2)
    int8 craft_amount[NUM_GOODS]     # Craftsman: goods of each kind he received (Specialty factory)
    int8 bm_left                     # Black market: items still to return
    int8 bm_last                     # Black market: last item category (0 VP, 1 colonist, 2 good), -1
    uint8 small_wharf_used           # bit p: seat p used his Small wharf this Captain phase
    int8 sw_count                    # Small wharf: goods in the shipment being made
    int8 sw_last                     # Small wharf: last kind added (kinds go in non-decreasing order)
    int8 barrels_left                # storage: single barrels `player` may still keep
    int8 last_keep                   # storage: barrels are chosen in non-decreasing kind order
    int8 keep_n[NUM_GOODS]           # storage: single barrels kept per kind
    Rng rng                          # the game's own random stream (chance sampling in playouts)
    PRPlayer players[MAX_PLAYERS]


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

# The component tables, as filled by load_tables() at import (read-only after).
ctypedef struct PRTables:
    const BuildingInfo* building     # [NUM_BUILDINGS]
    const SetupInfo* setup           # [MAX_PLAYERS + 1], indexed by player count 2..5
    const int8* price                # [NUM_GOODS]: trading-house price (§1.7)
    int16 max_colonists_variant      # §8.3.2: all 100 colonists
    int16 max_vp_variant             # §8.3.2: all 122 VP

# §8.2: the draft's cost slots: small violet places cost 1,2,2,3,4,5,5,6,7,8,8,9; 5 large cost 10
# (a C constant, so that the compiler unrolls draft_mask's loops over it)
cdef extern from *:
    """
    static const signed char caribsim_pr_draft_slots[11] = {0, 1, 2, 1, 1, 2, 1, 1, 2, 1, 5};
    """
    const int8 DRAFT_SLOTS "caribsim_pr_draft_slots"[11]


ctypedef struct PRScore:
    int32 vp_chips
    int32 building_vp
    int32 bonus_vp
    int32 total
    int32 tiebreak                   # doubloons + goods (§7.5)


cdef int pr_new_game(PRState* s, int n_players, int options, uint64 violet_set, uint64 seed) except -1 nogil
cdef void pr_derive(PRState* s) noexcept nogil       # the derived fields from the others (a loaded state)
# C names fixed (the cnames): CARIBSIM_VT_SHIMS in _game.pxd calls them
cdef int pr_current_player "pr_current_player"(const PRState* s) noexcept nogil
cdef int pr_legal_actions "pr_legal_actions"(const PRState* s, int16* out) noexcept nogil
cdef void pr_apply "pr_apply"(PRState* s, int action) noexcept nogil
cdef int pr_chance_outcomes "pr_chance_outcomes"(const PRState* s, int16* actions, int32* weights) noexcept nogil
cdef int pr_sample_chance "pr_sample_chance"(PRState* s) noexcept nogil
cdef void pr_score(const PRState* s, int seat, PRScore* out) noexcept nogil
cdef void pr_returns "pr_returns"(const PRState* s, double* out) noexcept nogil
cdef int32 pr_random_playout "pr_random_playout"(PRState* s) noexcept nogil
cdef int32 pr_list_playout(PRState* s) noexcept nogil   # its reference, through the legal lists
cdef void pr_observation "pr_observation"(const PRState* s, int seat, float* out) noexcept nogil
cdef int pr_observation_size(int n_players, int options) noexcept nogil
cdef int pr_heuristic_action "pr_heuristic_action"(PRState* s, const int16* legal, int n) noexcept nogil
cdef void pr_evaluate "pr_evaluate"(const PRState* s, double* out) noexcept nogil

# board queries and rule helpers that the dict codec and its checks use too
cdef int colonists_on_board(const PRPlayer* p) noexcept nogil
cdef int warehouse_kinds(const PRPlayer* p) noexcept nogil
cdef bint turn_can_act(const PRState* s) noexcept nogil
cdef int guest_turn_moves(const PRState* s, int16* out, bint first=*) noexcept nogil
cdef int pr_city_used(const PRPlayer* p) noexcept nogil          # city_used (inline in _core.pyx: it reads the tables)
cdef int pr_copies_of(const PRState* s, int b) noexcept nogil    # copies_of (likewise)

# the tables and the GameVTables (module-level C variables cannot be cimported)
cdef const PRTables* pr_tables() noexcept nogil
cdef const GameVTable* pr_vtable(bint expansion) noexcept nogil   # the base game's, or the expansion's


# small inline queries over the struct alone (defined here to be usable in _state)
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

cdef inline int sum5(const int8* a) noexcept nogil:
    return a[0] + a[1] + a[2] + a[3] + a[4]

cdef inline int colonist_available(const PRState* s) noexcept nogil:
    """Hospice and University take from the supply, else the ship (§6.1.5)."""
    return s.colonist_supply > 0 or s.colonist_ship > 0
