"""Running a study in chunks: in this process, in local worker processes, or on Ray.

A run (``caribsim.simulate``, ``caribsim.arena.play_match``, ``caribsim.selfplay.generate``)
is cut into chunks of consecutive games. A chunk is one task: a module-level function of a
small picklable spec that returns a dict of numpy arrays. Game ``g`` of a run draws its
randomness from ``(seed, g)`` only, so a chunk's result depends only on its spec and the
merged result is the same on every backend, for every number of workers and chunk size.

Backends
    ``local``      the chunks run one after another in this process.
    ``processes``  a pool of local worker processes (``workers`` of them, default: the CPUs).
    ``ray``        tasks on a Ray cluster: ``address=None`` starts a local Ray instance with
                   ``workers`` CPUs (default: all), ``address="auto"`` or ``"ray://host:10001"``
                   joins an existing cluster (caribsim must be installed on every node).

Fault tolerance
    A worker process that dies (killed, out of memory, its machine lost) has its chunk run
    again: the process pool is rebuilt and Ray retries the task, up to ``retries`` times. A
    chunk's result is merged once, by its index, so no game is lost or counted twice.
    With ``resume=DIR`` every finished chunk is written to DIR as it arrives (next to a
    ``run.json`` that says what the run is); running the same call again with the same DIR
    loads those chunks and runs only the missing ones. A DIR holding another run is refused.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import time
import zipfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import numpy as np

from caribsim._common import _read_json_file

BACKENDS = ("local", "processes", "ray")
_UMASK = os.umask(0o022)
os.umask(_UMASK)
FAULT_ENV = (
    "CARIBSIM_FAULT_KILL"  # "CHUNK:MARKER": the worker running CHUNK kills itself once (tests)
)


@dataclass(frozen=True)
class Chunk:
    """Games ``first .. first + count - 1`` of a run."""

    index: int
    first: int
    count: int


def plan_chunks(n_games: int, chunk_size: int) -> list[Chunk]:
    """Consecutive chunks of ``chunk_size`` games (the last one may be shorter)."""
    return [
        Chunk(i, first, min(chunk_size, n_games - first))
        for i, first in enumerate(range(0, n_games, chunk_size))
    ]


def default_chunk_size(
    n_games: int, workers: int, minimum: int = 1, maximum: int | None = None
) -> int:
    """About four chunks per worker (balances the load and bounds the work lost to a
    failure), at least ``minimum`` games (task overhead) and at most ``maximum``."""
    size = max(minimum, math.ceil(n_games / (4 * max(workers, 1))))
    if maximum is not None:
        size = min(size, maximum)
    return max(1, min(size, n_games))


def check_backend(backend: str, workers, address, retries) -> None:
    """Validate the backend options (ValueError / TypeError naming what is allowed)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int):
            raise TypeError(f"workers must be an int or None, got {type(workers).__name__}")
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
    if address is not None:
        if backend != "ray":
            raise ValueError(f"address= is for backend='ray', not {backend!r}")
        if not isinstance(address, str) or not address:
            raise TypeError(
                f"address must be a non-empty str (e.g. 'auto' or 'ray://host:10001'), got {address!r}"
            )
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be an int >= 0, got {retries!r}")


# --------------------------------------------------------------------------------------
# finished chunks on disk
# --------------------------------------------------------------------------------------
class ChunkStore:
    """A folder of finished chunks: ``run.json`` (what the run is) and one ``.npz`` per chunk.

    Files are written to a temporary name and renamed, so a chunk file is either whole or
    absent, even when the run is killed while writing it.
    """

    def __init__(self, path, run: dict, prefix: str = "chunk", compress: bool = False):
        self.path = os.fspath(path)
        self.prefix = prefix
        self.compress = compress
        self._pattern = re.compile(rf"^{re.escape(prefix)}_(\d{{6}})\.npz$")
        run = json.loads(json.dumps(run))  # what a reload will compare against
        os.makedirs(self.path, exist_ok=True)
        run_file = os.path.join(self.path, "run.json")
        if os.path.exists(run_file):
            stored = _read_json_file(run_file, "run file", ValueError)
            if not isinstance(stored, dict):
                raise ValueError(f"{run_file} is not a caribsim run file; use an empty folder")
            if stored != run:
                keys = sorted(k for k in set(stored) | set(run) if stored.get(k) != run.get(k))
                raise ValueError(
                    f"{self.path} holds chunks of another run (differs in {', '.join(keys)}); "
                    f"resume it with the same arguments or use an empty folder"
                )
        else:
            stray = [n for n in os.listdir(self.path) if self._pattern.match(n)]
            if stray:
                raise ValueError(
                    f"{self.path} has chunk files but no run.json; use an empty folder"
                )
            self._write_atomic(run_file, lambda f: f.write(json.dumps(run, indent=2).encode()))

    def file(self, index: int) -> str:
        return os.path.join(self.path, f"{self.prefix}_{index:06d}.npz")

    def done(self) -> set[int]:
        """Indices of the chunks already on disk."""
        out = set()
        for name in os.listdir(self.path):
            m = self._pattern.match(name)
            if m:
                out.add(int(m.group(1)))
        return out

    def load(self, index: int) -> dict:
        try:
            with np.load(self.file(index), allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
            raise ValueError(
                f"cannot load the finished chunk {self.file(index)} ({e}); "
                f"delete it to run that chunk again"
            ) from None

    def save(self, index: int, arrays: dict) -> None:
        save = np.savez_compressed if self.compress else np.savez
        self._write_atomic(self.file(index), lambda f: save(f, **arrays))

    def _write_atomic(self, path: str, write) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the usual mode
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


# --------------------------------------------------------------------------------------
# progress over the whole run
# --------------------------------------------------------------------------------------
class Progress:
    """A progress line on stderr (``enabled``) and/or a callback ``fn(done_games, total_games)``."""

    def __init__(self, total_games: int, total_chunks: int, workers: int, progress, stream=None):
        self.total, self.chunks, self.workers = total_games, total_chunks, workers
        self.fn = progress if callable(progress) else None
        self.enabled = bool(progress) and not callable(progress)
        self.stream = stream or sys.stderr
        self.games = self.done_chunks = self.new_games = 0
        self.t0 = time.perf_counter()

    def add(self, games: int, resumed: bool = False) -> None:
        self.games += games
        self.done_chunks += 1
        if not resumed:
            self.new_games += games
        if self.enabled:
            rate = self.new_games / max(time.perf_counter() - self.t0, 1e-9)
            self.stream.write(
                f"\r  {self.games:,}/{self.total:,} games  {self.done_chunks}/{self.chunks} chunks  "
                f"{self.workers} worker{'s' if self.workers != 1 else ''}  {rate:,.0f} games/s "
            )
            if self.games == self.total:
                self.stream.write("\n")
            self.stream.flush()
        if self.fn is not None:
            self.fn(self.games, self.total)


# --------------------------------------------------------------------------------------
# running chunks
# --------------------------------------------------------------------------------------
@dataclass
class RunInfo:
    """How a run went: the backend, its workers, the chunks run now and loaded from disk."""

    backend: str
    workers: int
    chunks: int
    resumed_chunks: int
    seconds: float


def _run_task(task, spec, fault):
    """What a worker runs: the chunk's task (``fault``: the test hook of FAULT_ENV)."""
    if fault:
        chunk, _, marker = fault.partition(":")
        if int(chunk) == spec["chunk"] and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)  # die as a lost worker does: no cleanup, no reply
    return task(spec)


def run_chunks(
    task,
    specs: list,
    *,
    backend: str = "local",
    workers=None,
    address=None,
    store: ChunkStore | None = None,
    progress=None,
    retries: int = 3,
    games_key: str = "count",
) -> tuple[list, RunInfo]:
    """Run ``task(spec)`` for every spec (each has a ``chunk`` index and ``games_key`` games)
    and return the results in spec order, with how the run went.

    Chunks found in ``store`` are loaded, the others run on the backend and are saved to
    ``store`` as they finish. ``progress``: True for a progress line on stderr, or a
    callable ``fn(done_games, total_games)`` called after every chunk.
    """
    check_backend(backend, workers, address, retries)
    n_workers = worker_count(backend, workers, address)  # connects to Ray: not timed
    t0 = time.perf_counter()
    results: list = [None] * len(specs)
    by_index = {spec["chunk"]: pos for pos, spec in enumerate(specs)}
    done = store.done() & set(by_index) if store is not None else set()
    bar = Progress(sum(s[games_key] for s in specs), len(specs), n_workers, progress)
    if store is not None:  # (without a store nothing is done yet)
        for i in sorted(done):
            results[by_index[i]] = store.load(i)
            bar.add(specs[by_index[i]][games_key], resumed=True)

    def finished(i, result):
        pos = by_index[i]
        if results[pos] is not None:  # a retried chunk that also finished: merge once
            return
        if store is not None:
            store.save(i, result)
        results[pos] = result
        bar.add(specs[pos][games_key])

    pending = [s for s in specs if s["chunk"] not in done]
    fault = os.environ.get(FAULT_ENV) or None
    if backend == "local":
        for spec in pending:
            finished(spec["chunk"], task(spec))
    elif backend == "processes":
        _run_processes(task, pending, n_workers, fault, retries, finished)
    else:
        _run_ray(task, pending, fault, retries, finished)
    return results, RunInfo(backend, n_workers, len(pending), len(done), time.perf_counter() - t0)


def worker_count(backend: str, workers=None, address=None) -> int:
    """How many chunks run at once: 1 locally, the processes, or the Ray cluster's CPUs."""
    if backend == "local":
        return 1
    if backend == "processes":
        return workers or os.cpu_count() or 1
    ray = ray_connect(address, workers)
    return int(ray.cluster_resources().get("CPU", 1))


def _run_processes(task, pending, workers, fault, retries, finished) -> None:
    # fork is fastest, but not from a process whose Ray threads are running
    ray_up = "ray" in sys.modules and sys.modules["ray"].is_initialized()
    ctx = multiprocessing.get_context(
        "fork" if sys.platform.startswith("linux") and not ray_up else "spawn"
    )
    todo = {spec["chunk"]: spec for spec in pending}
    breaks = 0
    while todo:
        pool = ProcessPoolExecutor(min(workers, len(todo)), mp_context=ctx)
        try:
            futures = {pool.submit(_run_task, task, spec, fault): i for i, spec in todo.items()}
            while futures:
                ready, _ = wait(futures, return_when=FIRST_COMPLETED)
                for fut in ready:
                    i = futures.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        continue  # a worker died: its chunks run again below
                    finished(i, result)
                    del todo[i]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if todo:
            breaks += 1
            if breaks > retries:
                raise RuntimeError(
                    f"worker processes died {breaks} times; gave up with {len(todo)} chunks "
                    f"not run (retries={retries}; finished chunks are kept with resume=DIR)"
                )


# --------------------------------------------------------------------------------------
# Ray
# --------------------------------------------------------------------------------------
def _ray():
    try:
        import ray
    except ImportError:
        raise RuntimeError("backend='ray' needs Ray: pip install 'caribsim[ray]'") from None
    return ray


def ray_connect(address=None, workers=None):
    """Connect to Ray once per process: a local instance (``workers`` CPUs, default all)
    when ``address`` is None, else the cluster at ``address``. Returns the ``ray`` module."""
    ray = _ray()
    if not ray.is_initialized():
        import logging

        kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        if address is None:
            ray.init(num_cpus=workers or os.cpu_count() or 1, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    return ray


def _run_ray(task, pending, fault, retries, finished) -> None:
    ray = _ray()
    remote = ray.remote(num_cpus=1, max_retries=retries)(_run_task)
    window = 4 * int(ray.cluster_resources().get("CPU", 1))  # bounds the results held at once
    queue = list(reversed(pending))
    running: dict[Any, int] = {}  # a Ray object ref -> its chunk's index
    try:
        while queue or running:
            while queue and len(running) < window:
                spec = queue.pop()
                running[remote.remote(task, spec, fault)] = spec["chunk"]
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                i = running.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    raise e.as_instanceof_cause() from None  # the task's own exception
                except ray.exceptions.RayError as e:
                    raise RuntimeError(f"chunk {i} failed after {retries} retries: {e}") from None
                finished(i, result)
    except BaseException:
        for ref in running:
            ray.cancel(ref, force=True)
        raise
