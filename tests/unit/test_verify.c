/* verify: TAR at FAR (lib/measures/verify.h) against values derived by hand, PFE's rule: k =
 * round(nneg far), T the k-th largest negative (k = 0: above the largest), accept s >= T. */
#include <math.h>

#include "check.h"
#include "verify.h"

int main(void)
{
    /* genuine .9 .8 .5 .3 against impostors .7 .5 .2 .1 0 (sorted: .7 .5 .2 .1 0) */
    double gen[] = {.3, .9, .5, .8}, imp[] = {.2, .7, 0, .5, .1};
    verify_point v;
    /* FAR .2: k = 1, T = .7: .9 .8 accepted, TAR 2/4; impostors >= .7: 1 of 5 */
    verify_at_far(gen, 4, imp, 5, .2, &v);
    CHECK(v.k == 1);
    CHECK_CLOSE(v.threshold, .7, 0);
    CHECK_CLOSE(v.rate, .5, 0);
    CHECK_CLOSE(v.far_reached, .2, 0);
    /* FAR .4: k = 2, T = .5: .9 .8 .5 accepted (>=), TAR 3/4; .7 .5 accepted, FAR 2/5 */
    verify_at_far(gen, 4, imp, 5, .4, &v);
    CHECK(v.k == 2);
    CHECK_CLOSE(v.threshold, .5, 0);
    CHECK_CLOSE(v.rate, .75, 0);
    CHECK_CLOSE(v.far_reached, .4, 0);
    /* FAR .1: 5 x .1 = .5 rounds to 0 (half to even): T just above .7: .9 .8, TAR .5, FAR 0 */
    verify_at_far(gen, 4, imp, 5, .1, &v);
    CHECK(v.k == 0);
    CHECK(v.threshold > .7 && v.threshold < .7 + 1e-15);
    CHECK_CLOSE(v.rate, .5, 0);
    CHECK_CLOSE(v.far_reached, 0, 0);
    /* FAR .3: 1.5 rounds to 2 (half to even): as FAR .4; FAR 1: k = 5, T = 0: everything */
    verify_at_far(gen, 4, imp, 5, .3, &v);
    CHECK(v.k == 2);
    CHECK_CLOSE(v.rate, .75, 0);
    verify_at_far(gen, 4, imp, 5, 1, &v);
    CHECK(v.k == 5);
    CHECK_CLOSE(v.rate, 1, 0);
    CHECK_CLOSE(v.far_reached, 1, 0);
    /* ties at T: impostors .5 .5 .5 .1, FAR .25: k = 1, T = .5, all three .5 accepted: FAR .75 */
    double tied[] = {.5, .1, .5, .5};
    verify_at_far(gen, 4, tied, 4, .25, &v);
    CHECK(v.k == 1);
    CHECK_CLOSE(v.rate, .75, 0);
    CHECK_CLOSE(v.far_reached, .75, 0);
    /* a positive of -inf is never accepted, even at FAR 1 (DIR's misidentified mated probe) */
    double dir[] = {.9, -INFINITY};
    verify_at_far(dir, 2, imp, 5, 1, &v);
    CHECK_CLOSE(v.rate, .5, 0);
    /* no positive: NaN */
    verify_at_far(gen, 0, imp, 5, .2, &v);
    CHECK(isnan(v.rate));
    /* enough: 10 / far negatives */
    CHECK(verify_enough(1000, 1e-2) && !verify_enough(999, 1e-2));
    CHECK(verify_enough(100000, 1e-4) && !verify_enough(99999, 1e-4));
    CHECK(verify_enough(100, 1e-1) && !verify_enough(5, 1e-1));
    return check_done("verify");
}
