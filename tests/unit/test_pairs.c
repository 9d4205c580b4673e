/* pairs: random pairs match on even p and not on odd p, never an image with itself (or, across two
 * sets, with its twin); pair p does not depend on how many are drawn; a pairs file maps ids to
 * indices; what cannot be drawn or read dies with status 1. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pairs.h"

int main(void)
{
    /* S: 10 images; class 3 has one image (never the first of a matching pair) */
    int32_t scls[10] = {0, 0, 0, 1, 1, 2, 2, 2, 2, 3};
    int64_t sid[10] = {100, 101, 102, 103, 104, 105, 106, 107, 108, 109};
    match_set S = {.n = 10, .C = 1, .D = 1, .cls = scls, .id = sid, .has_id = 1};
    pairs_ij *P = pairs_random(&S, 400, 7), *Q = pairs_random(&S, 51, 7), *R = pairs_random(&S, 400, 8);
    int ok = 1, ranged = 1, prefix = 1, differ = 0, seen[10] = {0};
    for (int p = 0; p < 400; p++) {
        int64_t i = P[p].i, j = P[p].j;
        ranged &= i >= 0 && i < 10 && j >= 0 && j < 10;
        if (!ranged)
            break;
        if (p % 2 == 0) {
            ok &= scls[i] == scls[j] && i != j && i != 9;
            seen[j]++;
        } else
            ok &= scls[i] != scls[j];
        if (p < 51)
            prefix &= Q[p].i == i && Q[p].j == j;
        differ |= R[p].i != i || R[p].j != j;
    }
    CHECK(ranged);
    CHECK(ok);
    CHECK(prefix);
    CHECK(differ);
    for (int j = 0; j < 9; j++) /* every image of a class of two or more is drawn as a partner */
        CHECK(seen[j] > 0);
    free(P), free(Q), free(R);

    /* G: twins of 100 (class 0), 103 (class 1), 105 (class 2) and others; class 5 is not in S */
    int32_t gcls[6] = {0, 0, 1, 2, 2, 5};
    int64_t gid[6] = {100, 200, 103, 105, 201, 300};
    match_set G = {.n = 6, .C = 1, .D = 1, .cls = gcls, .id = gid, .has_id = 1};
    P = pairs_cross(&S, &G, 300, 3);
    ok = ranged = 1;
    for (int p = 0; p < 300; p++) {
        int64_t i = P[p].i, j = P[p].j;
        ranged &= i >= 0 && i < 10 && j >= 0 && j < 6;
        if (!ranged)
            break;
        if (p % 2 == 0) /* same class, another id: 103 has no partner in G */
            ok &= scls[i] == gcls[j] && sid[i] != gid[j] && sid[i] != 103;
        else
            ok &= scls[i] != gcls[j];
    }
    CHECK(ranged);
    CHECK(ok);
    free(P);

    /* a pairs file: ids to indices, comments and blank lines skipped */
    char path[] = "/tmp/test_pairsXXXXXX";
    int fd = mkstemp(path);
    const char *text = "# pairs\n100 104\n\n  109\t101 # the last\n";
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    long n = 0;
    P = pairs_read_file(&S, path, &n);
    CHECK(n == 2 && P[0].i == 0 && P[0].j == 4 && P[1].i == 9 && P[1].j == 1);
    free(P);
    const char *bad[] = {"100 104 105\n", "100\n", "100 999\n", "# nothing\n"};
    for (int b = 0; b < 4; b++) {
        FILE *f = fopen(path, "w");
        fputs(bad[b], f);
        fclose(f);
        if (check_child()) {
            pairs_read_file(&S, path, &n);
            _exit(0);
        }
        CHECK(check_died());
    }
    unlink(path);

    /* one class: no non-matching pair (two pairs need one); one pair (matching) is fine */
    int32_t one[3] = {4, 4, 4};
    match_set O = {.n = 3, .C = 1, .D = 1, .cls = one, .id = sid, .has_id = 1};
    P = pairs_random(&O, 1, 1);
    CHECK(P[0].i != P[0].j);
    free(P);
    if (check_child()) {
        pairs_random(&O, 2, 1);
        _exit(0);
    }
    CHECK(check_died());
    return check_done("test_pairs");
}
