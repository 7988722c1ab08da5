# Search guided by a learned model (PUCT and Gumbel roots) over the C game interface
# (_game.pxd), with the evaluations of many trees batched into one call. Nothing here
# knows a game: states are opaque bytes of vtable.state_size, copied by memcpy.
from caribsim._types cimport int8, int16, int32, int64, uint8, uint64
from caribsim._rng cimport Rng
from caribsim._game cimport GameVTable

cdef enum:
    G_MAX_PLAYERS = 5          # value vectors are this wide (every game has at most 5 seats)
    G_NO_NODE = -1

# what a walk from the root ended on
cdef enum:
    WALK_LEAF = 0              # a decision node never evaluated: its observation goes to the evaluator
    WALK_TERMINAL = 1          # the end of the game: backed up at once with the true returns
    WALK_STATIC = 2            # a decision without a legal action: backed up with vtable.evaluate
    WALK_DUPLICATE = 3         # a leaf already waiting for its evaluation in this step: dropped

# selection rules of the decision nodes below the root
cdef enum:
    INTERIOR_PUCT = 0          # PUCT with first-play urgency (also the root rule when not Gumbel)
    INTERIOR_GUMBEL = 1        # mctx's deterministic rule: argmax improved policy - visit share


ctypedef struct GNode:
    int32 first_child          # first child in the pool, G_NO_NODE if none
    int32 next_sibling         # next child of the same parent, G_NO_NODE at the end
    int32 visits               # simulations backed up through this node (the root's evaluation counts one)
    int32 vloss                # simulations in flight through this node (virtual loss, each one a 0 value)
    int16 action               # action (or chance outcome) that leads here from the parent
    int8 mover                 # seat that chose `action`; -1 for a chance outcome and the root
    int8 to_move               # seat to move here once evaluated; -1 before
    uint8 expanded             # 1 once evaluated: its children (every legal action) exist
    uint8 pending              # 1 while its evaluation is awaited (it is a leaf of the current step)
    uint8 considered           # root children under Gumbel: 1 if drawn by Gumbel-top-k
    uint8 pad
    float prior                # prior probability of `action` at the parent (after the root noise)
    float logit                # the evaluator's logit of `action` at the parent, minus the row's max
    float raw                  # the evaluator's value of this node for `to_move` (Gumbel's mixed value)
    float gumbel               # root children under Gumbel: the Gumbel(0, gumbel_scale) draw
    double value[G_MAX_PLAYERS]  # sums of values per seat over `visits`


ctypedef struct GParams:
    int64 simulations          # simulations per tree (after the root's evaluation)
    int leaves_per_tree        # k: paths walked per tree and step (virtual loss keeps them apart)
    double c_puct              # PUCT exploration constant
    double fpu_reduction       # an unvisited child is worth the parent's mean (for the mover) minus this
    double dirichlet_alpha     # root noise Dir(alpha); <= 0: no noise
    double dirichlet_fraction  # prior = (1 - fraction) * prior + fraction * noise at the root
    bint gumbel                # Gumbel root (Sequential Halving) instead of PUCT at the root
    int interior               # INTERIOR_*: the rule below the root
    int max_considered         # Gumbel: m = min(max_considered, legal) root actions are drawn
    double gumbel_scale        # Gumbel: scale of the Gumbel noise (0: Sequential Halving on logits alone)
    double c_visit             # Gumbel: sigma(q) = (c_visit + max visits) * c_scale * q
    double c_scale
    int rollouts               # C evaluator: random playouts per leaf (0: a Python evaluator)
    double mix                 # with a Python evaluator: leaf value = (1 - mix) * its value
    #                            + mix * the mean of mix_rollouts random playouts (0: its value alone)
    int mix_rollouts           # random playouts per leaf for the mixed value (mix > 0)


ctypedef struct GTree:
    const GameVTable* vt
    GNode* nodes               # the node pool, grown by doubling; nodes[0] is the root
    int32 size                 # nodes in use
    int32 capacity             # nodes allocated
    char* root_state           # the position searched from (vt.state_size bytes)
    char* scratch              # the state walked by one simulation
    char* playout              # the state of one random playout (C evaluator)
    int observer               # the seat to move at the root: whose information set is searched
    int n_players              # seats of the game
    Rng rng                    # the search's own random stream (seeded per tree)
    int16* legal               # buffer of vt.num_actions
    int32* mark                # per action: epoch stamp (legal in the current determinisation)
    int32* child_of            # per action: the child seen at the current node (valid when marked)
    int32 epoch                # the current stamp
    int32* kids                # per legal action: the children taken into account by a selection rule
    double* work               # per legal action: scratch numbers of the selection rules (sigma of q)
    int64 done                 # simulations backed up (the root's evaluation excluded)
    int64 inflight             # simulations walked and waiting for their evaluation
    int m                      # Gumbel: actions considered at the root
    int n_root                 # legal actions at the root
    float* ref_obs             # with a compiled network: the root's observation, the reference
    #                            its leaves' first-layer sums start from (NULL without one)
    float* ref_pre             # the root's first-layer sums (mlp_reference)


ctypedef struct Leaves:
    int32 capacity             # leaves the buffers hold (B * k)
    int32 count                # leaves of the current step
    int32* tree                # per leaf: its tree
    int32* node                # per leaf: the node evaluated
    int32* seat                # per leaf: the seat to move there
    int32* path_start          # per leaf: first entry of its path in `paths`
    int32* path_len            # per leaf: nodes on its path (root first, leaf last)
    int32* n_legal             # per leaf: legal actions (listed at legal + leaf * num_actions)
    int16* legal               # per leaf: its legal actions (a copy: the evaluator may write the mask)
    int32* paths               # the paths of the current step, grown by doubling
    int32 paths_size           # entries in use
    int32 paths_capacity       # entries allocated
    float* obs                 # [capacity, O] observations (the numpy array's buffer)
    uint8* mask                # [capacity, A] legal masks (the numpy array's buffer); NULL with a
    #                            compiled network (it reads the legal lists, not the masks)
    int obs_size               # O
    int num_actions            # A
    double* rollout            # [capacity, P] the leaves' random-playout values (mix > 0), else NULL
    const float** ref_obs      # [capacity] per leaf: its tree's ref_obs (a compiled network), else NULL
    const float** ref_pre      # [capacity] per leaf: its tree's ref_pre
    float* logits              # [capacity, A] a compiled network's logits, else NULL
    double* values             # [capacity, P] a compiled network's values, else NULL
