/* par: every task runs once, workers in range, pools reused across runs, one thread inline in
 * order, and a task-ordered reduction the same for every thread count, and when the system
 * refuses threads. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "par.h"

typedef struct {
    atomic_int runs[1000];
    int bad_worker, nworkers;
    double part[1000];
    int order[1000];
    atomic_int seq;
} ctx_t;

static void task(void *arg, int t, int w)
{
    ctx_t *c = arg;
    atomic_fetch_add(&c->runs[t], 1);
    if (w < 0 || w >= c->nworkers)
        c->bad_worker = 1;
    double s = 0;
    for (int i = 0; i < 1000; i++)
        s += 1.0 / (1.0 + t * 1000 + i);
    c->part[t] = s;
    c->order[atomic_fetch_add(&c->seq, 1)] = t;
}

static void short_task(void *arg, int t, int w) { atomic_fetch_add(&((atomic_int *)arg)[t], 1); }

static double reduce(const ctx_t *c, int n)
{
    double s = 0;
    for (int t = 0; t < n; t++)
        s += c->part[t];
    return s;
}

static ctx_t c;

/* a system that gives `allowed` threads, then refuses (EAGAIN, as under ulimit -u) */
static int allowed, asked;
static int (*real_spawn)(pthread_t *, void *(*)(void *), void *);
static int stingy_spawn(pthread_t *th, void *(*fn)(void *), void *arg)
{
    asked++;
    return asked > allowed ? EAGAIN : real_spawn(th, fn, arg);
}

int main(void)
{
    double ref = 0;
    for (int threads = 1; threads <= 8; threads *= 2) {
        par_pool *p = par_new(threads);
        CHECK(par_workers(p) == threads);
        for (int rep = 0; rep < 50; rep++) {
            memset(&c, 0, sizeof c);
            c.nworkers = threads;
            int n = rep % 3 == 0 ? 1000 : rep % 3 == 1 ? 1 : 7;
            par_run(p, n, task, &c);
            int once = 1;
            for (int t = 0; t < 1000; t++)
                once &= atomic_load(&c.runs[t]) == (t < n);
            CHECK(once);
            CHECK(!c.bad_worker);
            if (n == 1000) {
                double s = reduce(&c, n);
                if (threads == 1 && rep == 0)
                    ref = s;
                CHECK(memcmp(&s, &ref, sizeof s) == 0);
            }
            if (threads == 1) {
                int inorder = 1;
                for (int t = 0; t < n; t++)
                    inorder &= c.order[t] == t;
                CHECK(inorder);
            }
        }
        par_run(p, 0, task, &c);
        par_free(p);
    }
    /* many short runs back to back, each on its own counters: a worker that wakes late finds its
     * run over (or a later one under way) and claims nothing of it; every task of every run once */
    {
        enum { RUNS = 20000 };
        static atomic_int hits[RUNS][3];
        par_pool *p = par_new(3);
        for (int r = 0; r < RUNS; r++)
            par_run(p, 2 + r % 2, short_task, hits[r]);
        par_free(p);
        int once = 1;
        for (int r = 0; r < RUNS; r++)
            for (int t = 0; t < 3; t++)
                once &= atomic_load(&hits[r][t]) == (t < 2 + r % 2);
        CHECK(once);
    }
    memset(&c, 0, sizeof c);
    c.nworkers = 3;
    par_for(3, 500, task, &c);
    int once = 1;
    for (int t = 0; t < 1000; t++)
        once &= atomic_load(&c.runs[t]) == (t < 500);
    CHECK(once);
    /* threads refused: the tasks run on the workers made (none: the caller alone), each once,
     * the same reduction to the bit, and the pool runs again and frees */
    real_spawn = par_spawn;
    par_spawn = stingy_spawn;
    for (allowed = 0; allowed <= 2; allowed++) {
        asked = 0;
        par_pool *p = par_new(4);
        for (int rep = 0; rep < 3; rep++) {
            memset(&c, 0, sizeof c);
            c.nworkers = 4;
            par_run(p, 1000, task, &c);
            int ok = 1;
            for (int t = 0; t < 1000; t++)
                ok &= atomic_load(&c.runs[t]) == 1;
            CHECK(ok);
            CHECK(!c.bad_worker);
            double s = reduce(&c, 1000);
            CHECK(memcmp(&s, &ref, sizeof s) == 0);
        }
        CHECK(asked == allowed + 1); /* it stops asking at the first refusal, and asks once */
        par_free(p);
    }
    par_spawn = real_spawn;
    CHECK(par_lo(10, 3, 0) == 0 && par_lo(10, 3, 1) == 3 && par_lo(10, 3, 2) == 6 && par_lo(10, 3, 3) == 10);
    CHECK(par_lo(1LL << 40, 7, 7) == 1LL << 40);
    return check_done("par");
}
