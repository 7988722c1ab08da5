# cython: language_level=3
"""Search guided by a learned model, in C over the game interface: PUCT with priors and
leaf values from an evaluator (first-play urgency, Dirichlet root noise, max-n backup of
per-seat values in [0, 1]), or a Gumbel root (Gumbel-top-k, Sequential Halving, completed
Q-values, the improved policy) with mctx's deterministic rule or PUCT below it.

One Engine holds B trees, one per game of a batch. A step walks every tree to k leaves
(virtual loss keeps the k paths of a tree apart) without the GIL, writes their
observations and legal masks into preallocated numpy arrays, makes ONE Python call of
the evaluator for all of them, then expands and backs up in C. The C rollout evaluator
(rollouts > 0) needs no Python call at all: each simulation is evaluated where it ends. A
compiled network (_mlp.CompiledMLP, an MLPEvaluator's network in C) needs none either: the
steps run without the GIL, each batch of leaves evaluated by mlp_forward in place of the
Python call.

Chance nodes are sampled by their weights with the search's own RNG (no evaluation
there); games with hidden information are searched from a fresh determinisation of the
root per simulation, and the evaluator always sees vtable.observation(leaf, root seat).

The Python API is caribsim.search.guided (validation and docs); this module is the engine.
"""
from libc.math cimport isfinite, log, sqrt, exp, cos, INFINITY
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memcpy, memset
from cpython.exc cimport PyErr_CheckSignals

from caribsim._types cimport int16, int32, int64, uint8, uint64, PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport Rng, rng_seed, rng_next
from caribsim._game cimport GameVTable, GameState
from caribsim.search._pool cimport grow_pool
from caribsim.search._mlp cimport (CompiledMLP, MLPNet, MLPScratch, mlp_forward, mlp_now,
                                   mlp_reference, mlp_scratch_free, mlp_scratch_init)

import time

import numpy as np
cimport numpy as cnp
cnp.import_array()

cdef uint64 TREE_STREAM = 0x6775696465640001    # the stream of every tree's RNG (the seed differs)
MAX_PLAYERS = G_MAX_PLAYERS
NODE_BYTES = sizeof(GNode)
INTERIORS = {"puct": INTERIOR_PUCT, "gumbel": INTERIOR_GUMBEL}
# the leaves one run may hold (states x leaves_per_tree): the buffers are indexed by int32
cdef long long C_MAX_LEAVES = 2147483647
# simulations of one tree between two looks at the signals in the C evaluator's path (a few
# milliseconds of random playouts)
cdef int INLINE_SLICE = 64
# leaves evaluated by a compiled network between two looks at the signals (a millisecond or
# two: one step of a large batch, or some 256 steps of a single tree)
cdef int NETWORK_SLICE = 256
MAX_LEAVES = C_MAX_LEAVES


# ---------------------------------------------------------------------------
# random numbers of the search (the tree's own stream)
# ---------------------------------------------------------------------------

cdef inline double uniform01(Rng* r) noexcept nogil:
    """Uniform in the open interval (0, 1)."""
    return ((rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0)


cdef inline double normal01(Rng* r) noexcept nogil:
    return sqrt(-2.0 * log(uniform01(r))) * cos(6.283185307179586 * uniform01(r))


cdef double gamma_draw(Rng* r, double alpha) noexcept nogil:
    """Gamma(alpha, 1) by Marsaglia and Tsang (alpha < 1: boosted by U^(1/alpha))."""
    cdef double d, c, x, v, u, boost = 1.0
    if alpha < 1.0:
        boost = exp(log(uniform01(r)) / alpha)
        alpha += 1.0
    d = alpha - 1.0 / 3.0
    c = 1.0 / sqrt(9.0 * d)
    while True:
        x = normal01(r)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform01(r)
        if log(u) < 0.5 * x * x + d - d * v + d * log(v):
            return d * v * boost


# ---------------------------------------------------------------------------
# the tree
# ---------------------------------------------------------------------------

cdef int tree_init(GTree* t, const GameVTable* vt, int32 capacity) except -1 nogil:
    memset(t, 0, sizeof(GTree))
    t.vt = vt
    t.capacity = capacity if capacity > 16 else 16
    t.nodes = <GNode*>malloc(t.capacity * sizeof(GNode))
    t.root_state = <char*>malloc(vt.state_size)
    t.scratch = <char*>malloc(vt.state_size)
    t.playout = <char*>malloc(vt.state_size)
    t.legal = <int16*>malloc(vt.num_actions * sizeof(int16))
    t.mark = <int32*>calloc(vt.num_actions, sizeof(int32))
    t.child_of = <int32*>malloc(vt.num_actions * sizeof(int32))
    t.kids = <int32*>malloc(vt.num_actions * sizeof(int32))
    t.work = <double*>malloc(vt.num_actions * sizeof(double))
    if (t.nodes == NULL or t.root_state == NULL or t.scratch == NULL or t.playout == NULL
            or t.legal == NULL or t.mark == NULL or t.child_of == NULL or t.kids == NULL
            or t.work == NULL):
        tree_free(t)
        with gil:
            raise MemoryError("guided search: cannot allocate a tree")
    return 0


cdef void tree_free(GTree* t) noexcept nogil:
    free(t.nodes)
    free(t.root_state)
    free(t.scratch)
    free(t.playout)
    free(t.legal)
    free(t.mark)
    free(t.child_of)
    free(t.kids)
    free(t.work)
    free(t.ref_obs)
    free(t.ref_pre)
    memset(t, 0, sizeof(GTree))


cdef int32 new_node(GTree* t, int action, int mover) except -1 nogil:
    """A node from the pool (grown by doubling: no allocation per node)."""
    cdef int32 i
    if t.size == t.capacity:
        grow_pool(<void**>&t.nodes, &t.capacity, sizeof(GNode), b"the guided search's node pool")
    i = t.size
    t.size += 1
    memset(&t.nodes[i], 0, sizeof(GNode))
    t.nodes[i].first_child = G_NO_NODE
    t.nodes[i].next_sibling = G_NO_NODE
    t.nodes[i].action = action
    t.nodes[i].mover = mover
    t.nodes[i].to_move = -1
    return i


cdef int32 add_child(GTree* t, int32 parent, int action, int mover) except -1 nogil:
    cdef int32 c = new_node(t, action, mover)     # may move t.nodes: index, never hold pointers
    t.nodes[c].next_sibling = t.nodes[parent].first_child
    t.nodes[parent].first_child = c
    return c


cdef int32 find_child(const GTree* t, int32 parent, int action) noexcept nogil:
    cdef int32 c = t.nodes[parent].first_child
    while c != G_NO_NODE:
        if t.nodes[c].action == action:
            return c
        c = t.nodes[c].next_sibling
    return G_NO_NODE


cdef int set_root(GTree* t, const void* state, uint64 seed) except -1 nogil:
    """Search from `state` with a fresh tree and the RNG seeded with `seed`."""
    memcpy(t.root_state, state, t.vt.state_size)
    t.observer = t.vt.current_player(state)
    t.n_players = t.vt.num_players(state)
    t.size = 0
    t.done = 0
    t.inflight = 0
    t.m = 0
    t.n_root = 0
    rng_seed(&t.rng, seed, TREE_STREAM)
    new_node(t, -1, -1)
    return 0


# ---------------------------------------------------------------------------
# selection
# ---------------------------------------------------------------------------

cdef int complete_children(GTree* t, int32 node, int cp, int n) except -1 nogil:
    """Hidden information: stamp the actions legal in this determinisation (t.legal[:n])
    and give every one without a child a new child (prior 1/n: the evaluation of the node
    was made in another determinisation, where it was not legal)."""
    cdef int32 c
    cdef int i, a
    if t.epoch == 0x7fffffff:                     # a long search: restart the stamps, never wrap
        memset(t.mark, 0, t.vt.num_actions * sizeof(int32))
        t.epoch = 0
    t.epoch += 1
    for i in range(n):
        t.mark[t.legal[i]] = t.epoch
        t.child_of[t.legal[i]] = G_NO_NODE
    c = t.nodes[node].first_child
    while c != G_NO_NODE:
        a = t.nodes[c].action
        if t.mark[a] == t.epoch:
            t.child_of[a] = c
        c = t.nodes[c].next_sibling
    for i in range(n):
        a = t.legal[i]
        if t.child_of[a] == G_NO_NODE:
            c = add_child(t, node, a, cp)
            t.nodes[c].prior = <float>(1.0 / n)
            t.nodes[c].logit = <float>log(1.0 / n)
            t.child_of[a] = c
    return 0


cdef int gather(GTree* t, int32 node, bint check) noexcept nogil:
    """The children to choose from into t.kids (those legal here when `check`); their count."""
    cdef int n = 0
    cdef int32 c = t.nodes[node].first_child
    while c != G_NO_NODE:
        if not check or t.mark[t.nodes[c].action] == t.epoch:
            t.kids[n] = c
            n += 1
        c = t.nodes[c].next_sibling
    return n


cdef int32 select_puct(GTree* t, const GParams* p, int32 node, int cp, bint check) noexcept nogil:
    """argmax Q + c_puct * P * sqrt(N) / (1 + N_child); Q of an unvisited child: the parent's
    mean for the mover minus fpu_reduction; every visit in flight counts as a 0 value."""
    cdef const GNode* nd = &t.nodes[node]
    cdef const GNode* ch
    cdef double fpu = (nd.value[cp] / nd.visits if nd.visits > 0 else 0.5) - p.fpu_reduction
    cdef double sq = p.c_puct * sqrt(<double>(nd.visits + nd.vloss))
    cdef double q, score, best_score = -INFINITY
    cdef int32 c = nd.first_child, best = G_NO_NODE, first = G_NO_NODE
    cdef int32 n
    while c != G_NO_NODE:
        ch = &t.nodes[c]
        if not check or t.mark[ch.action] == t.epoch:
            if first == G_NO_NODE:
                first = c
            n = ch.visits + ch.vloss
            q = ch.value[cp] / n if n > 0 else fpu
            score = q + sq * ch.prior / (1 + n)
            if score > best_score:
                best_score = score
                best = c
        c = ch.next_sibling
    return best if best != G_NO_NODE else first


cdef void completed_sigma(GTree* t, const GParams* p, int32 node, int cp, int n) noexcept nogil:
    """sigma(completed Q) of the gathered children t.kids[:n] into t.work[:n]: the mean value
    for the mover of a visited child, the mixed value approximation for the others
    ((raw + sum N * sum_visited(pi * q) / sum_visited(pi)) / (1 + sum N), pi = softmax of
    the logits), min-max rescaled over the n children, times (c_visit + max N) * c_scale."""
    cdef const GNode* ch
    cdef double lmax = -INFINITY, z = 0.0, prob, psum = 0.0, pq = 0.0, q
    cdef double mixed, lo = INFINITY, hi = -INFINITY, span
    cdef int64 sum_visits = 0
    cdef int32 max_visits = 0
    cdef int i
    for i in range(n):
        if t.nodes[t.kids[i]].logit > lmax:
            lmax = t.nodes[t.kids[i]].logit
    for i in range(n):
        z += exp(t.nodes[t.kids[i]].logit - lmax)
    for i in range(n):
        ch = &t.nodes[t.kids[i]]
        if ch.visits > 0:
            prob = exp(ch.logit - lmax) / z
            if prob < 1e-300:
                prob = 1e-300
            psum += prob
            pq += prob * (ch.value[cp] / ch.visits)
            sum_visits += ch.visits
            if ch.visits > max_visits:
                max_visits = ch.visits
    mixed = t.nodes[node].raw
    if psum > 0:
        mixed = (mixed + sum_visits * (pq / psum)) / (sum_visits + 1)
    for i in range(n):
        ch = &t.nodes[t.kids[i]]
        q = ch.value[cp] / ch.visits if ch.visits > 0 else mixed
        t.work[i] = q
        lo = q if q < lo else lo
        hi = q if q > hi else hi
    span = hi - lo
    if span < 1e-8:
        span = 1e-8
    for i in range(n):
        t.work[i] = (p.c_visit + max_visits) * p.c_scale * (t.work[i] - lo) / span


cdef int32 select_gumbel_interior(GTree* t, const GParams* p, int32 node, int cp, bint check) noexcept nogil:
    """mctx's deterministic rule: argmax improved policy - N / (1 + sum N), the improved
    policy softmax(logits + sigma(completed Q)); visits in flight count in N."""
    cdef int n = gather(t, node, check), i
    cdef double mx = -INFINITY, z = 0.0, x, score, best_score = -INFINITY
    cdef int64 total = 0
    cdef int32 best = G_NO_NODE
    cdef const GNode* ch
    if n == 0:
        return G_NO_NODE
    completed_sigma(t, p, node, cp, n)
    for i in range(n):
        ch = &t.nodes[t.kids[i]]
        x = ch.logit + t.work[i]
        mx = x if x > mx else mx
        total += ch.visits + ch.vloss
    for i in range(n):
        z += exp(t.nodes[t.kids[i]].logit + t.work[i] - mx)
    for i in range(n):
        ch = &t.nodes[t.kids[i]]
        score = exp(ch.logit + t.work[i] - mx) / z - (ch.visits + ch.vloss) / (1.0 + total)
        if score > best_score:
            best_score = score
            best = t.kids[i]
    return best if best != G_NO_NODE else t.kids[0]


cdef int64 considered_visit(int m, int64 n, int64 i) noexcept nogil:
    """Sequential Halving: the visit count the root action of simulation i (0-based, of n)
    must have among m considered actions (mctx's get_sequence_of_considered_visits: phases
    of max(1, n // (ceil(log2 m) * m')) visits to each of the m' remaining actions,
    m' halved after each phase, never below 2)."""
    cdef int log2max = 0, num = m
    cdef int64 pos = 0, v = 0, extra, block
    if m <= 1:
        return i
    while (1 << log2max) < m:
        log2max += 1
    while True:
        extra = n // (log2max * num)
        if extra < 1:
            extra = 1
        block = extra * num
        if i < pos + block:
            return v + (i - pos) // num
        pos += block
        v += extra
        num = num // 2 if num // 2 > 2 else 2


cdef int32 select_gumbel_root(GTree* t, const GParams* p, bint check) noexcept nogil:
    """Among the considered root actions whose visits (in flight included) equal the
    Sequential Halving target of this simulation, argmax g + logit + sigma(completed Q)."""
    cdef int n = gather(t, 0, check), i
    cdef int64 total = 0, target, nv, fewest = -1
    cdef int32 best = G_NO_NODE, fallback = G_NO_NODE
    cdef double score, best_score = -INFINITY
    cdef const GNode* ch
    if n == 0:
        return G_NO_NODE
    completed_sigma(t, p, 0, t.observer, n)
    for i in range(n):
        total += t.nodes[t.kids[i]].visits + t.nodes[t.kids[i]].vloss
    target = considered_visit(t.m, p.simulations, total)
    for i in range(n):
        ch = &t.nodes[t.kids[i]]
        if not ch.considered:
            continue
        nv = ch.visits + ch.vloss
        if fewest < 0 or nv < fewest:
            fewest = nv
            fallback = t.kids[i]
        if nv == target:
            score = ch.gumbel + ch.logit + t.work[i]
            if score > best_score:
                best_score = score
                best = t.kids[i]
    if best != G_NO_NODE:
        return best
    return fallback if fallback != G_NO_NODE else t.kids[0]


# ---------------------------------------------------------------------------
# walk, expansion, backup
# ---------------------------------------------------------------------------

cdef inline int push_path(Leaves* lv, int32 node) except -1 nogil:
    if lv.paths_size == lv.paths_capacity:
        grow_pool(<void**>&lv.paths, &lv.paths_capacity, sizeof(int32), b"the guided search's paths")
    lv.paths[lv.paths_size] = node
    lv.paths_size += 1
    return 0


cdef int walk(GTree* t, const GParams* p, Leaves* lv, int32* leaf, int* seat, int* n_legal) except -1 nogil:
    """One simulation's descent from a fresh determinisation of the root: chance outcomes
    sampled, PUCT / Gumbel at the expanded decision nodes, to an unevaluated decision node
    (its legal actions left in t.legal) or the end. The path is appended to lv.paths (the
    caller keeps it or drops it). Returns a WALK_* kind."""
    cdef const GameVTable* vt = t.vt
    cdef void* s = t.scratch
    cdef int32 node = 0, c
    cdef int cp, n, a
    cdef bint check = vt.determinize != NULL
    memcpy(s, t.root_state, vt.state_size)
    vt.reseed(s, rng_next(&t.rng), 0)            # chance in this simulation follows the search's seed
    if check:
        vt.determinize(s, t.observer)            # one sample of what the searching player cannot see
    push_path(lv, 0)
    while True:
        cp = vt.current_player(s)
        seat[0] = cp
        leaf[0] = node
        if cp == PLAYER_TERMINAL:
            return WALK_TERMINAL
        if cp == PLAYER_CHANCE:
            a = vt.sample_chance(s)
            c = find_child(t, node, a)
            if c == G_NO_NODE:
                c = add_child(t, node, a, -1)
            vt.apply_action(s, a)
            node = c
            push_path(lv, node)
            continue
        if not t.nodes[node].expanded:
            if t.nodes[node].pending:
                return WALK_DUPLICATE
            n = vt.legal_actions(s, t.legal)
            n_legal[0] = n
            return WALK_LEAF if n > 0 else WALK_STATIC
        if check:                                # the legal set may differ between determinisations
            n = vt.legal_actions(s, t.legal)
            if n == 0:
                return WALK_STATIC
            complete_children(t, node, cp, n)
        if node == 0 and p.gumbel:
            c = select_gumbel_root(t, p, check)
        elif p.interior == INTERIOR_GUMBEL:
            c = select_gumbel_interior(t, p, node, cp, check)
        else:
            c = select_puct(t, p, node, cp, check)
        vt.apply_action(s, t.nodes[c].action)
        node = c
        push_path(lv, node)


cdef int expand(GTree* t, const GParams* p, int32 node, int cp, const int16* legal, int n,
                const float* logits, double raw) except -1 nogil:
    """Children for the n legal actions with priors softmax(logits at them) (uniform when
    logits is NULL); at the root, the Dirichlet noise or the Gumbel draws."""
    cdef double mx = -INFINITY, z = 0.0, x, total
    cdef int i, _, best
    cdef int32 c
    cdef double best_score
    if logits != NULL:
        for i in range(n):
            x = logits[legal[i]]
            mx = x if x > mx else mx
        for i in range(n):
            z += exp(logits[legal[i]] - mx)
    for i in range(n - 1, -1, -1):               # prepended: the list ends in ascending order
        c = add_child(t, node, legal[i], cp)
        if logits != NULL:
            x = logits[legal[i]] - mx
            t.nodes[c].logit = <float>x
            t.nodes[c].prior = <float>(exp(x) / z)
        else:
            t.nodes[c].logit = 0.0
            t.nodes[c].prior = <float>(1.0 / n)
    t.nodes[node].expanded = 1
    t.nodes[node].to_move = cp
    t.nodes[node].raw = <float>raw
    if node != 0:
        return 0
    t.n_root = n
    if p.gumbel:
        t.m = n if p.max_considered > n else p.max_considered
        c = t.nodes[0].first_child
        while c != G_NO_NODE:
            t.nodes[c].gumbel = <float>(-log(-log(uniform01(&t.rng))) * p.gumbel_scale)
            c = t.nodes[c].next_sibling
        for _ in range(t.m):                      # Gumbel-top-k: the m best g + logit
            best = G_NO_NODE
            best_score = -INFINITY
            c = t.nodes[0].first_child
            while c != G_NO_NODE:
                x = t.nodes[c].gumbel + t.nodes[c].logit
                if not t.nodes[c].considered and (best == G_NO_NODE or x > best_score):
                    best_score = x
                    best = c
                c = t.nodes[c].next_sibling
            t.nodes[best].considered = 1
    elif p.dirichlet_alpha > 0 and p.dirichlet_fraction > 0:
        total = 0.0
        c = t.nodes[0].first_child
        i = 0
        while c != G_NO_NODE:
            t.work[i] = gamma_draw(&t.rng, p.dirichlet_alpha)
            total += t.work[i]
            i += 1
            c = t.nodes[c].next_sibling
        if total <= 0:
            total = 1.0
        c = t.nodes[0].first_child
        i = 0
        while c != G_NO_NODE:
            t.nodes[c].prior = <float>((1.0 - p.dirichlet_fraction) * t.nodes[c].prior
                                       + p.dirichlet_fraction * t.work[i] / total)
            i += 1
            c = t.nodes[c].next_sibling
    return 0


cdef void backup(GTree* t, const int32* path, int depth, const double* v, bint virtual) noexcept nogil:
    """Max-n: every node on the path adds every seat's value (and drops its virtual loss)."""
    cdef int i, k
    cdef GNode* nd
    for i in range(depth):
        nd = &t.nodes[path[i]]
        nd.visits += 1
        if virtual:
            nd.vloss -= 1
        for k in range(t.n_players):
            nd.value[k] += v[k]


cdef void add_vloss(GTree* t, const int32* path, int depth, int delta) noexcept nogil:
    cdef int i
    for i in range(depth):
        t.nodes[path[i]].vloss += delta


cdef void rollout_value(GTree* t, int rollouts, double* v) noexcept nogil:
    """The C evaluator: the mean returns of `rollouts` random playouts from the scratch state."""
    cdef double r[G_MAX_PLAYERS]
    cdef int _, k
    for k in range(t.n_players):
        v[k] = 0.0
    for _ in range(rollouts):
        memcpy(t.playout, t.scratch, t.vt.state_size)
        t.vt.reseed(t.playout, rng_next(&t.rng), 1)
        t.vt.random_playout(t.playout)
        t.vt.returns(t.playout, r)
        for k in range(t.n_players):
            v[k] += r[k]
    for k in range(t.n_players):
        v[k] /= rollouts


cdef inline bint tree_finished(const GTree* t, const GParams* p) noexcept nogil:
    return t.done >= p.simulations and t.nodes[0].expanded


cdef int run_inline(GTree* t, const GParams* p, Leaves* lv, int budget) except -1 nogil:
    """Up to `budget` more simulations of one tree with the C evaluator (the whole search in
    slices: the caller looks at its signals between them), each evaluated where it ends
    (uniform priors, random playouts), no batching and no virtual loss."""
    cdef int32 leaf
    cdef int seat, n, kind, steps = 0
    cdef double v[G_MAX_PLAYERS]
    while not tree_finished(t, p) and steps < budget:
        steps += 1
        lv.paths_size = 0
        kind = walk(t, p, lv, &leaf, &seat, &n)
        if kind == WALK_LEAF:
            rollout_value(t, p.rollouts, v)
            expand(t, p, leaf, seat, t.legal, n, NULL, v[seat])
        elif kind == WALK_TERMINAL:
            t.vt.returns(t.scratch, v)
        else:
            t.vt.evaluate(t.scratch, v)
        backup(t, lv.paths, lv.paths_size, v, False)
        if leaf != 0:
            t.done += 1
    lv.paths_size = 0
    return 0


cdef int collect(GTree* trees, int n_trees, const GParams* p, Leaves* lv) except -1 nogil:
    """Walk every unfinished tree to up to k leaves; write the leaves' observations (the
    root seat's view), masks and legal lists; back up terminal leaves at once."""
    cdef GTree* t
    cdef int b, attempt, kind, seat, n, i
    cdef int32 leaf, start, li
    cdef double v[G_MAX_PLAYERS]
    cdef const GameVTable* vt
    lv.count = 0
    lv.paths_size = 0
    for b in range(n_trees):
        t = &trees[b]
        vt = t.vt
        attempt = 0
        while attempt < p.leaves_per_tree and (not t.nodes[0].expanded or t.done + t.inflight < p.simulations):
            attempt += 1
            start = lv.paths_size
            kind = walk(t, p, lv, &leaf, &seat, &n)
            if kind == WALK_LEAF:
                li = lv.count
                lv.count += 1
                lv.tree[li] = b
                lv.node[li] = leaf
                lv.seat[li] = seat
                lv.path_start[li] = start
                lv.path_len[li] = lv.paths_size - start
                lv.n_legal[li] = n
                memcpy(lv.legal + <Py_ssize_t>li * lv.num_actions, t.legal, n * sizeof(int16))
                vt.observation(t.scratch, t.observer, lv.obs + <Py_ssize_t>li * lv.obs_size)
                if lv.ref_obs != NULL:            # a compiled network starts from the root's sums
                    lv.ref_obs[li] = t.ref_obs
                    lv.ref_pre[li] = t.ref_pre
                if p.mix > 0:                     # the playouts start from this leaf's state
                    rollout_value(t, p.mix_rollouts, lv.rollout + <Py_ssize_t>li * t.n_players)
                if lv.mask != NULL:
                    memset(lv.mask + <Py_ssize_t>li * lv.num_actions, 0, lv.num_actions)
                    for i in range(n):
                        lv.mask[<Py_ssize_t>li * lv.num_actions + t.legal[i]] = 1
                add_vloss(t, lv.paths + start, lv.path_len[li], 1)
                t.nodes[leaf].pending = 1
                if leaf == 0:                     # the root's own evaluation: no simulation
                    break
                t.inflight += 1
            elif kind == WALK_DUPLICATE:
                lv.paths_size = start
            else:
                if kind == WALK_TERMINAL:
                    vt.returns(t.scratch, v)
                else:
                    vt.evaluate(t.scratch, v)
                backup(t, lv.paths + start, lv.paths_size - start, v, False)
                t.done += 1
                lv.paths_size = start
    return 0


cdef int check_outputs(const Leaves* lv, const float* logits, const double* values, int players,
                       int64* where) noexcept nogil:
    """0 if every leaf's logits at its legal actions are finite and its values are finite
    and in [0, 1]; else 1 (bad logit) or 2 (bad value) with where = [leaf, column]."""
    cdef int32 li
    cdef int i, k
    cdef double x
    for li in range(lv.count):
        for i in range(lv.n_legal[li]):
            k = lv.legal[<Py_ssize_t>li * lv.num_actions + i]
            if not isfinite(logits[<Py_ssize_t>li * lv.num_actions + k]):
                where[0] = li
                where[1] = k
                return 1
        for k in range(players):
            x = values[<Py_ssize_t>li * players + k]
            if not (isfinite(x) and 0.0 <= x <= 1.0):
                where[0] = li
                where[1] = k
                return 2
    return 0


cdef int apply_outputs(GTree* trees, const GParams* p, Leaves* lv, const float* logits,
                       const double* values, int players) except -1 nogil:
    """Expand every leaf of the step and back its values up (dropping its virtual loss)."""
    cdef GTree* t
    cdef int32 li, leaf
    cdef int k
    cdef const double* v
    cdef const double* r
    cdef double mixed[G_MAX_PLAYERS]
    for li in range(lv.count):
        t = &trees[lv.tree[li]]
        leaf = lv.node[li]
        v = values + <Py_ssize_t>li * players
        if p.mix > 0:                             # AlphaGo's mixing of value and playouts
            r = lv.rollout + <Py_ssize_t>li * players
            for k in range(players):
                mixed[k] = (1.0 - p.mix) * v[k] + p.mix * r[k]
            v = mixed
        t.nodes[leaf].pending = 0
        expand(t, p, leaf, lv.seat[li], lv.legal + <Py_ssize_t>li * lv.num_actions, lv.n_legal[li],
               logits + <Py_ssize_t>li * lv.num_actions, v[lv.seat[li]])
        backup(t, lv.paths + lv.path_start[li], lv.path_len[li], v, True)
        if leaf != 0:
            t.inflight -= 1
            t.done += 1
    lv.count = 0
    lv.paths_size = 0
    return 0


cdef void drop_leaves(GTree* trees, Leaves* lv) noexcept nogil:
    """Forget the step's leaves after a failed evaluation: no virtual loss, no pending node."""
    cdef GTree* t
    cdef int32 li
    for li in range(lv.count):
        t = &trees[lv.tree[li]]
        add_vloss(t, lv.paths + lv.path_start[li], lv.path_len[li], -1)
        t.nodes[lv.node[li]].pending = 0
        if lv.node[li] != 0:
            t.inflight -= 1
    lv.count = 0
    lv.paths_size = 0


cdef int run_network(GTree* trees, int n_trees, const GParams* p, Leaves* lv, const MLPNet* net,
                     MLPScratch* scratch, int players, int64* where, double* seconds) except -1 nogil:
    """Steps of the search with a compiled network, until the trees are done (0) or some
    NETWORK_SLICE leaves were evaluated (3: the caller looks at its signals and calls again):
    walk, the network on the step's leaves, the checks of its outputs, expansion and backup.
    A bad output returns 1 (a logit) or 2 (a value) with its place in `where`, the step's
    leaves still waiting (the caller names the number, then drops them). Wall seconds are
    added to seconds[0] (walks), [3] (the network) and [2] (checks, expansion, backup)."""
    cdef int64 evaluated = 0
    cdef double t0, t1, t2
    cdef int i, code
    cdef bint finished
    while evaluated < NETWORK_SLICE:
        t0 = mlp_now()
        collect(trees, n_trees, p, lv)
        t1 = mlp_now()
        seconds[0] += t1 - t0
        if lv.count == 0:
            finished = True
            for i in range(n_trees):
                if trees[i].done < p.simulations:
                    finished = False
            if finished:
                return 0
            evaluated += 1                        # a step of duplicates only: still a step
            continue
        mlp_forward(net, scratch, lv.count, lv.obs, lv.ref_obs, lv.ref_pre, lv.logits, lv.values)
        t2 = mlp_now()
        seconds[3] += t2 - t1
        code = check_outputs(lv, lv.logits, lv.values, players, where)
        if code != 0:
            return code
        evaluated += lv.count
        apply_outputs(trees, p, lv, lv.logits, lv.values, players)
        seconds[2] += mlp_now() - t2
    return 3


# ---------------------------------------------------------------------------
# Python-facing: B trees searched together
# ---------------------------------------------------------------------------

def sequential_halving_schedule(int m, long long n):
    """The visit count the root action of each of n simulations must have among m
    considered actions (the engine's schedule, as a list; for tests and plots)."""
    if m < 1 or n < 0:
        raise ValueError(f"need m >= 1 and n >= 0, got m={m}, n={n}")
    return [considered_visit(m, n, i) for i in range(n)]


cdef int check_state(GameState state) except -1:
    if state is None:
        raise TypeError("state must be a caribsim game state, got None")
    if state.vtable == NULL or state.c_state() == NULL:
        raise TypeError("state must be a caribsim game state made by a game "
                        "(game.new_initial_state() or game.state_from_dict()), "
                        f"got an uninitialised {type(state).__name__}")
    return 0


cdef class Engine:
    """B trees of one game searched together (the engine of caribsim.search.guided).

    run(states, seeds) searches each state with its own tree and seed; with a Python
    evaluator every step makes one call evaluator(obs, mask) for the leaves of all trees;
    with `network` (a CompiledMLP) the steps evaluate their leaves in C, without the GIL.
    One run at a time: a second concurrent call (another thread, or the evaluator calling
    back) raises RuntimeError. The arguments are checked here too (guided.py checks them
    first, with friendlier messages).
    """
    cdef GTree* trees
    cdef int n_trees                # trees allocated and initialised
    cdef const GameVTable* vt
    cdef GParams params
    cdef Leaves lv
    cdef int players
    cdef object evaluator
    cdef CompiledMLP net            # the compiled network evaluated in C, or None
    cdef MLPScratch scratch         # its rows of activations (this engine's own)
    cdef int ref_trees              # trees whose ref_obs / ref_pre are allocated for the network
    cdef int16* probe               # legal actions of a state being checked (vt.num_actions)
    cdef object obs_array           # float32 [capacity, O]: lv.obs
    cdef object mask_array          # bool [capacity, A]: lv.mask
    cdef readonly bint busy         # a run is going on (set and cleared with the GIL held)
    cdef readonly double temperature
    cdef double seconds[4]          # wall time of the last run: C walks, the Python step, C
    #                                 expansion, the compiled network
    cdef int n_last                 # trees of the last run

    def __cinit__(self):
        self.trees = NULL
        self.probe = NULL
        self.n_trees = 0
        memset(&self.lv, 0, sizeof(Leaves))
        memset(&self.scratch, 0, sizeof(MLPScratch))
        self.busy = True            # unusable until fully set up

    def __init__(self, GameState state, evaluator, long long simulations, int leaves_per_tree,
                 double c_puct, double fpu_reduction, double dirichlet_alpha,
                 double dirichlet_fraction, double temperature, bint gumbel, str interior,
                 int max_considered, double gumbel_scale, double c_visit, double c_scale,
                 int rollouts, double mix=0.0, int mix_rollouts=1, CompiledMLP network=None):
        if self.vt != NULL:
            raise RuntimeError("an Engine is initialised once")
        check_state(state)
        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        if not 1 <= leaves_per_tree <= 4096:
            raise ValueError(f"leaves_per_tree must be in 1..4096, got {leaves_per_tree}")
        for name, x in (("c_puct", c_puct), ("fpu_reduction", fpu_reduction),
                        ("dirichlet_fraction", dirichlet_fraction), ("temperature", temperature),
                        ("gumbel_scale", gumbel_scale), ("c_visit", c_visit), ("c_scale", c_scale)):
            if not (isfinite(x) and x >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {x}")
        if dirichlet_fraction > 1:
            raise ValueError(f"dirichlet_fraction must be in [0, 1], got {dirichlet_fraction}")
        if not isfinite(dirichlet_alpha):
            raise ValueError(f"dirichlet_alpha must be finite, got {dirichlet_alpha}")
        if interior not in INTERIORS:
            raise ValueError(f"interior must be one of {sorted(INTERIORS)}, got {interior!r}")
        if max_considered < 1:
            raise ValueError(f"max_considered must be >= 1, got {max_considered}")
        if rollouts < 0:
            raise ValueError(f"rollouts must be >= 0 (0: a Python evaluator), got {rollouts}")
        if not (isfinite(mix) and 0.0 <= mix <= 1.0):
            raise ValueError(f"mix must be in [0, 1], got {mix}")
        if mix > 0 and rollouts > 0:
            raise ValueError("mix mixes a Python evaluator's values with random playouts; "
                             "the C rollout evaluator (rollouts > 0) has no value to mix")
        if not 1 <= mix_rollouts <= 10_000:
            raise ValueError(f"mix_rollouts must be in 1..10000, got {mix_rollouts}")
        if rollouts == 0 and network is None and not callable(evaluator):
            raise TypeError(f"the evaluator must be callable, got {type(evaluator).__name__}")
        if network is not None and rollouts > 0:
            raise ValueError("a compiled network and the C rollout evaluator (rollouts > 0) "
                             "are two evaluators: give one")
        self.vt = state.vtable
        if self.vt.max_players > G_MAX_PLAYERS:
            raise ValueError(f"the search supports up to {G_MAX_PLAYERS} seats, "
                             f"this game has {self.vt.max_players}")
        self.players = self.vt.num_players(state.c_state())
        self.params.simulations = simulations
        self.params.leaves_per_tree = leaves_per_tree
        self.params.c_puct = c_puct
        self.params.fpu_reduction = fpu_reduction
        self.params.dirichlet_alpha = dirichlet_alpha
        self.params.dirichlet_fraction = dirichlet_fraction
        self.params.gumbel = gumbel
        self.params.interior = INTERIORS[interior]
        self.params.max_considered = max_considered
        self.params.gumbel_scale = gumbel_scale
        self.params.c_visit = c_visit
        self.params.c_scale = c_scale
        self.params.rollouts = rollouts
        self.params.mix = mix
        self.params.mix_rollouts = mix_rollouts
        self.temperature = temperature
        self.evaluator = evaluator
        self.lv.obs_size = self.vt.observation_size(state.c_state())
        self.lv.num_actions = self.vt.num_actions
        if network is not None:
            self._check_network(network)
            mlp_scratch_init(&self.scratch, &network.net)
            self.net = network
        self.lv.paths_capacity = 1024
        self.lv.paths = <int32*>malloc(self.lv.paths_capacity * sizeof(int32))
        self.probe = <int16*>malloc(self.vt.num_actions * sizeof(int16))
        if self.lv.paths == NULL or self.probe == NULL:
            raise MemoryError("guided search: cannot allocate the paths")
        self.busy = False

    def __dealloc__(self):
        cdef int i
        if self.trees != NULL:
            for i in range(self.n_trees):
                tree_free(&self.trees[i])
            free(self.trees)
        self._free_leaves()
        free(self.lv.paths)
        free(self.probe)
        mlp_scratch_free(&self.scratch)

    cdef int _check_network(self, CompiledMLP network) except -1:
        cdef const MLPNet* net = &network.net
        if (net.obs_size, net.num_actions, net.num_players) != (
                self.lv.obs_size, self.lv.num_actions, self.players):
            raise ValueError(
                f"the network does not fit this game: obs must have O = {net.obs_size} "
                f"columns for it, with {net.num_actions} actions and {net.num_players} seats; "
                f"this game has {self.lv.obs_size} observation numbers, "
                f"{self.lv.num_actions} actions and {self.players} seats")
        return 0

    @property
    def network(self):
        """The compiled network this engine evaluates in C, or None (a Python evaluator)."""
        return self.net

    def set_network(self, CompiledMLP network not None):
        """Evaluate with `network` from the next run on (an engine made with a network only,
        and one of the same sizes: e.g. the same MLP compiled again after training)."""
        if self.net is None:
            raise ValueError("this engine calls a Python evaluator; make one with network=")
        if self.busy:
            raise RuntimeError("this search is in use by another thread")
        self._check_network(network)
        mlp_scratch_free(&self.scratch)
        mlp_scratch_init(&self.scratch, &network.net)
        self.net = network
        self._free_refs()                 # its first layer may be of another width

    cdef void _free_refs(self) noexcept:
        cdef int i
        for i in range(self.ref_trees):
            free(self.trees[i].ref_obs)
            free(self.trees[i].ref_pre)
            self.trees[i].ref_obs = NULL
            self.trees[i].ref_pre = NULL
        self.ref_trees = 0

    cdef int _alloc_refs(self, int n) except -1:
        """The root references of trees 0 .. n - 1 for the network."""
        cdef GTree* t
        while self.ref_trees < n:
            t = &self.trees[self.ref_trees]
            t.ref_obs = <float*>malloc(self.lv.obs_size * sizeof(float))
            t.ref_pre = <float*>malloc(self.net.net.first_width * sizeof(float))
            if t.ref_obs == NULL or t.ref_pre == NULL:
                free(t.ref_obs)
                free(t.ref_pre)
                t.ref_obs = t.ref_pre = NULL
                raise MemoryError("guided search: cannot allocate the trees' references")
            self.ref_trees += 1
        return 0

    cdef void _free_leaves(self) noexcept:
        free(self.lv.tree)
        free(self.lv.node)
        free(self.lv.seat)
        free(self.lv.path_start)
        free(self.lv.path_len)
        free(self.lv.n_legal)
        free(self.lv.legal)
        free(self.lv.rollout)
        free(self.lv.logits)
        free(self.lv.values)
        free(self.lv.ref_obs)
        free(self.lv.ref_pre)
        self.lv.rollout = NULL
        self.lv.logits = NULL
        self.lv.values = NULL
        self.lv.ref_obs = self.lv.ref_pre = NULL
        self.lv.tree = self.lv.node = self.lv.seat = NULL
        self.lv.path_start = self.lv.path_len = self.lv.n_legal = NULL
        self.lv.legal = NULL
        self.lv.capacity = 0

    def accepts(self, GameState state not None):
        """Whether `state` is of the game (C interface, seats, observation size) of this engine."""
        check_state(state)
        return (state.vtable == self.vt and self.vt.num_players(state.c_state()) == self.players
                and self.vt.observation_size(state.c_state()) == self.lv.obs_size)

    @property
    def profile(self):
        """Wall seconds of the last run with a Python evaluator or a compiled network: {"walk":
        C walks, observations and masks; "python": the evaluator call with the checks of its
        outputs' types and shapes; "network": the compiled network; "expand": C checks of the
        values, expansion and backup}."""
        return {"walk": self.seconds[0], "python": self.seconds[1],
                "network": self.seconds[3], "expand": self.seconds[2]}

    def audit(self):
        """The trees of the last run checked (for tests): {"vloss": visits in flight left on
        nodes, "pending": nodes left waiting for an evaluation, "inflight": simulations left
        in flight, "unbalanced": nodes with children whose visits are not their own evaluation
        plus their children's visits, "nodes": nodes in all}."""
        cdef int b
        cdef int32 i, c
        cdef int64 vloss = 0, pending = 0, inflight = 0, unbalanced = 0, nodes = 0, below
        cdef GTree* t
        if self.busy:
            raise RuntimeError("this search is in use by another thread")
        for b in range(self.n_last):
            t = &self.trees[b]
            inflight += t.inflight
            nodes += t.size
            for i in range(t.size):
                vloss += t.nodes[i].vloss if t.nodes[i].vloss >= 0 else -t.nodes[i].vloss
                pending += t.nodes[i].pending
                c = t.nodes[i].first_child
                if c == G_NO_NODE:
                    continue
                below = 0
                while c != G_NO_NODE:
                    below += t.nodes[c].visits
                    c = t.nodes[c].next_sibling
                if t.nodes[i].visits != below + t.nodes[i].expanded:
                    unbalanced += 1
        return {"vloss": vloss, "pending": pending, "inflight": inflight,
                "unbalanced": unbalanced, "nodes": nodes}

    @property
    def leaf_arrays(self):
        """The observation and mask arrays handed to the evaluator (full capacity), or None."""
        return (self.obs_array, self.mask_array) if self.obs_array is not None else None

    cdef int _reserve(self, int n) except -1:
        """Room for n trees and n * k leaves (the buffers kept between runs)."""
        cdef GTree* grown
        cdef int32 cap
        cdef long long leaves = <long long>n * self.params.leaves_per_tree
        if leaves > C_MAX_LEAVES:
            # checked first, in 64 bits: n * k in an int32 wraps past 2**31 (and nothing is
            # grown for a batch that cannot be held)
            raise ValueError(
                f"a batch of {n} states with leaves_per_tree={self.params.leaves_per_tree} is "
                f"{leaves} leaves; one run holds at most {C_MAX_LEAVES} (fewer states per run)")
        if n > self.n_trees:
            grown = <GTree*>realloc(self.trees, n * sizeof(GTree))
            if grown == NULL:
                raise MemoryError(f"guided search: cannot allocate {n} trees")
            self.trees = grown
            while self.n_trees < n:
                tree_init(&self.trees[self.n_trees], self.vt, 1024)
                self.n_trees += 1
        if self.params.rollouts > 0:
            return 0
        cap = <int32>leaves
        if cap <= self.lv.capacity:
            return 0
        self._free_leaves()
        self.obs_array = self.mask_array = None
        self.lv.tree = <int32*>malloc(cap * sizeof(int32))
        self.lv.node = <int32*>malloc(cap * sizeof(int32))
        self.lv.seat = <int32*>malloc(cap * sizeof(int32))
        self.lv.path_start = <int32*>malloc(cap * sizeof(int32))
        self.lv.path_len = <int32*>malloc(cap * sizeof(int32))
        self.lv.n_legal = <int32*>malloc(cap * sizeof(int32))
        self.lv.legal = <int16*>malloc(<Py_ssize_t>cap * self.lv.num_actions * sizeof(int16))
        if self.params.mix > 0:
            self.lv.rollout = <double*>malloc(<Py_ssize_t>cap * self.players * sizeof(double))
        if self.net is not None:
            self.lv.logits = <float*>malloc(<Py_ssize_t>cap * self.lv.num_actions * sizeof(float))
            self.lv.values = <double*>malloc(<Py_ssize_t>cap * self.players * sizeof(double))
            self.lv.ref_obs = <const float**>malloc(cap * sizeof(float*))
            self.lv.ref_pre = <const float**>malloc(cap * sizeof(float*))
        if (self.lv.tree == NULL or self.lv.node == NULL or self.lv.seat == NULL
                or self.lv.path_start == NULL or self.lv.path_len == NULL
                or self.lv.n_legal == NULL or self.lv.legal == NULL
                or (self.params.mix > 0 and self.lv.rollout == NULL)
                or (self.net is not None and (self.lv.logits == NULL or self.lv.values == NULL
                                              or self.lv.ref_obs == NULL
                                              or self.lv.ref_pre == NULL))):
            self._free_leaves()
            raise MemoryError(f"guided search: cannot allocate the buffers of {cap} leaves")
        obs = np.zeros((cap, self.lv.obs_size), dtype=np.float32)
        mask = np.zeros((cap, self.lv.num_actions), dtype=np.bool_)
        self.obs_array = obs
        self.mask_array = mask
        self.lv.obs = <float*>cnp.PyArray_DATA(obs)
        self.lv.mask = <uint8*>cnp.PyArray_DATA(mask) if self.net is None else NULL
        self.lv.capacity = cap
        return 0

    def run(self, list states not None, list seeds not None):
        """Search every state (decision nodes of this engine's game) with its own tree,
        tree i seeded with seeds[i]; returns one tuple per state (see _result)."""
        cdef int n = len(states)
        cdef GameState st
        if self.vt == NULL:
            raise RuntimeError("this Engine was not initialised")
        if n == 0:
            raise ValueError("give at least one state")
        if len(seeds) != n:
            raise ValueError(f"give one seed per state: {n} states, {len(seeds)} seeds")
        for x in states:
            if not isinstance(x, GameState):
                raise TypeError(f"state must be a caribsim game state, got {type(x).__name__}")
            st = <GameState>x
            if not self.accepts(st):
                raise ValueError("every state must be of the game (and number of players) "
                                 "this search was made for")
            cp = self.vt.current_player(st.c_state())
            if cp < 0:
                raise ValueError("can only search a decision node, not a "
                                 f"{'chance' if cp == PLAYER_CHANCE else 'terminal'} node")
            if self.vt.legal_actions(st.c_state(), self.probe) == 0:
                raise ValueError("cannot search a decision node without a legal action")
        seed_values = [<uint64>s for s in seeds]
        if self.busy:
            raise RuntimeError("this search is in use by another thread (or by its own "
                               "evaluator); use one search object per thread")
        self.busy = True
        try:
            return self._run(states, seed_values)
        finally:
            self.busy = False

    cdef _run(self, list states, list seeds):
        cdef int i, n = len(states), code
        cdef int64 where[2]
        cdef GTree* trees
        cdef GParams* p = &self.params
        cdef Leaves* lv = &self.lv
        cdef cnp.ndarray logits_arr, values_arr
        cdef const float* logits_p
        cdef const double* values_p
        cdef bint finished
        self._reserve(n)
        trees = self.trees
        self.n_last = n
        for i in range(n):
            set_root(&trees[i], (<GameState>states[i]).c_state(), seeds[i])
        t0 = time.perf_counter()
        self.seconds[0] = self.seconds[1] = self.seconds[2] = self.seconds[3] = 0.0
        if p.rollouts > 0:
            while True:
                finished = True
                with nogil:
                    for i in range(n):
                        run_inline(&trees[i], p, lv, INLINE_SLICE)
                        finished = finished and tree_finished(&trees[i], p)
                PyErr_CheckSignals()                # Ctrl-C between the slices
                if finished:
                    break
        elif self.net is not None:
            self._alloc_refs(n)
            with nogil:                             # each tree's root: its leaves' reference
                for i in range(n):
                    self.vt.observation(trees[i].root_state, trees[i].observer, trees[i].ref_obs)
                    mlp_reference(&self.net.net, &self.scratch, trees[i].ref_obs,
                                  trees[i].ref_pre)
            while True:
                PyErr_CheckSignals()                # Ctrl-C between the slices
                with nogil:
                    code = run_network(trees, n, p, lv, &self.net.net, &self.scratch,
                                       self.players, where, self.seconds)
                if code == 0:
                    break
                if code == 3:
                    continue
                leaves = lv.count
                if code == 1:
                    bad = lv.logits[where[0] * lv.num_actions + where[1]]
                else:
                    bad = lv.values[where[0] * self.players + where[1]]
                drop_leaves(trees, lv)
                if code == 1:
                    raise ValueError(
                        f"the compiled network's logits must be finite at legal actions: row "
                        f"{where[0]} (of {leaves}) has {bad!r} at legal action {where[1]} "
                        "(an observation too large for float32?)")
                raise ValueError(
                    f"the compiled network's values must be finite and in [0, 1]: row "
                    f"{where[0]} (of {leaves}) has {bad!r} for seat {where[1]}")
        else:
            while True:
                PyErr_CheckSignals()                # Ctrl-C between the batches
                ta = time.perf_counter()
                with nogil:
                    collect(trees, n, p, lv)
                tb = time.perf_counter()
                self.seconds[0] += tb - ta
                if lv.count == 0:
                    finished = True
                    for i in range(n):
                        if trees[i].done < p.simulations:
                            finished = False
                    if finished:
                        break
                    continue
                try:
                    logits_arr, values_arr = self._evaluate(lv.count)
                except BaseException:
                    drop_leaves(trees, lv)
                    raise
                logits_p = <const float*>cnp.PyArray_DATA(logits_arr)
                values_p = <const double*>cnp.PyArray_DATA(values_arr)
                ta = time.perf_counter()
                self.seconds[1] += ta - tb
                with nogil:
                    code = check_outputs(lv, logits_p, values_p, self.players, where)
                if code != 0:
                    leaves = lv.count
                    drop_leaves(trees, lv)
                    if code == 1:
                        raise ValueError(
                            f"the evaluator's logits must be finite at legal actions: row {where[0]} "
                            f"(of {leaves}) has {logits_arr[where[0], where[1]]!r} at legal action "
                            f"{where[1]}")
                    raise ValueError(
                        f"the evaluator's values must be finite and in [0, 1]: row {where[0]} "
                        f"(of {leaves}) has {values_arr[where[0], where[1]]!r} for seat {where[1]}")
                with nogil:
                    apply_outputs(trees, p, lv, logits_p, values_p, self.players)
                self.seconds[2] += time.perf_counter() - ta
        elapsed = time.perf_counter() - t0
        return [self._result(&trees[i], elapsed) for i in range(n)]

    cdef tuple _evaluate(self, int count):
        """One call of the Python evaluator for `count` leaves; its outputs as C-contiguous
        float32 logits [count, A] and float64 values [count, P], or a clear error."""
        cdef int A = self.lv.num_actions, P = self.players
        out = self.evaluator(self.obs_array[:count], self.mask_array[:count])
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("the evaluator must return a pair (logits [L, A], values [L, P]), "
                            f"got {type(out).__name__}")
        logits = _as_float_array(out[0], "logits", (count, A), np.float32)
        values = _as_float_array(out[1], "values", (count, P), np.float64)
        return logits, values

    cdef _result(self, GTree* t, double elapsed):
        """(action, visits [A], policy [A], q [A], value [P], simulations, seconds, nodes)."""
        cdef int A = self.vt.num_actions, n, i, best
        cdef const GNode* ch
        cdef double mx, z, x, best_score, r, acc
        cdef int64 best_visits
        visits = np.zeros(A, dtype=np.int64)
        policy = np.zeros(A, dtype=np.float64)
        q = np.full(A, np.nan, dtype=np.float64)
        value = np.zeros(self.players, dtype=np.float64)
        cdef cnp.int64_t[:] vv = visits
        cdef double[:] pv = policy
        cdef double[:] qv = q
        for i in range(self.players):
            value[i] = t.nodes[0].value[i] / t.nodes[0].visits if t.nodes[0].visits else 0.0
        n = gather(t, 0, False)
        for i in range(n):
            ch = &t.nodes[t.kids[i]]
            vv[ch.action] = ch.visits
            if ch.visits > 0:
                qv[ch.action] = ch.value[t.observer] / ch.visits
        best = -1
        if self.params.gumbel:
            completed_sigma(t, &self.params, 0, t.observer, n)
            mx = -INFINITY
            for i in range(n):
                x = t.nodes[t.kids[i]].logit + t.work[i]
                mx = x if x > mx else mx
            z = 0.0
            for i in range(n):
                z += exp(t.nodes[t.kids[i]].logit + t.work[i] - mx)
            for i in range(n):
                pv[t.nodes[t.kids[i]].action] = exp(t.nodes[t.kids[i]].logit + t.work[i] - mx) / z
            # the Sequential Halving winner: the most visited considered actions, then g + logit + sigma
            best_visits = -1
            for i in range(n):
                ch = &t.nodes[t.kids[i]]
                if ch.considered and ch.visits > best_visits:
                    best_visits = ch.visits
            best_score = -INFINITY
            for i in range(n):
                ch = &t.nodes[t.kids[i]]
                if ch.considered and ch.visits == best_visits:
                    x = ch.gumbel + ch.logit + t.work[i]
                    if best < 0 or x > best_score:
                        best_score = x
                        best = ch.action
        else:
            total = visits.sum()
            policy[:] = visits / total
            if self.temperature == 0:
                # the most visited; ties by the mean value, then the lowest id
                order = [(int(visits[a]), -1.0 if np.isnan(q[a]) else float(q[a]), -a)
                         for a in np.flatnonzero(visits)]
                best = -max(order)[2]
            else:
                idx = np.flatnonzero(visits)
                w = np.exp((np.log(visits[idx].astype(np.float64)) - np.log(visits[idx].max()))
                           / self.temperature)
                r = uniform01(&t.rng) * w.sum()
                acc = 0.0
                best = int(idx[len(idx) - 1])
                for i in range(len(idx)):
                    acc += w[i]
                    if r < acc:
                        best = int(idx[i])
                        break
        return best, visits, policy, q, value, t.done, elapsed, t.size


def _as_float_array(x, str what, tuple shape, dtype):
    """x as a C-contiguous array of `dtype` and `shape`, or a clear TypeError / ValueError."""
    try:
        a = np.asarray(x)
    except Exception as e:
        raise TypeError(f"the evaluator's {what} must be an array, got {type(x).__name__}: {e}") from None
    if a.dtype.kind != "f":
        raise TypeError(f"the evaluator's {what} must be a float array, got dtype {a.dtype}")
    if a.shape != shape:
        raise ValueError(f"the evaluator's {what} must have shape {shape}, got {a.shape}")
    return np.ascontiguousarray(a, dtype=dtype)
