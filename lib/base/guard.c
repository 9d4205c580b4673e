/* guard: a library call's way out (lib/base/guard.h). */
#include "guard.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local guard *cur;

/* the link's free, when it wraps free (-Wl,--wrap=free): our objects' free() calls then land in
 * __wrap_free, which keeps the ledger; without the wrap this is NULL and there is no ledger */
extern void __real_free(void *p) __attribute__((weak));

void __wrap_free(void *p);
void __wrap_free(void *p)
{
    if (p && cur)
        guard_untrack(p);
    __real_free(p);
}

static int ledger_on(void) { return &__real_free != NULL; }

guard *guard_current(void) { return cur; }

void guard_push(guard *g, const volatile int *stop)
{
    memset(g, 0, sizeof *g);
    g->stop = stop;
    g->call = g;
    g->prev = cur;
    pthread_mutex_init(&g->mu, NULL);
    cur = g;
}

void guard_pop(guard *g)
{
    cur = g->prev;
    void **table = g->ledger;
    size_t cap = g->cap;
    g->ledger = NULL, g->cap = g->used = 0, g->cleanups = NULL;
    pthread_mutex_destroy(&g->mu);
    /* the blocks are the caller's now: an enclosing guard's to account for, if there is one */
    for (size_t i = 0; i < cap; i++)
        if (table[i])
            guard_track(table[i]);
    if (table)
        __real_free(table); /* a table exists only where the link wraps free */
}

static size_t slot(const guard *c, const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (c->cap - 1);
}

/* c->mu held: the table twice as large; 0, or -1 when it cannot grow (the block then goes
 * untracked: left behind on the way out, as without a ledger) */
static int slot_grow(guard *c)
{
    size_t cap = c->cap ? 2 * c->cap : 1024, oldcap = c->cap;
    void **t = calloc(cap, sizeof *t), **old = c->ledger;
    if (!t)
        return -1;
    c->ledger = t, c->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i]) {
            size_t s = slot(c, old[i]);
            while (t[s])
                s = (s + 1) & (cap - 1);
            t[s] = old[i];
        }
    if (old)
        __real_free(old); /* not through free(): that would take c->mu again */
    return 0;
}

void guard_track(void *p)
{
    guard *g = cur;
    if (!g || !p || !ledger_on())
        return;
    guard *c = g->call;
    pthread_mutex_lock(&c->mu);
    if ((c->used + 1) * 2 <= c->cap || !slot_grow(c)) {
        size_t s = slot(c, p);
        while (c->ledger[s])
            s = (s + 1) & (c->cap - 1);
        c->ledger[s] = p;
        c->used++;
    }
    pthread_mutex_unlock(&c->mu);
}

void guard_untrack(void *p)
{
    guard *g = cur;
    if (!g || !p || !ledger_on())
        return;
    guard *c = g->call;
    pthread_mutex_lock(&c->mu);
    if (c->cap) {
        size_t s = slot(c, p), m = c->cap - 1;
        while (c->ledger[s] && c->ledger[s] != p)
            s = (s + 1) & m;
        if (c->ledger[s]) { /* remove, shifting back what probed past it (no tombstones) */
            c->ledger[s] = NULL;
            c->used--;
            for (size_t j = (s + 1) & m; c->ledger[j]; j = (j + 1) & m) {
                size_t home = slot(c, c->ledger[j]);
                /* the entry at j may move to the hole at s when s lies between home and j */
                if ((j > s && (home <= s || home > j)) || (j < s && home <= s && home > j)) {
                    c->ledger[s] = c->ledger[j];
                    c->ledger[j] = NULL;
                    s = j;
                }
            }
        }
    }
    pthread_mutex_unlock(&c->mu);
}

void guard_on_unwind(guard_cleanup *c)
{
    guard *g = cur;
    if (!g)
        return;
    guard *call = g->call;
    pthread_mutex_lock(&call->mu);
    c->next = call->cleanups;
    call->cleanups = c;
    pthread_mutex_unlock(&call->mu);
}

void guard_forget_cleanup(guard_cleanup *c)
{
    guard *g = cur;
    if (!g)
        return;
    guard *call = g->call;
    pthread_mutex_lock(&call->mu);
    for (guard_cleanup **at = &call->cleanups; *at; at = &(*at)->next)
        if (*at == c) {
            *at = c->next;
            break;
        }
    pthread_mutex_unlock(&call->mu);
}

void guard_throw(int kind, const char *msg)
{
    guard *g = cur;
    if (!g)
        return;
    if (g->call != g) { /* a pool task's: the call rethrows it once the run is over */
        guard *c = g->call;
        pthread_mutex_lock(&c->mu);
        if (!c->failed) {
            c->failed = kind;
            snprintf(c->msg, sizeof c->msg, "%s", msg);
        }
        pthread_mutex_unlock(&c->mu);
        cur = g->prev;
        longjmp(g->jb, 1);
    }
    g->kind = kind;
    if (msg != g->msg)
        snprintf(g->msg, sizeof g->msg, "%s", msg);
    /* the cleanups first (they may free blocks: through the ledger, still ours), then every block
     * left; this thread stays inside the guard until then, so that those frees are seen */
    for (guard_cleanup *c = g->cleanups; c; c = g->cleanups) {
        g->cleanups = c->next;
        c->fn(c->arg);
    }
    pthread_mutex_lock(&g->mu);
    void **table = g->ledger;
    size_t cap = g->cap;
    g->ledger = NULL, g->cap = g->used = 0;
    pthread_mutex_unlock(&g->mu);
    cur = g->prev;
    for (size_t i = 0; i < cap; i++)
        if (table[i])
            __real_free(table[i]);
    if (table)
        __real_free(table);
    pthread_mutex_destroy(&g->mu);
    longjmp(g->jb, 1);
}

void guard_poll(void)
{
    guard *g = cur;
    if (g && g->call->stop && *g->call->stop)
        guard_throw(GUARD_STOP, "interrupted");
}

guard_run guard_run_begin(void) { return (guard_run){cur ? cur->call : NULL}; }

int guard_task(const guard_run *r, void (*fn)(void *ctx, int task, int worker), void *ctx, int task, int worker)
{
    if (!r->call) {
        fn(ctx, task, worker);
        return 0;
    }
    guard *c = r->call;
    if (c->failed)
        return c->failed;
    if (c->stop && *c->stop) {
        pthread_mutex_lock(&c->mu);
        if (!c->failed) {
            c->failed = GUARD_STOP;
            snprintf(c->msg, sizeof c->msg, "interrupted");
        }
        pthread_mutex_unlock(&c->mu);
        return GUARD_STOP;
    }
    guard t; /* the task's: it records into the call's guard and returns here */
    memset(&t, 0, sizeof t);
    t.call = c;
    t.prev = cur;
    guard *volatile before = cur;
    cur = &t;
    if (setjmp(t.jb)) {
        cur = before;
        return c->failed ? c->failed : GUARD_ERROR;
    }
    fn(ctx, task, worker);
    cur = before;
    return 0;
}

void guard_run_end(const guard_run *r)
{
    guard *c = r->call;
    if (c && c->failed && cur == c) {
        int kind = c->failed;
        c->failed = 0;
        guard_throw(kind, c->msg);
    }
}
