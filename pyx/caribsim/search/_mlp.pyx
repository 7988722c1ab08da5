# cython: language_level=3
"""The compiled MLP: the network of ``caribsim.search.evaluators.MLPEvaluator`` in C.

The same function as the numpy forward pass, float32 throughout: ``x = (obs - obs_mean) *
(1 / obs_std)``, hidden layers ``relu(h @ W + b)``, the head ``h @ [policy_w | value_w] +
[policy_b | value_b]``, the values a softmax over the seats. Computed without the GIL,
over the nonzero inputs of each layer only (a hidden layer after ReLU is half zeros or
more), which changes no bit of a sum (_mlp_kernel.h: the products, a hand-written kernel
in AVX2 + FMA chosen at run time, or plain C).

The first layer's input is dense once scaled (a zero entry becomes -mean / std), so its
sums start from those of a reference observation and add the entries where the row
differs from it: by default the observation of zeros, whose sums ``b0 + x0 @ W0`` (``x0``
the scaled zero observation) are made once in float64 when the network is built; in the
search, the root of the leaf's tree (``mlp_reference``), from which a leaf a few moves
down differs in a dozen entries of Puerto Rico's 390 instead of ninety nonzero ones.

The guided search (_guided.pyx) calls ``mlp_forward`` on the leaves of a step with no
Python call; ``CompiledMLP`` holds the network and is also an evaluator of the protocol
(``evaluator(obs, mask) -> (logits, values)``) for any other caller.
"""
from libc.math cimport expf
from libc.stdlib cimport malloc, calloc, free
from libc.stdint cimport uintptr_t
from libc.string cimport memcpy, memset

from caribsim._types cimport int32

import numpy as np
cimport numpy as cnp
cnp.import_array()

KERNELS = {"generic": MLP_KERNEL_GENERIC, "avx2": MLP_KERNEL_AVX2}
_KERNEL_NAMES = {v: k for k, v in KERNELS.items()}


def cpu_has_avx2():
    """Whether this CPU (and operating system) runs the AVX2 + FMA kernel."""
    return bool(mlp_cpu_has_avx2())


def default_kernel():
    """The kernel "auto" picks here: "avx2" where the CPU has it, else "generic"."""
    return "avx2" if mlp_cpu_has_avx2() else "generic"


cdef inline int panels(int n) noexcept nogil:
    """Panels of MLP_PANEL outputs for n outputs."""
    return (n + MLP_PANEL - 1) // MLP_PANEL


cdef int mlp_scratch_init(MLPScratch* s, const MLPNet* net) except -1 nogil:
    # two chunks of rows (plus 3 rows: a last block of 1-3 rows is computed as 4)
    s.act = <float*>malloc(2 * (MLP_CHUNK + 3) * <size_t>net.widest * sizeof(float))
    s.zero = <float*>calloc(<size_t>net.widest, sizeof(float))
    s.idx = <int32*>malloc(<size_t>MLP_BLOCKS * net.widest * sizeof(int32))
    s.val = <float*>malloc(<size_t>MLP_CHUNK * net.widest * sizeof(float))
    if s.act == NULL or s.zero == NULL or s.idx == NULL or s.val == NULL:
        mlp_scratch_free(s)
        with gil:
            raise MemoryError("compiled MLP: cannot allocate its scratch rows")
    memset(s.act, 0, 2 * (MLP_CHUNK + 3) * <size_t>net.widest * sizeof(float))
    return 0


cdef void mlp_scratch_free(MLPScratch* s) noexcept nogil:
    free(s.act)
    free(s.zero)
    free(s.idx)
    free(s.val)
    s.act = NULL
    s.zero = NULL
    s.idx = NULL
    s.val = NULL


cdef inline void write_outputs(const MLPNet* net, float* h, float* logits, double* values) noexcept nogil:
    """The head's outputs h [A + P] as logits [A] and the values [P]: the softmax of the value
    logits over the seats, in float32 like numpy, stored as float64."""
    cdef int k, A = net.num_actions, P = net.num_players
    cdef float mx = h[A], z = 0.0
    memcpy(logits, h, A * sizeof(float))
    for k in range(1, P):
        if h[A + k] > mx:
            mx = h[A + k]
    for k in range(P):
        h[A + k] = expf(h[A + k] - mx)
        z += h[A + k]
    for k in range(P):
        values[k] = <double>(h[A + k] / z)


cdef void mlp_reference(const MLPNet* net, MLPScratch* s, const float* obs,
                        float* pre) noexcept nogil:
    """The first layer's sums of one observation before the ReLU, pre [first_width]: the
    starting values of the rows given `obs` as their reference in mlp_forward."""
    cdef const MLPLayer* layer = &net.layers[0]
    cdef const float* row[1]
    cdef const float* ref[1]
    cdef int nnz
    row[0] = obs
    ref[0] = s.zero
    nnz = net.gather_input(row, ref, 1, net.obs_size, net.mean, net.inv_std, s.idx, s.val)
    net.row(layer.w, layer.n_in, layer.n_panels, layer.b, s.idx, s.val, nnz, pre, 0)


cdef void mlp_forward(const MLPNet* net, MLPScratch* s, int n, const float* obs,
                      const float* const* ref_obs, const float* const* ref_pre,
                      float* logits, double* values) noexcept nogil:
    """The network on n rows of obs [n, O]: logits [n, A] (float32) and values [n, P] (the
    float32 softmax over the seats, stored as float64).

    The first layer's sums of row i start from those of a reference observation and add the
    entries where the row differs from it: ref_obs[i] [O] with ref_pre[i] its sums
    (mlp_reference; a search gives each leaf its root); NULL: the observation of zeros,
    whose sums are the layer's constant term. The rows go by chunks of MLP_CHUNK, each chunk
    layer by layer, in blocks of four rows (each weight loaded once for the four; a block of
    2 or 3 rows is made of 4 with zero rows), each panel of a layer's weights used by every
    block of the chunk in turn while it is in the core's first cache; a single row (a chunk
    of one, or one left at its end) goes alone. A row's result is the same in any chunk or
    block: a zero input adds exactly nothing, and each output is summed over the inputs in
    ascending order."""
    cdef int c = 0, rows, li, i, b, j, nb, p, cnt, r, step = MLP_CHUNK, nnz, k
    cdef int n_obs = net.obs_size, A = net.num_actions, P = net.num_players, W = net.widest
    cdef const MLPLayer* layer
    cdef const float* o
    cdef const float* panel
    cdef const float* src[4]
    cdef const float* ref[4]
    cdef const float* init[4]
    cdef const float* start[MLP_CHUNK + 3]     # per row of the chunk: its first layer's start
    cdef float* h_in
    cdef float* h_out
    cdef int32* idx
    cdef float* val
    while c < n:
        rows = n - c if n - c < step else step
        o = obs + <size_t>c * n_obs
        h_in = NULL
        for r in range(rows + 3):
            start[r] = ref_pre[c + r] if ref_pre != NULL and r < rows else net.layers[0].b
        for li in range(net.n_layers):
            layer = &net.layers[li]
            h_out = s.act + (<size_t>(MLP_CHUNK + 3) * W if h_in == s.act else 0)
            nb = 0
            b = 0
            while b < rows:
                cnt = rows - b if rows - b < 4 else 4
                idx = s.idx + <size_t>nb * W
                val = s.val + <size_t>nb * 4 * W
                for r in range(4):
                    if r >= cnt:
                        src[r] = ref[r] = s.zero
                    elif li == 0:
                        src[r] = o + <size_t>(b + r) * n_obs
                        ref[r] = ref_obs[c + b + r] if ref_obs != NULL else s.zero
                    else:
                        src[r] = h_in + <size_t>(b + r) * W
                if li == 0:
                    nnz = net.gather_input(src, ref, 1 if cnt == 1 else 4, n_obs, net.mean,
                                           net.inv_std, idx, val)
                else:
                    nnz = net.gather(src, 1 if cnt == 1 else 4, layer.n_in, idx, val)
                if cnt == 1:                      # a row alone, every panel at once
                    net.row(layer.w, layer.n_in, layer.n_panels,
                            start[b] if li == 0 else layer.b, idx, val, nnz,
                            h_out + <size_t>b * W, layer.relu)
                else:
                    s.nnz[nb] = nnz
                    s.first[nb] = b
                    nb += 1
                b += cnt
            for p in range(layer.n_panels):
                panel = layer.w + <size_t>p * layer.n_in * MLP_PANEL
                for j in range(nb):
                    for k in range(4):
                        init[k] = (start[s.first[j] + k] if li == 0 else layer.b) + p * MLP_PANEL
                    net.panel4(panel, init, s.idx + <size_t>j * W, s.val + <size_t>j * 4 * W,
                               s.nnz[j], h_out + <size_t>s.first[j] * W + p * MLP_PANEL, W,
                               layer.relu)
            h_in = h_out
        for i in range(rows):
            write_outputs(net, h_in + <size_t>i * W, logits + <size_t>(c + i) * A,
                          values + <size_t>(c + i) * P)
        c += rows


cdef size_t _put(float* dst, arr, size_t rows, int cols) except? 0:
    """Copy arr (rows x cols) to dst by panels of MLP_PANEL columns (zero padded, dst zeroed
    before); the floats spanned."""
    cdef const float[:, ::1] src = np.ascontiguousarray(arr, dtype=np.float32).reshape(rows, cols)
    cdef size_t r
    cdef int p, n_p = panels(cols), width
    for p in range(n_p):
        width = cols - p * MLP_PANEL if cols - p * MLP_PANEL < MLP_PANEL else MLP_PANEL
        for r in range(rows):
            memcpy(dst + (p * rows + r) * MLP_PANEL, &src[r, p * MLP_PANEL], width * sizeof(float))
    return <size_t>n_p * rows * MLP_PANEL


def _check_array(params, name, shape):
    if name not in params:
        raise ValueError(f"the MLP has no {name!r} array")
    a = np.asarray(params[name])
    if a.dtype != np.float32 or a.shape != shape:
        raise ValueError(f"the MLP's {name!r} must be float32 {shape}, got {a.dtype} {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"the MLP's {name!r} holds NaN or inf")
    return np.ascontiguousarray(a)


cdef class CompiledMLP:
    """An ``MLPEvaluator``'s network compiled to C: ``CompiledMLP(mlp, kernel="auto")``
    (or ``mlp.compiled()``) copies its weights into one C block.

    The guided search (``guided.BatchSearch``, ``AlphaZeroBot``) evaluates it inside its
    nogil loop, with no Python call and no GIL per batch; called as an evaluator,
    ``net(obs, mask) -> (logits float32 [L, A], values float32 [L, P])`` gives what the
    ``MLPEvaluator`` gives within float32 rounding, whatever else is in the batch (each
    row is computed alone, so its result is the same in any batch).

    kernel: "auto" (AVX2 + FMA where the CPU has them, else plain C), "generic" (plain C,
    vectorised by the compiler for the build's instruction set) or "avx2" (ValueError
    where the CPU lacks it). The weights are a snapshot: an ``MLPEvaluator`` trained
    afterwards is compiled again by ``mlp.compiled()`` (the search does so by itself).
    Read-only once made: one CompiledMLP may be used by any number of threads and searches
    at once. A copy (pickle) is compiled again from the same weights.
    """

    def __cinit__(self):
        memset(&self.net, 0, sizeof(MLPNet))

    def __init__(self, mlp, kernel="auto"):
        if self.net.block != NULL:
            raise RuntimeError("a CompiledMLP is made once")
        if not isinstance(kernel, str) or kernel not in ("auto", "generic", "avx2"):
            raise ValueError(f"kernel must be 'auto', 'generic' or 'avx2', got {kernel!r}")
        if kernel == "avx2" and not mlp_cpu_has_avx2():
            raise ValueError("kernel='avx2': this CPU (or operating system) has no AVX2 and FMA")
        for attr in ("parameters", "obs_size", "num_actions", "num_players", "hidden"):
            if not hasattr(mlp, attr):
                raise TypeError("CompiledMLP compiles an evaluators.MLPEvaluator, got "
                                f"{type(mlp).__name__}")
        sizes = (int(mlp.obs_size), int(mlp.num_actions), int(mlp.num_players),
                 tuple(int(h) for h in mlp.hidden))
        params = mlp.parameters() if callable(mlp.parameters) else dict(mlp.parameters)
        self._build(sizes, params, kernel)

    cdef _build(self, tuple sizes, dict params, str kernel):
        cdef int O, A, P, i, n_layers, fan_in, width
        cdef size_t total, at
        cdef char* raw
        cdef float* base
        O, A, P, hidden = sizes
        if O < 1 or A < 1 or P < 1 or any(h < 1 for h in hidden):
            raise ValueError(f"bad MLP sizes: obs_size={O}, num_actions={A}, num_players={P}, "
                             f"hidden={hidden}")
        arrays = {"obs_mean": _check_array(params, "obs_mean", (O,)),
                  "obs_std": _check_array(params, "obs_std", (O,))}
        if (arrays["obs_std"] <= 0).any():
            raise ValueError("the MLP's 'obs_std' must be > 0")
        layers_np = []
        fan_in = O
        for i, width in enumerate(hidden):
            layers_np.append((_check_array(params, f"w{i}", (fan_in, width)),
                              _check_array(params, f"b{i}", (width,)), True))
            fan_in = width
        head_w = np.concatenate([_check_array(params, "policy_w", (fan_in, A)),
                                 _check_array(params, "value_w", (fan_in, P))], axis=1)
        head_b = np.concatenate([_check_array(params, "policy_b", (A,)),
                                 _check_array(params, "value_b", (P,))])
        layers_np.append((head_w, head_b, False))
        mean = arrays["obs_mean"]
        inv_std = (1.0 / arrays["obs_std"]).astype(np.float32)  # as MLPEvaluator._publish
        x0 = (np.float32(0) - mean) * inv_std                    # as its forward pass
        # the first layer's constant term, summed in float64 and rounded once
        w_first, b_first, relu_first = layers_np[0]
        # (numpy's pairwise sums, not a BLAS product: no BLAS thread is woken to spin after)
        base0 = b_first.astype(np.float64) + (x0.astype(np.float64)[:, None]
                                              * w_first.astype(np.float64)).sum(axis=0)
        layers_np[0] = (w_first, base0.astype(np.float32), relu_first)

        n_layers = len(layers_np)
        total = 2 * <size_t>panels(O) * MLP_PANEL
        widest = panels(O) * MLP_PANEL
        for w, _b, _relu in layers_np:
            total += (<size_t>w.shape[0] + 1) * panels(w.shape[1]) * MLP_PANEL
            widest = max(widest, panels(w.shape[1]) * MLP_PANEL)
        self.net.layers = <MLPLayer*>malloc(n_layers * sizeof(MLPLayer))
        raw = <char*>malloc(total * sizeof(float) + 64)
        if self.net.layers == NULL or raw == NULL:
            free(self.net.layers)
            free(raw)
            self.net.layers = NULL
            raise MemoryError(f"compiled MLP: cannot allocate {total * 4:,} bytes of weights")
        self.net.block = raw
        base = <float*>((<uintptr_t>raw + 63) & ~(<uintptr_t>63))   # panels on 64-byte lines
        memset(base, 0, total * sizeof(float))
        at = 0
        self.net.mean = base + at
        at += _put(base + at, mean.reshape(1, O), 1, O)        # one row: flat, zero padded
        self.net.inv_std = base + at
        at += _put(base + at, inv_std.reshape(1, O), 1, O)
        for i, (w, b, relu) in enumerate(layers_np):
            self.net.layers[i].n_in = w.shape[0]
            self.net.layers[i].n_out = w.shape[1]
            self.net.layers[i].n_panels = panels(w.shape[1])
            self.net.layers[i].w = base + at
            at += _put(base + at, w, w.shape[0], w.shape[1])
            self.net.layers[i].b = base + at
            at += _put(base + at, b.reshape(1, -1), 1, w.shape[1])
            self.net.layers[i].relu = relu
        self.net.obs_size = O
        self.net.num_actions = A
        self.net.num_players = P
        self.net.n_layers = n_layers
        self.net.widest = widest
        self.net.first_width = self.net.layers[0].n_panels * MLP_PANEL
        self.requested = kernel
        self.net.kernel = KERNELS[default_kernel() if kernel == "auto" else kernel]
        if self.net.kernel == MLP_KERNEL_AVX2:
            self.net.row = mlp_row_avx2
            self.net.panel4 = mlp_panel4_avx2
            self.net.gather = mlp_gather_avx2
            self.net.gather_input = mlp_gather_input_avx2
        else:
            self.net.row = mlp_row_generic
            self.net.panel4 = mlp_panel4_generic
            self.net.gather = mlp_gather_generic
            self.net.gather_input = mlp_gather_input_generic
        for v in params.values():
            v.flags.writeable = False
        self.params = params
        self.sizes = sizes

    def __dealloc__(self):
        free(self.net.layers)
        free(self.net.block)

    @property
    def kernel(self):
        """The products that run: "avx2" (AVX2 + FMA) or "generic" (plain C)."""
        return _KERNEL_NAMES[self.net.kernel]

    obs_size = property(lambda self: self.sizes[0], doc="O, the observation size")
    num_actions = property(lambda self: self.sizes[1], doc="A, the number of distinct actions")
    num_players = property(lambda self: self.sizes[2], doc="P, the number of seats")
    hidden = property(lambda self: self.sizes[3], doc="the widths of the hidden layers")

    def parameters(self):
        """Copies of the arrays it was compiled from (as ``MLPEvaluator.parameters``)."""
        return {k: v.copy() for k, v in self.params.items()}

    def forward(self, obs, reference=None):
        """The network on obs (float32 [L, O], checked for its type and shape only):
        (logits float32 [L, A], values float32 [L, P]). ``reference`` (float32 [O]): the
        first layer's sums start from those of this observation (as the search starts each
        leaf from its root) instead of from the observation of zeros; the same function,
        rounded differently."""
        cdef cnp.ndarray o, ref_arr
        cdef int L, i, A = self.net.num_actions, P = self.net.num_players
        cdef MLPScratch s
        cdef const float** ref_obs = NULL
        cdef const float** ref_pre = NULL
        cdef float* pre = NULL
        if (not isinstance(obs, np.ndarray) or obs.ndim != 2
                or obs.shape[1] != self.net.obs_size or obs.dtype != np.float32):
            raise ValueError(f"obs must be a float32 array [L, {self.net.obs_size}], got "
                             f"{getattr(obs, 'dtype', type(obs).__name__)} "
                             f"{getattr(obs, 'shape', '')}")
        o = np.ascontiguousarray(obs)
        L = o.shape[0]
        if reference is not None:
            if (not isinstance(reference, np.ndarray) or reference.dtype != np.float32
                    or reference.shape != (self.net.obs_size,)):
                raise ValueError(f"reference must be a float32 array [{self.net.obs_size}], got "
                                 f"{getattr(reference, 'dtype', type(reference).__name__)} "
                                 f"{getattr(reference, 'shape', '')}")
            if not np.isfinite(reference).all():
                raise ValueError("reference holds NaN or inf")
            ref_arr = np.ascontiguousarray(reference)
        logits = np.empty((L, A), dtype=np.float32)
        values = np.empty((L, P), dtype=np.float64)
        cdef const float* op = <const float*>cnp.PyArray_DATA(o)
        cdef float* lp = <float*>cnp.PyArray_DATA(logits)
        cdef double* vp = <double*>cnp.PyArray_DATA(values)
        memset(&s, 0, sizeof(MLPScratch))
        mlp_scratch_init(&s, &self.net)
        try:
            if reference is not None:
                ref_obs = <const float**>malloc((L + 1) * sizeof(float*))
                ref_pre = <const float**>malloc((L + 1) * sizeof(float*))
                pre = <float*>malloc(self.net.first_width * sizeof(float))
                if ref_obs == NULL or ref_pre == NULL or pre == NULL:
                    raise MemoryError("compiled MLP: cannot allocate the reference rows")
                mlp_reference(&self.net, &s, <const float*>cnp.PyArray_DATA(ref_arr), pre)
                for i in range(L):
                    ref_obs[i] = <const float*>cnp.PyArray_DATA(ref_arr)
                    ref_pre[i] = pre
            with nogil:
                mlp_forward(&self.net, &s, L, op, ref_obs, ref_pre, lp, vp)
        finally:
            mlp_scratch_free(&s)
            free(ref_obs)
            free(ref_pre)
            free(pre)
        return logits, values.astype(np.float32)

    def __call__(self, obs, mask):
        """(logits float32 [L, A], values float32 [L, P]) for a batch: the evaluator protocol,
        its input and output checked as ``MLPEvaluator`` checks them."""
        from caribsim.search.evaluators import check_input, check_output

        L = check_input(obs, mask, self.obs_size, self.num_actions)
        logits, values = self.forward(obs)
        return check_output(logits, values, L, self.num_actions, self.num_players)

    def __reduce__(self):
        return (_make_compiled, (self.sizes, self.params, self.requested))

    def __repr__(self):
        return (f"CompiledMLP(obs_size={self.obs_size}, num_actions={self.num_actions}, "
                f"num_players={self.num_players}, hidden={self.hidden}, kernel={self.kernel!r})")


class _Sizes:
    """What CompiledMLP reads from an MLP: the sizes and the parameters."""

    def __init__(self, sizes, params):
        self.obs_size, self.num_actions, self.num_players, self.hidden = sizes
        self.parameters = params


def _make_compiled(sizes, params, kernel):
    if kernel == "avx2" and not mlp_cpu_has_avx2():
        kernel = "auto"          # a copy on a machine without AVX2 runs the plain kernel
    return CompiledMLP(_Sizes(sizes, dict(params)), kernel)
