# The compiled MLP: the network of caribsim.search.evaluators.MLPEvaluator evaluated in C,
# without the GIL, one row at a time over the nonzero inputs of each layer
# (_mlp_kernel.h: the products). The guided search (_guided.pyx) calls mlp_forward on the
# leaves of each step; CompiledMLP is its Python face (the evaluator protocol as well).
from caribsim._types cimport int32

cdef extern from "search/_mlp_kernel.h" nogil:
    enum: MLP_PANEL            # outputs per panel of a layer's weights (16)
    ctypedef void (*mlp_row_fn)(const float* w, int n_in, int n_panels, const float* init,
                                const int32* idx, const float* val, int nnz, float* out,
                                int relu) noexcept
    ctypedef void (*mlp_panel4_fn)(const float* panel, const float* const* init,
                                   const int32* idx, const float* v4, int nnz, float* out,
                                   int out_stride, int relu) noexcept
    ctypedef int (*mlp_gather_fn)(const float* const* rows, int n_rows, int n, int32* idx,
                                  float* val) noexcept
    ctypedef int (*mlp_gather_input_fn)(const float* const* rows, const float* const* refs,
                                        int n_rows, int n, const float* mean,
                                        const float* inv_std, int32* idx, float* val) noexcept
    void mlp_row_generic(const float* w, int n_in, int n_panels, const float* init,
                         const int32* idx, const float* val, int nnz, float* out,
                         int relu) noexcept
    void mlp_row_avx2(const float* w, int n_in, int n_panels, const float* init,
                      const int32* idx, const float* val, int nnz, float* out,
                      int relu) noexcept
    void mlp_panel4_generic(const float* panel, const float* const* init, const int32* idx,
                            const float* v4, int nnz, float* out, int out_stride,
                            int relu) noexcept
    void mlp_panel4_avx2(const float* panel, const float* const* init, const int32* idx,
                         const float* v4, int nnz, float* out, int out_stride,
                         int relu) noexcept
    int mlp_gather_generic(const float* const* rows, int n_rows, int n, int32* idx,
                           float* val) noexcept
    int mlp_gather_avx2(const float* const* rows, int n_rows, int n, int32* idx,
                        float* val) noexcept
    int mlp_gather_input_generic(const float* const* rows, const float* const* refs,
                                 int n_rows, int n, const float* mean, const float* inv_std,
                                 int32* idx, float* val) noexcept
    int mlp_gather_input_avx2(const float* const* rows, const float* const* refs,
                              int n_rows, int n, const float* mean, const float* inv_std,
                              int32* idx, float* val) noexcept
    int mlp_cpu_has_avx2() noexcept
    double mlp_now() noexcept

cdef enum:
    MLP_KERNEL_GENERIC = 0     # plain C products (the build's own instruction set)
    MLP_KERNEL_AVX2 = 1        # AVX2 + FMA products (chosen at run time where the CPU has them)
    MLP_CHUNK = 32             # rows computed layer by layer together, each panel of weights
    #                            used by the chunk's four-row blocks in turn (while it is in L1)
    MLP_BLOCKS = 8             # blocks of four rows in a chunk (MLP_CHUNK / 4)


ctypedef struct MLPLayer:
    int n_in                   # inputs: the observation size O (first layer) or the previous width
    int n_out                  # outputs: the layer's width (the head: A + P)
    int n_panels               # panels of MLP_PANEL outputs: n_out rounded up, over MLP_PANEL
    const float* w             # [n_panels, n_in, MLP_PANEL] the weights by panel (zero padded):
    #                            w[(p * n_in + k) * MLP_PANEL + t] is W[k, p * MLP_PANEL + t]
    const float* b             # [n_panels * MLP_PANEL] the starting sums, zero padded: the bias
    #                            (first layer: the bias plus x0 @ W, summed in float64: the
    #                            first layer's sums for an observation of zeros)
    bint relu                  # 1 for a hidden layer (max(., 0)), 0 for the head


ctypedef struct MLPNet:
    int obs_size               # O: the observation size
    int num_actions            # A: the head's first A outputs are the policy logits
    int num_players            # P: its next P outputs are the value logits (softmax over seats)
    int n_layers               # the hidden layers and the head (at least 1: the head)
    int widest                 # floats of a scratch row: the most outputs (padded) of a layer, and O
    int kernel                 # MLP_KERNEL_*: which products run
    mlp_row_fn row             # that kernel's product of one row
    mlp_panel4_fn panel4       # and of four rows at once over one panel
    mlp_gather_fn gather       # the nonzero inputs of a hidden layer or the head
    mlp_gather_input_fn gather_input  # those of the first layer
    int first_width            # floats of a first-layer reference row: its outputs, padded
    const float* mean          # [O] obs_mean
    const float* inv_std       # [O] 1 / obs_std in float32, as MLPEvaluator computes it
    MLPLayer* layers           # [n_layers] the hidden layers, then the head
    void* block                # the one allocation that holds every float array above


ctypedef struct MLPScratch:
    float* zero                # [widest] zeros: the rows a block of 2 or 3 rows lacks
    float* act                 # [2, MLP_CHUNK + 3, widest] a chunk's input and output rows of a
    #                            layer, in turn (3 more: a last block of 1-3 rows is made of 4)
    int32* idx                 # [MLP_BLOCKS, widest] per block of four rows: the inputs where
    #                            one of them is nonzero, for the layer being computed
    float* val                 # [MLP_CHUNK, widest] their values (block j: v4[4 * q + r])
    int32 nnz[MLP_BLOCKS]      # per block: the inputs listed
    int32 first[MLP_BLOCKS]    # per block: its first row in the chunk


cdef int mlp_scratch_init(MLPScratch* s, const MLPNet* net) except -1 nogil
cdef void mlp_scratch_free(MLPScratch* s) noexcept nogil
cdef void mlp_reference(const MLPNet* net, MLPScratch* s, const float* obs,
                        float* pre) noexcept nogil
cdef void mlp_forward(const MLPNet* net, MLPScratch* s, int n, const float* obs,
                      const float* const* ref_obs, const float* const* ref_pre,
                      float* logits, double* values) noexcept nogil


cdef class CompiledMLP:
    cdef MLPNet net                    # the network (owns its arrays)
    cdef readonly object params        # the MLPEvaluator's parameter arrays it was made from
    cdef readonly tuple sizes          # (obs_size, num_actions, num_players, hidden)
    cdef readonly str requested        # the kernel asked for: "auto", "generic" or "avx2"
    cdef _build(self, tuple sizes, dict params, str kernel)
