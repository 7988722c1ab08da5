"""OpenBLAS on one thread while the search runs: the guided search's evaluator calls are
small matrix products (a few dozen rows), which BLAS threads only slow down, by 5 to 50
times on a busy 2-core machine (measured: 16 self-play games, 0.6 s on one thread, 4-30 s
on the default two). Set through the loaded library, as ``OPENBLAS_NUM_THREADS=1`` would,
and restored after; where numpy's BLAS is not OpenBLAS nothing is changed."""

from __future__ import annotations

import contextlib
import ctypes


def _openblas():
    """(get, set) of the loaded OpenBLAS's thread count, or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted(
                {line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line}
            )
    except OSError:
        return None
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
                return get, put
    return None


@contextlib.contextmanager
def one_thread():
    """OpenBLAS on one thread inside the block (the count before restored after); yields
    the count set, 1, or "unknown" where numpy's BLAS is not an OpenBLAS this can reach."""
    blas = _openblas()
    if blas is None:
        yield "unknown"
        return
    get, put = blas
    before = get()
    put(1)
    try:
        yield 1
    finally:
        put(before)
