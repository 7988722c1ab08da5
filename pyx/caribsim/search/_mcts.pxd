# Monte Carlo tree search over the C game interface (_game.pxd). Nothing here
# knows a game: states are opaque bytes of vtable.state_size, copied by memcpy.
from caribsim._types cimport int8, int16, int32, int64, uint64
from caribsim._rng cimport Rng
from caribsim._game cimport GameVTable

cdef enum:
    MCTS_MAX_PLAYERS = 5       # reward vectors are this wide (every game has at most 5 seats); a node is 64 bytes
    NO_NODE = -1

# reward modes
cdef enum:
    REWARD_WIN = 0             # the game's returns: 1 for a win, shared wins split
    REWARD_RANK = 1            # share of the other players beaten (ties count half)
    REWARD_SCORE = 2           # 0.5 + score margin over the best other player / (2 * best score), clipped to [0, 1]

# rollout policies
cdef enum:
    ROLLOUT_RANDOM = 0
    ROLLOUT_HEURISTIC = 1      # the game's heuristic_action


ctypedef struct Node:
    int32 first_child          # first child in the pool, NO_NODE if none
    int32 next_sibling         # next child of the same parent, NO_NODE at the end
    int32 visits               # iterations that went through this node
    int32 avail                # times the node's action was legal when its parent was selected from (ISMCTS)
    int16 action               # action (or chance outcome) that leads here from the parent
    int8 mover                 # seat that chose `action`; -1 for a chance outcome
    int8 pad
    double reward[MCTS_MAX_PLAYERS]   # sums of rewards per seat over `visits`


ctypedef struct SearchParams:
    double c                   # UCT exploration constant
    int reward_mode            # REWARD_*
    int rollout_mode           # ROLLOUT_*
    int max_depth              # rollout cut-off in decisions (0: play to the end), then vtable.evaluate


ctypedef struct Tree:
    const GameVTable* vt
    SearchParams params
    Node* nodes                # the node pool, grown by doubling; nodes[0] is the root
    int32 size                 # nodes in use
    int32 capacity
    char* root_state           # the position searched from (vt.state_size bytes)
    char* scratch              # the state walked by one iteration
    int observer               # the seat to move at the root: whose information set is searched
    int n_players
    Rng rng                    # the search's own random stream
    int16* legal               # buffer of vt.num_actions
    int32* child_of            # per action: the child index seen at the current node (valid when mark == epoch)
    int32* mark                # per action: epoch stamp
    int32 epoch
    int32* path                # node indices of the current iteration, grown by doubling
    int32 path_capacity
    int64 iterations           # iterations run since the tree was made or re-rooted
    int stop                   # set from another thread: end the run after the current iteration
    char pad[64]               # the trees of a search lie side by side, each written by its own thread:
    #                            no cache line holds the fields of two (no false sharing)
