/* pairs: the pairs pairscore scores (lib/evaluation/pairs.h) */
#include "pairs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argsort.h"
#include "rng.h"
#include "util.h"

/* the pair draws of pairs_random and pairs_cross: pair p from its own generator. A matching pair
 * takes a first image i from elig, then a second from ord[cs[i] .. ce[i]) (i's class in the
 * second set), never position skip[i] (the image itself, or its twin; -1: none); a non-matching
 * one takes i from other (NULL: any of 0 .. nother-1), then any of the m positions outside
 * [cs[i], ce[i]). */
static pairs_ij *draw_pairs(long npairs, uint64_t seed, const int64_t *elig, int64_t nelig,
                        const int64_t *other, int64_t nother, int64_t m, const int64_t *cs,
                        const int64_t *ce, const int64_t *skip, const int64_t *ord)
{
    pairs_ij *P = emalloc((size_t)npairs * sizeof *P);
    for (long p = 0; p < npairs; p++) {
        rng r;
        rng_init(&r, seed, RNG_STREAM('p', 'a', 'i', 'r') ^ (uint64_t)p);
        int64_t i, t;
        if (p % 2 == 0) { /* matching: another image of i's class */
            i = elig[rng_below(&r, (uint64_t)nelig)];
            t = cs[i] + (int64_t)rng_below(&r, (uint64_t)(ce[i] - cs[i] - (skip[i] >= 0)));
            if (skip[i] >= 0 && t >= skip[i])
                t++;
        } else { /* non-matching: any image outside i's class */
            int64_t k = (int64_t)rng_below(&r, (uint64_t)nother);
            i = other ? other[k] : k;
            t = (int64_t)rng_below(&r, (uint64_t)(m - (ce[i] - cs[i])));
            if (t >= cs[i])
                t += ce[i] - cs[i];
        }
        P[p].i = i;
        P[p].j = ord[t];
    }
    return P;
}

/* random pairs: pair p uses its own generator, so the set does not depend on anything but
 * (seed, p, the classes of the records) */
pairs_ij *pairs_random(const match_set *S, long npairs, uint64_t seed)
{
    int64_t n = S->n;
    /* records ordered by (class, index); each record's class occupies ord[cs .. ce) */
    double *key = emalloc((size_t)n * sizeof *key);
    int64_t *ord = emalloc((size_t)n * sizeof *ord), *pos = emalloc((size_t)n * sizeof *pos);
    int64_t *cs = emalloc((size_t)n * sizeof *cs), *ce = emalloc((size_t)n * sizeof *ce);
    for (int64_t i = 0; i < n; i++)
        key[i] = S->cls[i];
    metrics_argsort(key, n, ord);
    for (int64_t a = 0; a < n;) {
        int64_t b = a;
        while (b < n && S->cls[ord[b]] == S->cls[ord[a]])
            b++;
        for (int64_t t = a; t < b; t++) {
            pos[ord[t]] = t;
            cs[ord[t]] = a;
            ce[ord[t]] = b;
        }
        a = b;
    }
    /* images whose class has another image: the first members of matching pairs */
    int64_t *elig = emalloc((size_t)n * sizeof *elig), nelig = 0;
    for (int64_t i = 0; i < n; i++)
        if (ce[i] - cs[i] >= 2)
            elig[nelig++] = i;
    if (!nelig)
        die("no class has two images: no matching pair can be drawn");
    if (npairs > 1 && ce[0] - cs[0] == n)
        die("every image has class %d: no non-matching pair can be drawn", S->cls[0]);
    pairs_ij *P = draw_pairs(npairs, seed, elig, nelig, NULL, n, n, cs, ce, pos, ord);
    free(key);
    free(ord);
    free(pos);
    free(cs);
    free(ce);
    free(elig);
    return P;
}

/* cross pairs (-g): first image from S, second from G, drawn as pairs_random draws them (pair p
 * from its own generator): a matching pair takes a first image whose class has in G an image of
 * another id, then one of those; a non-matching one takes a first image whose class does not fill
 * G, then any image of G outside its class. */
pairs_ij *pairs_cross(const match_set *S, const match_set *G, long npairs, uint64_t seed)
{
    int64_t n = S->n, m = G->n;
    /* G ordered by (class, index), with its classes in that order for binary search */
    double *key = emalloc((size_t)m * sizeof *key);
    int64_t *ord = emalloc((size_t)m * sizeof *ord), *pos = emalloc((size_t)m * sizeof *pos);
    int32_t *sc = emalloc((size_t)m * sizeof *sc);
    for (int64_t t = 0; t < m; t++)
        key[t] = G->cls[t];
    metrics_argsort(key, m, ord);
    for (int64_t t = 0; t < m; t++) {
        pos[ord[t]] = t;
        sc[t] = G->cls[ord[t]];
    }
    int dup;
    int64_t dup_id;
    match_id_index *idx = match_ids_index(G->id, m, &dup, &dup_id);
    if (dup)
        die("id %lld appears twice in the second stream: twins cannot be told apart", (long long)dup_id);
    /* per first image: its class's range [cs, ce) of G and the position of its twin there (-1) */
    int64_t *cs = emalloc((size_t)n * sizeof *cs), *ce = emalloc((size_t)n * sizeof *ce);
    int64_t *tw = emalloc((size_t)n * sizeof *tw);
    int64_t *elig = emalloc((size_t)n * sizeof *elig), nelig = 0;
    int64_t *other = emalloc((size_t)n * sizeof *other), nother = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t lo = 0, hi = m;
        while (lo < hi) { /* first position with class >= cls[i] */
            int64_t mid = lo + (hi - lo) / 2;
            if (sc[mid] < S->cls[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        cs[i] = lo;
        hi = m;
        while (lo < hi) { /* first position with class > cls[i] */
            int64_t mid = lo + (hi - lo) / 2;
            if (sc[mid] <= S->cls[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        ce[i] = lo;
        int64_t k = match_ids_lookup(idx, m, S->id[i]);
        tw[i] = k >= 0 && G->cls[k] == S->cls[i] ? pos[k] : -1;
        if (ce[i] - cs[i] - (tw[i] >= 0) >= 1)
            elig[nelig++] = i;
        if (ce[i] - cs[i] < m)
            other[nother++] = i;
    }
    if (!nelig)
        die("no image has an image of its class and another id in the second stream: no matching pair "
            "can be drawn");
    if (npairs > 1 && !nother)
        die("the second stream has no image outside the classes of the first: no non-matching pair can "
            "be drawn");
    pairs_ij *P = draw_pairs(npairs, seed, elig, nelig, other, nother, m, cs, ce, tw, ord);
    free(key);
    free(ord);
    free(pos);
    free(sc);
    free(idx);
    free(cs);
    free(ce);
    free(tw);
    free(elig);
    free(other);
    return P;
}

pairs_ij *pairs_read_file(const match_set *S, const char *path, long *npairs)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open pairs file %s: %s", path, strerror(errno));
    input_not_directory(f, path, "a pairs file (two ids a line)");
    int dup;
    int64_t dup_id;
    match_id_index *t = match_ids_index(S->id, S->n, &dup, &dup_id);
    if (dup)
        die("id %lld appears twice in the input: a pairs file cannot name it", (long long)dup_id);
    pairs_ij *P = NULL;
    long n = 0, cap = 0, lineno = 0;
    char *line = NULL;
    size_t lcap = 0;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *p = line, *end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || !*p)
            continue;
        int64_t ids[2];
        for (int k = 0; k < 2; k++) {
            errno = 0;
            ids[k] = strtoll(p, &end, 10);
            if (end == p || errno)
                die("pairs file line %ld: expected two ids", lineno);
            p = end;
        }
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (*p)
            die("pairs file line %ld: expected two ids, found more", lineno);
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            P = erealloc(P, (size_t)cap * sizeof *P);
        }
        for (int k = 0; k < 2; k++) {
            int64_t idx = match_ids_lookup(t, S->n, ids[k]);
            if (idx < 0)
                die("pairs file line %ld names unknown id %lld", lineno, (long long)ids[k]);
            if (k == 0)
                P[n].i = idx;
            else
                P[n].j = idx;
        }
        n++;
    }
    if (ferror(f))
        die("cannot read pairs file %s", path);
    fclose(f);
    free(line);
    free(t);
    if (!n)
        die("pairs file %s names no pairs", path);
    *npairs = n;
    return P;
}
