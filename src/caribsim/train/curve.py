"""The learning curve of a training run: its losses and the evaluation's win share per round,
drawn from the log (matplotlib, the extra ``caribsim[plot]``)."""

from __future__ import annotations

import os

PLOT_HINT = "the learning-curve plot needs matplotlib: pip install 'caribsim[plot]' (or plot=False, --no-plot)"


def require_matplotlib():
    """matplotlib.pyplot on the Agg backend, or ImportError with the install hint."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(PLOT_HINT) from None
    return plt


def plot(log: list, path, threshold: float) -> None:
    """Draw ``log`` (the round entries of ``log.jsonl``) to the PNG ``path``: the last epoch's
    total, policy and value losses per round, and the new network's win share against the
    best with the acceptance threshold (a filled marker: the new network became the best)."""
    plt = require_matplotlib()
    rounds = [e["round"] for e in log]
    fig, (losses, share) = plt.subplots(1, 2, figsize=(10, 3.8))
    for key, colour in (("total", "#333333"), ("policy", "#4a7fb5"), ("value", "#c0504d")):
        losses.plot(
            rounds, [e["train"]["loss"][key] for e in log], marker="o", color=colour, label=key
        )
    losses.set_xlabel("round")
    losses.set_ylabel("loss (last epoch)")
    losses.legend()
    shares = [e["eval"]["win_share"] for e in log]
    share.plot(rounds, shares, color="#4a7fb5")
    for r, s, e in zip(rounds, shares, log):
        share.plot(
            [r],
            [s],
            marker="o",
            color="#4a7fb5",
            fillstyle="full" if e["eval"]["accepted"] else "none",
        )
    share.axhline(threshold, linestyle="--", color="#999999", label=f"threshold {threshold:g}")
    share.set_ylim(0, 1)
    share.set_xlabel("round")
    share.set_ylabel("win share of the new network")
    share.legend()
    for ax in (losses, share):
        ax.set_xticks(rounds)
    fig.tight_layout()
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}.png"
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, path)
