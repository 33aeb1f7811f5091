/* The point layer's pass over a block of rows, compiled: logits, softmax, free
   energy, masses, first moments and hard assignment in one read of the rows.

   It computes what sklearn_attnclust._point.logit_sums computes from numpy's
   primitives (the reference, tested against it), tile by tile: AQ_TILE rows
   at a time, their logits laid out heads by rows, so that every step but the
   products runs along the rows in vector registers and nothing of n x K size
   is written.  numpy needed two products, an exponential pass and several
   reductions over (K, b) temporaries: 3 to 4.5 bare passes X @ M.T per
   evaluation at 1e6 x 2 and 1e7 x 32 (float32); this, about one.

   The products of wide rows (d > AQ_NARROW), the logits S At and the first
   moments S^T P of a tile S, are one BLAS call each (sgemm or dgemm, the
   routines scipy.linalg.cython_blas exports, passed in by the Cython
   wrapper), the tile in cache for both.  Measured against the kernel's own
   blocks of 8 rows by 8 heads (GCC's vectors of 32 bytes, the AVX-512 clone;
   one thread, CPU time, uniform rows n = 5e4, medians of 15 passes with the
   gradient): d = 16, K = 64, float32 5.7 ms against 8.1; d = 64, K = 256,
   float32 48 against 86, float64 87 against 158; d = 16, K = 1024, float32
   101 against 129.  Narrow rows are multiplied along the rows here.

   Two variants of the rest, chosen at compile time (AQ_VARIANT names the one
   built):
   - "vector": compiled for AVX-512, AVX2 and the baseline by target_clones
     where the compiler and the platform support it (chosen at load time),
     for the baseline only elsewhere (GCC 5 and later, clang);
   - "portable": plain C99 (no extension, no attribute, no variable-length
     array) that MSVC compiles too; the same sums in the same order.
     Compilers without GCC's extensions (MSVC, GCC before 5) build it, and so
     does any compiler given the macro ATTNCLUST_PORTABLE_KERNEL (setup.py defines it
     when the environment variable SKLEARN_ATTNCLUST_PORTABLE_KERNEL is 1).
     Built for the baseline x86-64 (SSE2), before the products were BLAS's,
     it took 1.5 to 2.8 times as long as numpy's reference, and 2.8 to 4.8
     times as long as the vector kernel's AVX-512 clone (gcc 12;
     benchmarks/bench_pass.py --parts at 2e5 x 32, 1e6 x 2 and 1e7 x 32
     float32): the package does not run it (_point.runs_compiled); not
     measured since. */
#ifndef AQ_POINT_KERNEL_H
#define AQ_POINT_KERNEL_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(ATTNCLUST_PORTABLE_KERNEL) \
    && ((defined(__GNUC__) && __GNUC__ >= 5) || defined(__clang__))
#define AQ_VECTOR 1
#else
#define AQ_VECTOR 0
#endif

#if AQ_VECTOR
#define AQ_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define AQ_INLINE static __inline
#else
#define AQ_INLINE static inline
#endif

#if defined(_MSC_VER)
#define AQ_RESTRICT __restrict
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define AQ_RESTRICT restrict
#else
#define AQ_RESTRICT
#endif

/* target_clones needs ifunc (glibc); GCC takes micro-architecture levels from
   version 12 on (its bug 101696), instruction sets before.  AQ_CLONE_LEVELS:
   the clones, best first, as __builtin_cpu_supports names them. */
#if AQ_VECTOR && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__GLIBC__) && __GNUC__ >= 12
#define AQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define AQ_CLONE_1 "x86-64-v4"
#define AQ_CLONE_2 "x86-64-v3"
#define AQ_VARIANT "vector (target_clones: x86-64-v4, x86-64-v3, default)"
#elif AQ_VECTOR && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__GLIBC__) && __GNUC__ >= 6
#define AQ_CLONES __attribute__((target_clones("avx2", "default")))
#define AQ_CLONE_1 "avx2"
#define AQ_VARIANT "vector (target_clones: avx2, default)"
#elif AQ_VECTOR
#define AQ_CLONES
#define AQ_VARIANT "vector (baseline instruction set)"
#else
#define AQ_CLONES
#define AQ_VARIANT "portable"
#endif

/* The clone the CPU runs ("default" the baseline), or "" without clones. */
static const char *aq_clone(void) {
#if defined(AQ_CLONE_1)
    __builtin_cpu_init();
    if (__builtin_cpu_supports(AQ_CLONE_1)) return AQ_CLONE_1;
#if defined(AQ_CLONE_2)
    if (__builtin_cpu_supports(AQ_CLONE_2)) return AQ_CLONE_2;
#endif
    return "default";
#else
    return "";
#endif
}

/* The compiler that built the kernel. */
#define AQ_STR2(x) #x
#define AQ_STR(x) AQ_STR2(x)
#if defined(__clang__)
#define AQ_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define AQ_COMPILER "gcc " __VERSION__
#elif defined(_MSC_VER)
#define AQ_COMPILER "MSVC " AQ_STR(_MSC_FULL_VER)
#else
#define AQ_COMPILER "unknown C compiler"
#endif

/* exp(x) of max-shifted logits x <= 0, and 0 below AQ_CUT_F64: such weights
   are below 1e-260 of the row's largest (which no sum that includes it can
   see) and their products could leave the normal range (subnormal numbers
   are many times slower).  13 terms of the series on |x - n log 2| <= log(2)/2:
   within 2 units in the last place. */
#define AQ_CUT_F64 -600.0
#define AQ_CUT_F32 -60.0f
AQ_INLINE double aq_exp_f64(double z) {
    const double shifter = 6755399441055744.0; /* 1.5 * 2^52 */
    double kd, r, p, s, x;
    uint64_t ki, zb, below;
    /* z < AQ_CUT_F64 (for z <= 0: |z|'s bits above 600's, the sign of their
       difference) as an all-ones mask, and the clamp and the final zero as
       bitwise selects: no floating-point compare (which may trap), no
       branch, no 64-bit compare (none in SSE2), so that the loops calling it
       vectorise (gcc keeps a branch around code that may trap) */
    memcpy(&zb, &z, 8);
    below = 0u - ((0x4082C00000000000ull - (zb & 0x7FFFFFFFFFFFFFFFull)) >> 63);
    kd = AQ_CUT_F64;
    memcpy(&ki, &kd, 8);
    zb = (zb & ~below) | (ki & below);
    memcpy(&x, &zb, 8);
    kd = x * 1.4426950408889634 + shifter;
    memcpy(&ki, &kd, 8);
    kd -= shifter;
    r = x - kd * 6.93147180369123816490e-01;
    r = r - kd * 1.90821492927058770002e-10;
    p = 1.6059043836821613e-10;
    p = p * r + 2.08767569878681e-09;
    p = p * r + 2.505210838544172e-08;
    p = p * r + 2.755731922398589e-07;
    p = p * r + 2.7557319223985893e-06;
    p = p * r + 2.48015873015873e-05;
    p = p * r + 1.984126984126984e-04;
    p = p * r + 1.388888888888889e-03;
    p = p * r + 8.333333333333333e-03;
    p = p * r + 4.1666666666666664e-02;
    p = p * r + 0.16666666666666666;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    ki = ((ki + 1023u) << 52) & ~below;  /* 2^k, or +0 below the cut */
    memcpy(&s, &ki, 8);
    return p * s;
}

/* float32: 0 below AQ_CUT_F32 (1e-26); 8 terms. */
AQ_INLINE float aq_exp_f32(float z) {
    const float shifter = 12582912.0f; /* 1.5 * 2^23 */
    float kd, r, p, s, x;
    uint32_t ki, zb, below;
    memcpy(&zb, &z, 4);  /* as aq_exp_f64 */
    below = 0u - ((0x42700000u - (zb & 0x7FFFFFFFu)) >> 31);
    kd = AQ_CUT_F32;
    memcpy(&ki, &kd, 4);
    zb = (zb & ~below) | (ki & below);
    memcpy(&x, &zb, 4);
    kd = x * 1.44269504088896341f + shifter;
    memcpy(&ki, &kd, 4);
    kd -= shifter;
    r = x - kd * 0.693145751953125f;
    r = r - kd * 1.428606765330187e-06f;
    p = 1.9841269841269841e-04f;
    p = p * r + 1.3888888888888889e-03f;
    p = p * r + 8.3333333333333332e-03f;
    p = p * r + 4.1666666666666664e-02f;
    p = p * r + 0.16666666666666666f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    ki = ((ki + 127u) << 23) & ~below;
    memcpy(&s, &ki, 4);
    return p * s;
}

/* rows per tile (with the BLAS products, 512 measured 0.9 to 1.3 times 256's
   time a pass, at the three sizes above) */
#define AQ_TILE 256
/* rows of at most this many features are multiplied along the rows */
#define AQ_NARROW 8
/* up to this many heads, the rows per head are counted by compares */
#define AQ_COUNT_HEADS 32
/* up to this many heads, the normalisers' logarithms are taken of products */
#define AQ_PRODUCT_HEADS 1000
/* tiles summed in the rows' precision before the float64 totals */
#define AQ_FLUSH_TILES 16
/* from this many heads and features, a tile whose weights above AQ_WEIGHT_FLOOR
   times their row's largest are at most one in AQ_SPARSE_SHARE sums its first
   moments head by head over those weights only: about d products a weight held
   in place of K d a row.  Each weight left out is below 2^-60 of its row's
   largest, under the rounding of any sum that holds the largest (an absolute
   bound: a head far from every row of a tile loses its own tiny sum there, its
   mass kept).  Measured (one thread, CPU time of whole fits, n = 5e4,
   by head against dense): uniform rows, d = 64, K = 256, 16.4 s against 24.1
   (139 ms a step against 183); blobs d = 64, K = 256, 3.34 s against 3.65;
   d = 32, K = 128, uniform 5.46 against 5.87, blobs 0.82 against 0.89; at
   d = 16 slower (uniform, K = 64, 2.73 s against 2.19; K = 256, 8.70 against
   6.34: the dense blocks of four heads by eight features win on narrow rows),
   hence the features' bound.  Against the BLAS product (the same fits, one
   thread, CPU time a pass with the gradient; d = 64, K = 256): float32 50 ms
   by head against 46 dense, float64 76 against 90: by head in float64 only */
#define AQ_SPARSE_HEADS 32
#define AQ_SPARSE_FEATURES 32
#define AQ_SPARSE_SHARE 8
#define AQ_WEIGHT_FLOOR 8.673617379884035e-19  /* 2^-60 */
/* below this many heads (float64; float32: AQ_ROW_HEADS_F32), a wide tile's
   logits are one BLAS product into rows by heads, At[:, :K]^T S^T (gemm "N",
   "N"), then transposed into the heads-by-rows layout the rest of the pass
   reads (K x AQ_TILE numbers); from it on, the product is the transposed one,
   S At[:, :K] (gemm "T", "T"), written in place.  OpenBLAS (scipy's 0.3,
   SkylakeX kernels) runs the first up to twice as fast for few heads (its
   small-matrix kernels), not for more.  Measured (one thread, CPU time, a pass
   with the gradient over 4000 standard normal rows, the first product against
   the second, interleaved): float64, d = 64: K = 2, 4, 10, 12 at 0.73, 0.84,
   0.89, 0.93 times the time, K = 6, 8 at 1.00, 1.02; d = 32: K = 2, 4, 12 at
   0.73, 0.88, 0.96, K = 8 1.01; d = 16: K = 2, 4 at 0.85, 0.97, K = 8 1.03; K =
   16: 1.04.  float32, d = 64: K = 2, 4, 6, 8 at 0.44, 0.61, 0.80, 0.89; d = 32:
   K = 2, 4, 6 at 0.55, 0.73, 0.93, K = 8 1.01 (1.02 at 2e4 rows: the 1e7 x 32
   float32 fit of K = 8 keeps the second), K = 16 1.10.  Where BLAS takes its
   small-matrix kernel the logits round differently (d >= 30, in their last
   bits): fits may move at rounding (the recorded fingerprints are
   bit-identical; standardised digits and breast cancer fits move in their last
   bits) */
#define AQ_ROW_HEADS 13
#define AQ_ROW_HEADS_F32 8
/* work space, in FLTs (the last K x AQ_TILE: the logits by rows, few heads) */
#define AQ_WORK(K, d) (((K) + 2) * AQ_TILE + (K) * (d) + (d) * AQ_TILE \
                       + ((K) < AQ_ROW_HEADS ? (K) * AQ_TILE : 0))

/* the BLAS products of wide rows' tiles (Fortran's sgemm and dgemm, as
   scipy.linalg.cython_blas exports them) */
typedef void (*aq_gemm_f64)(char *, char *, int *, int *, int *, double *, double *,
                            int *, double *, int *, double *, double *, int *);
typedef void (*aq_gemm_f32)(char *, char *, int *, int *, int *, float *, float *,
                            int *, float *, int *, float *, float *, int *);

#define FLT double
#define AQ_EXP aq_exp_f64
#define AQ_NAME(x) x##_f64
#include "_point_kernel_impl.h"
#undef FLT
#undef AQ_EXP
#undef AQ_NAME

#define FLT float
#define AQ_EXP aq_exp_f32
#define AQ_NAME(x) x##_f32
#include "_point_kernel_impl.h"
#undef FLT
#undef AQ_EXP
#undef AQ_NAME

#endif
