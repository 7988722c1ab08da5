# Port Royal: the whole game state as one plain C struct (copied by memcpy),
# the action encoding, and the nogil functions that the Python API and the
# search call. Card values are not here: they are read from
# data/port_royal_deck.csv at import (see _core.pyx, load_tables); other modules
# reach the tables through pry_tables() and the game's C table through pry_vtable().
#
# Every one of the 120 cards is tracked by its variant (a csv row; copies of a
# variant are identical): the draw pile, the discard pile, the harbour, the
# revealed card awaiting a decision, the expedition area, each display and each
# player's coins. Coin faces are hidden from everyone: every coin draw, coin
# payment and coin fee is a chance event whose outcome is the card variant.
from caribsim._types cimport int8, int16, int32, uint8, uint64
from caribsim._rng cimport Rng
from caribsim._game cimport GameVTable

cdef enum:
    MAX_PLAYERS = 5
    NUM_VARIANTS = 62        # rows of port_royal_deck.csv
    DECK_SIZE = 120
    NUM_COLOURS = 5          # yellow, blue, green, red, black
    NUM_SYMBOLS = 3          # anchor, cross, house
    NUM_EXPEDITIONS = 6      # expedition rows, in csv order
    NUM_PATTERNS = 27        # jokers per symbol: anchor 0..2 + 3 * cross 0..2 + 9 * house 0..2
    MAX_OPS = 24             # pending card moves (chance events)
    WIN_VP = 12
    TAX_THRESHOLD = 12

# Card categories and abilities (the csv's `category` and `ability` columns).
cdef enum:
    CAT_SHIP = 0
    CAT_PERSON = 1
    CAT_EXPEDITION = 2
    CAT_TAX = 3

cdef enum:
    AB_SHIP = 0
    AB_TRADER = 1
    AB_SETTLER = 2
    AB_CAPTAIN = 3
    AB_PRIEST = 4
    AB_JACK = 5
    AB_SAILOR = 6
    AB_PIRATE = 7
    AB_MADEMOISELLE = 8
    AB_JESTER = 9
    AB_ADMIRAL = 10
    AB_GOVERNOR = 11
    AB_EXPEDITION = 12
    AB_TAX_MOST_SWORDS = 13
    AB_TAX_FEWEST_VP = 14

cdef enum:
    ANCHOR = 0
    CROSS = 1
    HOUSE = 2

# Phases and pending steps.
cdef enum:
    PHASE_SETUP = 0          # dealing the starting coins
    PHASE_DISCOVER = 1
    PHASE_TRADE = 2
    PHASE_END = 3

cdef enum:
    STEP_DISCOVER = 0        # active player: reveal, stop, or fulfil an expedition
    STEP_REPEL = 1           # active player: repel or dock the ship just revealed
    STEP_TAKE = 2            # `player`'s take-turn: take a harbour card, pass (or fulfil: active only)
    STEP_CHANCE = 3          # the head of the queue: a card is drawn / a coin is paid
    STEP_TERMINAL = 4
    STEP_FLOW = 5            # internal only: run the queue, then the continuation

# Card moves waiting in the queue; each card moved is one chance event.
cdef enum:
    OP_REVEAL = 0            # top card of the draw pile -> the revealed slot
    OP_DRAW = 1              # draw pile -> coins of `seat`
    OP_PAY = 2               # a coin of `seat` -> discard pile
    OP_FEE = 3               # a coin of `seat` -> coins of the active player

# What follows when the queue is empty.
cdef enum:
    R_START_TURN = 0
    R_RESOLVE = 1            # resolve the revealed card
    R_DISCOVER = 2           # the active player's phase-1 decision
    R_TAX_DONE = 3           # discard the tax card, then R_DISCOVER
    R_TAKE = 4               # `player`'s take-turn decision
    R_END_TURN = 5
    NUM_RESUMES = 6

# The flat action space.
cdef enum:
    A_REVEAL = 0
    A_STOP = 1                                   # stop discovering: go to phase 2
    A_REPEL = 2
    A_DOCK = 3
    A_PASS = 4                                   # end one's take-turn
    A_TAKE = 5                                   # + card variant (62): trade a ship / hire a person
    A_EXPEDITION = A_TAKE + NUM_VARIANTS         # + expedition * 27 + joker pattern
    A_CARD = A_EXPEDITION + NUM_EXPEDITIONS * NUM_PATTERNS   # + card variant: chance outcomes
    NUM_ACTIONS = A_CARD + NUM_VARIANTS
    MAX_LEGAL = NUM_ACTIONS

cdef enum:
    OPT_REQUIRE_EXPEDITION = 1   # §9.2 variant end


# One card variant (a row of port_royal_deck.csv).
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

# The card tables of _core.pyx, filled at its import and read-only after (pry_tables()).
ctypedef struct PRYTables:
    const CardInfo* card                 # [NUM_VARIANTS]
    const int8* exp_variant              # [NUM_EXPEDITIONS]: the variant of each expedition
    const int8* symbol_variant           # [NUM_SYMBOLS]: the Captain, Priest, Settler variants
    const int8* jack_variant             # -> the Jack of all trades variant
    const int8* five_player_expedition   # -> the expedition index used only with 5 players
    const int8* exp_npat                 # [NUM_EXPEDITIONS]: joker patterns per expedition
    const int8* exp_pat                  # [NUM_EXPEDITIONS * NUM_PATTERNS]: the patterns, row e at e * NUM_PATTERNS


ctypedef struct PRYOp:
    int8 kind                # OP_*
    int8 seat
    int8 count               # cards still to move


ctypedef struct PRYPlayer:
    uint8 n_coins
    uint8 coin_card[DECK_SIZE]       # variant of each coin card (unordered; faces hidden)
    uint8 coin_gen[DECK_SIZE]        # reshuffle generation of the pile the coin was drawn from
    uint8 display[NUM_VARIANTS]      # hired persons and fulfilled expeditions, by variant
    # derived from `display` (refresh_player)
    int16 vp
    int8 swords
    int8 expeditions
    int8 symbols[NUM_SYMBOLS]        # Captains, Priests, Settlers
    int8 jacks
    int8 traders[NUM_COLOURS]
    int8 mademoiselles
    int8 jesters
    int8 admirals
    int8 governors
    uint8 fulfils                    # bit e: the persons and Jacks meet expedition e's requirement (lying out or not)


ctypedef struct PRYState "PRYState":    # named in C for CARIBSIM_VT_SHIMS
    # --- fixed for the game ---
    int8 n_players
    uint8 options                    # OPT_* bits
    int8 start_player
    # --- flow ---
    int8 phase
    int8 step
    int8 resume                      # R_*: the continuation after the queue
    int8 active                      # the player whose turn it is
    int8 player                      # the seat deciding (phase 2: the take-turn's owner)
    int8 takers_done                 # phase 2: take-turns finished
    int8 picks_left                  # phase 2: cards `player` may still take
    int8 revealed                    # cards revealed this turn (saturates at 127)
    int8 pending                     # variant revealed and not yet placed (ship to repel, tax), -1 if none
    int8 end_triggered
    uint8 generation                 # reshuffles so far (mod 256)
    int16 turns                      # turns started (saturates at 32767)
    # --- cards ---
    uint8 n_draw
    uint8 n_discard
    uint8 n_harbour
    uint8 harbour_colours            # bit c: a ship of colour c is in the harbour
    uint8 expedition_area            # bit e: expedition e lies face up
    uint8 in_box                     # the 5-player expedition is out of the game (fewer than 5 players)
    uint8 draw[DECK_SIZE]            # draw pile (a multiset: draws are chance events)
    uint8 discard[DECK_SIZE]
    uint8 harbour[NUM_VARIANTS]      # by variant
    uint64 harbour_mask              # bit v: variant v is in the harbour
    # --- pending card moves ---
    int8 q_head
    int8 q_len
    PRYOp queue[MAX_OPS]
    Rng rng
    PRYPlayer players[MAX_PLAYERS]


cdef int pry_new_game(PRYState* s, int n_players, int options, int start_player, uint64 seed) except -1 nogil
# C names fixed (the cnames): CARIBSIM_VT_SHIMS in _game.pxd calls them
cdef int pry_current_player "pry_current_player"(const PRYState* s) noexcept nogil
cdef int pry_legal_actions "pry_legal_actions"(const PRYState* s, int16* out) noexcept nogil
cdef void pry_apply "pry_apply"(PRYState* s, int action) noexcept nogil
cdef int pry_chance_outcomes "pry_chance_outcomes"(const PRYState* s, int16* actions, int32* weights) noexcept nogil
cdef int pry_sample_chance "pry_sample_chance"(PRYState* s) noexcept nogil
cdef void pry_returns "pry_returns"(const PRYState* s, double* out) noexcept nogil
cdef int32 pry_random_playout "pry_random_playout"(PRYState* s) noexcept nogil
cdef void pry_determinize "pry_determinize"(PRYState* s, int observer) noexcept nogil
cdef void pry_observation "pry_observation"(const PRYState* s, int seat, float* out) noexcept nogil
cdef int pry_observation_size() noexcept nogil
cdef int pry_heuristic_action "pry_heuristic_action"(PRYState* s, const int16* legal, int n) noexcept nogil
cdef void pry_evaluate "pry_evaluate"(const PRYState* s, double* out) noexcept nogil
cdef void refresh_player(PRYPlayer* p) noexcept nogil   # recompute a player's derived counts
cdef const PRYTables* pry_tables() noexcept nogil
cdef const GameVTable* pry_vtable() noexcept nogil      # the game's GameVTable
