"""Leaf evaluators for a search guided by a learned model (docs/search.md, "Evaluators").

An evaluator is any callable with the protocol

    evaluator(obs, mask) -> (logits, values)
      obs:    numpy float32 [L, O]  observations of L leaf positions (O = the game's observation
                                    size, ``game.observation_tensor_shape()``)
      mask:   numpy bool [L, A]     the legal moves of each leaf (A = ``game.num_distinct_actions()``)
      logits: numpy float32 [L, A]  unnormalised log-priors (illegal entries are ignored)
      values: numpy float32 [L, P]  per seat, in [0, 1] (P = the game's number of players)

    >>> import caribsim
    >>> from caribsim.search import evaluators
    >>> game = caribsim.load_game("puerto_rico", players=3)
    >>> net = evaluators.MLPEvaluator.for_game(game, hidden=(64, 64), seed=0)
    >>> state = game.new_initial_state(seed=1)
    >>> while state.is_chance_node():
    ...     _ = state.resolve_chance()
    >>> obs = state.observation_tensor()[None, :]
    >>> mask = state.legal_actions_mask().astype(bool)[None, :]
    >>> logits, values = net(obs, mask)
    >>> logits.shape, values.shape
    ((1, 143), (1, 3))

- ``MLPEvaluator``: a numpy multilayer perceptron (ReLU trunk, a policy head and a value
  head with a softmax over seats), saved as ``.npz``; ``fit`` / ``train_mlp`` train it on
  self-play data (caribsim.selfplay) with Adam;
- ``TorchEvaluator``: the protocol over a PyTorch module (the optional extra
  ``pip install 'caribsim[nn]'``); ``torch_mlp`` builds a small residual MLP module, and
  ``MLPEvaluator.to_torch`` / ``MLPEvaluator.from_torch`` convert the numpy MLP;
- ``CompiledMLP`` (``MLPEvaluator.compiled()``): the MLP's network in C; the guided search
  evaluates it without a Python call (``guided.BatchSearch``'s ``compiled`` option);
- ``CachedEvaluator``: an LRU cache over any evaluator, keyed by the bytes of (obs, mask);
- ``check_input`` / ``check_output``: the protocol's checks, with clear errors.
"""

from __future__ import annotations

import collections
import math
import os
import threading
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from caribsim import _shards
from caribsim._common import _int_in, _number
from caribsim.search._mlp import CompiledMLP
from caribsim.search.mcts import _Exclusive

FORMAT = "caribsim-mlp"  # the "format" array of an MLPEvaluator file
VERSION = 1  # its "version"; load() refuses any other
INSTALL_HINT = "PyTorch is not installed; install the extra: pip install 'caribsim[nn]'"
_MAX_SIZE = 1 << 24  # bound on O, A, P and hidden widths (a corrupt file says 10**18)


# ---------------------------------------------------------------------------------------------
# the protocol's checks


def check_input(obs, mask, obs_size=None, num_actions=None) -> int:
    """Check an evaluator's input and return L, the number of leaves.

    ``obs`` must be a numpy float32 array [L, O] of finite numbers, ``mask`` a numpy bool
    array [L, A] with the same L; ``obs_size`` / ``num_actions`` (when given) are the O and
    A the evaluator expects. Raises TypeError (wrong type or dtype) or ValueError (wrong
    shape, NaN or inf) naming the argument and what is allowed.
    """
    for name, arr, dtype, what in (
        ("obs", obs, np.float32, "float32 [L, O]"),
        ("mask", mask, np.bool_, "bool [L, A]"),
    ):
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"{name} must be a numpy array of {what}, got {type(arr).__name__}")
        if arr.dtype != dtype:
            raise TypeError(f"{name} must have dtype {np.dtype(dtype).name}, got {arr.dtype}")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-dimensional {what}, got shape {arr.shape}")
    if mask.shape[0] != obs.shape[0]:
        raise ValueError(
            f"obs and mask must have the same number of rows L, got {obs.shape[0]} "
            f"and {mask.shape[0]}"
        )
    if obs_size is not None and obs.shape[1] != obs_size:
        raise ValueError(
            f"obs must have O = {obs_size} columns (the game's observation size), "
            f"got shape {obs.shape}"
        )
    if num_actions is not None and mask.shape[1] != num_actions:
        raise ValueError(
            f"mask must have A = {num_actions} columns (the game's number of "
            f"distinct actions), got shape {mask.shape}"
        )
    bad = ~np.isfinite(obs)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise ValueError(f"obs holds NaN or inf (first in row {row})")
    return obs.shape[0]


def check_output(logits, values, L, A, P):
    """Check an evaluator's output for L leaves, A actions and P seats; return (logits, values).

    ``logits`` must be a numpy float32 array [L, A] of finite numbers and ``values`` a numpy
    float32 array [L, P] of numbers in [0, 1]. ``P=None`` accepts any number of seats >= 1.
    Raises TypeError (wrong type or dtype) or ValueError (wrong shape, NaN, inf or a value
    outside [0, 1]) that names the array, the row and what is allowed.
    """
    L = _int_in(L, "L", 0)
    A = _int_in(A, "A", 1)
    P = None if P is None else _int_in(P, "P", 1)
    for name, arr, cols, letter in (("logits", logits, A, "A"), ("values", values, P, "P")):
        if not isinstance(arr, np.ndarray):
            raise TypeError(
                f"evaluator output {name} must be a numpy float32 array [L, {letter}], "
                f"got {type(arr).__name__}"
            )
        if arr.dtype != np.float32:
            raise TypeError(f"evaluator output {name} must have dtype float32, got {arr.dtype}")
        want = (L, "P >= 1" if cols is None else cols)
        if (
            arr.ndim != 2
            or arr.shape[0] != L
            or (cols is not None and arr.shape[1] != cols)
            or (cols is None and arr.shape[1] < 1)
        ):
            raise ValueError(
                f"evaluator output {name} must have shape (L, {letter}) = "
                f"({want[0]}, {want[1]}), got {arr.shape}"
            )
        bad = ~np.isfinite(arr)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            raise ValueError(f"evaluator output {name} holds NaN or inf (first in row {row})")
    out = (values < 0) | (values > 1)
    if out.any():
        row, col = (int(i) for i in np.argwhere(out)[0])
        raise ValueError(
            f"evaluator output values must be in [0, 1], got {float(values[row, col])!r} "
            f"in row {row}, seat {col}"
        )
    return logits, values


def _softmax(u):
    """Row softmax of a float32 array (a new array)."""
    e = u - u.max(axis=1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=1, keepdims=True)
    return e


def _game_sizes(game) -> tuple[int, int, int]:
    for attr in ("observation_tensor_shape", "num_distinct_actions", "num_players"):
        if not callable(getattr(game, attr, None)):
            raise TypeError(
                f"game must be a caribsim game (caribsim.load_game(...)), got {type(game).__name__}"
            )
    return (
        int(np.prod(game.observation_tensor_shape())),
        int(game.num_distinct_actions()),
        int(game.num_players()),
    )


def _hidden_sizes(hidden, what="hidden"):
    if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__iter__"):
        raise TypeError(
            f"{what} must be a tuple of layer widths, e.g. (128, 128), got {type(hidden).__name__}"
        )
    hidden = tuple(hidden)
    if len(hidden) > 64:
        raise ValueError(f"{what} may list at most 64 layers, got {len(hidden)}")
    return tuple(_int_in(h, f"{what} width", 1, _MAX_SIZE) for h in hidden)


# ---------------------------------------------------------------------------------------------
# training data


def training_arrays(data, obs_size=None, num_actions=None, num_players=None) -> dict:
    """The arrays an MLP trains on, checked: {"observation": float32 [N, O], "legal_mask": bool
    [N, A], "policy": float32 [N, A] (normalised over the legal moves), "returns": float32
    [N, P]}.

    ``data`` is a self-play folder (``caribsim.selfplay.generate``'s ``out``, read through its
    manifest.json), one shard ``.npz`` of such a folder, or a mapping with those four arrays
    (``caribsim.selfplay.load(folder)``; other keys are ignored). The sizes, when given, must
    match. Errors name the array and what is wrong.
    """
    if isinstance(data, (str, os.PathLike)):
        data = _shards.read(data, ("observation", "legal_mask", "policy", "returns"))
    if not hasattr(data, "keys") or not hasattr(data, "__getitem__"):
        raise TypeError(
            f"data must be a self-play folder, a shard .npz or a mapping of arrays, got "
            f"{type(data).__name__}"
        )
    missing = [k for k in ("observation", "legal_mask", "policy", "returns") if k not in data]
    if missing:
        raise ValueError(
            f"data has no {', '.join(repr(k) for k in missing)} array (self-play data "
            f"holds observation, legal_mask, policy and returns)"
        )
    arrays = {}
    for name in ("observation", "legal_mask", "policy", "returns"):
        arr = np.asarray(data[name])
        if arr.ndim != 2:
            raise ValueError(
                f"data[{name!r}] must be 2-dimensional [N, ...], got shape {arr.shape}"
            )
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"data[{name!r}] must hold numbers, got dtype {arr.dtype}")
        arrays[name] = arr
    n = arrays["observation"].shape[0]
    if n == 0:
        raise ValueError("data holds no decision (N = 0)")
    for name, arr in arrays.items():
        if arr.shape[0] != n:
            raise ValueError(
                f"data arrays must have the same number of rows N, got {n} observations "
                f"and {arr.shape[0]} rows of {name!r}"
            )
    obs = np.ascontiguousarray(arrays["observation"], dtype=np.float32)
    mask = arrays["legal_mask"] != 0
    policy = np.ascontiguousarray(arrays["policy"], dtype=np.float32)
    returns = np.ascontiguousarray(arrays["returns"], dtype=np.float32)
    for name, arr, size, what in (
        ("observation", obs, obs_size, "O"),
        ("legal_mask", mask, num_actions, "A"),
        ("policy", policy, num_actions, "A"),
        ("returns", returns, num_players, "P"),
    ):
        if size is not None and arr.shape[1] != size:
            raise ValueError(
                f"data[{name!r}] must have {what} = {size} columns, got shape {arr.shape}"
            )
    if policy.shape != mask.shape:
        raise ValueError(
            f"data['policy'] and data['legal_mask'] must have the same shape, got "
            f"{policy.shape} and {mask.shape}"
        )
    for name, arr in (("observation", obs), ("policy", policy), ("returns", returns)):
        if not np.isfinite(arr).all():
            raise ValueError(f"data[{name!r}] holds NaN or inf")
    if (policy < 0).any():
        raise ValueError("data['policy'] holds negative entries (visit shares are >= 0)")
    if (policy[~mask] > 0).any():
        row = int(np.argwhere((policy > 0) & ~mask)[0][0])
        raise ValueError(f"data['policy'] puts mass on an illegal move (row {row})")
    total = policy.sum(axis=1, keepdims=True)
    if (total <= 0).any():
        row = int(np.argwhere(total[:, 0] <= 0)[0][0])
        raise ValueError(f"data['policy'] row {row} has no mass on a legal move")
    if ((returns < 0) | (returns > 1)).any():
        raise ValueError("data['returns'] must be in [0, 1] (the games' returns)")
    return {"observation": obs, "legal_mask": mask, "policy": policy / total, "returns": returns}


def observation_stats(data):
    """Per-feature mean and standard deviation (float32 [O] each) of the observations of
    ``data`` (as ``training_arrays`` reads it); a constant feature gets a deviation of 1."""
    obs = training_arrays(data)["observation"].astype(np.float64)
    mean = obs.mean(axis=0)
    std = obs.std(axis=0)
    std[std < 1e-6] = 1.0
    return mean.astype(np.float32), std.astype(np.float32)


@dataclass(frozen=True)
class Loss:
    """A training loss and its parts (means over the rows).

    policy: cross-entropy of the visit-policy target against the softmax of the logits over
            the legal moves;
    value:  ``value_weight`` x the mean over seats of the squared error of the values against
            the game's returns;
    l2:     ``l2 / 2`` x the sum of the squared weights (not the biases);
    total:  policy + value + l2.
    """

    total: float
    policy: float
    value: float
    l2: float


# ---------------------------------------------------------------------------------------------
# the numpy MLP


class MLPEvaluator:
    """A small multilayer perceptron in numpy, as an evaluator.

    ``x = (obs - obs_mean) / obs_std`` (a fixed per-feature scaling stored with the weights:
    identity by default; ``train_mlp`` takes it from the training data once, so the network's
    function does not drift as it would with running statistics), then ``hidden`` layers
    ``h = relu(h @ W + b)``, then two linear heads on the last hidden layer (on ``x`` when
    ``hidden`` is empty): the policy logits [A] and the value logits [P]; the values are the
    softmax of the value logits over the seats, so each row is in [0, 1] and sums to 1, like
    the games' returns (constant-sum utilities: a win 1, a shared win split). The logits of
    illegal moves are returned as computed (the protocol ignores them).

    ``MLPEvaluator(obs_size, num_actions, num_players, hidden=(128, 128), seed=0)`` draws
    He-normal trunk weights and 1/sqrt(fan-in) head weights from ``numpy.random.default_rng(seed)``,
    zero biases; ``MLPEvaluator.for_game(game, ...)`` takes the sizes from a game.

    ``compiled()`` is the same network in C (a ``CompiledMLP``, made once per set of weights):
    the guided search (``guided.BatchSearch``, ``AlphaZeroBot``) evaluates an MLPEvaluator
    through it, inside its nogil loop, unless told ``compiled=False``.

    Threads: a call (the forward pass) only reads the weights and may run on any number of
    threads at once; ``fit`` changes the weights and refuses a second concurrent ``fit``
    (RuntimeError). Calls during a ``fit`` see the weights before or after an epoch, never a
    mix: each epoch publishes a new set of arrays as one reference. A copy (pickle, copy,
    deepcopy: e.g. for a worker process) has the same weights and trains independently.
    """

    def __init__(
        self,
        obs_size,
        num_actions,
        num_players,
        hidden=(128, 128),
        seed=0,
        obs_mean=None,
        obs_std=None,
    ):
        obs_size = _int_in(obs_size, "obs_size", 1, _MAX_SIZE)
        num_actions = _int_in(num_actions, "num_actions", 1, _MAX_SIZE)
        num_players = _int_in(num_players, "num_players", 1, 64)
        hidden = _hidden_sizes(hidden)
        seed = _int_in(seed, "seed", 0, 2**64 - 1)
        mean, std = _normalisation(obs_mean, obs_std, obs_size)
        rng = np.random.default_rng(seed)
        params = {"obs_mean": mean, "obs_std": std}
        fan_in = obs_size
        for i, width in enumerate(hidden):
            params[f"w{i}"] = (
                rng.standard_normal((fan_in, width)) * math.sqrt(2.0 / fan_in)
            ).astype(np.float32)
            params[f"b{i}"] = np.zeros(width, dtype=np.float32)
            fan_in = width
        params["policy_w"] = (
            rng.standard_normal((fan_in, num_actions)) / math.sqrt(fan_in)
        ).astype(np.float32)
        params["policy_b"] = np.zeros(num_actions, dtype=np.float32)
        params["value_w"] = (rng.standard_normal((fan_in, num_players)) / math.sqrt(fan_in)).astype(
            np.float32
        )
        params["value_b"] = np.zeros(num_players, dtype=np.float32)
        self._init(obs_size, num_actions, num_players, hidden, params)

    def _init(self, obs_size, num_actions, num_players, hidden, params):
        self._sizes = (obs_size, num_actions, num_players, hidden)
        self._compiled = None  # (the _state it was made from, its CompiledMLP)
        self._fit_guard = _Exclusive(
            "MLPEvaluator",
            "this MLPEvaluator is being trained by another "
            "thread; train one MLPEvaluator per thread",
        )
        self._publish(params)

    @classmethod
    def for_game(cls, game, hidden=(128, 128), seed=0, obs_mean=None, obs_std=None) -> MLPEvaluator:
        """An MLP with the sizes of ``game`` (a ``caribsim.load_game(...)`` game)."""
        return cls(*_game_sizes(game), hidden=hidden, seed=seed, obs_mean=obs_mean, obs_std=obs_std)

    @classmethod
    def _from_params(cls, obs_size, num_actions, num_players, hidden, params):
        self = cls.__new__(cls)
        self._init(obs_size, num_actions, num_players, hidden, params)
        return self

    # sizes -----------------------------------------------------------------------------------
    obs_size = property(lambda self: self._sizes[0], doc="O, the observation size")
    num_actions = property(lambda self: self._sizes[1], doc="A, the number of distinct actions")
    num_players = property(lambda self: self._sizes[2], doc="P, the number of seats")
    hidden = property(lambda self: self._sizes[3], doc="the widths of the hidden layers")

    def parameters(self) -> dict:
        """Copies of the arrays: obs_mean, obs_std, w0, b0, ..., policy_w, policy_b, value_w,
        value_b (weights [in, out], float32)."""
        return {k: v.copy() for k, v in self._state[0].items()}

    def _publish(self, params):
        params = {k: np.array(v, dtype=np.float32, copy=True) for k, v in params.items()}
        for v in params.values():
            v.flags.writeable = False
        n = len(self._sizes[3])
        trunk = tuple((params[f"w{i}"], params[f"b{i}"]) for i in range(n))
        head_w = np.ascontiguousarray(
            np.concatenate([params["policy_w"], params["value_w"]], axis=1)
        )
        head_b = np.concatenate([params["policy_b"], params["value_b"]])
        inv_std = (1.0 / params["obs_std"]).astype(np.float32)
        self._state = (params, (params["obs_mean"], inv_std, trunk, head_w, head_b))

    # the forward pass ------------------------------------------------------------------------
    def __call__(self, obs, mask):
        """(logits float32 [L, A], values float32 [L, P]) for a batch: one matmul per layer."""
        L = check_input(obs, mask, self.obs_size, self.num_actions)
        out = _trunk_and_heads(self._state[1], obs)[1]
        A = self.num_actions
        logits = np.ascontiguousarray(out[:, :A])
        values = _softmax(out[:, A:])
        return check_output(logits, values, L, A, self.num_players)

    def compiled(self) -> CompiledMLP:
        """This network in C (``CompiledMLP``): the same function within float32 rounding,
        evaluated without the GIL. Made once for the current weights (a copy of them) and
        made again after ``fit`` changes them; any thread may call this."""
        state = self._state
        made = self._compiled
        if made is None or made[0] is not state:
            made = (state, CompiledMLP(_Weights(self._sizes, state[0])))
            self._compiled = made
        return made[1]

    # files -----------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the MLP to ``path`` (exactly that name) as an uncompressed ``.npz`` of named
        arrays: format, version, obs_size, num_actions, num_players, hidden and the parameters
        (see ``parameters``). Written to a temporary file and renamed, so a reader never sees
        half a file."""
        path = _fspath(path, "path")
        params = self._state[0]
        arrays: dict[str, Any] = {
            "format": np.array(FORMAT),
            "version": np.array(VERSION, dtype=np.int64),
            "obs_size": np.array(self.obs_size, dtype=np.int64),
            "num_actions": np.array(self.num_actions, dtype=np.int64),
            "num_players": np.array(self.num_players, dtype=np.int64),
            "hidden": np.array(self.hidden, dtype=np.int64).reshape(-1),
        }
        arrays.update(params)
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise

    @classmethod
    def load(cls, path) -> MLPEvaluator:
        """Read an MLP written by ``save``. A missing, unreadable, corrupt or foreign file, another
        format version, a missing or extra array or one of the wrong shape or dtype raises
        ValueError naming the file and what is wrong."""
        path = _fspath(path, "path")
        what = f"MLP file {path!r}"
        return cls._from_arrays(_read_npz(path, what), what)

    @classmethod
    def _from_arrays(cls, arrays, what):
        def scalar(name, kind):
            if name not in arrays:
                raise ValueError(
                    f"{what} has no {name!r} array: not a {FORMAT} file, or a damaged one"
                )
            a = arrays[name]
            if a.shape != () or a.dtype.kind not in kind:
                raise ValueError(f"{what}: {name!r} must be a scalar, got {a.dtype} {a.shape}")
            return a.item()

        fmt = scalar("format", "U")
        if fmt != FORMAT:
            raise ValueError(f"{what} is not a {FORMAT} file (its format is {fmt!r})")
        version = scalar("version", "iu")
        if version != VERSION:
            raise ValueError(
                f"{what} has format version {version}; this caribsim reads version {VERSION}"
                + (" (the file was written by a newer caribsim)" if version > VERSION else "")
            )
        try:
            obs_size = _int_in(scalar("obs_size", "iu"), "obs_size", 1, _MAX_SIZE)
            num_actions = _int_in(scalar("num_actions", "iu"), "num_actions", 1, _MAX_SIZE)
            num_players = _int_in(scalar("num_players", "iu"), "num_players", 1, 64)
            if "hidden" not in arrays:
                raise ValueError("no 'hidden' array")
            h = arrays["hidden"]
            if h.ndim != 1 or h.dtype.kind not in "iu":
                raise ValueError(
                    f"'hidden' must be a 1-dimensional int array, got {h.dtype} {h.shape}"
                )
            hidden = _hidden_sizes(h.tolist())
        except (TypeError, ValueError) as e:
            raise ValueError(f"{what} has bad sizes: {e}") from None
        shapes = _param_shapes(obs_size, num_actions, num_players, hidden)
        meta = {"format", "version", "obs_size", "num_actions", "num_players", "hidden"}
        extra = sorted(set(arrays) - meta - set(shapes))
        if extra:
            raise ValueError(f"{what} has unknown arrays {extra}")
        params = {}
        for name, shape in shapes.items():
            if name not in arrays:
                raise ValueError(f"{what} has no {name!r} array")
            a = arrays[name]
            if a.dtype != np.float32 or a.shape != shape:
                raise ValueError(
                    f"{what}: {name!r} must be float32 {shape}, got {a.dtype} {a.shape}"
                )
            if not np.isfinite(a).all():
                raise ValueError(f"{what}: {name!r} holds NaN or inf")
            params[name] = a
        if (params["obs_std"] <= 0).any():
            raise ValueError(f"{what}: 'obs_std' must be > 0")
        return cls._from_params(obs_size, num_actions, num_players, hidden, params)

    # training --------------------------------------------------------------------------------
    def loss(self, data, value_weight=1.0, l2=1e-4) -> Loss:
        """The loss of the current weights on all of ``data`` (see ``fit``), changing nothing."""
        value_weight = _number(value_weight, "value_weight", 0.0)
        l2 = _number(l2, "l2", 0.0)
        arrays = training_arrays(data, self.obs_size, self.num_actions, self.num_players)
        params, fwd = self._state
        n = len(arrays["observation"])
        sums = np.zeros(2)
        for start in range(0, n, 4096):
            rows = slice(start, start + 4096)
            out = _trunk_and_heads(fwd, arrays["observation"][rows])[1]
            p, v = _head_losses(
                out,
                arrays["legal_mask"][rows],
                arrays["policy"][rows],
                arrays["returns"][rows],
                value_weight,
                self.num_actions,
                grad=False,
            )
            sums += (p * (out.shape[0]), v * out.shape[0])
        l2_term = (
            0.5
            * l2
            * sum(
                float(np.sum(np.square(params[k], dtype=np.float64)))
                for k in params
                if k.startswith("w") or k.endswith("_w")
            )
        )
        return Loss(
            float(sums.sum() / n + l2_term), float(sums[0] / n), float(sums[1] / n), l2_term
        )

    def fit(
        self, data, *, epochs=5, batch_size=256, lr=1e-3, l2=1e-4, value_weight=1.0, seed=0
    ) -> list:
        """Train on self-play data with Adam; return the ``Loss`` of each epoch.

        data:         a self-play folder, a shard or a mapping of arrays (``training_arrays``).
        epochs:       passes over the data, each in a fresh random order of the rows.
        batch_size:   rows per Adam step (the last batch of an epoch may be smaller).
        lr:           Adam's step size (betas 0.9 and 0.999, eps 1e-8; fresh moments per call).
        l2, value_weight: the weights of the L2 and value terms of the loss (see ``Loss``).
        seed:         the order of the rows; with the same weights, data and options the
                      result is the same.
        An epoch's loss is the mean over its rows of the loss of each batch before its step.
        The observation scaling (obs_mean, obs_std) is not changed.
        """
        epochs = _int_in(epochs, "epochs", 1, 1_000_000)
        batch_size = _int_in(batch_size, "batch_size", 1, 1 << 30)
        lr = _number(lr, "lr", 0.0, lo_open=True)
        l2 = _number(l2, "l2", 0.0)
        value_weight = _number(value_weight, "value_weight", 0.0)
        seed = _int_in(seed, "seed", 0, 2**64 - 1)
        arrays = training_arrays(data, self.obs_size, self.num_actions, self.num_players)
        with self._fit_guard, np.errstate(over="ignore", invalid="ignore"):  # divergence: checked
            return self._fit(arrays, epochs, batch_size, lr, l2, value_weight, seed)

    def _fit(self, arrays, epochs, batch_size, lr, l2, value_weight, seed):
        A = self.num_actions
        n_layers = len(self.hidden)
        params = self.parameters()
        # the trainable arrays in forward order: (w0, b0, ..., head_w, head_b), head = policy | value
        train = []
        for i in range(n_layers):
            train += [params[f"w{i}"], params[f"b{i}"]]
        train += [
            np.ascontiguousarray(np.concatenate([params["policy_w"], params["value_w"]], axis=1)),
            np.concatenate([params["policy_b"], params["value_b"]]),
        ]
        is_weight = [i % 2 == 0 for i in range(len(train))]
        m = [np.zeros_like(t) for t in train]
        v = [np.zeros_like(t) for t in train]
        mean, inv_std = params["obs_mean"], (1.0 / params["obs_std"]).astype(np.float32)
        obs, mask, policy, returns = (
            arrays[k] for k in ("observation", "legal_mask", "policy", "returns")
        )
        n = len(obs)
        rng = np.random.default_rng(seed)
        b1, b2, eps, step = 0.9, 0.999, 1e-8, 0
        history = []
        for _ in range(epochs):
            order = rng.permutation(n)
            sums = np.zeros(3)
            for start in range(0, n, batch_size):
                rows = order[start : start + batch_size]
                B = len(rows)
                trunk = tuple((train[2 * i], train[2 * i + 1]) for i in range(n_layers))
                acts, out = _trunk_and_heads(
                    (mean, inv_std, trunk, train[-2], train[-1]), obs[rows]
                )
                p_loss, v_loss, d_out = _head_losses(
                    out, mask[rows], policy[rows], returns[rows], value_weight, A, grad=True
                )
                l2_term = (
                    0.5
                    * l2
                    * sum(
                        float(np.sum(np.square(t, dtype=np.float64)))
                        for t, w in zip(train, is_weight)
                        if w
                    )
                )
                sums += (p_loss * B, v_loss * B, l2_term * B)
                grads = [None] * len(train)
                grads[-2] = acts[-1].T @ d_out
                grads[-1] = d_out.sum(axis=0)
                dh = d_out @ train[-2].T
                for i in reversed(range(n_layers)):
                    dh *= acts[i + 1] > 0
                    grads[2 * i] = acts[i].T @ dh
                    grads[2 * i + 1] = dh.sum(axis=0)
                    if i:
                        dh = dh @ train[2 * i].T
                step += 1
                c1, c2 = 1 - b1**step, 1 - b2**step
                for t, g, mt, vt, w in zip(train, grads, m, v, is_weight):
                    if w and l2:
                        g = g + np.float32(l2) * t
                    mt *= b1
                    mt += (1 - b1) * g
                    vt *= b2
                    vt += (1 - b2) * np.square(g)
                    t -= (lr / c1) * mt / (np.sqrt(vt / c2) + eps)
            if not all(np.isfinite(t).all() for t in train):
                raise FloatingPointError(
                    "training diverged (NaN or inf in the weights); lower lr; "
                    "the weights before this epoch are kept"
                )
            new = {"obs_mean": params["obs_mean"], "obs_std": params["obs_std"]}
            for i in range(n_layers):
                new[f"w{i}"], new[f"b{i}"] = train[2 * i], train[2 * i + 1]
            new["policy_w"], new["value_w"] = train[-2][:, :A], train[-2][:, A:]
            new["policy_b"], new["value_b"] = train[-1][:A], train[-1][A:]
            self._publish(new)
            p, vl, l2s = sums / n
            history.append(Loss(float(p + vl + l2s), float(p), float(vl), float(l2s)))
        return history

    # torch -----------------------------------------------------------------------------------
    def to_torch(self):
        """This MLP as a PyTorch module (same layers, same outputs: ``module(obs)`` returns
        ``(logits, values)`` tensors), for ``TorchEvaluator`` or further training in torch.
        Needs the extra ``caribsim[nn]``."""
        torch = _torch()
        module = _torch_classes()["MLPModule"](
            self.obs_size, self.num_actions, self.num_players, self.hidden
        )
        params = self._state[0]
        with torch.no_grad():
            module.obs_mean.copy_(torch.from_numpy(params["obs_mean"].copy()))
            module.obs_std.copy_(torch.from_numpy(params["obs_std"].copy()))
            for i, layer in enumerate(module.trunk):
                layer.weight.copy_(torch.from_numpy(params[f"w{i}"].T.copy()))
                layer.bias.copy_(torch.from_numpy(params[f"b{i}"].copy()))
            for head in ("policy", "value"):
                getattr(module, head).weight.copy_(torch.from_numpy(params[f"{head}_w"].T.copy()))
                getattr(module, head).bias.copy_(torch.from_numpy(params[f"{head}_b"].copy()))
        return module

    @classmethod
    def from_torch(cls, module) -> MLPEvaluator:
        """The numpy MLP of a module made by ``to_torch`` (possibly trained further in torch)."""
        torch = _torch()
        kind = _torch_classes()["MLPModule"]
        if not isinstance(module, kind):
            raise TypeError(
                f"module must be a module made by MLPEvaluator.to_torch(), got "
                f"{type(module).__name__}"
            )

        def arr(t):
            return t.detach().to("cpu", torch.float32).numpy().copy()

        def weights(layer):
            # [in, out] in C order, as MLPEvaluator keeps them: a transposed view would take
            # another BLAS kernel, whose sums round differently
            return np.ascontiguousarray(arr(layer.weight).T)

        params = {"obs_mean": arr(module.obs_mean), "obs_std": arr(module.obs_std)}
        for i, layer in enumerate(module.trunk):
            params[f"w{i}"], params[f"b{i}"] = weights(layer), arr(layer.bias)
        for head in ("policy", "value"):
            params[f"{head}_w"] = weights(getattr(module, head))
            params[f"{head}_b"] = arr(getattr(module, head).bias)
        sizes = (module.obs_size, module.num_actions, module.num_players, tuple(module.hidden))
        return cls._from_arrays(
            {
                "format": np.array(FORMAT),
                "version": np.array(VERSION),
                "obs_size": np.array(sizes[0]),
                "num_actions": np.array(sizes[1]),
                "num_players": np.array(sizes[2]),
                "hidden": np.array(sizes[3], dtype=np.int64).reshape(-1),
                **params,
            },
            "the module",
        )

    def __reduce__(self):
        # a copy (pickle, copy, deepcopy; e.g. to a worker process) has the same weights and a
        # guard of its own
        return (_make_mlp, (self._sizes, self._state[0]))

    def __repr__(self):
        return (
            f"MLPEvaluator(obs_size={self.obs_size}, num_actions={self.num_actions}, "
            f"num_players={self.num_players}, hidden={self.hidden})"
        )


class _Weights:
    """What CompiledMLP reads: the sizes and the published (read-only) parameter arrays."""

    def __init__(self, sizes, params):
        self.obs_size, self.num_actions, self.num_players, self.hidden = sizes
        self.parameters = params


def _make_mlp(sizes, params):
    return MLPEvaluator._from_params(*sizes, dict(params))


def _param_shapes(obs_size, num_actions, num_players, hidden):
    shapes = {"obs_mean": (obs_size,), "obs_std": (obs_size,)}
    fan_in = obs_size
    for i, width in enumerate(hidden):
        shapes[f"w{i}"], shapes[f"b{i}"] = (fan_in, width), (width,)
        fan_in = width
    shapes.update(
        policy_w=(fan_in, num_actions),
        policy_b=(num_actions,),
        value_w=(fan_in, num_players),
        value_b=(num_players,),
    )
    return shapes


def _normalisation(mean, std, obs_size):
    out = []
    for name, arr, default in (("obs_mean", mean, 0.0), ("obs_std", std, 1.0)):
        if arr is None:
            out.append(np.full(obs_size, default, dtype=np.float32))
            continue
        a = np.asarray(arr)
        if a.dtype.kind not in "biuf" or a.shape != (obs_size,):
            raise ValueError(
                f"{name} must be {obs_size} numbers (one per observation feature), got "
                f"{a.dtype} {a.shape}"
            )
        a = a.astype(np.float32)
        if not np.isfinite(a).all() or (name == "obs_std" and (a <= 0).any()):
            raise ValueError(f"{name} must be finite" + (" and > 0" if name == "obs_std" else ""))
        out.append(a)
    return out


def _trunk_and_heads(fwd, obs):
    """The activations (x, h1, ..., hk) and the head output [L, A + P] for a batch."""
    mean, inv_std, trunk, head_w, head_b = fwd
    h = obs - mean
    h *= inv_std
    acts = [h]
    for w, b in trunk:
        h = h @ w
        h += b
        np.maximum(h, 0, out=h)
        acts.append(h)
    out = h @ head_w
    out += head_b
    return acts, out


def _head_losses(out, mask, policy, returns, value_weight, A, grad):
    """Policy cross-entropy and value MSE of a batch (means over rows), and with ``grad`` their
    gradient with respect to the head output."""
    B, P = out.shape[0], out.shape[1] - A
    z = np.where(mask, out[:, :A], -np.inf)
    z -= z.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(z).sum(axis=1, keepdims=True))
    log_p = np.where(mask, z - log_sum, np.float32(0))  # 0, not -inf, off the legal moves
    p_loss = -float((policy * log_p).sum(dtype=np.float64)) / B
    values = _softmax(out[:, A:])
    diff = values - returns
    v_loss = value_weight * float(np.square(diff, dtype=np.float64).sum()) / (B * P)
    if not grad:
        return p_loss, v_loss
    d_out = np.empty_like(out)
    d_out[:, :A] = (np.where(mask, np.exp(log_p), np.float32(0)) - policy) / B
    g = diff * np.float32(2 * value_weight / (B * P))
    d_out[:, A:] = values * (g - (g * values).sum(axis=1, keepdims=True))
    return p_loss, v_loss, d_out


def train_mlp(
    data,
    *,
    hidden=(128, 128),
    seed=0,
    normalise=True,
    epochs=5,
    batch_size=256,
    lr=1e-3,
    l2=1e-4,
    value_weight=1.0,
):
    """A new ``MLPEvaluator`` trained on self-play ``data``; returns ``(evaluator, losses)``.

    The sizes come from the data (O, A from the observation and mask columns, P from the
    returns). ``normalise=True`` scales the observations by the data's per-feature mean and
    standard deviation (``observation_stats``), stored with the weights; ``False`` leaves
    them as they are. ``seed`` draws the initial weights and the order of the rows; the
    other options are those of ``MLPEvaluator.fit``; ``losses`` is its list of ``Loss`` per epoch.
    """
    if not isinstance(normalise, bool):
        raise TypeError(
            f"normalise must be True or False, got {type(normalise).__name__} {normalise!r}"
        )
    arrays = training_arrays(data)
    sizes = (
        arrays["observation"].shape[1],
        arrays["legal_mask"].shape[1],
        arrays["returns"].shape[1],
    )
    mean = std = None
    if normalise:
        mean, std = observation_stats(arrays)
    net = MLPEvaluator(*sizes, hidden=hidden, seed=seed, obs_mean=mean, obs_std=std)
    losses = net.fit(
        arrays,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        l2=l2,
        value_weight=value_weight,
        seed=seed,
    )
    return net, losses


# what an MLP file may hold, uncompressed, in all its arrays (the shipped network: 0.8 MB); the
# sizes are read from the zip directory and each array's .npy header before anything is read
MAX_FILE_BYTES = 1 << 30


def _read_npz(path, what):
    """The arrays of the .npz file ``path``, refusing with one ValueError each: a missing or
    unreadable file, a file that is not a zip of .npy arrays, arrays larger in all than
    MAX_FILE_BYTES (read from the zip directory and the .npy headers first, so a small file
    that declares a huge array or a compressed member that inflates to gigabytes is refused
    before it is read), object arrays, and a header that declares more than its member holds."""
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ValueError(f"cannot read {what}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"cannot read {what}: it is a folder") from None
    except OSError as e:
        raise ValueError(f"cannot read {what}: {e.strerror or e}") from None
    except (ValueError, EOFError, zipfile.BadZipFile) as e:
        with open(path, "rb") as f:
            single = f.read(6) == b"\x93NUMPY"
        if single:
            raise ValueError(f"{what} is a single numpy array, not a {FORMAT} .npz file") from None
        raise ValueError(
            f"{what} is not a {FORMAT} .npz file (not a numpy .npz archive: {e})"
        ) from None
    with archive:
        members = archive.infolist()
        total = sum(m.file_size for m in members)
        if total > MAX_FILE_BYTES:
            raise ValueError(
                f"{what} holds {total:,} bytes uncompressed; an MLP file holds at most "
                f"{MAX_FILE_BYTES:,}"
            )
        arrays = {}
        for member in members:
            if not member.filename.endswith(".npy") or member.is_dir():
                raise ValueError(
                    f"{what} is not a {FORMAT} .npz file: its member {member.filename!r} "
                    "is not a .npy array"
                )
            try:
                with archive.open(member) as f:
                    arrays[member.filename[: -len(".npy")]] = _read_npy(f, member, what)
            except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
                message = str(e)
                if message.startswith(what):
                    raise
                raise ValueError(f"{what} is corrupt: {message}") from None
    return arrays


def _read_npy(f, member, what):
    """One .npy array from the open zip member ``f``, its size checked from its header."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f"{what}: {member.filename!r} has .npy format {version}, not 1.0 or 2.0")
    if dtype.hasobject:
        raise ValueError(f"{what}: {member.filename!r} holds Python objects, not numbers")
    count = math.prod(shape)
    size = count * dtype.itemsize
    if size > member.file_size:
        raise ValueError(
            f"{what}: {member.filename!r} declares {shape} {dtype} ({size:,} bytes) but holds "
            f"{member.file_size:,} bytes"
        )
    data = f.read(size)
    if len(data) != size:
        raise ValueError(f"{what}: {member.filename!r} is cut short")
    array = np.frombuffer(data, dtype=dtype, count=count)
    return array.reshape(shape, order="F" if fortran else "C").copy()


def _fspath(path, what):
    try:
        return os.fspath(path)
    except TypeError:
        raise TypeError(f"{what} must be a str or path object, got {type(path).__name__}") from None


# ---------------------------------------------------------------------------------------------
# PyTorch


def _torch():
    """The torch module, or ImportError with the install hint."""
    try:
        import torch
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return torch


_TORCH_CLASSES: dict[str, type] = {}  # name -> the torch module class (see _torch_classes)


def _torch_classes():
    """The module classes (defined on first use, so that torch is imported only when needed)."""
    if _TORCH_CLASSES:
        return _TORCH_CLASSES
    torch = _torch()
    nn = torch.nn

    class MLPModule(nn.Module):
        """The numpy MLPEvaluator's network in torch: forward(obs) -> (logits, values)."""

        def __init__(self, obs_size, num_actions, num_players, hidden):
            super().__init__()
            self.obs_size, self.num_actions, self.num_players = obs_size, num_actions, num_players
            self.hidden = tuple(hidden)
            self.register_buffer("obs_mean", torch.zeros(obs_size))
            self.register_buffer("obs_std", torch.ones(obs_size))
            widths = (obs_size, *self.hidden)
            self.trunk = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
            self.policy = nn.Linear(widths[-1], num_actions)
            self.value = nn.Linear(widths[-1], num_players)

        def forward(self, obs):
            h = (obs - self.obs_mean) / self.obs_std
            for layer in self.trunk:
                h = torch.relu(layer(h))
            return self.policy(h), torch.softmax(self.value(h), dim=-1)

    class ResidualMLP(nn.Module):
        """Linear(O, H) + ReLU, ``blocks`` residual blocks h = relu(h + W2 relu(W1 h)), a
        policy head [A] and a value head [P] with a softmax over seats; forward(obs) ->
        (logits, values). The observation scaling (buffers obs_mean, obs_std) is applied first."""

        def __init__(self, obs_size, num_actions, num_players, hidden, blocks):
            super().__init__()
            self.obs_size, self.num_actions, self.num_players = obs_size, num_actions, num_players
            self.register_buffer("obs_mean", torch.zeros(obs_size))
            self.register_buffer("obs_std", torch.ones(obs_size))
            self.stem = nn.Linear(obs_size, hidden)
            self.blocks = nn.ModuleList(
                nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
                for _ in range(blocks)
            )
            self.policy = nn.Linear(hidden, num_actions)
            self.value = nn.Linear(hidden, num_players)

        def forward(self, obs):
            h = torch.relu(self.stem((obs - self.obs_mean) / self.obs_std))
            for block in self.blocks:
                h = torch.relu(h + block(h))
            return self.policy(h), torch.softmax(self.value(h), dim=-1)

    for cls in (MLPModule, ResidualMLP):  # module-level names, so that pickle finds them
        cls.__qualname__ = cls.__name__
        cls.__module__ = __name__
    _TORCH_CLASSES.update(MLPModule=MLPModule, ResidualMLP=ResidualMLP)
    return _TORCH_CLASSES


def __getattr__(name):
    # the torch module classes, made on first use (``evaluators.ResidualMLP`` imports torch)
    if name in ("MLPModule", "ResidualMLP"):
        return _torch_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def torch_mlp(game, hidden=128, blocks=2, seed=None, obs_mean=None, obs_std=None):
    """A small residual MLP module for ``game``: ``module(obs)`` returns ``(logits [L, A],
    values [L, P])`` tensors, the values a softmax over seats (see ``ResidualMLP``).

    hidden: the width; blocks: the residual blocks (0 or more); seed: draws the initial
    weights without touching torch's global random state (None: from that state);
    obs_mean / obs_std: the observation scaling (default none). Needs ``caribsim[nn]``.
    """
    torch = _torch()
    sizes = _game_sizes(game)
    hidden = _int_in(hidden, "hidden", 1, _MAX_SIZE)
    blocks = _int_in(blocks, "blocks", 0, 256)
    seed = None if seed is None else _int_in(seed, "seed", 0, 2**63 - 1)
    mean, std = _normalisation(obs_mean, obs_std, sizes[0])
    cls = _torch_classes()["ResidualMLP"]
    if seed is None:
        module = cls(*sizes, hidden, blocks)
    else:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = cls(*sizes, hidden, blocks)
    with torch.no_grad():
        module.obs_mean.copy_(torch.from_numpy(mean))
        module.obs_std.copy_(torch.from_numpy(std))
    return module


class TorchEvaluator:
    """The evaluator protocol over a PyTorch module whose ``forward(obs)`` returns
    ``(logits [L, A], values [L, P])`` tensors (a tuple or list of two).

    module:     a ``torch.nn.Module`` (``torch_mlp(game)``, ``MLPEvaluator.to_torch()`` or
                your own); it is put in eval mode (``module.eval()``) here, so that dropout
                and batch norm run as in inference.
    device:     where the module runs: None (where its parameters are; the CPU for a module
                without any) or a device ("cpu", "cuda:0", a ``torch.device``): the module is
                then moved there (``module.to(device)``).
    dtype:      the floating dtype of the observations given to the module (default
                ``torch.float32``; e.g. ``torch.float16`` for a half-precision module).
    batch_size: None (the whole batch in one forward) or the most rows per forward.

    Each call runs under ``torch.inference_mode()``: the batch is copied to the device, and
    the outputs come back as numpy float32 arrays on the CPU (copies), checked with
    ``check_output``, so a module on a GPU gives what it gives on the CPU. The mask is not
    given to the module. Needs the extra ``pip install 'caribsim[nn]'``; without torch the
    constructor raises ImportError saying so.

    Threads: a call changes neither the module nor the evaluator, so one TorchEvaluator may
    be shared between threads when the module's forward keeps no state of its own (true of
    the modules made here); torch runs each forward on its own intra-op threads.
    """

    def __init__(self, module, device=None, dtype=None, batch_size=None):
        torch = _torch()
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
        if dtype is None:
            dtype = torch.float32
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(
                f"dtype must be a floating torch dtype (torch.float32, torch.float16, "
                f"torch.bfloat16, torch.float64), got {dtype!r}"
            )
        if device is None:
            tensors = list(module.parameters()) + list(module.buffers())
            device = tensors[0].device if tensors else torch.device("cpu")
        else:
            if not isinstance(device, (str, torch.device)):
                raise TypeError(
                    f"device must be None, a str such as 'cpu' or 'cuda:0', or a "
                    f"torch.device, got {type(device).__name__}"
                )
            try:
                device = torch.device(device)
            except (RuntimeError, ValueError) as e:
                raise ValueError(f"device {device!r} is not a torch device: {e}") from None
            module.to(device)
        self.batch_size = (
            None if batch_size is None else _int_in(batch_size, "batch_size", 1, 1 << 30)
        )
        self.module, self.device, self.dtype = module, device, dtype
        module.eval()
        self._torch = torch

    def __call__(self, obs, mask):
        """(logits float32 [L, A], values float32 [L, P]) numpy arrays on the CPU."""
        L = check_input(obs, mask)
        torch = self._torch
        step = self.batch_size or max(L, 1)
        logits_parts, value_parts = [], []
        with torch.inference_mode():
            x_all = torch.from_numpy(
                obs
                if obs.flags.writeable and obs.flags.c_contiguous
                else np.ascontiguousarray(obs).copy()
            )
            for start in range(0, max(L, 1), step):
                x = x_all[start : start + step].to(device=self.device, dtype=self.dtype)
                out = self.module(x)
                if (
                    not isinstance(out, (tuple, list))
                    or len(out) != 2
                    or not all(isinstance(t, torch.Tensor) for t in out)
                ):
                    raise TypeError(
                        f"the module must return (logits, values) tensors, got {type(out).__name__}"
                    )
                logits_parts.append(out[0].detach().to("cpu", torch.float32).numpy())
                value_parts.append(out[1].detach().to("cpu", torch.float32).numpy())
        logits = np.array(
            np.concatenate(logits_parts) if len(logits_parts) > 1 else logits_parts[0],
            dtype=np.float32,
            copy=True,
        )
        values = np.array(
            np.concatenate(value_parts) if len(value_parts) > 1 else value_parts[0],
            dtype=np.float32,
            copy=True,
        )
        return check_output(
            logits, values, L, mask.shape[1], values.shape[1] if values.ndim == 2 else None
        )

    def __reduce__(self):
        return (TorchEvaluator, (self.module, self.device, self.dtype, self.batch_size))

    def __repr__(self):
        return (
            f"TorchEvaluator({type(self.module).__name__}, device={str(self.device)!r}, "
            f"dtype={self.dtype}, batch_size={self.batch_size})"
        )


# ---------------------------------------------------------------------------------------------
# the cache


class CachedEvaluator:
    """An LRU cache over an evaluator.

    The protocol gives only (obs, mask), so the key of a leaf is the bytes of its obs row
    (float32) followed by those of its mask row: equal observations with equal legal moves
    are treated as the same position. For an inner evaluator that is a function of (obs,
    mask) (every evaluator here) the cache is exact: it returns what the evaluator would.
    That is the position itself in a perfect-information game (Puerto Rico), and the
    information of the player whose observation it is in a hidden-information game (Port
    Royal, Cuba: a searching player's view, whatever the hidden cards). Empty it (``clear``)
    when the inner evaluator changes, e.g. after training.

    A call looks up every row, evaluates the misses (each distinct one once) in one inner
    call, checks that call's output (``check_output``) and stores it; a row equal to an
    earlier row of the same batch counts as a hit. At most ``max_entries`` positions are
    kept, the least recently used dropped first; an entry holds its key and its logits and
    values, about ``4 O + A + 4 (A + P) + 200`` bytes (about 2.8 kB for Puerto Rico 3p, so
    the default 16384 entries take about 46 MB). All batches must have the O and A of the
    first.

    Threads: the cache's bookkeeping is locked, so one CachedEvaluator may be shared between
    threads when its inner evaluator may (two threads may then both evaluate the same miss).
    A copy (pickle, copy, deepcopy) is an empty cache over a copy of the inner evaluator.
    """

    def __init__(self, evaluator, max_entries=16384):
        if not callable(evaluator):
            raise TypeError(
                f"evaluator must be callable as evaluator(obs, mask) -> (logits, values), "
                f"got {type(evaluator).__name__}"
            )
        self.evaluator = evaluator
        self.max_entries = _int_in(max_entries, "max_entries", 1, 1 << 40)
        self._lock = threading.Lock()
        self._entries = collections.OrderedDict()
        self._sizes = None  # (O, A, P) of the first call
        self._counts = [0, 0, 0]  # hits, misses, inner calls

    def __call__(self, obs, mask):
        """(logits float32 [L, A], values float32 [L, P]), from the cache or the inner evaluator."""
        L = check_input(obs, mask)
        obs_size, A = obs.shape[1], mask.shape[1]
        with self._lock:
            if self._sizes is not None and self._sizes[:2] != (obs_size, A):
                raise ValueError(
                    f"this CachedEvaluator holds positions with O = {self._sizes[0]} and "
                    f"A = {self._sizes[1]}; got a batch with O = {obs_size} and A = {A}"
                )
        rows = np.concatenate(
            [
                np.ascontiguousarray(obs).view(np.uint8).reshape(L, 4 * obs_size),
                np.ascontiguousarray(mask).view(np.uint8).reshape(L, A),
            ],
            axis=1,
        )
        keys = [r.tobytes() for r in rows]
        found = [None] * L  # the cached entry of each row, or None
        first_of = {}  # key of a miss -> its index in the inner batch
        miss_rows, where = [], [None] * L
        with self._lock:
            entries = self._entries
            for i, key in enumerate(keys):
                entry = entries.get(key)
                if entry is not None:
                    entries.move_to_end(key)
                    found[i] = entry
                elif key in first_of:
                    where[i] = first_of[key]
                else:
                    where[i] = first_of[key] = len(miss_rows)
                    miss_rows.append(i)
        n_miss = len(miss_rows)
        inner = None
        if n_miss or self._sizes is None:  # (an empty first batch learns P this way)
            idx = np.asarray(miss_rows, dtype=np.intp)
            inner = self.evaluator(obs[idx], mask[idx])
            if not isinstance(inner, (tuple, list)) or len(inner) != 2:
                raise TypeError(
                    f"the inner evaluator must return (logits, values), got {type(inner).__name__}"
                )
            P = None if self._sizes is None else self._sizes[2]
            check_output(inner[0], inner[1], n_miss, A, P)
        P = inner[1].shape[1] if inner is not None else self._sizes[2]
        logits = np.empty((L, A), dtype=np.float32)
        values = np.empty((L, P), dtype=np.float32)
        for i in range(L):
            if found[i] is not None:
                logits[i], values[i] = found[i]
            else:
                logits[i], values[i] = inner[0][where[i]], inner[1][where[i]]
        with self._lock:
            if self._sizes is None:
                self._sizes = (obs_size, A, P)
            elif self._sizes != (obs_size, A, P):
                raise ValueError(
                    f"this CachedEvaluator holds positions with O, A, P = {self._sizes}; "
                    f"got {(obs_size, A, P)}"
                )
            for j, i in enumerate(miss_rows):
                self._entries[keys[i]] = (inner[0][j].copy(), inner[1][j].copy())
                self._entries.move_to_end(keys[i])
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            self._counts[0] += L - n_miss
            self._counts[1] += n_miss
            self._counts[2] += 1 if inner is not None else 0
        return logits, values

    def stats(self) -> dict:
        """{"hits", "misses", "inner_calls", "entries", "max_entries", "hit_rate"}: rows answered
        from the cache (or by an equal earlier row of the same batch), rows evaluated by the
        inner evaluator, its calls, the positions held now, the bound, hits / (hits + misses)."""
        with self._lock:
            hits, misses, calls = self._counts
            entries = len(self._entries)
        total = hits + misses
        return {
            "hits": hits,
            "misses": misses,
            "inner_calls": calls,
            "entries": entries,
            "max_entries": self.max_entries,
            "hit_rate": hits / total if total else 0.0,
        }

    def clear(self) -> None:
        """Forget every position and zero the counts (e.g. after the inner evaluator changed)."""
        with self._lock:
            self._entries.clear()
            self._counts = [0, 0, 0]
            self._sizes = None

    def __len__(self):
        return len(self._entries)

    def __reduce__(self):
        # a copy is an empty cache over (a copy of) the same inner evaluator
        return (CachedEvaluator, (self.evaluator, self.max_entries))

    def __repr__(self):
        return f"CachedEvaluator({self.evaluator!r}, max_entries={self.max_entries})"
