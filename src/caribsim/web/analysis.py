"""The post-game analysis of a finished game: every seat's win estimate at each decision of
the game, from a search of that step's state, and the moves that swung their mover's
estimate most (docs/web.md, section "Post-game analysis").

The search is the project's PUCT search with the C rollout evaluator
(``guided.BatchSearch(guided.RolloutEvaluator(), simulations)``: uniform priors, random
playouts to the end, what UCT costs): its root value holds every seat's mean return, so the
estimates of a step sum to 1 (the returns are constant-sum). The hint's UCT search
(``mcts.search``) reports the mover's mean reward only, which would leave the other seats'
lines without numbers of their own.

- Decision steps get an estimate, chance steps none (a chart line goes straight from one
  decision to the next; a chance outcome drawn meanwhile shows in the next estimate). The
  last point is the game's actual returns.
- A swing of decision k: its mover's estimate at the next point (the next decision, or the
  end) minus his estimate at k; the largest |swings| are listed, of the whole game and of
  each seat (a player's page shows his own first).
- The game is over when it is analysed: the search sees the whole state (Port Royal's
  face-down coins, Cuba's bids placed), nothing is secret any more. Chance to come is
  sampled, not read from the record.
- Deterministic for a game: the search of step k is seeded with (game seed + k) mod 2**64.

``Analyses`` runs them for a server: one at a time on a thread of its own (the event loop
never waits), each once per game; the result is ``ID.analysis.json`` beside the record,
written whole or not at all, and read back after a restart.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from pathlib import Path

from caribsim._common import _read_json_file
from caribsim.human import boards, records
from caribsim.search import guided
from caribsim.web.games import GameError, _write_json

FORMAT = "caribsim-web-analysis"
VERSION = 2  # 2: seat_swings
DEFAULT_ITERATIONS = 300  # simulations of each step's search
SWINGS = 5  # swings listed
CHUNK = 16  # steps searched per run (the progress moves by this much)
log = logging.getLogger("caribsim.web")


class Stopped(Exception):
    """The server stops: an analysis under way is dropped (it starts again when asked)."""


def decisions(record: dict) -> list:
    """``(step, seat, action, state)`` of every decision of the record, ``state`` the state the
    move was chosen in (the record checked as ``records.replay`` does)."""
    states = records.states(record)
    return [
        (k, step["player"], step["action"], states[k])
        for k, step in enumerate(record["steps"])
        if step["player"] >= 0
    ]


def swings(estimates: list, returns: list, top: int = SWINGS, seat: int | None = None) -> list:
    """The ``top`` decisions whose mover's estimate changed most from that decision to the next
    point (the next decision, or the end's returns); largest |change| first, ties by step.
    ``seat``: that seat's decisions only."""
    out = []
    for i, e in enumerate(estimates):
        if seat is not None and e["seat"] != seat:
            continue
        seat_i = e["seat"]
        after = estimates[i + 1]["win"][seat_i] if i + 1 < len(estimates) else returns[seat_i]
        before = e["win"][seat_i]
        out.append(
            {
                "step": e["step"],
                "seat": seat_i,
                "action": e["action"],
                "label": e["label"],
                "before": before,
                "after": after,
                "delta": round(after - before, 6),
            }
        )
    out.sort(key=lambda s: (-abs(s["delta"]), s["step"]))
    return out[:top]


def said(answer: dict, tr) -> dict:
    """An answer of ``Analyses.answer`` with its moves' labels in the language of ``tr``."""
    if answer.get("status") != "done":
        return answer
    return {
        **answer,
        "estimates": [{**e, "label": tr.move(e["label"])} for e in answer["estimates"]],
        "swings": [{**w, "label": tr.move(w["label"])} for w in answer["swings"]],
        "seat_swings": [
            [{**w, "label": tr.move(w["label"])} for w in ws] for ws in answer["seat_swings"]
        ],
    }


def analyse(record: dict, iterations: int, progress=None, stop=None) -> dict:
    """The analysis of a finished ``record`` with ``iterations`` simulations per decision;
    ``progress(done, total)`` is called as the steps are searched, ``stop()`` true drops it
    (Stopped)."""
    if not record.get("final"):
        raise ValueError("the record's game is not over: there is nothing to analyse yet")
    board = boards.get(record["game"])
    steps = decisions(record)
    search = guided.BatchSearch(
        guided.RolloutEvaluator(), simulations=iterations, leaves_per_tree=1
    )
    estimates = []
    if progress:
        progress(0, len(steps))
    for start in range(0, len(steps), CHUNK):
        if stop and stop():
            raise Stopped
        chunk = steps[start : start + CHUNK]
        results = search.run(
            [st for _, _, _, st in chunk],
            seeds=[(record["seed"] + k) % 2**64 for k, _, _, _ in chunk],
        )
        for (k, seat, action, st), r in zip(chunk, results):
            estimates.append(
                {
                    "step": k,
                    "seat": seat,
                    "action": action,
                    "label": board.choice_label(st, action, seat=seat),
                    "win": [round(min(1.0, max(0.0, float(v))), 6) for v in r.value],
                }
            )
        if progress:
            progress(len(estimates), len(steps))
    returns = [float(v) for v in record["final"]["returns"]]
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": record["game"],
        "seed": record["seed"],
        "players": record.get("players"),
        "steps": len(record["steps"]),
        "iterations": iterations,
        "search": f"guided PUCT, RolloutEvaluator(1), {iterations} simulations, seed: game seed + step",
        "estimates": estimates,
        "final": {"step": len(record["steps"]), "returns": returns},
        "swings": swings(estimates, returns),
        # each seat's own, for the page of a player: his decisions first
        "seat_swings": [swings(estimates, returns, seat=p) for p in range(len(returns))],
    }


class _Job:
    def __init__(self):
        self.done, self.total, self.history = 0, None, None
        self.future = None
        self.error = None


class Analyses:
    """The analyses of a server's finished games: ``answer(game)`` is what the API gives (the
    result, or how far the search is), starting the analysis the first time it is asked."""

    def __init__(self, folder, iterations: int = DEFAULT_ITERATIONS):
        self.folder, self.iterations = Path(folder), iterations
        self.jobs: dict[str, _Job] = {}
        self.results: dict[str, dict] = {}
        self.computed = 0  # analyses searched by this server (not read from a file)
        self._stopping = False
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="caribsim-analysis"
        )

    def path(self, game_id: str) -> Path:
        return self.folder / f"{game_id}.analysis.json"

    def _of(self, result, game) -> bool:
        """Whether ``result`` is the analysis of the game as it ended (an undo at the end and
        another ending make another game) with this server's budget."""
        history = game.state.history()
        return (
            isinstance(result, dict)
            and result.get("format") == FORMAT
            and result.get("version") == VERSION
            and result.get("steps") == len(history)
            and result.get("seed") == game.seed
            and result.get("iterations") == self.iterations
            and isinstance(result.get("estimates"), list)
            and [
                (e.get("step"), e.get("action")) for e in result["estimates"] if isinstance(e, dict)
            ]
            == [(k, step["action"]) for k, step in enumerate(game.steps) if step["player"] >= 0]
        )

    def _cached(self, game) -> dict | None:
        """The file's analysis if it is of this game's record and this server's budget."""
        path = self.path(game.id)
        if not path.exists():
            return None
        try:
            value = _read_json_file(path, "analysis file", ValueError)
        except (ValueError, OSError) as e:
            log.warning("game %s: %s is not read (%s); analysing again", game.id, path.name, e)
            return None
        return value if self._of(value, game) else None

    def answer(self, game) -> dict:
        """``{"status": "done", ...the analysis}``, or ``{"status": "running", "done", "total"}``
        while it is searched (started now if it was not), or ``{"status": "failed", "error"}``.
        Runs on the event loop; a game not over is refused (409)."""
        if not game.state.is_terminal():
            raise GameError(
                "the analysis is made when the game is over (step {step} now): "
                "ask again at the end",
                409,
                step=game.step,
            )
        result = self.results.get(game.id)
        if result is not None and not self._of(result, game):
            del self.results[game.id]  # of an ending undone since
            result = None
        job = self.jobs.get(game.id)
        if result is None and job is None and (result := self._cached(game)) is not None:
            self.results[game.id] = result
        if result is not None:
            return {
                "status": "done",
                "done": len(result["estimates"]),
                "total": len(result["estimates"]),
                **result,
            }
        if job is not None and job.history != game.state.history():
            job = None  # of an ending undone since: its result will not be kept
        if job is None:
            job = self.jobs[game.id] = _Job()
            job.total, job.history = (
                sum(step["player"] >= 0 for step in game.steps),
                game.state.history(),
            )
            job.future = asyncio.get_running_loop().run_in_executor(
                self._pool, self._run, game.id, game.record(), job
            )
            job.future.add_done_callback(lambda f, gid=game.id: self._finished(gid, f))
        if job.error is not None:
            return {"status": "failed", "error": job.error}
        return {
            "status": "running",
            "done": job.done,
            "total": job.total,
            "iterations": self.iterations,
        }

    def _run(self, game_id: str, record: dict, job: _Job) -> dict:
        """On the analysis thread: search, then write the file."""

        def progress(done, total):
            job.done, job.total = done, total

        result = analyse(record, self.iterations, progress, lambda: self._stopping)
        _write_json(self.path(game_id), result)
        return result

    def _finished(self, game_id: str, future) -> None:
        """On the event loop: keep the result, or say why there is none."""
        job = self.jobs.get(game_id)
        current = job is not None and job.future is future  # not replaced after an undo
        if future.cancelled() or isinstance(future.exception(), Stopped):
            if current:
                del self.jobs[game_id]
            return
        if future.exception() is not None:
            e = future.exception()
            log.error("game %s: the analysis failed: %s", game_id, e)
            if current:
                assert job is not None  # current: this future's job
                job.error = f"the analysis failed: {e}"
            return
        self.computed += 1
        if current:
            self.results[game_id] = future.result()
            del self.jobs[game_id]

    def close(self) -> None:
        """The server stops: an analysis under way stops at its next chunk, none starts."""
        self._stopping = True
        self._pool.shutdown(wait=False, cancel_futures=True)
