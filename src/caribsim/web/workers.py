"""The threads that run the server's searches: a bounded pool shared fairly by the games.

Each game (a key) has a queue of jobs; the pool's ``workers`` threads take the keys in turn
(round robin), one slice of one job of a key at a time, so a game with a long search never
holds a worker for long while another waits: an MCTS move is a series of slices of at most
``Policy.slice_seconds`` (its tree kept between them: the same search as one call), each
followed by the next game's. Other jobs (a random, greedy or guided bot's move, a hint, the
making of a new game) run whole. Nothing here runs on the event loop; each job's answer is an
asyncio future of the loop that asked for it.

    pool = Pool(policy)
    action = await pool.move(game.id, bot, state.clone(), stale=lambda: ...)
    found = await pool.submit(game.id, lambda: hint(...))
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import time
import weakref

from caribsim.search import bots as bot_specs
from caribsim.search import mcts
from caribsim.search._mcts import Forest

log = logging.getLogger("caribsim.web")
IDLE_SECONDS = 10.0  # a worker with nothing to do for this long ends (another starts when needed)
STALE = object()  # a move's answer when its position changed before it was found


class Sliced:
    """A job run in slices: ``step()`` does one slice and returns ``(done, value)``."""

    def step(self):  # pragma: no cover - abstract
        raise NotImplementedError


class _Job:
    def __init__(self, loop: asyncio.AbstractEventLoop, work) -> None:
        self.loop, self.work = loop, work
        self.future: asyncio.Future = loop.create_future()
        self.cancelled = False  # set on the loop when the future is cancelled; read by workers
        self.future.add_done_callback(self._done)

    def _done(self, future):
        if future.cancelled():
            self.cancelled = True

    def finish(self, value=None, error: BaseException | None = None) -> None:
        def settle():
            if not self.future.done():
                if error is None:
                    self.future.set_result(value)
                else:
                    self.future.set_exception(error)

        with contextlib.suppress(RuntimeError):  # a closed loop: no one waits any more
            self.loop.call_soon_threadsafe(settle)


class Pool:
    """At most ``policy.workers`` threads running the jobs of the keys in turn; a key's jobs
    run one at a time, in order. Threads start when there is work and end when idle."""

    def __init__(self, policy, idle: float = IDLE_SECONDS):
        self.policy, self.size, self.idle = policy, policy.workers, idle
        self._cv = threading.Condition()
        self._jobs: dict[object, collections.deque[_Job]] = {}
        self._ring: collections.deque = collections.deque()  # keys with a job to run, in turn
        self._queued: set = set()
        self._running: set = set()  # keys a worker runs a slice of now
        self._threads = self._waiting = 0
        self._generation = 0  # close() ends the threads of the current one
        self._forests: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # bot -> tree
        self._forests_lock = threading.Lock()

    # --- asking ---------------------------------------------------------------------------
    def submit(self, key, work) -> asyncio.Future:
        """Run ``work`` (a callable, or a ``Sliced``) as a job of ``key``; the future of its
        value (or its exception). Called on the event loop; cancelling the future drops the
        job before its next slice."""
        return self._submit(key, work).future

    def _submit(self, key, work) -> _Job:
        job = _Job(asyncio.get_running_loop(), work)
        with self._cv:
            self._jobs.setdefault(key, collections.deque()).append(job)
            self._ready(key)
            if self._threads < self.size and self._waiting < len(self._ring):
                self._threads += 1
                threading.Thread(
                    target=self._work, args=(self._generation,), name="caribsim-bots", daemon=True
                ).start()
        return job

    def move(self, key, bot, state, stale=lambda: False) -> asyncio.Future:
        """The future of ``bot``'s action at ``state`` (a clone the job owns): an MCTS bot in
        slices within the policy's budget (``Policy.move_budget``, its seconds counted from
        now), another bot in one job; ``STALE`` when ``stale()`` turned true first."""
        if not isinstance(bot, bot_specs.MCTSBot):
            return self.submit(key, _Whole(bot, state, stale))
        iterations, seconds = self.policy.move_budget(bot)
        work = _SlicedMCTS(self, bot, state, iterations, time.monotonic() + seconds, stale)
        job = self._submit(key, work)
        future = job.future
        # at its deadline a move waiting for its next slice is answered from the slices done,
        # on the loop: the other games' slices (a guided search's whole run) do not delay it
        handle = job.loop.call_later(seconds, self._expire, key, job)
        future.add_done_callback(lambda _: handle.cancel())
        return future

    def _expire(self, key, job: _Job) -> None:
        with self._cv:
            queue = self._jobs.get(key)
            if job.future.done() or not queue or job not in queue:
                return
            if queue[0] is job and key in self._running:
                return  # a worker runs its slice, which ends at the deadline
            action = job.work.action
            if action is None:
                return  # not one slice yet: it gets one, of the time left
            queue.remove(job)
        job.future.set_result(action)

    def forget(self, bots) -> None:
        """Drop the search trees kept for ``bots`` (a game whose bots stop moving: a person to
        act, the end): a game waiting holds no tree, so the memory is that of the moves being
        searched."""
        with self._forests_lock:
            for bot in bots:
                self._forests.pop(bot, None)

    def pending(self) -> int:
        """Jobs waiting or running."""
        with self._cv:
            return sum(len(q) for q in self._jobs.values())

    def close(self) -> None:
        """Drop every job (their futures cancelled) and end the threads after their slice; a
        later ``submit`` starts new ones."""
        with self._cv:
            jobs = [job for q in self._jobs.values() for job in q]
            self._jobs.clear()
            self._ring.clear()
            self._queued.clear()
            self._generation += 1
            self._cv.notify_all()
        for job in jobs:
            job.cancelled = True
            with contextlib.suppress(RuntimeError):  # its loop is closed
                job.loop.call_soon_threadsafe(job.future.cancel)

    # --- the workers ----------------------------------------------------------------------
    def _ready(self, key) -> None:
        if key not in self._queued and key not in self._running and self._jobs.get(key):
            self._ring.append(key)
            self._queued.add(key)
            self._cv.notify()

    def _work(self, generation: int) -> None:
        while True:
            with self._cv:
                while not self._ring and generation == self._generation:
                    self._waiting += 1
                    woken = self._cv.wait(self.idle)
                    self._waiting -= 1
                    if not woken and not self._ring:
                        break
                if not self._ring or generation != self._generation:
                    self._threads -= 1
                    return
                key = self._ring.popleft()
                self._queued.discard(key)
                queue = self._jobs.get(key)
                if not queue:  # its jobs were answered meanwhile (a deadline)
                    self._jobs.pop(key, None)
                    continue
                self._running.add(key)
                job = queue[0]
            done, value, error = self._slice(job)
            with self._cv:
                self._running.discard(key)
                queue = self._jobs.get(key)
                if queue and done and queue[0] is job:
                    queue.popleft()
                if queue is not None and not queue:
                    del self._jobs[key]
                self._ready(key)
            if done and not job.cancelled:
                job.finish(value, error)

    @staticmethod
    def _slice(job: _Job):
        """One slice of ``job``: (done, value, error); a failure is the job's answer, never the
        worker's end."""
        if job.cancelled:
            return True, None, None
        try:
            if isinstance(job.work, Sliced):
                done, value = job.work.step()
                return done, value, None
            return True, job.work(), None
        except Exception as e:
            return True, None, e


class _Whole(Sliced):
    """A bot's move in one slice (random, greedy, a guided search)."""

    def __init__(self, bot, state, stale):
        self.bot, self.state, self.stale = bot, state, stale

    def step(self):
        if self.stale():
            return True, STALE
        return True, self.bot.step(self.state)


class _SlicedMCTS(Sliced):
    """An MCTSBot's move as slices of one tree: each slice searches on for at most the
    policy's ``slice_seconds`` (and the iterations left); the move ends at its iterations or
    at its deadline, whichever comes first, after one iteration at least. The tree is the
    bot's own (kept between its moves as its ``reuse`` says), so the move is the one search
    ``MCTSBot.step`` makes with the same seed when the iterations end it. The tree is kept
    while the game's bots move one after another; when they stop the game drops it
    (``Pool.forget``)."""

    def __init__(self, pool: Pool, bot, state, iterations: int, deadline: float, stale):
        self.pool, self.bot, self.state, self.stale = pool, bot, state, stale
        self.iterations, self.deadline, self.done = iterations, deadline, 0
        self.forest = None
        self.action = None  # the best move of the slices so far

    def step(self):
        if self.stale():
            return True, STALE
        if self.forest is None:
            legal = self.bot._legal(self.state)
            if len(legal) == 1:
                return True, legal[0]
            self.forest = self._forest()
            reuse = bool(self.bot.options.get("reuse", True))
        else:
            reuse = True  # the slices of one move grow one tree
        left = max(self.deadline - time.monotonic(), 1e-4)
        action, _, iterations, _, _ = self.forest.search(
            self.state,
            self.iterations - self.done,
            min(self.pool.policy.slice_seconds, left),
            reuse,
        )
        self.done += iterations
        self.action = action
        if self.done >= self.iterations or time.monotonic() >= self.deadline:
            if action is None:  # cannot happen after one iteration at a decision node
                raise RuntimeError("the search found no action at the root")
            return True, action
        return False, None

    def _forest(self):
        with self.pool._forests_lock:
            forest = self.pool._forests.get(self.bot)
        if forest is None or not forest.accepts(self.state):
            o = self.bot.options
            _, _, c, reward, rollout, max_depth, threads, seed = mcts._check_options(
                self.iterations,
                None,
                o.get("c", 1.4),
                o.get("reward", "win"),
                o.get("rollout", "random"),
                o.get("max_depth"),
                o.get("threads", 1),
                self.bot.seed,
            )
            forest = Forest(self.state, threads, c, reward, rollout, max_depth, seed)
            with self.pool._forests_lock:
                self.pool._forests[self.bot] = forest
        return forest


_shared: Pool | None = None


def shared() -> Pool:
    """A pool of the default policy, for a game driven without an app's pool."""
    global _shared
    if _shared is None:
        from caribsim.web.limits import Policy

        _shared = Pool(Policy())
    return _shared
