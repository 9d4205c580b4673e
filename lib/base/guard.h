/* guard: a library call's way out. The programs end on bad data or a failed allocation (die(),
 * emalloc); a caller that is not a hedge program (Python through libhedge.so, a C program that
 * links the engine) must keep its process. Inside a guarded call, what would end the process
 * returns to the call's start instead, with its message: die() on this thread or on the par pool's
 * workers the call runs, an allocation that fails, or the caller's stop flag (Ctrl-C in Python),
 * which par's tasks and the long loops look at between pieces of work.
 *
 * Nothing the call allocated is lost on the way out: e*alloc (lib/base/util.h) records each block in
 * the innermost guard's ledger while a guard is active on the thread (or on the pool whose task
 * it runs), free() takes it out again (the link wraps free: -Wl,--wrap=free, the Makefile's
 * LDFLAGS; a link without the wrap keeps no ledger and leaves the blocks behind), and the way out
 * frees what is left, after running the cleanups the call registered (par pools stop and join
 * their threads). On success, guard_pop forgets the ledger: what the call returns is the caller's.
 *
 *   guard g;
 *   guard_push(&g, stop);                  // stop: NULL, or a flag another thread sets to 1
 *   if (setjmp(g.jb))                      // back here on the way out: g.kind, g.msg
 *       return g.kind == GUARD_NOMEM ? -2 : g.kind == GUARD_STOP ? -3 : -1;
 *   ... the work (a function call: locals of this frame changed after setjmp are lost) ...
 *   guard_pop(&g);
 *
 * Guards nest (a guarded call inside another is its own; what it returns joins the enclosing
 * call's ledger). Thread-safety: one guard belongs to the
 * thread that pushed it; par propagates it to the workers of a run. A call that leaves by the way
 * out must not have held a lock of its own across the failing work (hedge's code holds none).
 */
#ifndef HEDGE_GUARD_H
#define HEDGE_GUARD_H
#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>

enum { GUARD_ERROR = 1, GUARD_NOMEM = 2, GUARD_STOP = 3 };

typedef struct guard_cleanup {
    void (*fn)(void *arg);
    void *arg;
    struct guard_cleanup *next;
} guard_cleanup;

typedef struct guard {
    jmp_buf jb;
    int kind;                 /* GUARD_* on the way out */
    char msg[400];            /* the message die() would have printed (without "prog: ") */
    const volatile int *stop; /* or NULL */
    struct guard *prev;       /* the thread's enclosing guard */
    struct guard *call;       /* the call's guard this one works for (a pool task's: its run's) */
    /* the call's own (call == this): */
    pthread_mutex_t mu;
    void **ledger;            /* open-addressing set of live blocks, (cap) slots, NULL = empty */
    size_t cap, used;
    guard_cleanup *cleanups;
    int failed;               /* a task's failure to rethrow: kind; msg holds its message */
} guard;

void guard_push(guard *g, const volatile int *stop);
/* the call succeeded: forget the ledger (the blocks stay the caller's) and the cleanups */
void guard_pop(guard *g);
/* the thread's innermost guard, NULL outside any */
guard *guard_current(void);
/* leave by the way out, if a guard is active (else return: the caller then dies as before) */
void guard_throw(int kind, const char *msg);
/* the way out when the stop flag is set (a place between pieces of work) */
void guard_poll(void);
/* the ledger: a block made, a block gone (both no-ops outside a guard) */
void guard_track(void *p);
void guard_untrack(void *p);
/* a cleanup for the way out (its node is the caller's, e.g. inside the object it cleans) */
void guard_on_unwind(guard_cleanup *c);
void guard_forget_cleanup(guard_cleanup *c);

/* par's side: a run's tasks work for the guard that was current when the run started */
typedef struct {
    guard *call;              /* NULL: the run is not guarded */
} guard_run;
guard_run guard_run_begin(void);
/* runs the task fn(ctx, task, worker) under a task guard for r (directly when r has no call):
 * 0, or the failure's kind, recorded in the call's guard to rethrow with guard_run_end once the
 * run is over; a task of a run that failed or was stopped does not run */
int guard_task(const guard_run *r, void (*fn)(void *ctx, int task, int worker), void *ctx, int task, int worker);
/* after every task of the run: the way out if a task failed (or the stop flag is set) */
void guard_run_end(const guard_run *r);
#endif
