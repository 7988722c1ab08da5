"""The policy/value network of the training loop in PyTorch: its training step, its
checkpoints and its export as a numpy ``MLPEvaluator`` (docs/training.md).

The network is ``evaluators.torch_mlp(game, hidden, blocks)``, a residual MLP. Its export
is exact in arithmetic: a residual block ``h' = relu(h + W2 relu(W1 h + b1) + b2)`` acts on
``h >= 0`` (the output of a ReLU), so ``h = relu(h)`` and the block is two plain ReLU
layers, ``[h, u] = relu([I | W1] h + [0, b1])`` of width 2H and ``h' = relu([I; W2] [h, u]
+ b2)`` of width H. The ``MLPEvaluator`` file (``.npz``) then holds the whole network and
the bots load it without PyTorch (``alphazero:N:model=best.npz``).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from caribsim.search import evaluators
from caribsim.search.evaluators import INSTALL_HINT, Loss


def require_torch():
    """The torch module, or ImportError with the install hint (pip install 'caribsim[nn]')."""
    try:
        import torch
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return torch


def new_network(game, hidden: int, blocks: int, seed: int):
    """A fresh residual MLP for ``game``, its weights drawn from ``seed`` (torch's global
    random state is left alone)."""
    return evaluators.torch_mlp(game, hidden=hidden, blocks=blocks, seed=seed)


def new_optimizer(module, lr: float):
    """Adam over the module's parameters (the L2 term is in the loss, not in Adam)."""
    return require_torch().optim.Adam(module.parameters(), lr=lr)


def set_scaling(module, observations) -> None:
    """Set the module's observation scaling (buffers obs_mean, obs_std) to the per-feature
    mean and deviation of ``observations`` (float32 [N, O]), as ``train_mlp`` does."""
    torch = require_torch()
    obs = observations.astype(np.float64)
    std = obs.std(axis=0)
    std[std < 1e-6] = 1.0  # a constant feature: left unscaled
    with torch.no_grad():
        module.obs_mean.copy_(torch.from_numpy(obs.mean(axis=0).astype(np.float32)))
        module.obs_std.copy_(torch.from_numpy(std.astype(np.float32)))


def _batch_loss(module, batch, l2, value_weight):
    """(total, policy, value, l2 term) tensors of one batch (``Loss``'s definitions)."""
    torch = require_torch()
    obs, mask, policy, returns = batch
    logits, values = module(obs)
    log_p = torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=1)
    log_p = torch.where(mask, log_p, torch.zeros_like(log_p))  # 0, not -inf, off the legal moves
    p_loss = -(policy * log_p).sum(dim=1).mean()
    v_loss = value_weight * torch.square(values - returns).mean()
    l2_term = (
        0.5
        * l2
        * sum(
            torch.square(p).sum()
            for name, p in module.named_parameters()
            if name.endswith("weight")
        )
    )
    return p_loss + v_loss + l2_term, p_loss, v_loss, l2_term


@contextlib.contextmanager
def _deterministic(torch, threads):
    """Deterministic kernels and ``threads`` intra-op threads for the duration (the previous
    settings restored after)."""
    before = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0])
        torch.set_num_threads(before[1])


def fit(
    module, optimizer, arrays, *, epochs, batch_size, l2, value_weight, seed, threads=1
) -> list:
    """Train ``module`` with ``optimizer`` on ``arrays`` (``evaluators.training_arrays``'s
    dict); return the ``Loss`` of each epoch, the mean over its rows of each batch's loss
    before its step. Each epoch visits the rows in an order drawn from a ``torch.Generator``
    seeded by ``seed``, so the same weights, data and seed give the same result.

    threads: torch's intra-op threads while training. One by default: the default network's
    batches are small products, which more threads slow down (measured on a busy 2-core
    machine: 3,266 rows in 0.04 s on one thread, 1.8-5.5 s on two; the same weights)."""
    torch = require_torch()
    tensors = (
        torch.from_numpy(arrays["observation"]),
        torch.from_numpy(arrays["legal_mask"]),
        torch.from_numpy(arrays["policy"]),
        torch.from_numpy(arrays["returns"]),
    )
    n = len(tensors[0])
    generator = torch.Generator().manual_seed(seed)
    history = []
    module.train()
    with _deterministic(torch, threads):
        for _ in range(epochs):
            order = torch.randperm(n, generator=generator)
            sums = np.zeros(4)
            for start in range(0, n, batch_size):
                rows = order[start : start + batch_size]
                parts = _batch_loss(module, tuple(t[rows] for t in tensors), l2, value_weight)
                optimizer.zero_grad(set_to_none=True)
                parts[0].backward()
                optimizer.step()
                sums += [float(p.detach()) * len(rows) for p in parts]
            if not all(torch.isfinite(p).all() for p in module.parameters()):
                raise FloatingPointError("training diverged (NaN or inf in the weights); lower lr")
            total, p_loss, v_loss, l2_term = sums / n
            history.append(Loss(float(total), float(p_loss), float(v_loss), float(l2_term)))
    module.eval()
    return history


# ---------------------------------------------------------------------------------------------
# checkpoints


def save_checkpoint(path, module, optimizer, round_: int) -> None:
    """Write the module's and the optimizer's state to ``path`` (``torch.save``, through a
    temporary file and a rename, so a reader never sees half a file)."""
    torch = require_torch()
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        torch.save(
            {"round": round_, "model": module.state_dict(), "optimizer": optimizer.state_dict()},
            tmp,
        )
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load_checkpoint(path, module, optimizer) -> int:
    """Load a checkpoint written by ``save_checkpoint`` into ``module`` and ``optimizer``;
    return its round. ValueError naming the file when it is missing or unreadable."""
    torch = require_torch()
    path = os.fspath(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    except FileNotFoundError:
        raise ValueError(f"cannot resume: the checkpoint {path!r} is missing") from None
    except (OSError, RuntimeError, KeyError, TypeError, ValueError, EOFError) as e:
        raise ValueError(f"cannot resume: the checkpoint {path!r} is unreadable ({e})") from None
    return int(state["round"])


# ---------------------------------------------------------------------------------------------
# the export


def export(module) -> evaluators.MLPEvaluator:
    """The residual MLP ``module`` (``torch_mlp``) as a numpy ``MLPEvaluator`` with the same
    outputs (up to float32 rounding): hidden widths (H, 2H, H, 2H, H, ...), one pair per
    residual block (see the module's docstring)."""
    torch = require_torch()
    if not isinstance(module, evaluators.ResidualMLP):
        raise TypeError(
            f"module must be a residual MLP made by torch_mlp(), got {type(module).__name__}"
        )
    H = module.stem.out_features
    hidden = (H,) + (2 * H, H) * len(module.blocks)
    plain = evaluators.MLPModule(module.obs_size, module.num_actions, module.num_players, hidden)
    eye = torch.eye(H)
    layers = [(module.stem.weight, module.stem.bias)]
    for block in module.blocks:
        first, second = block[0], block[2]
        layers.append((torch.cat([eye, first.weight]), torch.cat([torch.zeros(H), first.bias])))
        layers.append((torch.cat([eye, second.weight], dim=1), second.bias))
    with torch.no_grad():
        plain.obs_mean.copy_(module.obs_mean)
        plain.obs_std.copy_(module.obs_std)
        for layer, (weight, bias) in zip(plain.trunk, layers):
            layer.weight.copy_(weight)
            layer.bias.copy_(bias)
        for head in ("policy", "value"):
            getattr(plain, head).weight.copy_(getattr(module, head).weight)
            getattr(plain, head).bias.copy_(getattr(module, head).bias)
    return evaluators.MLPEvaluator.from_torch(plain)
