"""Self-play data for AlphaZero-style training: per decision the observation, the legal
moves, the search's visit distribution and the game's final returns.

    >>> from caribsim import selfplay
    >>> manifest = selfplay.generate("puerto_rico", "mcts:100", 8, out="data/pr3", players=3)

Every seat is played by its own copy of the bot (an MCTS bot: its root visit counts are the
policy target). Game ``g`` starts from ``derive_seed(seed, g)`` and seat ``s``'s bot from
``derive_seed(seed, g, s)``, so the data do not depend on the backend or the workers. Shards
are compressed ``.npz`` files, one per chunk of games, written by the driver as the chunks
finish; rerunning the same call on the same folder finishes an interrupted run. The format
is described in docs/selfplay.md.
"""
from __future__ import annotations

import json
import os

import numpy as np

import caribsim
from caribsim.scale import distributed
from caribsim._common import _int_in
from caribsim.scale.arena import derive_seed

FORMAT = "caribsim-selfplay"
VERSION = 1
ARRAYS = {   # name: (dtype, shape; N = decisions in the shard, O = observation, A = actions, P = players)
    "observation": ("float32", "N, O"),
    "legal_mask": ("uint8", "N, A"),
    "policy": ("float32", "N, A"),
    "player": ("int8", "N"),
    "returns": ("float32", "N, P"),
    "value": ("float32", "N"),
    "game": ("int64", "N"),
    "move": ("int32", "N"),
}


def _mcts_bot(bot):
    from caribsim.search import bots

    if isinstance(bot, str):
        bot = bots.parse_bot(bot)
    if not isinstance(bot, bots.MCTSBot):
        raise TypeError(f"self-play needs an MCTS bot (its visit counts are the policy target), e.g. "
                        f"'mcts:200' or caribsim.bots.MCTSBot(iterations=200); got {bot!r}")
    if bot.options.get("seconds") is not None:
        raise ValueError("self-play bots need an iteration budget, not seconds: a time budget makes "
                         "the data depend on the machine's speed")
    return bot


def selfplay_chunk(spec: dict) -> dict:
    """Games first .. first + count - 1 of a self-play run (a task of caribsim.distributed)."""
    from caribsim.search.bots import MCTSBot

    game = caribsim.load_game(spec["game"], **spec["options"])
    n, n_actions = game.num_players(), game.num_distinct_actions()
    seats = [MCTSBot(**spec["bot_options"]) for _ in range(n)]
    cols = {k: [] for k in ARRAYS}
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
                policy = np.zeros(n_actions, dtype=np.float32)
                if len(legal) == 1:
                    policy[action] = 1.0
                else:
                    visits = seats[player].last_result.visits
                    total = sum(visits.values())
                    for a, v in visits.items():
                        policy[a] = v / total
                cols["observation"].append(state.observation_tensor(player))
                cols["legal_mask"].append(state.legal_actions_mask(player))
                cols["policy"].append(policy)
                cols["player"].append(player)
                cols["move"].append(move)
                rows += 1
            state.apply_action(action)
            move += 1
        returns = np.asarray(state.returns(), dtype=np.float32)
        cols["returns"].extend([returns] * rows)
        cols["value"].extend(returns[p] for p in cols["player"][len(cols["player"]) - rows:])
        cols["game"].extend([g] * rows)
    obs_size = int(np.prod(game.observation_tensor_shape()))
    empty = {"observation": (0, obs_size), "legal_mask": (0, n_actions), "policy": (0, n_actions),
             "returns": (0, n)}
    return {k: (np.array(v, dtype=ARRAYS[k][0]) if v else np.zeros(empty.get(k, (0,)), dtype=ARRAYS[k][0]))
            for k, v in cols.items()}


def generate(game, bot, n_games: int, out, *, seed: int = 0, backend: str = "local",
             workers: int | None = None, address: str | None = None, games_per_shard: int | None = None,
             include_forced: bool = False, progress=None, retries: int = 3, **options) -> dict:
    """Play ``n_games`` self-play games with ``bot`` in every seat and write them to ``out``.

    game:            a game name (``options`` go to load_game, e.g. ``players=3``).
    bot:             an MCTS bot or its spec (``"mcts:400"``, ``"mcts:400:rollout=heuristic"``).
    out:             the folder of the shards and ``manifest.json``; a folder holding an
                     unfinished run of the same call is completed, another run's is refused.
    backend:         ``"local"``, ``"processes"`` or ``"ray"`` (caribsim.distributed).
    games_per_shard: games per shard and per task (default: about four per worker, at most 100).
    include_forced:  also record decisions with a single legal move (policy one-hot).
    Returns the manifest (also written to ``out/manifest.json``).
    """
    if not isinstance(game, str):
        raise TypeError(f"game must be a game name ({', '.join(caribsim.games())}), got {type(game).__name__}")
    loaded = caribsim.load_game(game, **options)
    bot = _mcts_bot(bot)
    n_games = _int_in(n_games, "n_games", 1)
    seed = _int_in(seed, "seed", 0, 2**64 - 1)
    distributed.check_backend(backend, workers, address, retries)
    if games_per_shard is None:
        games_per_shard = distributed.default_chunk_size(
            n_games, distributed.worker_count(backend, workers, address), maximum=100)
    games_per_shard = _int_in(games_per_shard, "games_per_shard", 1)
    bot_options = dict(bot.options)
    run = {"kind": "selfplay", "game": game, "options": loaded.options(), "n_games": n_games, "seed": seed,
           "bot": bot_options, "games_per_shard": games_per_shard, "include_forced": bool(include_forced),
           "version": caribsim.__version__}
    store = distributed.ChunkStore(out, run, prefix="shard", compress=True)
    chunks = distributed.plan_chunks(n_games, games_per_shard)
    specs = [{"game": game, "options": loaded.options(), "seed": seed, "bot_options": bot_options,
              "include_forced": bool(include_forced), "chunk": c.index, "first": c.first, "count": c.count}
             for c in chunks]
    results, info = distributed.run_chunks(selfplay_chunk, specs, backend=backend, workers=workers,
                                           address=address, store=store, progress=progress, retries=retries)
    manifest = {
        "format": FORMAT, "version": VERSION, "caribsim": caribsim.__version__,
        "game": game, "options": loaded.options(), "players": loaded.num_players(),
        "num_actions": loaded.num_distinct_actions(),
        "observation_shape": list(loaded.observation_tensor_shape()),
        "bot": bot_options, "seed": seed, "n_games": n_games, "include_forced": bool(include_forced),
        "decisions": int(sum(len(r["player"]) for r in results)),
        "arrays": {k: {"dtype": d, "shape": s} for k, (d, s) in ARRAYS.items()},
        "shards": [{"file": os.path.basename(store.file(c.index)), "first_game": c.first, "games": c.count,
                    "decisions": int(len(r["player"]))} for c, r in zip(chunks, results)],
        "backend": info.backend, "workers": info.workers, "seconds_this_run": info.seconds,
    }
    tmp = os.path.join(store.path, ".manifest.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
    os.replace(tmp, os.path.join(store.path, "manifest.json"))
    return manifest


def load(path) -> dict:
    """Every shard of a finished run, concatenated: {array name: numpy array} (see ARRAYS)."""
    with open(os.path.join(path, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{path}/manifest.json is not a {FORMAT} manifest")
    parts = []
    for shard in manifest["shards"]:
        with np.load(os.path.join(path, shard["file"]), allow_pickle=False) as z:
            parts.append({k: z[k] for k in z.files})
    return {k: np.concatenate([p[k] for p in parts]) for k in ARRAYS}
