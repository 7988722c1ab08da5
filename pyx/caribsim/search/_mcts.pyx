# cython: language_level=3
"""MCTS in C over the game interface: UCT with max-n backup, chance nodes
sampled on every descent, single-observer information-set search (a fresh
determinisation per iteration) for games with hidden information, random or
heuristic rollouts with an optional cut-off, a node pool grown by doubling,
tree reuse between moves and root parallelism over threads.

The Python API is caribsim.mcts (validation and docs); this module is the engine.
"""
from libc.math cimport isfinite, log, sqrt
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcmp, memcpy, memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF

from caribsim._types cimport int16, int32, int64, uint64, PLAYER_CHANCE, PLAYER_TERMINAL
from caribsim._rng cimport rng_seed, rng_next, rng_below
from caribsim._game cimport GameVTable, GameState
from caribsim.search._pool cimport grow_pool

import time


cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


# ---------------------------------------------------------------------------
# the tree
# ---------------------------------------------------------------------------

cdef int tree_init(Tree* t, const GameVTable* vt, SearchParams params, uint64 seed, uint64 stream,
                   int32 capacity) except -1 nogil:
    memset(t, 0, sizeof(Tree))
    t.vt = vt
    t.params = params
    t.capacity = capacity if capacity > 16 else 16
    t.nodes = <Node*>malloc(t.capacity * sizeof(Node))
    t.root_state = <char*>malloc(vt.state_size)
    t.scratch = <char*>malloc(vt.state_size)
    t.legal = <int16*>malloc(vt.num_actions * sizeof(int16))
    t.child_of = <int32*>malloc(vt.num_actions * sizeof(int32))
    t.mark = <int32*>malloc(vt.num_actions * sizeof(int32))
    t.path_capacity = 256
    t.path = <int32*>malloc(t.path_capacity * sizeof(int32))
    if (t.nodes == NULL or t.root_state == NULL or t.scratch == NULL or t.legal == NULL
            or t.child_of == NULL or t.mark == NULL or t.path == NULL):
        tree_free(t)
        with gil:
            raise MemoryError("MCTS: cannot allocate the tree")
    memset(t.mark, 0, vt.num_actions * sizeof(int32))
    rng_seed(&t.rng, seed, stream)
    t.size = 0
    return 0


cdef void tree_free(Tree* t) noexcept nogil:
    free(t.nodes)
    free(t.root_state)
    free(t.scratch)
    free(t.legal)
    free(t.child_of)
    free(t.mark)
    free(t.path)
    t.nodes = NULL
    t.root_state = NULL
    t.scratch = NULL
    t.legal = NULL
    t.child_of = NULL
    t.mark = NULL
    t.path = NULL
    t.size = 0
    t.capacity = 0


cdef int32 new_node(Tree* t, int action, int mover) except -1 nogil:
    """A node from the pool (grown by doubling: no allocation per node)."""
    cdef int32 i
    if t.size == t.capacity:
        grow_pool(<void**>&t.nodes, &t.capacity, sizeof(Node), b"the MCTS node pool")
    i = t.size
    t.size += 1
    memset(&t.nodes[i], 0, sizeof(Node))
    t.nodes[i].first_child = NO_NODE
    t.nodes[i].next_sibling = NO_NODE
    t.nodes[i].action = action
    t.nodes[i].mover = mover
    return i


cdef int32 add_child(Tree* t, int32 parent, int action, int mover) except -1 nogil:
    cdef int32 c = new_node(t, action, mover)     # may move t.nodes: index, never hold pointers
    t.nodes[c].next_sibling = t.nodes[parent].first_child
    t.nodes[parent].first_child = c
    return c


cdef int32 find_child(const Tree* t, int32 parent, int action) noexcept nogil:
    cdef int32 c = t.nodes[parent].first_child
    while c != NO_NODE:
        if t.nodes[c].action == action:
            return c
        c = t.nodes[c].next_sibling
    return NO_NODE


cdef int set_root(Tree* t, const void* state) except -1 nogil:
    """Search from `state` with a fresh tree."""
    memcpy(t.root_state, state, t.vt.state_size)
    t.observer = t.vt.current_player(state)
    t.n_players = t.vt.num_players(state)
    t.size = 0
    t.iterations = 0
    new_node(t, -1, -1)
    return 0


cdef int32 copy_subtree(const Node* src, int32 s, Node* dst, int32* size) noexcept nogil:
    """Copy the subtree under src[s] into dst (breadth first); returns its new index."""
    cdef int32 d = size[0]
    cdef int32 head = d, c, prev, nc
    size[0] += 1
    memcpy(&dst[d], &src[s], sizeof(Node))
    dst[d].next_sibling = NO_NODE
    # queue = nodes already copied; their first_child still points into src
    while head < size[0]:
        c = dst[head].first_child
        prev = NO_NODE
        dst[head].first_child = NO_NODE
        while c != NO_NODE:
            nc = size[0]
            size[0] += 1
            memcpy(&dst[nc], &src[c], sizeof(Node))
            dst[nc].next_sibling = NO_NODE
            if prev == NO_NODE:
                dst[head].first_child = nc
            else:
                dst[prev].next_sibling = nc
            prev = nc
            c = src[c].next_sibling
        head += 1
    return d


cdef int reroot(Tree* t, const void* state, const int16* actions, int n_actions) except -1 nogil:
    """Keep the subtree reached by `actions` from the old root (tree reuse), with
    `state` as the new root; a fresh tree if the path is not in the tree."""
    cdef int32 node = 0, i, size = 0
    cdef Node* fresh
    if t.size == 0:
        return set_root(t, state)
    for i in range(n_actions):
        node = find_child(t, node, actions[i])
        if node == NO_NODE:
            return set_root(t, state)
    fresh = <Node*>malloc(t.capacity * sizeof(Node))
    if fresh == NULL:
        with gil:
            raise MemoryError("MCTS: cannot allocate the tree")
    copy_subtree(t.nodes, node, fresh, &size)
    free(t.nodes)
    t.nodes = fresh
    t.size = size
    t.nodes[0].action = -1
    t.nodes[0].mover = -1
    memcpy(t.root_state, state, t.vt.state_size)
    t.observer = t.vt.current_player(state)
    t.n_players = t.vt.num_players(state)
    t.iterations = 0
    return 0


cdef bint same_position(Tree* t, const void* state, const int16* actions, int n_actions,
                        int16* outcomes, int32* weights) noexcept nogil:
    """Whether `actions`, each legal in turn, lead from the last root to `state`: only
    then does the subtree they reach describe this position (a history says nothing of
    an edited state). Uses the scratch and root buffers; the caller resets the root."""
    cdef const GameVTable* vt = t.vt
    cdef int i, j, n, cp
    cdef bint found
    memcpy(t.scratch, t.root_state, vt.state_size)
    for i in range(n_actions):
        cp = vt.current_player(t.scratch)
        if cp == PLAYER_TERMINAL:
            return False
        if cp == PLAYER_CHANCE:
            n = vt.chance_outcomes(t.scratch, outcomes, weights)
        else:
            n = vt.legal_actions(t.scratch, outcomes)
        found = False
        for j in range(n):
            if outcomes[j] == actions[i] and (cp != PLAYER_CHANCE or weights[j] > 0):
                found = True
                break
        if not found:
            return False
        vt.apply_action(t.scratch, actions[i])
    # the RNG words are no part of the position: set them alike before comparing
    memcpy(t.root_state, state, vt.state_size)
    vt.reseed(t.scratch, 0, 0)
    vt.reseed(t.root_state, 0, 0)
    return memcmp(t.scratch, t.root_state, vt.state_size) == 0


# ---------------------------------------------------------------------------
# one iteration: select (expanding one node), roll out, back up
# ---------------------------------------------------------------------------

cdef inline int push_path(Tree* t, int depth, int32 node) except -1 nogil:
    if depth == t.path_capacity:
        grow_pool(<void**>&t.path, &t.path_capacity, sizeof(int32), b"the MCTS path")
    t.path[depth] = node
    return depth + 1


cdef void rewards(Tree* t, bint cut, double* r) noexcept nogil:
    """Rewards per seat of the scratch state (final, or the static evaluation at a cut-off)."""
    cdef double sc[MCTS_MAX_PLAYERS]
    cdef double best, beaten, top
    cdef int i, j, n = t.n_players
    if cut:
        t.vt.evaluate(t.scratch, r)
        return
    if t.params.reward_mode == REWARD_WIN:
        t.vt.returns(t.scratch, r)
        return
    t.vt.scores(t.scratch, sc)
    if t.params.reward_mode == REWARD_RANK:
        for i in range(n):
            beaten = 0.0
            for j in range(n):
                if j != i:
                    beaten += 1.0 if sc[i] > sc[j] else (0.5 if sc[i] == sc[j] else 0.0)
            r[i] = beaten / (n - 1)
        return
    top = 1.0
    for i in range(n):
        top = sc[i] if sc[i] > top else top
    for i in range(n):
        best = -1e300
        for j in range(n):
            if j != i and sc[j] > best:
                best = sc[j]
        r[i] = 0.5 + (sc[i] - best) / (2.0 * top)
        r[i] = 0.0 if r[i] < 0.0 else (1.0 if r[i] > 1.0 else r[i])


cdef int iterate(Tree* t) except -1 nogil:
    cdef const GameVTable* vt = t.vt
    cdef void* s = t.scratch
    cdef int32 node = 0, c, best_child
    cdef int depth = 0, cp, n, i, a = -1, untried, choice, decisions = 0
    cdef double r[MCTS_MAX_PLAYERS]
    cdef double value, best_value, log_avail
    cdef bint cut = False
    memcpy(s, t.root_state, vt.state_size)
    vt.reseed(s, rng_next(&t.rng), 0)            # chance in this iteration follows the search's seed
    if vt.determinize != NULL:
        vt.determinize(s, t.observer)            # one sample of what the observer cannot see
    depth = push_path(t, depth, 0)
    # selection and expansion
    while True:
        cp = vt.current_player(s)
        if cp == PLAYER_TERMINAL:
            break
        if cp == PLAYER_CHANCE:
            a = vt.sample_chance(s)
            c = find_child(t, node, a)
            if c == NO_NODE:
                c = add_child(t, node, a, -1)
            vt.apply_action(s, a)
            node = c
            depth = push_path(t, depth, node)
            continue
        n = vt.legal_actions(s, t.legal)
        if n == 0:                                # a decision without a legal action: score it here
            cut = True
            break
        if t.epoch == 0x7fffffff:                 # a long search: restart the stamps, never wrap
            memset(t.mark, 0, vt.num_actions * sizeof(int32))
            t.epoch = 0
        t.epoch += 1
        c = t.nodes[node].first_child
        while c != NO_NODE:
            t.mark[t.nodes[c].action] = t.epoch
            t.child_of[t.nodes[c].action] = c
            c = t.nodes[c].next_sibling
        untried = 0
        for i in range(n):
            if t.mark[t.legal[i]] != t.epoch:
                untried += 1
        if untried:
            choice = rng_below(&t.rng, untried)
            for i in range(n):
                if t.mark[t.legal[i]] != t.epoch:
                    if choice == 0:
                        a = t.legal[i]
                        break
                    choice -= 1
            c = add_child(t, node, a, cp)
            t.nodes[c].avail = 1
            vt.apply_action(s, a)
            node = c
            depth = push_path(t, depth, node)
            break
        # every legal action has a child: UCT over those legal here
        best_child = NO_NODE
        best_value = -1e300
        for i in range(n):
            c = t.child_of[t.legal[i]]
            t.nodes[c].avail += 1
        for i in range(n):
            c = t.child_of[t.legal[i]]
            log_avail = log(<double>t.nodes[c].avail)
            value = (t.nodes[c].reward[cp] / t.nodes[c].visits
                     + t.params.c * sqrt(log_avail / t.nodes[c].visits))
            if value > best_value:
                best_value = value
                best_child = c
        if best_child == NO_NODE:                 # every value NaN (a child left unvisited by an error)
            best_child = t.child_of[t.legal[0]]
        vt.apply_action(s, t.nodes[best_child].action)
        node = best_child
        depth = push_path(t, depth, node)
    # rollout: a plain random one is the game's own playout (its fast loop, the state's RNG,
    # which was seeded from the search's above)
    if not cut and t.params.rollout_mode == ROLLOUT_RANDOM and t.params.max_depth == 0:
        vt.random_playout(s)
    while not cut:
        cp = vt.current_player(s)
        if cp == PLAYER_TERMINAL:
            break
        if cp == PLAYER_CHANCE:
            vt.apply_action(s, vt.sample_chance(s))
            continue
        if t.params.max_depth > 0 and decisions >= t.params.max_depth:
            cut = True
            break
        n = vt.legal_actions(s, t.legal)
        if n == 0:                                # no legal action: stop rather than loop
            cut = True
            break
        if t.params.rollout_mode == ROLLOUT_HEURISTIC:
            a = vt.heuristic_action(s, t.legal, n)
        else:
            a = t.legal[rng_below(&t.rng, n)] if n > 1 else t.legal[0]
        vt.apply_action(s, a)
        decisions += 1
    rewards(t, cut, r)
    # backup (max-n: every node keeps every seat's reward)
    for i in range(depth):
        node = t.path[i]
        t.nodes[node].visits += 1
        for cp in range(t.n_players):
            t.nodes[node].reward[cp] += r[cp]
    t.iterations += 1
    return 0


cdef int64 run(Tree* t, int64 iterations, double deadline, int64 done, int64 slice_) except -1 nogil:
    """Iterate until `iterations` (if > 0) are done or the clock passes `deadline` (if > 0),
    or `t.stop` is set, at least one iteration in all (`done`: the run's iterations so far);
    with `slice_` > 0 return after that many more, so that the caller can look at its
    signals. Returns the run's iterations done."""
    cdef int64 end = done + slice_ if slice_ > 0 else -1
    if iterations <= 0 and deadline <= 0:
        iterations = 1
    while True:
        if done > 0 and (t.stop or (iterations > 0 and done >= iterations)
                         or (deadline > 0 and (done & 15) == 1 and now() >= deadline)):
            return -2 - done if slice_ > 0 else done       # finished (a sliced run says so by the sign)
        if done == end:
            return done
        iterate(t)
        done += 1


# The other trees of a search run on threads of their own, in C: no Python thread to start,
# no GIL to wait for while they search. A job is one tree's share of the search.
cdef extern from "<pthread.h>" nogil:
    ctypedef unsigned long pthread_t
    int pthread_create(pthread_t* thread, const void* attr, void* (*start)(void*) noexcept nogil, void* arg)
    int pthread_join(pthread_t thread, void** result)

ctypedef struct Job:
    Tree* tree
    int64 iterations
    double deadline
    PyObject* error                # the exception a worker met (a new reference), or NULL
    pthread_t thread
    bint started


cdef extern from *:
    """
    static int caribsim_mcts_workers = 0;   /* C search threads running now, in every forest */
    #define CARIBSIM_WORKERS_ADD(d) __atomic_add_fetch(&caribsim_mcts_workers, (d), __ATOMIC_SEQ_CST)
    """
    int WORKERS_ADD "CARIBSIM_WORKERS_ADD"(int d) nogil


def running_workers():
    """C search threads running now (0 whenever no search is under way: a search joins its
    threads before it returns or raises)."""
    return WORKERS_ADD(0)


cdef void* job_main(void* arg) noexcept nogil:
    cdef Job* j = <Job*>arg
    WORKERS_ADD(1)
    job_run(j)
    WORKERS_ADD(-1)
    return NULL

cdef void job_run(Job* j) noexcept with gil:
    """A worker's run; an exception (a pool that cannot grow) is kept for the caller."""
    try:
        with nogil:
            run(j.tree, j.iterations, j.deadline, 0, 0)
    except BaseException as e:
        Py_INCREF(e)
        j.error = <PyObject*>e


# ---------------------------------------------------------------------------
# Python-facing: a reusable set of root-parallel trees
# ---------------------------------------------------------------------------

REWARD_MODES = {"win": REWARD_WIN, "rank": REWARD_RANK, "score": REWARD_SCORE}
ROLLOUT_MODES = {"random": ROLLOUT_RANDOM, "heuristic": ROLLOUT_HEURISTIC}
MAX_THREADS = 64


cdef int check_state(GameState state) except -1:
    """A TypeError unless `state` was made by a game (its C interface is set up)."""
    if state is None:
        raise TypeError("state must be a caribsim game state, got None")
    if state.vtable == NULL or state.c_state() == NULL:
        raise TypeError("state must be a caribsim game state made by a game "
                        "(game.new_initial_state() or game.state_from_dict()), "
                        f"got an uninitialised {type(state).__name__}")
    return 0


def check_game_state(state):
    """Raise TypeError unless `state` is a caribsim state made by a game."""
    if not isinstance(state, GameState):
        raise TypeError(f"state must be a caribsim game state, got {type(state).__name__}")
    check_state(state)


cdef class Forest:
    """k independent trees over one game (root parallelism), kept between moves.

    One search at a time: a second concurrent call raises RuntimeError. The k trees of
    a search run on k threads without the GIL and are merged at the root. The arguments
    are checked here too (caribsim.mcts checks them first, with friendlier messages).
    """
    cdef Tree* trees
    cdef int k
    cdef const GameVTable* vt
    cdef readonly bint busy         # a search is running (set and cleared with the GIL held)
    cdef object root_history        # history of the last root searched (for reuse)
    cdef object game_key

    def __cinit__(self, GameState state, int threads, double c, str reward, str rollout,
                  int max_depth, uint64 seed):
        cdef SearchParams params
        cdef int i
        self.k = 0
        self.busy = True            # unusable until fully set up
        check_state(state)
        if not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be in 1..{MAX_THREADS}, got {threads}")
        if not (isfinite(c) and c >= 0):
            raise ValueError(f"c must be a finite number >= 0, got {c}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {sorted(REWARD_MODES)}, got {reward!r}")
        if rollout not in ROLLOUT_MODES:
            raise ValueError(f"rollout must be one of {sorted(ROLLOUT_MODES)}, got {rollout!r}")
        if max_depth < 0:
            raise ValueError(f"max_depth must be >= 0 (0: no cut-off), got {max_depth}")
        self.vt = state.vtable
        if self.vt.max_players > MCTS_MAX_PLAYERS:
            raise ValueError(f"the search supports up to {MCTS_MAX_PLAYERS} seats, "
                             f"this game has {self.vt.max_players}")
        params.c = c
        params.reward_mode = REWARD_MODES[reward]
        params.rollout_mode = ROLLOUT_MODES[rollout]
        params.max_depth = max_depth
        self.trees = <Tree*>malloc(threads * sizeof(Tree))
        if self.trees == NULL:
            raise MemoryError("MCTS: cannot allocate the trees")
        for i in range(threads):
            tree_init(&self.trees[i], self.vt, params, seed, <uint64>i + 1, 4096)
            self.k = i + 1
        self.root_history = None
        self.game_key = None
        self.busy = False

    def __dealloc__(self):
        cdef int i
        if self.trees != NULL:
            for i in range(self.k):
                tree_free(&self.trees[i])
            free(self.trees)

    def accepts(self, GameState state not None):
        """Whether `state` is of the game (C interface) this forest was made for."""
        return state.vtable == self.vt

    def search(self, GameState state, long long iterations, double seconds, bint reuse):
        """Search `state` (a decision node) for `iterations` (> 0) and/or `seconds` (> 0),
        at least one iteration; returns (action, {action: (visits, mean reward)},
        iterations, nodes, seconds)."""
        check_state(state)
        if state.vtable != self.vt:
            raise ValueError("this search was made for another game")
        if iterations < 0:
            raise ValueError(f"iterations must be >= 0 (0: no limit), got {iterations}")
        if not (isfinite(seconds) and seconds >= 0):
            raise ValueError(f"seconds must be a finite number >= 0 (0: no limit), got {seconds}")
        if iterations == 0 and seconds == 0:
            raise ValueError("give a budget: iterations > 0 and/or seconds > 0")
        cp = self.vt.current_player(state.c_state())
        if cp < 0:
            raise ValueError("can only search a decision node, not a "
                             f"{'chance' if cp == PLAYER_CHANCE else 'terminal'} node")
        if self.busy:
            raise RuntimeError("this search is in use by another thread; "
                               "use one searcher per thread")
        self.busy = True
        try:
            return self._search(state, iterations, seconds, reuse)
        finally:
            self.busy = False

    cdef _search(self, GameState state, long long iterations, double seconds, bint reuse):
        cdef int i, j, n_new
        cdef void* cs = state.c_state()
        cdef int16* path = NULL
        cdef int16* outcomes = NULL
        cdef int32* weights = NULL
        cdef bint keep = False
        history = state.history()
        key = state.game
        new_actions = None
        if reuse and self.root_history is not None and key == self.game_key \
                and len(history) >= len(self.root_history) \
                and history[:len(self.root_history)] == self.root_history:
            new_actions = history[len(self.root_history):]
        # the history is forgotten first: an error below leaves no stale root to reuse
        self.root_history = None
        if new_actions is not None:
            n_new = len(new_actions)
            j = self.vt.num_actions if self.vt.num_actions > self.vt.max_chance_outcomes \
                else self.vt.max_chance_outcomes
            path = <int16*>malloc((n_new + 1) * sizeof(int16))
            outcomes = <int16*>malloc(j * sizeof(int16))
            weights = <int32*>malloc(j * sizeof(int32))
            try:
                if path == NULL or outcomes == NULL or weights == NULL:
                    raise MemoryError("MCTS: cannot allocate the reuse path")
                for j in range(n_new):
                    path[j] = new_actions[j]
                keep = same_position(&self.trees[0], cs, path, n_new, outcomes, weights)
                for i in range(self.k):
                    if keep:
                        reroot(&self.trees[i], cs, path, n_new)
                    else:
                        set_root(&self.trees[i], cs)
            finally:
                free(path)
                free(outcomes)
                free(weights)
        else:
            for i in range(self.k):
                set_root(&self.trees[i], cs)
        self.root_history = history
        self.game_key = key
        # a tree whose share of the iterations is 0 does not run (0 is no limit in run())
        active = self.k if iterations == 0 else min(self.k, iterations)
        per_tree = [iterations // active + (1 if i < iterations % active else 0) for i in range(active)]
        for i in range(self.k):
            self.trees[i].stop = 0
        t0 = time.perf_counter()
        self._run_all(per_tree, seconds)
        elapsed = time.perf_counter() - t0
        return self._merge(elapsed)

    cdef _run_all(self, list per_tree, double seconds):
        """Tree 0 on this thread, the others on C threads. This thread runs its tree in slices
        and looks at its signals between them: on Ctrl-C every tree stops within an iteration
        and every worker is joined before the KeyboardInterrupt goes on."""
        cdef int i, k = len(per_tree)
        cdef double deadline = now() + seconds if seconds > 0 else 0.0
        cdef int64 own = per_tree[0], done = 0
        cdef Job* jobs = <Job*>calloc(k, sizeof(Job))
        cdef bint failed = False
        if jobs == NULL:
            raise MemoryError("MCTS: cannot allocate the threads' jobs")
        try:
            for i in range(1, k):
                jobs[i].tree = &self.trees[i]
                jobs[i].iterations = per_tree[i]
                jobs[i].deadline = deadline
            with nogil:
                for i in range(1, k):
                    if pthread_create(&jobs[i].thread, NULL, job_main, &jobs[i]) != 0:
                        failed = True
                        break
                    jobs[i].started = True
            if failed:
                raise RuntimeError("MCTS: cannot start a search thread")
            while True:                # about 1 ms of iterations per slice
                with nogil:
                    done = run(&self.trees[0], own, deadline, done, 64)
                PyErr_CheckSignals()
                if done < 0:
                    break
        except BaseException:
            for i in range(k):
                self.trees[i].stop = 1
            raise
        finally:
            with nogil:
                for i in range(1, k):
                    if jobs[i].started:
                        pthread_join(jobs[i].thread, NULL)
            error = None
            for i in range(1, k):
                if jobs[i].error != NULL:
                    if error is None:
                        error = <object>jobs[i].error
                    Py_XDECREF(jobs[i].error)
            free(jobs)
            if error is not None:
                raise error

    cdef _merge(self, double elapsed):
        cdef int i, observer = self.trees[0].observer
        cdef int32 c
        cdef Tree* t
        visits = {}
        rewards_sum = {}
        total_iterations = 0
        nodes = 0
        for i in range(self.k):
            t = &self.trees[i]
            total_iterations += t.iterations
            nodes += t.size
            c = t.nodes[0].first_child
            while c != NO_NODE:
                a = t.nodes[c].action
                visits[a] = visits.get(a, 0) + t.nodes[c].visits
                rewards_sum[a] = rewards_sum.get(a, 0.0) + t.nodes[c].reward[observer]
                c = t.nodes[c].next_sibling
        stats = {a: (visits[a], rewards_sum[a] / visits[a] if visits[a] else 0.0) for a in sorted(visits)}
        # the most visited action; ties by the mean reward, then the lowest id
        best = max(stats, key=lambda a: (stats[a][0], stats[a][1], -a)) if stats else None
        return best, stats, total_iterations, nodes, elapsed


NODE_BYTES = sizeof(Node)
