/* knn_vote: the majority vote of k neighbours. Tie rule: knn_vote.h. */
#include "knn_vote.h"

#include <stdlib.h>

#include "util.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The neighbours sorted by (class, rank): each class a run, its neighbours in rank order, so that
 * its count and its sum (the same terms added in the same order as a walk by rank) take one pass,
 * O(k log k) where comparing every neighbour with every earlier one was O(k^2) (k = 50: most of
 * knn's serial tail). The winner: the most votes, then the smallest sum of distances, then the
 * class of the best-ranked neighbour. */
int32_t metrics_vote(const int32_t *cls, const double *dist, int k)
{
    uint64_t small[256], *key = k <= 256 ? small : emalloc((size_t)k * sizeof *key);
    for (int r = 0; r < k; r++) /* the class's bits flipped at the sign: unsigned order = int order */
        key[r] = (uint64_t)((uint32_t)cls[r] ^ 0x80000000u) << 32 | (uint32_t)r;
    qsort(key, (size_t)k, sizeof *key, cmp_u64);
    int best = -1, best_n = 0;
    double best_sum = 0;
    for (int a = 0, b; a < k; a = b) {
        int first = (int)(uint32_t)key[a];
        double sum = 0;
        for (b = a; b < k && key[b] >> 32 == key[a] >> 32; b++)
            sum += dist[(uint32_t)key[b]];
        int cnt = b - a;
        if (best < 0 || cnt > best_n || (cnt == best_n && (sum < best_sum || (sum == best_sum && first < best)))) {
            best = first;
            best_n = cnt;
            best_sum = sum;
        }
    }
    if (key != small)
        free(key);
    return best < 0 ? -1 : cls[best];
}
