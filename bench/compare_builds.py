"""Old build against new, in one process: random playouts in C and the Python loop.

A speed-up (or a check that a change costs nothing) is measured against the previous
module in the same process, in alternating rounds (old first in even rounds, new first in
odd ones; CPU time), and given as the median of the per-round ratios new/old, so that a
machine that is busy or slower for a while moves both sides of a round alike.

    # build the older commit's game modules somewhere
    git worktree add --detach /tmp/old <commit> && (cd /tmp/old && python setup.py build_ext --inplace)
    python bench/compare_builds.py --old /tmp/old/src/caribsim [--rounds 9]

``--old`` is a folder holding the older build's game modules (``_puerto_rico*.so``, ...,
the single-module layout before the split into ``_core``/``_state``, or the same layout as
today's: ``puerto_rico/_state*.so``). They are loaded under their own names beside today's
modules. When the folder also holds the older ``_game*.so`` (and ``<game>/_core*.so``), the
older state module is bound to those (C classes and functions are imported by module name
at load time: the older ones stand in ``sys.modules`` while it loads), so the older commit
may have another ``_game.pxd``; without them it uses today's, which must then be the same.

Workloads per game: random playouts in C (games/s), the Python loop (decisions/s of
``legal_actions``, ``random.choice``, ``apply_action``, ``resolve_chance``) and
``state.child(a)`` over the positions of a game (calls/s); ``--only mcts``: UCT from the
Puerto Rico 3p opening (simulations/s, 1 and 2 threads, wall time), the older ``_mcts``
bound to the older ``_game``.
"""

from __future__ import annotations

import os

# numpy's OpenBLAS threads would spin beside the workloads and count in the CPU time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import functools
import importlib.machinery
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path

import caribsim

GAMES = {
    "puerto_rico": (
        "PuertoRicoState",
        [{"players": 3}, {"players": 5}, {"players": 4, "expansion": True}],
    ),
    "port_royal": ("PortRoyalState", [{"players": 3}]),
    "cuba": ("CubaState", [{"players": 4}]),
}


def _load(name: str, path: Path):
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _older(folder: Path, pattern: str):
    found = sorted(folder.glob(pattern))
    return found[0] if found else None


def load_old(folder: Path, game: str):
    """The older build's state module of ``game``, loaded under its own name (bound to the
    older ``_game`` and ``_core`` when the folder has them)."""
    for pattern, candidate in (
        (f"_{game}.*.so", f"caribsim._{game}"),
        (f"{game}/_state.*.so", f"caribsim.{game}._state"),
    ):
        found = _older(folder, pattern)
        if found:
            name = candidate
            break
    else:
        raise SystemExit(
            f"--old {folder}: no build of {game} there (_{game}*.so or {game}/_state*.so)"
        )
    importlib.import_module(f"caribsim.{game}")  # today's modules first: they keep their names
    stand_ins = [
        (n, p)
        for n, p in (
            ("caribsim._game", _older(folder, "_game.*.so")),
            (f"caribsim.{game}._core", _older(folder, f"{game}/_core.*.so")),
        )
        if p
    ]
    saved = {n: sys.modules.get(n) for n, _ in stand_ins}
    try:
        for n, p in stand_ins:
            sys.modules[n] = (
                _OLD_SHARED[p] if p in _OLD_SHARED else _OLD_SHARED.setdefault(p, _load(n, p))
            )
        return _load(name, found)
    finally:
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


_OLD_SHARED = {}  # path -> the older shared module, loaded once for every game


def load_old_mcts(folder: Path):
    """The older build's UCT module (``_mcts*.so`` or ``search/_mcts*.so``), bound to the older
    ``_game`` when the folder has it; None when the folder holds no search module."""
    found = _older(folder, "_mcts.*.so") or _older(folder, "search/_mcts.*.so")
    if found is None:
        return None
    import caribsim.search._mcts  # noqa: F401  (today's first: it keeps its name)

    game_so = _older(folder, "_game.*.so")
    saved = sys.modules.get("caribsim._game")
    try:
        if game_so:
            sys.modules["caribsim._game"] = (
                _OLD_SHARED[game_so]
                if game_so in _OLD_SHARED
                else _OLD_SHARED.setdefault(game_so, _load("caribsim._game", game_so))
            )
        name = "caribsim._mcts" if found.parent == folder else "caribsim.search._mcts"
        return _load(name, found)
    finally:
        sys.modules["caribsim._game"] = saved


def mcts_rate(module, state, iterations, threads, searches):
    """Simulations per second of ``searches`` fresh searches of ``state`` (wall time: the
    threads of a search run at once)."""
    t = time.perf_counter()
    for i in range(searches):
        forest = module.Forest(state, threads, 1.4, "win", "random", 0, i + 1)
        forest.search(state, iterations, 0.0, False)
    return iterations * searches / (time.perf_counter() - t)


def old_state(module, game, options, seed):
    """A state of the older module with today's Game object (only stored in the state)."""
    g = caribsim.load_game(game, **options)
    new = g.new_initial_state(seed=seed)
    cls = getattr(module, GAMES[game][0])
    if not hasattr(module, "state_from_dict"):
        raise SystemExit(f"the older {game} module has no state_from_dict")
    st = module.state_from_dict(g, new.to_dict())
    assert type(st) is cls and type(st) is not type(new) and st.serialize() == new.serialize()
    return st, new


def playouts(state, n):
    t = time.process_time()
    caribsim.random_playouts(state, n, seed=7)
    return n / (time.process_time() - t)


def python_loop(state, decisions, clone=lambda st: st.clone()):
    """Decisions/s (CPU time) of the OpenSpiel-style random loop from ``state`` (restarted
    from a ``clone`` of it at each end)."""
    rng = random.Random(3)
    done, t = 0, time.process_time()
    st = clone(state)
    while done < decisions:
        if st.is_terminal():
            st = clone(state)
        elif st.is_chance_node():
            st.resolve_chance()
        else:
            st.apply_action(rng.choice(st.legal_actions()))
        done += 1
    return done / (time.process_time() - t)


def _positions(state, count=200):
    """Decision positions along one random game from ``state`` (chance resolved)."""
    rng = random.Random(5)
    st, out = state.clone(), []
    while len(out) < count:
        if st.is_terminal():
            st = state.clone()
        elif st.is_chance_node():
            st.resolve_chance()
        else:
            a = rng.choice(st.legal_actions())
            out.append((st.clone(), a))
            st.apply_action(a)
    return out


def children(positions, calls):
    reps = max(1, calls // len(positions))
    t = time.process_time()
    for st, a in positions:
        for _ in range(reps):
            st.child(a)
    return reps * len(positions) / (time.process_time() - t)


def paired(work_old, work_new, rounds):
    ratios, olds, news = [], [], []
    for r in range(rounds):
        if r % 2 == 0:
            o = work_old()
            n = work_new()
        else:
            n = work_new()
            o = work_old()
        olds.append(o)
        news.append(n)
        ratios.append(n / o)
    return statistics.median(ratios), statistics.median(olds), statistics.median(news)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True, type=Path, help="folder of the older build's modules")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--games", type=int, default=4000, help="playouts per round (Cuba: a quarter)")
    p.add_argument("--decisions", type=int, default=60000, help="Python-loop decisions per round")
    p.add_argument("--children", type=int, default=100000, help="child(a) calls per round")
    p.add_argument(
        "--game", choices=sorted(GAMES), action="append", help="only these games (repeatable)"
    )
    p.add_argument(
        "--players",
        type=int,
        action="append",
        help="these player counts instead of the game's usual option sets (repeatable)",
    )
    p.add_argument("--mcts-iterations", type=int, default=2000, help="simulations per MCTS search")
    p.add_argument(
        "--only",
        choices=("playouts", "loop", "child", "mcts"),
        action="append",
        help="run only these workloads (repeatable; default all)",
    )
    args = p.parse_args(argv)
    print(
        f"{'workload':<52} {'old':>12} {'new':>12}  new/old (median of {args.rounds} paired rounds)"
    )
    if "mcts" in (args.only or ()):
        old_mcts = load_old_mcts(args.old)
        if old_mcts is None:
            raise SystemExit(f"--old {args.old}: no _mcts*.so or search/_mcts*.so there")
        import caribsim.search._mcts as new_mcts

        module = load_old(args.old, "puerto_rico")
        old, new = old_state(module, "puerto_rico", {"players": 3}, seed=1)
        while new.is_chance_node():  # the face-up draws: to the first decision
            assert old.resolve_chance() == new.resolve_chance()
        for threads in (1, 2):
            ratio, o, w = paired(
                functools.partial(mcts_rate, old_mcts, old, args.mcts_iterations, threads, 10),
                functools.partial(mcts_rate, new_mcts, new, args.mcts_iterations, threads, 10),
                args.rounds,
            )
            print(
                f"{'puerto_rico 3p opening MCTS, ' + str(threads) + ' thread(s), sims/s':<52} {o:>12,.0f} {w:>12,.0f}  {ratio:.3f}"
            )
        if args.only == ["mcts"]:
            return 0
    for game, (_, option_sets) in GAMES.items():
        if args.game and game not in args.game:
            continue
        module = load_old(args.old, game)
        if args.players:
            option_sets = [{"players": n} for n in args.players]
        for options in option_sets:
            old, new = old_state(module, game, options, seed=1)
            label = f"{game} {options}"
            n = args.games // 4 if game == "cuba" else args.games
            keys = [k for k in args.only or ("playouts", "loop", "child") if k != "mcts"]
            po, pn = (_positions(old), _positions(new)) if "child" in keys else (None, None)
            work = {
                "playouts": ("random playouts, games/s", lambda st, _, n=n: playouts(st, n)),
                "loop": ("Python loop, decisions/s", lambda st, _: python_loop(st, args.decisions)),
                "child": ("child(a), calls/s", lambda _, pos: children(pos, args.children)),
            }
            for key in keys:
                what, f = work[key]
                ratio, o, w = paired(
                    functools.partial(f, old, po), functools.partial(f, new, pn), args.rounds
                )
                print(f"{label + ' ' + what:<52} {o:>12,.0f} {w:>12,.0f}  {ratio:.3f}")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
