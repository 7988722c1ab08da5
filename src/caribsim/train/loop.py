"""An AlphaZero-style training loop: self-play, training, evaluation, keep-the-best.

    >>> from caribsim.train import loop
    >>> run = loop.train("puerto_rico", "runs/pr2", rounds=10, players=2)   # doctest: +SKIP

Round 0 is the first best network: drawn from the seed, or, with a ``teacher`` (a bot spec
such as ``mcts:800``), trained for ``epochs`` on ``teacher_games`` self-play games of that
bot (its visit shares as the policy target, the games' returns as the value target; written
to ``round_0000/selfplay`` and kept in the window of the first rounds), a warm start.

Each round ``r`` (1, 2, ...):

1. self-play: ``games_per_round`` games of ``AlphaZeroBot(best, simulations)`` in every
   seat through the batched guided search (``selfplay.generate(..., batch=)``), written as
   shards to ``round_NNNN/selfplay`` (PUCT with root noise and temperature for
   exploration, or a Gumbel root);
2. training: the trainer's network (``torch_mlp``, carried on from round to round with its
   Adam state) is trained for ``epochs`` on the shards of the last ``window`` rounds: policy
   cross-entropy + value MSE + L2 (``evaluators.Loss``);
3. evaluation: ``eval_games`` seat-rotated games (``arena.play_match``) of the new network
   against the best one (one seat new, the others best; both searches at temperature 0, no
   noise); the new network's win share is its wins / (its wins + a best seat's mean wins),
   0.5 when they are equal at any number of players;
4. keep-the-best: the new network becomes the best when its share is >= ``threshold``.

Every seed is derived from ``seed`` and the round (``arena.derive_seed``), the data do not
depend on the backend, and the torch training runs with deterministic kernels and a seeded
``torch.Generator``: a run is the same on one device for the same seed, and ``resume=True``
continues an interrupted run with the results of an uninterrupted one. A round is committed
by its line in ``log.jsonl``; an interrupted round is played again (its finished self-play
shards are kept). The files of the output folder are described in docs/training.md.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time

import numpy as np

import caribsim
from caribsim import _blas
from caribsim._common import _int_in, _number, _read_json_file
from caribsim._game_base import Game
from caribsim.scale import arena, distributed, selfplay
from caribsim.search import bots, evaluators
from caribsim.train import curve, network

FORMAT = "caribsim-train"
VERSION = 1


@dataclasses.dataclass(frozen=True)
class Config:
    """What a training run is (``config.json``); ``rounds`` and the runtime options (backend,
    workers, address, torch_threads, progress, plot) are not part of it, so a resumed run may
    change them."""

    game: str
    options: dict
    games_per_round: int = 32
    simulations: int = 32
    eval_games: int = 20
    threshold: float = 0.55
    window: int = 4
    hidden: int = 128
    blocks: int = 2
    epochs: int = 1
    batch_size: int = 256
    lr: float = 1e-3
    l2: float = 1e-4
    value_weight: float = 1.0
    gumbel: bool = False
    temperature: float = 1.0
    dirichlet_alpha: float = 0.3
    selfplay_batch: int = 16
    normalise: bool = True
    seed: int = 0
    teacher: str | None = None
    teacher_games: int = 0

    def checked(self) -> Config:
        """This config with every option checked (TypeError / ValueError naming it) and as
        plain Python numbers (numpy numbers too are accepted)."""
        for name in ("gumbel", "normalise"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        ints = {
            "games_per_round": (1, 10**6),
            "simulations": (1, 10**6),
            "eval_games": (1, 10**6),
            "window": (1, 10**6),
            "hidden": (1, 1 << 16),
            "blocks": (0, 256),
            "epochs": (1, 10**6),
            "batch_size": (1, 1 << 30),
            "selfplay_batch": (1, 1 << 16),
            "seed": (0, 2**63 - 1),
        }
        plain = {
            name: _int_in(getattr(self, name), name, lo, hi) for name, (lo, hi) in ints.items()
        }
        plain["teacher_games"] = _int_in(self.teacher_games, "teacher_games", 0, 10**6)
        if self.teacher is None:
            if plain["teacher_games"]:
                raise ValueError("teacher_games needs a teacher (a bot spec such as 'mcts:800')")
        else:
            if not isinstance(self.teacher, str):
                raise TypeError(
                    f"teacher must be a bot spec such as 'mcts:800', got {self.teacher!r}"
                )
            plain["teacher"] = bots.parse_bot(self.teacher).name  # a bad spec says what is allowed
            if not plain["teacher_games"]:
                raise ValueError(f"teacher {self.teacher!r} needs teacher_games >= 1")
        plain["threshold"] = _number(self.threshold, "threshold", 0.0, 1.01)
        plain["lr"] = _number(self.lr, "lr", 0.0, lo_open=True)
        for name in ("l2", "value_weight", "temperature", "dirichlet_alpha"):
            plain[name] = _number(getattr(self, name), name, 0.0)
        if self.gumbel and (plain["temperature"] or plain["dirichlet_alpha"]):
            raise ValueError(
                "temperature and dirichlet_alpha are the PUCT root's exploration; with "
                "gumbel=True the Gumbel root explores by its draws: set both to 0"
            )
        return dataclasses.replace(self, **plain)

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, **dataclasses.asdict(self)}


# ---------------------------------------------------------------------------------------------
# the folder


class Folder:
    """The paths of a run's output folder (docs/training.md, "Files")."""

    def __init__(self, root):
        self.root = os.fspath(root)
        self.config = os.path.join(self.root, "config.json")
        self.log = os.path.join(self.root, "log.jsonl")
        self.best = os.path.join(self.root, "best.json")
        self.best_model = os.path.join(self.root, "best.npz")
        self.curve = os.path.join(self.root, "curve.png")

    def round(self, r: int, name: str = "") -> str:
        return os.path.join(self.root, f"round_{r:04d}", name)

    def checkpoint(self, r: int) -> str:
        return self.round(r, "checkpoint.pt")

    def model(self, r: int) -> str:
        return self.round(r, "network.npz")

    def selfplay(self, r: int) -> str:
        return self.round(r, "selfplay")


def _write_json(path, value, lines=False) -> None:
    """Write ``value`` as JSON through a temporary file and a rename."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        if lines:
            f.writelines(json.dumps(v) + "\n" for v in value)
        else:
            json.dump(value, f, indent=2)
    os.replace(tmp, path)


def _read_log(folder: Folder) -> list:
    if not os.path.exists(folder.log):
        return []
    with open(folder.log, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    try:
        log = [json.loads(line) for line in lines]
    except ValueError as e:
        raise ValueError(
            f"cannot resume: {folder.log!r} is not a log of JSON lines ({e})"
        ) from None
    if [e.get("round") for e in log] != list(range(1, len(log) + 1)):
        raise ValueError(f"cannot resume: {folder.log!r} does not list rounds 1, 2, ... in order")
    return log


def _open(folder: Folder, config: Config, resume: bool) -> list:
    """Check the folder against the run and return its log (the finished rounds)."""
    root = folder.root
    if os.path.exists(root) and not os.path.isdir(root):
        raise ValueError(f"out_dir {root!r} is a file, not a folder")
    if not os.path.exists(folder.config):
        if resume:
            raise ValueError(
                f"resume=True: {root!r} holds no training run (no config.json); "
                f"start one without resume"
            )
        if os.path.isdir(root) and os.listdir(root):
            raise ValueError(
                f"out_dir {root!r} is not empty and holds no training run; use an empty "
                f"or new folder"
            )
        os.makedirs(root, exist_ok=True)
        _write_json(folder.config, config.to_json())
        return []
    if not resume:
        raise ValueError(
            f"out_dir {root!r} already holds a training run (config.json): continue it "
            f"with resume=True (--resume) or use another folder"
        )
    stored = _read_json_file(folder.config, "training config", ValueError)
    mine = json.loads(json.dumps(config.to_json()))
    if not isinstance(stored, dict) or stored.get("format") != FORMAT:
        raise ValueError(f"cannot resume: {folder.config!r} is not a {FORMAT} config")
    differ = sorted(k for k in set(stored) | set(mine) if stored.get(k) != mine.get(k))
    if differ:
        shown = ", ".join(f"{k} ({stored.get(k)!r} there, {mine.get(k)!r} now)" for k in differ)
        raise ValueError(
            f"cannot resume {root!r}: it holds a training run with another config "
            f"(differs in {shown}); resume with the same options or use another folder"
        )
    return _read_log(folder)


# ---------------------------------------------------------------------------------------------
# progress on stderr


class _Progress:
    """Round headers and the training's epoch line on stderr; the self-play and evaluation
    lines are those of caribsim.distributed (its ``progress=True``)."""

    def __init__(self, enabled: bool, rounds: int):
        self.enabled, self.rounds = enabled, rounds

    def say(self, r: int, text: str, done: bool = False) -> None:
        """A line ``[####....] round r/R: text`` (the bar: rounds finished, r's with ``done``)."""
        if self.enabled:
            width = 20
            filled = min(width, max(0, width * (r - (0 if done else 1)) // max(self.rounds, 1)))
            bar = "#" * filled + "." * (width - filled)
            sys.stderr.write(f"[{bar}] round {r}/{self.rounds}: {text}\n")
            sys.stderr.flush()

    def epoch(self, e: int, epochs: int, loss) -> None:
        if self.enabled:
            sys.stderr.write(
                f"\r  {e}/{epochs} epochs  loss {loss.total:.4f} (policy {loss.policy:.4f}, "
                f"value {loss.value:.4f}) " + ("\n" if e == epochs else "")
            )
            sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# one round


def _search_options(config: Config, exploring: bool) -> dict:
    """The AlphaZeroBot options: self-play explores (PUCT: root noise and temperature),
    the evaluation does not."""
    if config.gumbel or not exploring:
        return {"gumbel": config.gumbel}
    return {"temperature": config.temperature, "dirichlet_alpha": config.dirichlet_alpha or None}


@dataclasses.dataclass(frozen=True)
class _Run:
    """What every stage of a round needs: the run's config and folder, the loaded game, where
    the games run (backend, workers, address), the progress lines and torch's threads."""

    config: Config
    folder: Folder
    game: Game  # the loaded game (caribsim.load_game)
    where: dict
    progress: _Progress
    threads: int


def _selfplay(run: _Run, r: int, best_round: int) -> dict:
    config = run.config
    best = evaluators.MLPEvaluator.load(run.folder.model(best_round))
    bot = bots.AlphaZeroBot(best, config.simulations, **_search_options(config, True))
    with _blas.one_thread():
        return selfplay.generate(
            config.game,
            bot,
            config.games_per_round,
            run.folder.selfplay(r),
            seed=arena.derive_seed(config.seed, r, 0),
            games_per_shard=config.selfplay_batch,
            batch=config.selfplay_batch,
            progress=run.progress.enabled,
            **run.where,
            **config.options,
        )


def _window(run: _Run, r: int) -> tuple:
    """The training arrays of rounds max(first, r - window + 1) .. r, and those rounds (first:
    0 when round 0 has a teacher's games, else 1)."""
    first = 0 if run.config.teacher else 1
    rounds = list(range(max(first, r - run.config.window + 1), r + 1))
    parts = [evaluators.training_arrays(run.folder.selfplay(k)) for k in rounds]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}, rounds


def _fresh_trainer(config: Config, game) -> tuple:
    """The initial network (drawn from the run's seed) and a fresh Adam."""
    module = network.new_network(
        game, config.hidden, config.blocks, arena.derive_seed(config.seed, 0) >> 1
    )
    return module, network.new_optimizer(module, config.lr)


def _start(run: _Run) -> None:
    """Round 0: the initial network, trained on the teacher's games if there is a teacher;
    the first best."""
    config, folder = run.config, run.folder
    os.makedirs(folder.round(0), exist_ok=True)
    module, optimizer = _fresh_trainer(config, run.game)
    if config.teacher:
        run.progress.say(
            0, f"the teacher's self-play, {config.teacher_games} games of {config.teacher}"
        )
        t0 = time.perf_counter()
        manifest = selfplay.generate(
            config.game,
            config.teacher,
            config.teacher_games,
            folder.selfplay(0),
            seed=arena.derive_seed(config.seed, 0, 0),
            progress=run.progress.enabled,
            **run.where,
            **config.options,
        )
        t1 = time.perf_counter()
        losses = _fit(run, module, optimizer, evaluators.training_arrays(folder.selfplay(0)), 0)
        _write_json(
            folder.round(0, "teacher.json"),
            {
                "teacher": config.teacher,
                "games": manifest["n_games"],
                "decisions": manifest["decisions"],
                "loss": dataclasses.asdict(losses[-1]),
                "seconds": {"selfplay": t1 - t0, "train": time.perf_counter() - t1},
            },
        )
    network.save_checkpoint(folder.checkpoint(0), module, optimizer, 0)
    network.export(module).save(folder.model(0))


def _fit(run: _Run, module, optimizer, arrays, r: int) -> list:
    """Train ``module`` on ``arrays`` for round ``r`` (the first training sets the scaling, so
    the network's function does not drift with it)."""
    config = run.config
    if r == (0 if config.teacher else 1) and config.normalise:
        network.set_scaling(module, arrays["observation"])
    losses = network.fit(
        module,
        optimizer,
        arrays,
        epochs=config.epochs,
        batch_size=config.batch_size,
        l2=config.l2,
        value_weight=config.value_weight,
        seed=arena.derive_seed(config.seed, r, 1) >> 1,
        threads=run.threads,
    )
    for e, loss in enumerate(losses, 1):
        run.progress.epoch(e, config.epochs, loss)
    return losses


def _train(run: _Run, r: int) -> dict:
    """Train the trainer of round r - 1 on the window; save its checkpoint and network."""
    config, folder = run.config, run.folder
    arrays, rounds = _window(run, r)
    module, optimizer = _fresh_trainer(config, run.game)
    network.load_checkpoint(folder.checkpoint(r - 1), module, optimizer)
    losses = _fit(run, module, optimizer, arrays, r)
    network.save_checkpoint(folder.checkpoint(r), module, optimizer, r)
    network.export(module).save(folder.model(r))
    return {
        "samples": len(arrays["observation"]),
        "window": rounds,
        "epochs": [dataclasses.asdict(x) for x in losses],
        "loss": dataclasses.asdict(losses[-1]),
    }


def win_share(match) -> float:
    """Bot 0's wins / (its wins + the mean wins of the other bots): 0.5 for equals at any
    number of players (1 for a bot that wins every game)."""
    mine = match.bots[0].win_rate
    others = float(np.mean([b.win_rate for b in match.bots[1:]]))
    return mine / (mine + others) if mine + others > 0 else 0.5


def _evaluate(run: _Run, r: int, best_round: int) -> dict:
    """The seat-rotated match of round r's network (bot 0) against the best (the others)."""
    config = run.config
    options = _search_options(config, False)
    nets = [evaluators.MLPEvaluator.load(run.folder.model(k)) for k in (r, best_round)]
    seats = [bots.AlphaZeroBot(nets[0], config.simulations, **options)]
    seats += [
        bots.AlphaZeroBot(nets[1], config.simulations, **options)
        for _ in range(run.game.num_players() - 1)
    ]
    with _blas.one_thread():
        match = arena.play_match(
            run.game,
            seats,
            config.eval_games,
            seed=arena.derive_seed(config.seed, r, 2),
            progress=run.progress.enabled,
            **run.where,
        )
    share = win_share(match)
    return {
        "games": match.n_games,
        "against_round": best_round,
        "win_share": share,
        "new_win_rate": match.bots[0].win_rate,
        "new_ci95": list(match.bots[0].ci95),
        "best_win_rate": float(np.mean([b.win_rate for b in match.bots[1:]])),
        "mean_length": match.mean_length,
        "threshold": config.threshold,
        "accepted": share >= config.threshold,
    }


def _round(run: _Run, r: int, best_round: int) -> dict:
    """Play, train and evaluate round ``r``; return its log entry (nothing committed yet)."""
    config, say = run.config, run.progress.say
    t0 = time.perf_counter()
    say(
        r,
        f"self-play, {config.games_per_round} games of the best network (round {best_round}), "
        f"{config.simulations} simulations",
    )
    manifest = _selfplay(run, r, best_round)
    t1 = time.perf_counter()
    say(r, f"training, {config.epochs} epoch{'s' if config.epochs != 1 else ''}")
    trained = _train(run, r)
    t2 = time.perf_counter()
    say(r, f"evaluation, {config.eval_games} games against the best network (round {best_round})")
    result = _evaluate(run, r, best_round)
    t3 = time.perf_counter()
    return {
        "round": r,
        "selfplay": {"games": manifest["n_games"], "decisions": manifest["decisions"]},
        "train": trained,
        "eval": result,
        "best_round": r if result["accepted"] else best_round,
        "seconds": {"selfplay": t1 - t0, "train": t2 - t1, "eval": t3 - t2, "total": t3 - t0},
    }


def _commit(folder, log, threshold, plot) -> None:
    """Write the log (the round's commit), then the best pointer, its model and the plot."""
    _write_json(folder.log, log, lines=True)
    _publish_best(folder, log)
    if plot:
        curve.plot(log, folder.curve, threshold)


def _publish_best(folder, log) -> None:
    best_round = log[-1]["best_round"] if log else 0
    shutil.copyfile(folder.model(best_round), folder.best_model + ".tmp")
    os.replace(folder.best_model + ".tmp", folder.best_model)
    _write_json(
        folder.best,
        {
            "round": best_round,
            "model": os.path.relpath(folder.model(best_round), folder.root),
            "checkpoint": os.path.relpath(folder.checkpoint(best_round), folder.root),
        },
    )


# ---------------------------------------------------------------------------------------------
# the loop


def train(
    game,
    out_dir,
    *,
    rounds: int,
    games_per_round: int = 32,
    simulations: int = 32,
    eval_games: int = 20,
    threshold: float = 0.55,
    window: int = 4,
    hidden: int = 128,
    blocks: int = 2,
    epochs: int = 1,
    batch_size: int = 256,
    lr: float = 1e-3,
    l2: float = 1e-4,
    value_weight: float = 1.0,
    gumbel: bool = False,
    temperature: float | None = None,
    dirichlet_alpha: float | None = None,
    selfplay_batch: int = 16,
    normalise: bool = True,
    seed: int = 0,
    teacher: str | None = None,
    teacher_games: int = 0,
    resume: bool = False,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    torch_threads: int = 1,
    progress=None,
    plot: bool = True,
    **options,
) -> dict:
    """Train a policy/value network for ``game`` by rounds of self-play, training and
    evaluation (see the module's docstring); write everything to ``out_dir``.

    game:            a game name; ``options`` go to ``caribsim.load_game`` (e.g. ``players=2``).
    rounds:          the run's last round (a resumed run continues up to it).
    games_per_round: self-play games per round; simulations: per decision, in self-play and
                     in the evaluation; eval_games: games of the evaluation match.
    threshold:       the win share (0 .. 1.01) the new network needs to become the best.
    window:          the rounds whose self-play data the network is trained on (the last K).
    hidden, blocks:  the width and the residual blocks of ``torch_mlp``.
    epochs, batch_size, lr, l2, value_weight: the training (Adam, ``evaluators.Loss``).
    gumbel:          a Gumbel root instead of PUCT; temperature (default 1) and
                     dirichlet_alpha (default 0.3, 0: no noise) are PUCT self-play's
                     exploration (default 0 with gumbel).
    selfplay_batch:  self-play games per shard and per task, played at once through one
                     batched search; normalise: scale the observations by round 1's data.
    seed:            every random draw of the run.
    teacher, teacher_games: a warm start: round 0's network trained on ``teacher_games``
                     self-play games of the bot ``teacher`` (a spec, e.g. ``"mcts:800"``).
    resume:          continue the run in ``out_dir`` (its config must match) at its next round.
    backend, workers, address: where self-play and evaluation games run (local, processes,
                     ray; caribsim.distributed); the results do not depend on it. The
                     searches run with OpenBLAS on one thread (their products are small).
    torch_threads:   torch's threads while training (default 1: the default network's
                     batches are small, more threads only contend; see ``network.fit``).
    progress:        lines on stderr (default: when stderr is a terminal).
    plot:            write ``curve.png`` every round (needs matplotlib, ``caribsim[plot]``).

    Returns {"out_dir", "log" (every round's entry, as in log.jsonl), "best_round", "best_model"}.
    Needs PyTorch (``pip install 'caribsim[nn]'``); bad options raise TypeError / ValueError.
    """
    if not isinstance(game, str):
        raise TypeError(
            f"game must be a game name ({', '.join(caribsim.games())}), got {type(game).__name__}"
        )
    loaded = caribsim.load_game(game, **options)
    config = Config(
        game,
        loaded.options(),
        games_per_round,
        simulations,
        eval_games,
        threshold,
        window,
        hidden,
        blocks,
        epochs,
        batch_size,
        lr,
        l2,
        value_weight,
        gumbel,
        (0.0 if gumbel else 1.0) if temperature is None else temperature,
        (0.0 if gumbel else 0.3) if dirichlet_alpha is None else dirichlet_alpha,
        selfplay_batch,
        normalise,
        seed,
        teacher,
        teacher_games,
    ).checked()
    rounds = _int_in(rounds, "rounds", 0, 10**6)
    if rounds == 0 and not config.teacher:
        raise ValueError(
            "rounds=0 is the teacher's warm start alone (round 0): it needs a teacher "
            "(e.g. teacher='mcts:800', teacher_games=1600); without one, rounds >= 1"
        )
    torch_threads = _int_in(torch_threads, "torch_threads", 1, 1024)
    for name, value in (("resume", resume), ("plot", plot)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    distributed.check_backend(backend, workers, address, 0)
    if plot:
        curve.require_matplotlib()
    network.require_torch()  # after the options: a bad one is named even without it
    try:
        folder = Folder(out_dir)
    except TypeError:
        raise TypeError(
            f"out_dir must be a str or path object, got {type(out_dir).__name__}"
        ) from None
    log = _open(folder, config, resume)
    progress = _Progress(sys.stderr.isatty() if progress is None else bool(progress), rounds)
    run = _Run(
        config,
        folder,
        loaded,
        {"backend": backend, "workers": workers, "address": address},
        progress,
        torch_threads,
    )
    if not os.path.exists(folder.checkpoint(0)):
        _start(run)
    _publish_best(folder, log)  # (repairs a pointer an interrupted round moved)
    for r in range(len(log) + 1, rounds + 1):
        entry = _round(run, r, log[-1]["best_round"] if log else 0)
        log.append(entry)
        _commit(folder, log, config.threshold, plot)
        ev = entry["eval"]
        progress.say(
            r,
            f"win share {ev['win_share']:.3f} over {ev['games']} games: "
            + (
                f"round {r} is the new best"
                if ev["accepted"]
                else f"the best stays round {entry['best_round']}"
            )
            + f" ({entry['seconds']['total']:.1f} s)",
            done=True,
        )
    best_round = log[-1]["best_round"] if log else 0
    return {
        "out_dir": folder.root,
        "log": log,
        "best_round": best_round,
        "best_model": folder.best_model,
    }
