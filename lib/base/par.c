/* par: the one parallel-for (lib/base/par.h) */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "util.h"

typedef struct {
    par_pool *p;
    int worker;
    long seen; /* the generation when the thread was made: it joins the next one */
} worker_arg;

/* A run's tasks are claimed from `next`, the run's generation (low 32 bits) in the high half and
 * the next task in the low half, by compare-and-swap: a worker that wakes late, after its run has
 * ended or while a later one is under way, cannot claim a task of a run it did not read. The
 * caller waits for its tasks to be done, not for every worker to check in: on a loaded machine
 * a worker may be scheduled only long after the caller has run every task itself. */
struct par_pool {
    int n; /* workers including the caller */
    int started;
    int made; /* threads made (n - 1, or fewer when the system refused one) */
    pthread_t th[PAR_MAXTHREADS];
    worker_arg args[PAR_MAXTHREADS];
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    long generation;
    int stop;
    par_fn fn;
    void *ctx;
    int ntasks;
    guard_run guarded;   /* the run's library call (lib/base/guard.h), or none */
    guard_cleanup unwind; /* a pool made inside a library call: its threads stop on the way out */
    _Atomic uint64_t next;
    atomic_int finished; /* tasks of the current run done */
};

static int spawn(pthread_t *th, void *(*fn)(void *), void *arg) { return pthread_create(th, NULL, fn, arg); }
int (*par_spawn)(pthread_t *th, void *(*fn)(void *), void *arg) = spawn;

static uint64_t tag(long generation) { return (uint64_t)(uint32_t)generation << 32; }

/* `done` more tasks of a run of ntasks have ended: whoever ends the last one wakes the caller */
static void ended(par_pool *p, int done, int ntasks)
{
    if (done && atomic_fetch_add(&p->finished, done) + done == ntasks) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* claims and runs tasks of the run of `generation` (fn, ctx, ntasks read with it) until none is
 * left. A task of a guarded run that fails (die, out of memory) or finds the call stopped ends
 * the run: the tasks nobody has claimed are claimed at once and count as ended, so that the
 * caller, woken, takes the way out (guard_run_end) */
static void work(par_pool *p, long generation, par_fn fn, void *ctx, int ntasks, int worker, const guard_run *g)
{
    uint64_t cur = atomic_load(&p->next);
    for (;;) {
        if ((cur & ~(uint64_t)0xffffffff) != tag(generation) || (int)(uint32_t)cur >= ntasks)
            return;
        if (!atomic_compare_exchange_weak(&p->next, &cur, cur + 1))
            continue;
        int failed = guard_task(g, fn, ctx, (int)(uint32_t)cur, worker);
        ended(p, 1, ntasks);
        cur = atomic_load(&p->next);
        while (failed && (cur & ~(uint64_t)0xffffffff) == tag(generation) && (int)(uint32_t)cur < ntasks)
            if (atomic_compare_exchange_weak(&p->next, &cur, tag(generation) | (uint32_t)ntasks))
                ended(p, ntasks - (int)(uint32_t)cur, ntasks);
    }
}

/* the tasks in the caller, in order (one worker, one task, or a small run) */
static void inline_run(int ntasks, par_fn fn, void *ctx)
{
    guard_run g = guard_run_begin();
    for (int t = 0; t < ntasks; t++)
        if (guard_task(&g, fn, ctx, t, 0))
            break;
    guard_run_end(&g);
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    par_pool *p = wa->p;
    long seen = wa->seen;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->generation == seen && !p->stop)
            pthread_cond_wait(&p->start, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        par_fn fn = p->fn;
        void *ctx = p->ctx;
        int ntasks = p->ntasks;
        guard_run g = p->guarded;
        pthread_mutex_unlock(&p->mu);
        work(p, seen, fn, ctx, ntasks, wa->worker, &g);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void stop_threads(par_pool *p)
{
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->start);
        pthread_mutex_unlock(&p->mu);
        for (int i = 1; i <= p->made; i++)
            pthread_join(p->th[i], NULL);
        p->started = 0;
    }
}

/* on a library call's way out: the threads end (the pool's memory goes with the call's ledger) */
static void unwind(void *arg)
{
    par_pool *p = arg;
    stop_threads(p);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
}

par_pool *par_new(int threads)
{
    par_pool *p = ecalloc(1, sizeof *p);
    p->n = threads < 1 ? 1 : threads > PAR_MAXTHREADS ? PAR_MAXTHREADS : threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    p->unwind = (guard_cleanup){unwind, p, NULL};
    guard_on_unwind(&p->unwind);
    return p;
}

int par_workers(const par_pool *p) { return p->n; }

void par_run(par_pool *p, int ntasks, par_fn fn, void *ctx)
{
    if (ntasks <= 0)
        return;
    if (p->n <= 1 || ntasks == 1) {
        inline_run(ntasks, fn, ctx);
        return;
    }
    pthread_mutex_lock(&p->mu);
    if (!p->started) {
        /* a thread the system refuses (ulimit -u, a cluster's limit) leaves the tasks to the
         * workers made so far: every task still runs once, and the result is the same bytes */
        for (int i = 1; i < p->n; i++) {
            p->args[i] = (worker_arg){p, i, p->generation};
            int e = par_spawn(&p->th[i], worker_main, &p->args[i]);
            if (e) {
                static atomic_int warned; /* once a process: a program makes several pools */
                if (!atomic_exchange(&warned, 1))
                    warn("cannot create thread %d of %d (%s); going on with %d thread%s", i + 1, p->n, strerror(e),
                         i, i > 1 ? "s" : "");
                break;
            }
            p->made = i;
        }
        p->started = 1;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->ntasks = ntasks;
    guard_run g = p->guarded = guard_run_begin();
    long generation = ++p->generation;
    atomic_store(&p->finished, 0);
    atomic_store(&p->next, tag(generation));
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    work(p, generation, fn, ctx, ntasks, 0, &g);
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->finished) < ntasks)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    guard_run_end(&g); /* a task failed or the call was stopped: its way out, the run over */
}

void par_run_sized(par_pool *p, double work, int ntasks, par_fn fn, void *ctx)
{
    if (work >= PAR_MIN_WORK) {
        par_run(p, ntasks, fn, ctx);
        return;
    }
    inline_run(ntasks, fn, ctx);
}

void par_free(par_pool *p)
{
    if (!p)
        return;
    guard_forget_cleanup(&p->unwind);
    stop_threads(p);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    free(p);
}

void par_for(int threads, int ntasks, par_fn fn, void *ctx)
{
    par_pool *p = par_new(threads);
    par_run(p, ntasks, fn, ctx);
    par_free(p);
}

long long par_lo(long long n, int tasks, int t)
{
    return tasks <= 0 ? 0 : (long long)((__int128)n * t / tasks);
}
