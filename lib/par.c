/* par: the one parallel-for (lib/par.h) */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "util.h"

typedef struct {
    par_pool *p;
    int worker;
    long seen; /* the generation when the thread was made: it joins the next one */
} worker_arg;

struct par_pool {
    int n; /* workers including the caller */
    int started;
    pthread_t th[PAR_MAXTHREADS];
    worker_arg args[PAR_MAXTHREADS];
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    long generation;
    int pending, stop;
    par_fn fn;
    void *ctx;
    int ntasks;
    atomic_int next;
};

static void work(par_pool *p, int worker)
{
    for (int t; (t = atomic_fetch_add(&p->next, 1)) < p->ntasks;)
        p->fn(p->ctx, t, worker);
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
        pthread_mutex_unlock(&p->mu);
        work(p, wa->worker);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

par_pool *par_new(int threads)
{
    par_pool *p = ecalloc(1, sizeof *p);
    p->n = threads < 1 ? 1 : threads > PAR_MAXTHREADS ? PAR_MAXTHREADS : threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    return p;
}

int par_workers(const par_pool *p) { return p->n; }

void par_run(par_pool *p, int ntasks, par_fn fn, void *ctx)
{
    if (ntasks <= 0)
        return;
    if (p->n <= 1 || ntasks == 1) {
        for (int t = 0; t < ntasks; t++)
            fn(ctx, t, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    if (!p->started) {
        for (int i = 1; i < p->n; i++) {
            p->args[i] = (worker_arg){p, i, p->generation};
            if (pthread_create(&p->th[i], NULL, worker_main, &p->args[i]))
                die("cannot create a thread");
        }
        p->started = 1;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->ntasks = ntasks;
    atomic_store(&p->next, 0);
    p->pending = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    work(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void par_run_sized(par_pool *p, double work, int ntasks, par_fn fn, void *ctx)
{
    if (work >= PAR_MIN_WORK) {
        par_run(p, ntasks, fn, ctx);
        return;
    }
    for (int t = 0; t < ntasks; t++)
        fn(ctx, t, 0);
}

void par_free(par_pool *p)
{
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->start);
        pthread_mutex_unlock(&p->mu);
        for (int i = 1; i < p->n; i++)
            pthread_join(p->th[i], NULL);
    }
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
