/* The compiled MLP's products (pyx/caribsim/search/_mlp.pyx), over the nonzero inputs only.
 *
 * A layer's outputs are accumulated as out[j] = init[j] + sum over the nonzero inputs k, in
 * ascending k, of h[k] * W[k][j]: a zero input adds exactly nothing (0 * w + acc == acc for a
 * finite w), so skipping it changes no bit, and every output is summed over its inputs in
 * ascending order, one output a vector lane (the sums run across j, never across k). Four
 * rows are computed at once over the inputs where one of them is nonzero, the others adding
 * their zeros: a row's result depends on that row (and its starting values) only, never on
 * the rows beside it.
 *
 * Two versions: *_generic, plain C (vectorised by the compiler for the build's target, SSE2
 * on x86-64), and *_avx2, AVX2 with FMA, compiled for that instruction set whatever the
 * build's target and chosen at run time only where the CPU and the operating system support
 * it (mlp_cpu_has_avx2). FMA rounds once where the plain version rounds twice, so the two
 * differ in the last bits; one network uses one.
 */
#ifndef CARIBSIM_MLP_KERNEL_H
#define CARIBSIM_MLP_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
#else
#include <time.h>
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define MLP_AVX2_BUILT 1
#include <immintrin.h>
#else
#define MLP_AVX2_BUILT 0
#endif

/* A layer's weights are stored in panels of MLP_PANEL (16) outputs: panel p holds, for every
 * input k in order, the 16 weights from input k to outputs 16p .. 16p + 15
 * (w[(p * n_in + k) * 16 + t]), so that a product walks each panel forward in memory. */
#define MLP_PANEL 16

/* One row over every panel: out[0 .. 16 * n_panels) = init + sum over q < nnz of val[q] *
 * (row idx[q] of the weights), then max(., 0) if relu. */
typedef void (*mlp_row_fn)(const float* w, int n_in, int n_panels, const float* init,
                           const int32_t* idx, const float* val, int nnz, float* out, int relu);

/* Four rows over one panel (16 outputs), each weight loaded once for the four: out[r *
 * out_stride + t] = init[r][t] + ..., the value of row r at input idx[q] in v4[4 * q + r]. */
typedef void (*mlp_panel4_fn)(const float* panel, const float* const* init, const int32_t* idx,
                              const float* v4, int nnz, float* out, int out_stride, int relu);

/* The inputs of a layer that are nonzero in one of n_rows rows (1 or 4; row r at rows[r]), in
 * ascending order: their indices in idx, their values in val (one row: val[q]; four:
 * val[4 * q + r], 0 where that row's input is 0); their count. */
typedef int (*mlp_gather_fn)(const float* const* rows, int n_rows, int n, int32_t* idx,
                             float* val);

/* The first layer's inputs: observation rows[r][0..n) against its reference refs[r][0..n),
 * the entries where one of the n_rows rows differs from its reference, and there the change
 * of the scaled input, x(o) - x(ref) with x(v) = (v - mean[i]) * inv_std[i] as numpy computes
 * it (0 for a row equal to its reference there); their count. The reference's own first-layer
 * sums are the starting values (init) of the product. */
typedef int (*mlp_gather_input_fn)(const float* const* rows, const float* const* refs,
                                   int n_rows, int n, const float* mean, const float* inv_std,
                                   int32_t* idx, float* val);

#if defined(__GNUC__) || defined(__clang__)
/* the plain kernels in the compiler's generic vectors of 4 floats (SSE2 on x86-64, NEON on
 * arm64): the same sums as the scalar loops below, lane by lane */
#define MLP_VECTORS 1
typedef float mlp_v4 __attribute__((vector_size(16)));

static inline mlp_v4 mlp_v4_load(const float* p)
{
    mlp_v4 v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void mlp_v4_store(float* p, mlp_v4 v, int relu)
{
    int t;
    memcpy(p, &v, sizeof(v));
    if (relu)
        for (t = 0; t < 4; t++)
            p[t] = p[t] > 0.0f ? p[t] : 0.0f;
}
#else
#define MLP_VECTORS 0
#endif

static inline void mlp_row_generic(const float* w, int n_in, int n_panels, const float* init,
                                   const int32_t* idx, const float* val, int nnz, float* out,
                                   int relu)
{
    int p, q;
    for (p = 0; p < n_panels; p++) {
        const float* panel = w + (size_t)p * (size_t)n_in * MLP_PANEL;
        const float* b = init + p * MLP_PANEL;
        float* o = out + p * MLP_PANEL;
#if MLP_VECTORS
        mlp_v4 a0 = mlp_v4_load(b), a1 = mlp_v4_load(b + 4);
        mlp_v4 a2 = mlp_v4_load(b + 8), a3 = mlp_v4_load(b + 12);
        for (q = 0; q < nnz; q++) {
            const float* row = panel + (size_t)idx[q] * MLP_PANEL;
            const mlp_v4 v = {val[q], val[q], val[q], val[q]};
            a0 += v * mlp_v4_load(row);
            a1 += v * mlp_v4_load(row + 4);
            a2 += v * mlp_v4_load(row + 8);
            a3 += v * mlp_v4_load(row + 12);
        }
        mlp_v4_store(o, a0, relu);
        mlp_v4_store(o + 4, a1, relu);
        mlp_v4_store(o + 8, a2, relu);
        mlp_v4_store(o + 12, a3, relu);
#else
        float acc[MLP_PANEL];
        int t;
        for (t = 0; t < MLP_PANEL; t++)
            acc[t] = b[t];
        for (q = 0; q < nnz; q++) {
            const float v = val[q];
            const float* row = panel + (size_t)idx[q] * MLP_PANEL;
            for (t = 0; t < MLP_PANEL; t++)
                acc[t] += v * row[t];
        }
        for (t = 0; t < MLP_PANEL; t++)
            o[t] = (relu && !(acc[t] > 0.0f)) ? 0.0f : acc[t];
#endif
    }
}

static inline void mlp_panel4_generic(const float* panel, const float* const* init,
                                      const int32_t* idx, const float* v4, int nnz, float* out,
                                      int out_stride, int relu)
{
    int q, h;
#if MLP_VECTORS
    for (h = 0; h < MLP_PANEL; h += 8) {                 /* 4 rows x 8 outputs in 8 registers */
        mlp_v4 a00 = mlp_v4_load(init[0] + h), a01 = mlp_v4_load(init[0] + h + 4);
        mlp_v4 a10 = mlp_v4_load(init[1] + h), a11 = mlp_v4_load(init[1] + h + 4);
        mlp_v4 a20 = mlp_v4_load(init[2] + h), a21 = mlp_v4_load(init[2] + h + 4);
        mlp_v4 a30 = mlp_v4_load(init[3] + h), a31 = mlp_v4_load(init[3] + h + 4);
        for (q = 0; q < nnz; q++) {
            const float* row = panel + (size_t)idx[q] * MLP_PANEL + h;
            const float* v = v4 + 4 * q;
            const mlp_v4 w0 = mlp_v4_load(row), w1 = mlp_v4_load(row + 4);
            mlp_v4 x = {v[0], v[0], v[0], v[0]};
            a00 += x * w0;
            a01 += x * w1;
            x = (mlp_v4){v[1], v[1], v[1], v[1]};
            a10 += x * w0;
            a11 += x * w1;
            x = (mlp_v4){v[2], v[2], v[2], v[2]};
            a20 += x * w0;
            a21 += x * w1;
            x = (mlp_v4){v[3], v[3], v[3], v[3]};
            a30 += x * w0;
            a31 += x * w1;
        }
        mlp_v4_store(out + h, a00, relu);
        mlp_v4_store(out + h + 4, a01, relu);
        mlp_v4_store(out + out_stride + h, a10, relu);
        mlp_v4_store(out + out_stride + h + 4, a11, relu);
        mlp_v4_store(out + 2 * out_stride + h, a20, relu);
        mlp_v4_store(out + 2 * out_stride + h + 4, a21, relu);
        mlp_v4_store(out + 3 * out_stride + h, a30, relu);
        mlp_v4_store(out + 3 * out_stride + h + 4, a31, relu);
    }
#else
    float acc[4][MLP_PANEL];
    int t, r;
    (void)h;
    for (r = 0; r < 4; r++)
        for (t = 0; t < MLP_PANEL; t++)
            acc[r][t] = init[r][t];
    for (q = 0; q < nnz; q++) {
        const float* row = panel + (size_t)idx[q] * MLP_PANEL;
        for (r = 0; r < 4; r++) {
            const float v = v4[4 * q + r];
            for (t = 0; t < MLP_PANEL; t++)
                acc[r][t] += v * row[t];
        }
    }
    for (r = 0; r < 4; r++)
        for (t = 0; t < MLP_PANEL; t++)
            out[r * out_stride + t] = (relu && !(acc[r][t] > 0.0f)) ? 0.0f : acc[r][t];
#endif
}

static inline int mlp_gather_generic(const float* const* rows, int n_rows, int n, int32_t* idx,
                                     float* val)
{
    int i, k = 0;
    if (n_rows == 1) {
        const float* h = rows[0];
        for (i = 0; i < n; i++) {                        /* no branch: write, then count */
            idx[k] = i;
            val[k] = h[i];
            k += h[i] != 0.0f;
        }
        return k;
    }
    for (i = 0; i < n; i++) {
        const float a = rows[0][i], b = rows[1][i], c = rows[2][i], d = rows[3][i];
        idx[k] = i;
        val[4 * k] = a;
        val[4 * k + 1] = b;
        val[4 * k + 2] = c;
        val[4 * k + 3] = d;
        k += (a != 0.0f) | (b != 0.0f) | (c != 0.0f) | (d != 0.0f);
    }
    return k;
}

static inline int mlp_gather_input_generic(const float* const* rows, const float* const* refs,
                                           int n_rows, int n, const float* mean,
                                           const float* inv_std, int32_t* idx, float* val)
{
    int i, r, k = 0;
    for (i = 0; i < n; i++) {
        int any = 0;
        for (r = 0; r < n_rows; r++) {
            const float o = rows[r][i], ref = refs[r][i];
            const float x = (o - mean[i]) * inv_std[i], x_ref = (ref - mean[i]) * inv_std[i];
            val[n_rows * k + r] = o != ref ? x - x_ref : 0.0f;
            any |= o != ref;
        }
        idx[k] = i;
        k += any;
    }
    return k;
}

#if MLP_AVX2_BUILT

#define MLP_LD(k) _mm256_loadu_ps(row + 8 * (k))
#define MLP_AHEAD 6                  /* one row: inputs ahead whose weight lines are prefetched */
#define MLP_RELU(a) (relu ? _mm256_max_ps((a), zero) : (a))

__attribute__((target("avx2,fma")))
static inline void mlp_row_avx2(const float* w, int n_in, int n_panels, const float* init,
                                const int32_t* idx, const float* val, int nnz, float* out,
                                int relu)
{
    const __m256 zero = _mm256_setzero_ps();
    const size_t ps = (size_t)n_in * MLP_PANEL;        /* floats per panel */
    int p = 0, q;
    for (; p + 4 <= n_panels; p += 4) {                 /* 4 panels: 64 outputs in 8 registers */
        const float* base = w + (size_t)p * ps;
        const float* b = init + p * MLP_PANEL;
        float* o = out + p * MLP_PANEL;
        __m256 a0 = _mm256_loadu_ps(b), a1 = _mm256_loadu_ps(b + 8);
        __m256 a2 = _mm256_loadu_ps(b + 16), a3 = _mm256_loadu_ps(b + 24);
        __m256 a4 = _mm256_loadu_ps(b + 32), a5 = _mm256_loadu_ps(b + 40);
        __m256 a6 = _mm256_loadu_ps(b + 48), a7 = _mm256_loadu_ps(b + 56);
        for (q = 0; q < nnz; q++) {
            const __m256 v = _mm256_set1_ps(val[q]);
            const float* row = base + (size_t)idx[q] * MLP_PANEL;
            if (q + MLP_AHEAD < nnz) {              /* the lines of a later input, early */
                const char* next = (const char*)(base + (size_t)idx[q + MLP_AHEAD] * MLP_PANEL);
                _mm_prefetch(next, _MM_HINT_T0);
                _mm_prefetch(next + 4 * ps, _MM_HINT_T0);
                _mm_prefetch(next + 8 * ps, _MM_HINT_T0);
                _mm_prefetch(next + 12 * ps, _MM_HINT_T0);
            }
            a0 = _mm256_fmadd_ps(v, MLP_LD(0), a0);
            a1 = _mm256_fmadd_ps(v, MLP_LD(1), a1);
            a2 = _mm256_fmadd_ps(v, _mm256_loadu_ps(row + ps), a2);
            a3 = _mm256_fmadd_ps(v, _mm256_loadu_ps(row + ps + 8), a3);
            a4 = _mm256_fmadd_ps(v, _mm256_loadu_ps(row + 2 * ps), a4);
            a5 = _mm256_fmadd_ps(v, _mm256_loadu_ps(row + 2 * ps + 8), a5);
            a6 = _mm256_fmadd_ps(v, _mm256_loadu_ps(row + 3 * ps), a6);
            a7 = _mm256_fmadd_ps(v, _mm256_loadu_ps(row + 3 * ps + 8), a7);
        }
        _mm256_storeu_ps(o, MLP_RELU(a0));
        _mm256_storeu_ps(o + 8, MLP_RELU(a1));
        _mm256_storeu_ps(o + 16, MLP_RELU(a2));
        _mm256_storeu_ps(o + 24, MLP_RELU(a3));
        _mm256_storeu_ps(o + 32, MLP_RELU(a4));
        _mm256_storeu_ps(o + 40, MLP_RELU(a5));
        _mm256_storeu_ps(o + 48, MLP_RELU(a6));
        _mm256_storeu_ps(o + 56, MLP_RELU(a7));
    }
    for (; p < n_panels; p++) {
        const float* base = w + (size_t)p * ps;
        __m256 a0 = _mm256_loadu_ps(init + p * MLP_PANEL);
        __m256 a1 = _mm256_loadu_ps(init + p * MLP_PANEL + 8);
        for (q = 0; q < nnz; q++) {
            const __m256 v = _mm256_set1_ps(val[q]);
            const float* row = base + (size_t)idx[q] * MLP_PANEL;
            a0 = _mm256_fmadd_ps(v, MLP_LD(0), a0);
            a1 = _mm256_fmadd_ps(v, MLP_LD(1), a1);
        }
        _mm256_storeu_ps(out + p * MLP_PANEL, MLP_RELU(a0));
        _mm256_storeu_ps(out + p * MLP_PANEL + 8, MLP_RELU(a1));
    }
}

__attribute__((target("avx2,fma")))
static inline void mlp_panel4_avx2(const float* panel, const float* const* init,
                                   const int32_t* idx, const float* v4, int nnz, float* out,
                                   int out_stride, int relu)
{
    const __m256 zero = _mm256_setzero_ps();
    __m256 a00 = _mm256_loadu_ps(init[0]), a01 = _mm256_loadu_ps(init[0] + 8);
    __m256 a10 = _mm256_loadu_ps(init[1]), a11 = _mm256_loadu_ps(init[1] + 8);
    __m256 a20 = _mm256_loadu_ps(init[2]), a21 = _mm256_loadu_ps(init[2] + 8);
    __m256 a30 = _mm256_loadu_ps(init[3]), a31 = _mm256_loadu_ps(init[3] + 8);
    int q;
    for (q = 0; q < nnz; q++) {                         /* 4 rows x 16 outputs in 8 registers */
        const float* row = panel + (size_t)idx[q] * MLP_PANEL;
        const float* v = v4 + 4 * q;
        const __m256 w0 = MLP_LD(0), w1 = MLP_LD(1);
        __m256 x = _mm256_broadcast_ss(v);
        a00 = _mm256_fmadd_ps(x, w0, a00);
        a01 = _mm256_fmadd_ps(x, w1, a01);
        x = _mm256_broadcast_ss(v + 1);
        a10 = _mm256_fmadd_ps(x, w0, a10);
        a11 = _mm256_fmadd_ps(x, w1, a11);
        x = _mm256_broadcast_ss(v + 2);
        a20 = _mm256_fmadd_ps(x, w0, a20);
        a21 = _mm256_fmadd_ps(x, w1, a21);
        x = _mm256_broadcast_ss(v + 3);
        a30 = _mm256_fmadd_ps(x, w0, a30);
        a31 = _mm256_fmadd_ps(x, w1, a31);
    }
    _mm256_storeu_ps(out, MLP_RELU(a00));
    _mm256_storeu_ps(out + 8, MLP_RELU(a01));
    _mm256_storeu_ps(out + out_stride, MLP_RELU(a10));
    _mm256_storeu_ps(out + out_stride + 8, MLP_RELU(a11));
    _mm256_storeu_ps(out + 2 * out_stride, MLP_RELU(a20));
    _mm256_storeu_ps(out + 2 * out_stride + 8, MLP_RELU(a21));
    _mm256_storeu_ps(out + 3 * out_stride, MLP_RELU(a30));
    _mm256_storeu_ps(out + 3 * out_stride + 8, MLP_RELU(a31));
}

#undef MLP_LD
#undef MLP_RELU

/* the set lanes of `mask` (lanes of the 8-float vectors t[0 .. n_rows)) appended to idx, val */
__attribute__((target("avx2,fma")))
static inline int mlp_append(unsigned mask, int base, const float (*t)[8], int n_rows,
                             int32_t* idx, float* val, int k)
{
    while (mask) {
        const int j = __builtin_ctz(mask);
        mask &= mask - 1;
        idx[k] = base + j;
        if (n_rows == 1) {
            val[k] = t[0][j];
        } else {
            val[4 * k] = t[0][j];
            val[4 * k + 1] = t[1][j];
            val[4 * k + 2] = t[2][j];
            val[4 * k + 3] = t[3][j];
        }
        k++;
    }
    return k;
}

__attribute__((target("avx2,fma")))
static inline int mlp_gather_avx2(const float* const* rows, int n_rows, int n, int32_t* idx,
                                  float* val)
{
    const __m256 zero = _mm256_setzero_ps();
    float t[4][8];
    int i = 0, r, k = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 any = zero;
        for (r = 0; r < n_rows; r++) {
            const __m256 x = _mm256_loadu_ps(rows[r] + i);
            _mm256_storeu_ps(t[r], x);
            any = _mm256_or_ps(any, _mm256_cmp_ps(x, zero, _CMP_NEQ_UQ));
        }
        k = mlp_append((unsigned)_mm256_movemask_ps(any), i, (const float (*)[8])t, n_rows,
                       idx, val, k);
    }
    if (i < n) {
        const float* tail[4];
        int q;
        for (r = 0; r < n_rows; r++)
            tail[r] = rows[r] + i;
        q = mlp_gather_generic(tail, n_rows, n - i, idx + k, val + (n_rows == 1 ? 1 : 4) * k);
        for (r = 0; r < q; r++)
            idx[k + r] += i;
        k += q;
    }
    return k;
}

__attribute__((target("avx2,fma")))
static inline int mlp_gather_input_avx2(const float* const* rows, const float* const* refs,
                                        int n_rows, int n, const float* mean,
                                        const float* inv_std, int32_t* idx, float* val)
{
    const __m256 zero = _mm256_setzero_ps();
    float t[4][8];
    int i = 0, r, k = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 m = _mm256_loadu_ps(mean + i), s = _mm256_loadu_ps(inv_std + i);
        __m256 any = zero;
        for (r = 0; r < n_rows; r++) {
            const __m256 o = _mm256_loadu_ps(rows[r] + i), ref = _mm256_loadu_ps(refs[r] + i);
            const __m256 ne = _mm256_cmp_ps(o, ref, _CMP_NEQ_UQ);
            const __m256 x = _mm256_mul_ps(_mm256_sub_ps(o, m), s);
            const __m256 x_ref = _mm256_mul_ps(_mm256_sub_ps(ref, m), s);
            _mm256_storeu_ps(t[r], _mm256_and_ps(_mm256_sub_ps(x, x_ref), ne));
            any = _mm256_or_ps(any, ne);
        }
        k = mlp_append((unsigned)_mm256_movemask_ps(any), i, (const float (*)[8])t, n_rows,
                       idx, val, k);
    }
    if (i < n) {
        const float* tail[4];
        const float* tail_ref[4];
        int q;
        for (r = 0; r < n_rows; r++) {
            tail[r] = rows[r] + i;
            tail_ref[r] = refs[r] + i;
        }
        q = mlp_gather_input_generic(tail, tail_ref, n_rows, n - i, mean + i, inv_std + i,
                                     idx + k, val + (n_rows == 1 ? 1 : 4) * k);
        for (r = 0; r < q; r++)
            idx[k + r] += i;
        k += q;
    }
    return k;
}

/* 1 where the CPU runs AVX2 and FMA and the operating system saves the YMM registers (the
 * compiler's runtime checks both), else 0 */
static inline int mlp_cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

#else

static inline void mlp_row_avx2(const float* w, int n_in, int n_panels, const float* init,
                                const int32_t* idx, const float* val, int nnz, float* out,
                                int relu)
{
    mlp_row_generic(w, n_in, n_panels, init, idx, val, nnz, out, relu);
}

static inline void mlp_panel4_avx2(const float* panel, const float* const* init,
                                   const int32_t* idx, const float* v4, int nnz, float* out,
                                   int out_stride, int relu)
{
    mlp_panel4_generic(panel, init, idx, v4, nnz, out, out_stride, relu);
}

static inline int mlp_gather_avx2(const float* const* rows, int n_rows, int n, int32_t* idx,
                                  float* val)
{
    return mlp_gather_generic(rows, n_rows, n, idx, val);
}

static inline int mlp_gather_input_avx2(const float* const* rows, const float* const* refs,
                                        int n_rows, int n, const float* mean,
                                        const float* inv_std, int32_t* idx, float* val)
{
    return mlp_gather_input_generic(rows, refs, n_rows, n, mean, inv_std, idx, val);
}

static inline int mlp_cpu_has_avx2(void) { return 0; }

#endif

/* a monotonic clock in seconds (the search's profile) */
static inline double mlp_now(void)
{
#if defined(_WIN32)
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

#endif
