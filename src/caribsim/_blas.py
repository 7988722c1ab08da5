"""OpenBLAS on one thread while the search runs: the guided search's evaluator calls are
small matrix products (a few dozen rows), which BLAS threads only slow down, by 5 to 50
times on a busy 2-core machine (measured: 16 self-play games, 0.6 s on one thread, 4-30 s
on the default two). Set through the loaded library, as ``OPENBLAS_NUM_THREADS=1`` would,
and restored after; where numpy's BLAS is not OpenBLAS nothing is changed.

``one_thread()`` is what every search that calls a Python evaluator holds while it runs
(``guided.BatchSearch.run``, so ``AlphaZeroBot`` and self-play too; the training loop
around its stages). The library is looked up once (``/proc/self/maps``, then its
functions), so a block costs two calls into OpenBLAS. Blocks nest and may be held by
several threads at once: the first to enter sets one thread, the last to leave restores
the count it found."""

from __future__ import annotations

import contextlib
import ctypes
import threading

_LOCK = threading.Lock()
_FOUND: list = []  # [(get, set) or None] once looked up
_HELD = [0, 0]  # blocks held now, the thread count found by the first


def _openblas():
    """(get, set) of the loaded OpenBLAS's thread count, or None (looked up once)."""
    if _FOUND:
        return _FOUND[0]
    try:
        with open("/proc/self/maps") as f:
            paths = sorted(
                {line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line}
            )
    except OSError:
        paths = []
    found = None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", ""), ("openblas", "64_")):
            get, put = (
                getattr(lib, f"{prefix}_{v}_num_threads{suffix}", None) for v in ("get", "set")
            )
            if get is not None and put is not None:
                found = (get, put)
                break
        if found is not None:
            break
    _FOUND.append(found)
    return found


@contextlib.contextmanager
def one_thread():
    """OpenBLAS on one thread inside the block (the count before restored after the last
    block held leaves); yields the count set, 1, or "unknown" where numpy's BLAS is not an
    OpenBLAS this can reach."""
    with _LOCK:
        blas = _openblas()
        if blas is not None:
            if _HELD[0] == 0:
                _HELD[1] = blas[0]()
                blas[1](1)
            _HELD[0] += 1
    if blas is None:
        yield "unknown"
        return
    try:
        yield 1
    finally:
        with _LOCK:
            _HELD[0] -= 1
            if _HELD[0] == 0:
                blas[1](_HELD[1])
