/* One precision of the point kernel: point_kernel.h includes it with FLT (the
   rows' type), AQ_EXP (its exponential) and AQ_NAME (the suffix). */

/* Logits of a tile of t narrow rows (d <= AQ_NARROW), heads by rows:
   L[k * AQ_TILE + i] = <x_i - r, A_k> - c_k from the tile's columns Xt
   (d x AQ_TILE, less r), along the rows (At: d x Kp).  Wide rows' logits are
   one BLAS product a tile (aq_point_sums). */
AQ_INLINE void AQ_NAME(aq_logits)(
    int64_t t, int64_t d, const FLT *At, int64_t Kp, const FLT *c, int64_t K,
    const FLT *Xt, FLT *AQ_RESTRICT L)
{
    int64_t i, j, k;
    for (k = 0; k < K; k++) {
        FLT *l = L + k * AQ_TILE;
        for (i = 0; i < t; i++) l[i] = -c[k];
        for (j = 0; j < d; j++) {
            const FLT a = At[j * Kp + k], *x = Xt + j * AQ_TILE;
            for (i = 0; i < t; i++) l[i] += a * x[i];
        }
    }
}

/* First moments of a tile of narrow rows, F[k * d + j] += sum_i P[k * AQ_TILE + i]
   (x_ij - r_j), from its columns Xt (less r).  Wide rows' are one BLAS
   product a tile (aq_point_sums). */
AQ_INLINE void AQ_NAME(aq_moments)(
    int64_t t, int64_t d, const FLT *P, int64_t K, const FLT *Xt, FLT *AQ_RESTRICT F)
{
    int64_t i, j, k, q;
    for (k = 0; k < K; k++) {
        const FLT *p = P + k * AQ_TILE;
        for (j = 0; j < d; j++) {
            const FLT *x = Xt + j * AQ_TILE;
            FLT s8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (i = 0; i + 8 <= t; i += 8)
                for (q = 0; q < 8; q++) s8[q] += p[i + q] * x[i + q];
            for (; i < t; i++) s8[0] += p[i] * x[i];
            F[k * d + j] += ((s8[0] + s8[1]) + (s8[2] + s8[3]))
                          + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
        }
    }
}

/* First moments of a tile, head by head (wide rows, many heads): F[k * d + j] +=
   P[k * AQ_TILE + i] (x_ij - r_j) for the weights beyond +-cut[i] only. */
AQ_INLINE void AQ_NAME(aq_moments_by_head)(
    const FLT *X, int64_t t, int64_t d, const FLT *r, const FLT *P, int64_t K,
    const FLT *cut, FLT *AQ_RESTRICT F)
{
    int64_t i, j, k;
    for (k = 0; k < K; k++) {
        const FLT *p = P + k * AQ_TILE;
        FLT *AQ_RESTRICT f = F + k * d;
        for (i = 0; i < t; i++) {
            const FLT *x = X + i * d, pi = p[i];
            if (!(pi > cut[i] || pi < -cut[i])) continue;  /* (a row of weight 0: none) */
            if (r)
                for (j = 0; j < d; j++) f[j] += pi * (x[j] - r[j]);
            else
                for (j = 0; j < d; j++) f[j] += pi * x[j];
        }
    }
}

/* The largest g ss_i - top_i and g ss_i of a tile's rows into far[0] and
   far[1] (aq_point_sums), ss_i = ||u_i - v||^2 of its rows u_i (x_i less r):
   given (narrow rows: summed as their columns are laid out), or from its rows
   S (t x d) where S is not NULL.  Along the rows in vector registers (a NaN
   difference is passed over: the caller reads far[1], not finite where a
   row's square overflowed). */
AQ_INLINE void AQ_NAME(aq_far)(
    int64_t t, int64_t d, const FLT *S, const FLT *v, FLT g, const FLT *top,
    FLT *AQ_RESTRICT ss, double *far)
{
    FLT f8[8], m8[8];
    int64_t i, j, q;
    if (S) {
        for (i = 0; i < t; i++) {
            const FLT *x = S + i * d;
            FLT s8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (j = 0; j + 8 <= d; j += 8)
                for (q = 0; q < 8; q++) {
                    const FLT e = x[j + q] - v[j + q];
                    s8[q] += e * e;
                }
            for (; j < d; j++) {
                const FLT e = x[j] - v[j];
                s8[0] += e * e;
            }
            ss[i] = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
        }
    }
    for (q = 0; q < 8; q++) { f8[q] = (FLT)far[0]; m8[q] = (FLT)far[1]; }
    for (i = 0; i + 8 <= t; i += 8)
        for (q = 0; q < 8; q++) {
            const FLT a = g * ss[i + q], b = a - top[i + q];
            f8[q] = b > f8[q] ? b : f8[q];
            m8[q] = a > m8[q] ? a : m8[q];
        }
    for (; i < t; i++) {
        const FLT a = g * ss[i], b = a - top[i];
        f8[0] = b > f8[0] ? b : f8[0];
        m8[0] = a > m8[0] ? a : m8[0];
    }
    for (q = 0; q < 8; q++) {
        far[0] = f8[q] > far[0] ? f8[q] : far[0];
        far[1] = m8[q] > far[1] ? m8[q] : far[1];
    }
}

/* Sums over the rows X (n, d), C order, less r (d) unless r is NULL, of the
   logits l_h = <x - r, A_h> - c_h (At: A transposed, d x Kp; c: K):
     *out_value += sum_i w_i log sum_h exp(l_ih - top_i), top_i = max_h l_ih
     *out_top   += sum_i w_i top_i
     mass[k]    += sum_i w_i p_ik                      (need_grad)
     first[k,j] += sum_i w_i p_ik (x_ij - r_j)         (need_grad)
     counts[k]  += rows whose first largest logit is k; labels[i] = that k
                   (labels not NULL: a pass that does not label leaves counts)
     far[0] = max(far[0], max_i g ||x_i - r - v||^2 - top_i)   (far not NULL)
     far[1] = max(far[1], max_i g ||x_i - r - v||^2)
   (with logits b (||y||^2 - ||y - z_h||^2), y = (x - r - v) / s and g = b / s^2,
   far[0] is b times the rows' largest squared distance to their nearest z_h:
   sklearn_attnclust._coarse_points.missed_rows reads a bound made of it.)
   w, labels and far may be NULL (labels aligned for intptr_t; v, d numbers, is
   read where far is not NULL).  work: AQ_WORK(K, d) FLTs.  stage: NULL where X
   is aligned for FLT, else d x AQ_TILE FLTs (aligned)
   that each tile's rows are copied to (bytes, memcpy) before they are read:
   the same numbers in an aligned place (blocks that dask deserialises are
   often unaligned: a copy of a tile in cache, not of the whole block). */
static AQ_CLONES void AQ_NAME(aq_point_sums)(
    const FLT *X, int64_t n, int64_t d, const FLT *r, const FLT *At, int64_t Kp,
    const FLT *c, int64_t K, const double *w, int need_grad, intptr_t *labels,
    double *out_value, double *out_top, double *mass, double *first,
    int64_t *counts, FLT *work, AQ_NAME(aq_gemm) gemm, FLT *stage,
    const FLT *v, FLT g, double *far)
{
    FLT *L = work;                        /* K x AQ_TILE */
    FLT *top = L + K * AQ_TILE;           /* AQ_TILE */
    FLT *scale = top + AQ_TILE;           /* AQ_TILE */
    FLT *F = scale + AQ_TILE;             /* K x d */
    FLT *Xt = d <= AQ_NARROW ? F + K * d : NULL;  /* d x AQ_TILE */
    FLT *Xs = F + K * d;                  /* AQ_TILE x d: wide rows less r */
    FLT *R = Xs + d * AQ_TILE;            /* AQ_TILE x K: few heads' logits by rows */
    FLT one = 1, zero = 0;
    int gd = (int)d, gK = (int)K, gKp = (int)Kp, gT = AQ_TILE, gt;
    char tr = 'T', nt = 'N';
    const FLT *S;
    int32_t lab[AQ_TILE];
    FLT ss[AQ_TILE];                      /* the rows' ||x - r - v||^2 (far) */
    double value = 0.0, tops = 0.0, wt = 1.0;
    int64_t i0, i, j, k, t, q;
    int sparse;

    if (need_grad) memset(F, 0, sizeof(FLT) * K * d);
    for (i0 = 0; i0 < n; i0 += AQ_TILE) {
        const FLT *Xb = X + i0 * d;
        t = n - i0 < AQ_TILE ? n - i0 : AQ_TILE;
        if (stage) {  /* (the address by bytes: X is not aligned for FLT) */
            memcpy(stage, (const char *)X + (size_t)(i0 * d) * sizeof(FLT),
                   (size_t)(t * d) * sizeof(FLT));
            Xb = stage;
        }
        if (Xt && d == 2) {  /* the tile's columns (constant strides: vectorised) */
            const FLT r0 = r ? r[0] : (FLT)0, r1 = r ? r[1] : (FLT)0;
            for (i = 0; i < t; i++) {
                Xt[i] = Xb[2 * i] - r0;
                Xt[AQ_TILE + i] = Xb[2 * i + 1] - r1;
            }
            if (far)  /* (their squares less v, for aq_far, from the columns) */
                for (i = 0; i < t; i++)
                    ss[i] = (Xt[i] - v[0]) * (Xt[i] - v[0])
                          + (Xt[AQ_TILE + i] - v[1]) * (Xt[AQ_TILE + i] - v[1]);
        } else if (Xt) {
            if (far)
                for (i = 0; i < t; i++) ss[i] = 0;
            for (j = 0; j < d; j++) {
                const FLT rj = r ? r[j] : (FLT)0;
                FLT *xt = Xt + j * AQ_TILE;
                for (i = 0; i < t; i++) xt[i] = Xb[i * d + j] - rj;
                if (far) {
                    const FLT vj = v[j];
                    for (i = 0; i < t; i++) ss[i] += (xt[i] - vj) * (xt[i] - vj);
                }
            }
        }
        S = Xb;
        if (!Xt && r) {  /* the tile less r, for both products */
            for (i = 0; i < t; i++)
                for (j = 0; j < d; j++) Xs[i * d + j] = Xb[i * d + j] - r[j];
            S = Xs;
        }
        if (Xt) {
            AQ_NAME(aq_logits)(t, d, At, Kp, c, K, Xt, L);
        } else if (K < (sizeof(FLT) == 8 ? AQ_ROW_HEADS : AQ_ROW_HEADS_F32)) {
            /* R (K x t, column-major) = (S At[:, :K])^T */
            gt = (int)t;
            gemm(&nt, &nt, &gK, &gt, &gd, &one, (FLT *)At, &gKp, (FLT *)S, &gd, &zero, R, &gK);
            for (k = 0; k < K; k++) {
                FLT *l = L + k * AQ_TILE;
                const FLT ck = c[k];
                for (i = 0; i < t; i++) l[i] = R[i * K + k] - ck;
            }
        } else {  /* L (t x K, column-major, ld AQ_TILE) = S At[:, :K] */
            gt = (int)t;
            gemm(&tr, &tr, &gt, &gK, &gd, &one, (FLT *)S, &gd, (FLT *)At, &gKp, &zero, L, &gT);
            /* less the offsets, the rows' largest logit taken in the same read */
            for (i = 0; i < t; i++) top[i] = L[i] -= c[0];
            for (k = 1; k < K; k++) {
                FLT *l = L + k * AQ_TILE;
                const FLT ck = c[k];
                for (i = 0; i < t; i++) {
                    l[i] -= ck;
                    top[i] = l[i] > top[i] ? l[i] : top[i];
                }
            }
        }
        /* the largest logit of each row (the BLAS product's: above) */
        if (Xt || K < (sizeof(FLT) == 8 ? AQ_ROW_HEADS : AQ_ROW_HEADS_F32)) {
            for (i = 0; i < t; i++) top[i] = L[i];
            for (k = 1; k < K; k++) {
                const FLT *l = L + k * AQ_TILE;
                for (i = 0; i < t; i++) top[i] = l[i] > top[i] ? l[i] : top[i];
            }
        }
        if (labels) {  /* the first head of each row's largest logit, and the counts */
            for (i = 0; i < t; i++) lab[i] = (int32_t)(K - 1);
            for (k = K - 2; k >= 0; k--) {
                const FLT *l = L + k * AQ_TILE;
                for (i = 0; i < t; i++) lab[i] = l[i] == top[i] ? (int32_t)k : lab[i];
            }
            if (K <= AQ_COUNT_HEADS) {  /* a compare per head: no chain through memory */
                for (k = 0; k < K; k++) {
                    int32_t m8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    for (i = 0; i + 8 <= t; i += 8)
                        for (q = 0; q < 8; q++) m8[q] += lab[i + q] == (int32_t)k;
                    for (; i < t; i++) m8[0] += lab[i] == (int32_t)k;
                    counts[k] += ((m8[0] + m8[1]) + (m8[2] + m8[3]))
                               + ((m8[4] + m8[5]) + (m8[6] + m8[7]));
                }
            } else {
                for (i = 0; i < t; i++) counts[lab[i]]++;
            }
            for (i = 0; i < t; i++) labels[i0 + i] = lab[i];
        }
        if (far)
            AQ_NAME(aq_far)(t, d, Xt ? NULL : S, v, g, top, ss, far);
        /* the softmax's exponentials and normalisers (summed as they are taken) */
        for (i = 0; i < t; i++) scale[i] = L[i] = AQ_EXP(L[i] - top[i]);
        for (k = 1; k < K; k++) {
            FLT *l = L + k * AQ_TILE;
            for (i = 0; i < t; i++) {
                l[i] = AQ_EXP(l[i] - top[i]);
                scale[i] += l[i];
            }
        }
        if (w || K > AQ_PRODUCT_HEADS) {
            for (i = 0; i < t; i++) {
                const double wi = w ? w[i0 + i] : 1.0;
                value += wi * log((double)scale[i]);
                tops += wi * (double)top[i];
            }
        } else {
            /* logarithms of products of AQ_TILE / 4 normalisers (each in [1, K]) */
            double prod[4] = {1.0, 1.0, 1.0, 1.0}, tp[4] = {0.0, 0.0, 0.0, 0.0};
            for (i = 0; i + 4 <= t; i += 4)
                for (q = 0; q < 4; q++) {
                    prod[q] *= (double)scale[i + q];
                    tp[q] += (double)top[i + q];
                }
            for (; i < t; i++) { prod[0] *= (double)scale[i]; tp[0] += (double)top[i]; }
            value += (log(prod[0]) + log(prod[1])) + (log(prod[2]) + log(prod[3]));
            tops += (tp[0] + tp[1]) + (tp[2] + tp[3]);
        }
        if (!need_grad) continue;
        /* the weights w_i p_ik, their sums and the first moments, the w_i taken
           relative to the tile's largest |w_i| (wt), so that the rows'
           precision holds them at any scale (float32 weights of 1e300 would be
           infinite); the tile's sums are multiplied by wt in float64.  A row
           weighing less than the rows' precision's smallest number (1e-45 in
           float32) times wt counts as 0 in the moments. */
        if (w) {
            wt = 0.0;
            for (i = 0; i < t; i++) wt = fabs(w[i0 + i]) > wt ? fabs(w[i0 + i]) : wt;
            for (i = 0; i < t; i++)
                scale[i] = wt > 0.0 ? (FLT)(w[i0 + i] / wt) / scale[i] : (FLT)0;
        } else {
            for (i = 0; i < t; i++) scale[i] = (FLT)1 / scale[i];
        }
        for (k = 0; k < K; k++) {
            FLT *l = L + k * AQ_TILE;
            FLT m8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (i = 0; i < t; i++) l[i] *= scale[i];
            for (i = 0; i + 8 <= t; i += 8)
                for (q = 0; q < 8; q++) m8[q] += l[i + q];
            for (; i < t; i++) m8[0] += l[i];
            mass[k] += wt * (double)(((m8[0] + m8[1]) + (m8[2] + m8[3]))
                                     + ((m8[4] + m8[5]) + (m8[6] + m8[7])));
        }
        sparse = 0;
        if (sizeof(FLT) == 8 && K >= AQ_SPARSE_HEADS && d >= AQ_SPARSE_FEATURES) {
            /* the row's largest weight is scale[i] (its exponential is 1; of the
               row's weight's sign); the weights beyond the cut in magnitude
               counted: by head where they are few */
            int64_t held = 0;
            for (i = 0; i < t; i++)
                top[i] = (scale[i] < 0 ? -scale[i] : scale[i]) * (FLT)AQ_WEIGHT_FLOOR;
            for (k = 0; k < K; k++) {
                const FLT *l = L + k * AQ_TILE;
                int64_t h8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                for (i = 0; i + 8 <= t; i += 8)
                    for (q = 0; q < 8; q++)
                        h8[q] += (l[i + q] > top[i + q]) | (l[i + q] < -top[i + q]);
                for (; i < t; i++) h8[0] += (l[i] > top[i]) | (l[i] < -top[i]);
                held += ((h8[0] + h8[1]) + (h8[2] + h8[3])) + ((h8[4] + h8[5]) + (h8[6] + h8[7]));
            }
            sparse = held * AQ_SPARSE_SHARE <= K * t;
        }
        if (sparse)
            AQ_NAME(aq_moments_by_head)(Xb, t, d, r, L, K, top, F);
        else if (Xt)
            AQ_NAME(aq_moments)(t, d, L, K, Xt, F);
        else {  /* F (d x K, column-major) += S^T P */
            gt = (int)t;
            gemm(&nt, &nt, &gd, &gK, &gt, &one, (FLT *)S, &gd, L, &gT, &one, F, &gd);
        }
        /* weighted tiles have a scale each: their moments are flushed at once */
        if (w || (i0 / AQ_TILE) % AQ_FLUSH_TILES == AQ_FLUSH_TILES - 1 || i0 + t >= n) {
            for (k = 0; k < K * d; k++) first[k] += wt * (double)F[k];
            memset(F, 0, sizeof(FLT) * K * d);
        }
    }
    *out_value += value;
    *out_top += tops;
}
