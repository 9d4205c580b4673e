/* centroids: class centroids, mixture variances and the appendix D ordering statistics of
 * lib/centroids against values worked out by hand. */
#include <stdio.h>

#include "centroids.h"
#include "check.h"

int main(void)
{
    /* class 7: two items of C = 2 components in D = 2. Item 1 means (1,2), (3,4): its mean (2, 3);
     * item 2 (5,6), (7,8): (6, 7); the centroid (4, 5). Variances all 1: each item's mixture
     * variance is 1 + the variance of its two means, ((1-2)^2 + (3-2)^2) / 2 = 1, so 2 per
     * dimension, and the class's mean variance 2. Class 3: one item, mean (0.5, -1). */
    centroid_set s;
    centroid_set_init(&s, 2);
    const float mu1[4] = {1, 2, 3, 4}, mu2[4] = {5, 6, 7, 8}, ones[4] = {1, 1, 1, 1};
    const float mu3[4] = {0, -2, 1, 0};
    centroid_add(&s, 7, mu1, ones, 2);
    centroid_add(&s, 3, mu3, ones, 2);
    centroid_add(&s, 7, mu2, ones, 2);
    CHECK(s.n == 2);
    CHECK(s.c[0].cls == 7 && s.c[0].n == 2 && s.c[1].cls == 3 && s.c[1].n == 1); /* first appearance */
    CHECK_CLOSE(s.c[0].sum[0] / s.c[0].n, 4, 1e-12);
    CHECK_CLOSE(s.c[0].sum[1] / s.c[0].n, 5, 1e-12);
    CHECK_CLOSE(s.c[0].vsum[0] / s.c[0].n, 2, 1e-12);
    CHECK_CLOSE(s.c[0].vsum[1] / s.c[0].n, 2, 1e-12);
    CHECK_CLOSE(s.c[1].sum[0], 0.5, 1e-12);
    CHECK_CLOSE(s.c[1].sum[1], -1, 1e-12);
    centroid_set_free(&s);

    /* ordering, 2 digits: first coordinates put the classes in the order 12 13 43 45 99 (equal
     * values: the lower class first, so 43 and 45 at 2.0 go 43 45). Pairs: 12-13 share the tens,
     * 13-43 share the ones, 43-45 the tens, 45-99 nothing: 3 shared pairs, one run of 4 classes */
    centroid_set_init(&s, 1);
    const int cls[5] = {45, 99, 12, 43, 13};
    const float x[5] = {2, 4, 0, 2, 1};
    for (int i = 0; i < 5; i++)
        centroid_add(&s, cls[i], &x[i], NULL, 1);
    centroid_order_stats st;
    centroid_order(&s, 2, &st);
    const int want[5] = {12, 13, 43, 45, 99};
    for (int i = 0; i < 5; i++)
        CHECK(s.c[i].cls == want[i]);
    CHECK(st.shared == 3 && st.runs == 1);
    CHECK_CLOSE(st.mean_run, 4, 1e-12);
    centroid_set_free(&s);

    /* two runs: 10 20 | 35 | 61 71 81 (10-20 share the ones, 20-35 nothing, 35-61 nothing,
     * 61-71, 71-81 the ones): shared 3, runs 2 of 2 and 3 classes, mean 2.5; no run: mean 0 */
    centroid_set_init(&s, 1);
    const int c2[6] = {10, 20, 35, 61, 71, 81};
    for (int i = 0; i < 6; i++) {
        float v = (float)i;
        centroid_add(&s, c2[i], &v, NULL, 1);
    }
    centroid_order(&s, 2, &st);
    CHECK(st.shared == 3 && st.runs == 2);
    CHECK_CLOSE(st.mean_run, 2.5, 1e-12);
    centroid_set_free(&s);
    centroid_set_init(&s, 1);
    for (int i = 0; i < 2; i++) {
        float v = (float)i;
        centroid_add(&s, i ? 23 : 11, &v, NULL, 1);
    }
    centroid_order(&s, 2, &st);
    CHECK(st.shared == 0 && st.runs == 0 && st.mean_run == 0);
    centroid_set_free(&s);
    return check_done("centroids");
}
