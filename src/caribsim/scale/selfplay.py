"""Self-play data for AlphaZero-style training: per decision the observation, the legal
moves, the search's visit distribution and the game's final returns.

    >>> from caribsim import selfplay
    >>> manifest = selfplay.generate("puerto_rico", "mcts:100", 8, out="data/pr3", players=3)

Every seat is played by its own copy of the bot: an MCTS bot (its root visit counts are the
policy target) or an AlphaZeroBot (``puct:200``, ``gumbel:200``,
``alphazero:200:model=net.npz``: its ``last_result.policy``, the visit shares or the Gumbel
improved policy, is the target). With ``batch=B`` (AlphaZeroBot only) each task plays B of
its games at once, every move step of all of them through one ``guided.BatchSearch`` call
(one evaluator call per step for all their leaves). Game ``g`` starts from ``derive_seed(seed, g)`` and seat ``s``'s bot from
``derive_seed(seed, g, s)``, so the data do not depend on the backend or the workers. Shards
are compressed ``.npz`` files, one per chunk of games, written by the driver as the chunks
finish; rerunning the same call on the same folder finishes an interrupted run. The format
is described in docs/selfplay.md.
"""

from __future__ import annotations

import copy
import json
import os

import numpy as np

import caribsim
from caribsim import _shards
from caribsim._common import _int_in
from caribsim._shards import ARRAYS, FORMAT, VERSION  # the format, shared with its readers
from caribsim.scale import distributed
from caribsim.scale.arena import check_length, derive_seed


def _selfplay_bot(bot):
    from caribsim.search import bots

    if isinstance(bot, str):
        bot = bots.parse_bot(bot)
    if not isinstance(bot, (bots.MCTSBot, bots.AlphaZeroBot)):
        raise TypeError(
            f"self-play needs an MCTS bot (its visit counts are the policy target) or an "
            f"AlphaZeroBot (its search policy is), e.g. 'mcts:200', 'puct:200' or "
            f"caribsim.bots.MCTSBot(iterations=200); got {bot!r}"
        )
    if isinstance(bot, bots.MCTSBot) and bot.options.get("seconds") is not None:
        raise ValueError(
            "self-play bots need an iteration budget, not seconds: a time budget makes "
            "the data depend on the machine's speed"
        )
    return bot


def _empty_columns():
    return {k: [] for k in ARRAYS}


def _record(cols, state, player, n_actions, policy_row):
    cols["observation"].append(state.observation_tensor(player))
    cols["legal_mask"].append(state.legal_actions_mask(player))
    cols["policy"].append(policy_row)
    cols["player"].append(player)


def _one_hot(n_actions, action):
    policy = np.zeros(n_actions, dtype=np.float32)
    policy[action] = 1.0
    return policy


def _finish_game(cols, g, rows, state):
    returns = np.asarray(state.returns(), dtype=np.float32)
    cols["returns"].extend([returns] * rows)
    cols["value"].extend(returns[p] for p in cols["player"][len(cols["player"]) - rows :])
    cols["game"].extend([g] * rows)


def _arrays(cols, game):
    n, n_actions = game.num_players(), game.num_distinct_actions()
    obs_size = int(np.prod(game.observation_tensor_shape()))
    empty = {
        "observation": (0, obs_size),
        "legal_mask": (0, n_actions),
        "policy": (0, n_actions),
        "returns": (0, n),
    }
    return {
        k: (
            np.array(v, dtype=ARRAYS[k][0])
            if v
            else np.zeros(empty.get(k, (0,)), dtype=ARRAYS[k][0])
        )
        for k, v in cols.items()
    }


def selfplay_chunk(spec: dict) -> dict:
    """Games first .. first + count - 1 of a self-play run (a task of caribsim.distributed)."""
    from caribsim.search.bots import MCTSBot

    if spec.get("batch") is not None:
        return _batched_chunk(spec)
    game = caribsim.load_game(spec["game"], **spec["options"])
    n, n_actions = game.num_players(), game.num_distinct_actions()
    if spec.get("bot") is not None:  # an AlphaZeroBot: a copy per seat
        seats = [copy.copy(spec["bot"]) for _ in range(n)]
    else:
        seats = [MCTSBot(**spec["bot_options"]) for _ in range(n)]
    cols = _empty_columns()
    for g in range(spec["first"], spec["first"] + spec["count"]):
        seed = derive_seed(spec["seed"], g)
        for s, bot in enumerate(seats):
            bot.restart(derive_seed(spec["seed"], g, s))
        state = game.new_initial_state(seed=seed)
        rows, move = 0, 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.resolve_chance()
                continue
            player = state.current_player()
            legal = state.legal_actions()
            action = seats[player].step(state)
            if len(legal) > 1 or spec["include_forced"]:
                if len(legal) == 1:
                    policy = _one_hot(n_actions, action)
                elif isinstance(seats[player], MCTSBot):
                    policy = np.zeros(n_actions, dtype=np.float32)
                    visits = seats[player].last_result.visits
                    total = sum(visits.values())
                    for a, v in visits.items():
                        policy[a] = v / total
                else:
                    policy = seats[player].last_result.policy.astype(np.float32)
                _record(cols, state, player, n_actions, policy)
                cols["move"].append(move)
                rows += 1
            state.apply_action(action)
            move += 1
            check_length(move, game, seed)
        _finish_game(cols, g, rows, state)
    return _arrays(cols, game)


def _batched_chunk(spec):
    """The games of a chunk played ``batch`` at a time: each step searches the decision of
    every running game with one BatchSearch run (the bot's options; each seat's search seeds
    drawn as its AlphaZeroBot would draw them), so for an evaluator whose rows depend on
    their own input only the games are those of the one-by-one path."""
    import random

    bot = spec["bot"]
    game = caribsim.load_game(spec["game"], **spec["options"])
    n, n_actions = game.num_players(), game.num_distinct_actions()
    search = copy.copy(bot.search)  # a fresh BatchSearch, the bot's options
    todo = list(range(spec["first"], spec["first"] + spec["count"]))[::-1]
    running, done = [], {}

    def start(g):
        rngs = [random.Random(derive_seed(spec["seed"], g, s)) for s in range(n)]
        return {
            "g": g,
            "state": game.new_initial_state(seed=derive_seed(spec["seed"], g)),
            "rngs": rngs,
            "cols": _empty_columns(),
            "rows": 0,
            "move": 0,
        }

    while todo or running:
        while todo and len(running) < spec["batch"]:
            running.append(start(todo.pop()))
        waiting = []
        for run in running:  # to the next decision with a choice
            state, cols = run["state"], run["cols"]
            while not state.is_terminal():
                if state.is_chance_node():
                    state.resolve_chance()
                    continue
                legal = state.legal_actions()
                if len(legal) > 1:
                    break
                if spec["include_forced"]:
                    _record(
                        cols,
                        state,
                        state.current_player(),
                        n_actions,
                        _one_hot(n_actions, legal[0]),
                    )
                    cols["move"].append(run["move"])
                    run["rows"] += 1
                state.apply_action(legal[0])
                run["move"] += 1
                check_length(run["move"], game, derive_seed(spec["seed"], run["g"]))
            if state.is_terminal():
                _finish_game(run["cols"], run["g"], run["rows"], state)
                done[run["g"]] = run["cols"]
            else:
                waiting.append(run)
        running = waiting
        if not running:
            continue
        players = [run["state"].current_player() for run in running]
        seeds = [run["rngs"][p].getrandbits(64) for run, p in zip(running, players)]
        results = search.run([run["state"] for run in running], seeds=seeds)
        for run, player, result in zip(running, players, results):
            _record(run["cols"], run["state"], player, n_actions, result.policy.astype(np.float32))
            run["cols"]["move"].append(run["move"])
            run["rows"] += 1
            run["state"].apply_action(result.action)
            run["move"] += 1
            check_length(run["move"], game, derive_seed(spec["seed"], run["g"]))
    cols = _empty_columns()
    for g in sorted(done):
        for k in cols:
            cols[k].extend(done[g][k])
    return _arrays(cols, game)


def generate(
    game,
    bot,
    n_games: int,
    out,
    *,
    seed: int = 0,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    games_per_shard: int | None = None,
    include_forced: bool = False,
    progress=None,
    retries: int = 3,
    batch: int | None = None,
    **options,
) -> dict:
    """Play ``n_games`` self-play games with ``bot`` in every seat and write them to ``out``.

    game:            a game name (``options`` go to load_game, e.g. ``players=3``).
    bot:             an MCTS bot or an AlphaZeroBot, or its spec (``"mcts:400"``,
                     ``"mcts:400:rollout=heuristic"``, ``"puct:200"``, ``"gumbel:200"``,
                     ``"alphazero:200:model=net.npz"``). An AlphaZeroBot's search policy is the
                     target (``last_result.policy``); its evaluator must pickle for the
                     processes and Ray backends.
    out:             the folder of the shards and ``manifest.json``; a folder holding an
                     unfinished run of the same call is completed, another run's is refused.
    backend:         ``"local"``, ``"processes"`` or ``"ray"`` (caribsim.distributed).
    games_per_shard: games per shard and per task (default: about four per worker, at most 100).
    include_forced:  also record decisions with a single legal move (policy one-hot).
    batch:           AlphaZeroBot only: each task plays ``batch`` of its games at once, every
                     step's decisions searched by one ``guided.BatchSearch`` run (one evaluator
                     call for the leaves of all of them). Same seeds, same format; for an
                     evaluator whose rows depend on their own input only (the C rollout
                     evaluator, ``UniformEvaluator``) the same games as ``batch=None``; a BLAS
                     MLP may round its rows differently for another batch size (docs/selfplay.md).
    Returns the manifest (also written to ``out/manifest.json``).
    """
    if not isinstance(game, str):
        raise TypeError(
            f"game must be a game name ({', '.join(caribsim.games())}), got {type(game).__name__}"
        )
    loaded = caribsim.load_game(game, **options)
    from caribsim.search.bots import AlphaZeroBot

    bot = _selfplay_bot(bot)
    guided_bot = isinstance(bot, AlphaZeroBot)
    if batch is not None:
        if not guided_bot:
            raise ValueError(
                f"batch= plays the games through one guided.BatchSearch: it needs an "
                f"AlphaZeroBot (e.g. 'puct:200'), got {bot!r}"
            )
        batch = _int_in(batch, "batch", 1, 1 << 16)
    n_games = _int_in(n_games, "n_games", 1)
    seed = _int_in(seed, "seed", 0, 2**64 - 1)
    distributed.check_backend(backend, workers, address, retries)
    if games_per_shard is None:
        games_per_shard = distributed.default_chunk_size(
            n_games, distributed.worker_count(backend, workers, address), maximum=100
        )
    games_per_shard = _int_in(games_per_shard, "games_per_shard", 1)
    bot_options = bot.describe() if guided_bot else dict(bot.options)
    run = {
        "kind": "selfplay",
        "game": game,
        "options": loaded.options(),
        "n_games": n_games,
        "seed": seed,
        "bot": bot_options,
        "games_per_shard": games_per_shard,
        "include_forced": bool(include_forced),
        "version": caribsim.__version__,
    }
    if guided_bot:
        run["batch"] = batch
    store = distributed.ChunkStore(out, run, prefix="shard", compress=True)
    chunks = distributed.plan_chunks(n_games, games_per_shard)
    specs = [
        {
            "game": game,
            "options": loaded.options(),
            "seed": seed,
            "bot_options": bot_options,
            "include_forced": bool(include_forced),
            "chunk": c.index,
            "first": c.first,
            "count": c.count,
            **({"bot": bot, "batch": batch} if guided_bot else {}),
        }
        for c in chunks
    ]
    results, info = distributed.run_chunks(
        selfplay_chunk,
        specs,
        backend=backend,
        workers=workers,
        address=address,
        store=store,
        progress=progress,
        retries=retries,
    )
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "caribsim": caribsim.__version__,
        "game": game,
        "options": loaded.options(),
        "players": loaded.num_players(),
        "num_actions": loaded.num_distinct_actions(),
        "observation_shape": list(loaded.observation_tensor_shape()),
        "bot": bot_options,
        "seed": seed,
        "n_games": n_games,
        "include_forced": bool(include_forced),
        "decisions": int(sum(len(r["player"]) for r in results)),
        "arrays": {k: {"dtype": d, "shape": s} for k, (d, s) in ARRAYS.items()},
        "shards": [
            {
                "file": os.path.basename(store.file(c.index)),
                "first_game": c.first,
                "games": c.count,
                "decisions": len(r["player"]),
            }
            for c, r in zip(chunks, results)
        ],
        "backend": info.backend,
        "workers": info.workers,
        "seconds_this_run": info.seconds,
    }
    if guided_bot:
        manifest["batch"] = batch
    tmp = os.path.join(store.path, ".manifest.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
    os.replace(tmp, os.path.join(store.path, "manifest.json"))
    return manifest


def load(path) -> dict:
    """Every shard of a finished run, concatenated: {array name: numpy array} (see ARRAYS)."""
    return _shards.read(path)
