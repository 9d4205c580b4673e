/* par: hedge's one parallel-for. A pool of threads (the caller is worker 0) runs tasks
 * 0 .. ntasks-1 of a function, each task once, handed out in order as workers free up; par_run
 * returns when every task has ended. Which worker runs which task varies from run to run, so a
 * task writes only what belongs to its own task number (its items, its partial sum, reduced
 * afterwards in task order): then the result is the same bytes for every thread count. The
 * worker number is for scratch space (one buffer per worker).
 *
 *   par_pool *p = par_new(threads);       // threads <= 1: tasks run in the caller, in order
 *   par_run(p, ntasks, fn, ctx);          // fn(ctx, task, worker), worker < par_workers(p)
 *   par_free(p);
 *   par_for(threads, ntasks, fn, ctx);    // the same, once, for a single fan-out
 *
 * The threads start at the first par_run that has more than one task and wait between runs
 * (train runs several fan-outs per step). Not reentrant: a task must not call par_run on its
 * own pool.
 */
#ifndef HEDGE_PAR_H
#define HEDGE_PAR_H

#include <pthread.h>

#define PAR_MAXTHREADS 64

typedef void (*par_fn)(void *ctx, int task, int worker);
typedef struct par_pool par_pool;

par_pool *par_new(int threads);
int par_workers(const par_pool *p);
void par_run(par_pool *p, int ntasks, par_fn fn, void *ctx);
void par_free(par_pool *p);
void par_for(int threads, int ntasks, par_fn fn, void *ctx);
/* par_run when `work` (in flops) pays for handing the tasks out (PAR_MIN_WORK or more), else the
 * same tasks in the caller, in order: a small layer is not split across threads. The same
 * tasks run either way, so the result is the same bytes. */
#define PAR_MIN_WORK 4e6
void par_run_sized(par_pool *p, double work, int ntasks, par_fn fn, void *ctx);
/* tasks of about equal size: the range [0, n) cut into `tasks` pieces, task t's piece is
 * [par_lo(n, tasks, t), par_lo(n, tasks, t + 1)) */
long long par_lo(long long n, int tasks, int t);
/* how a worker thread is made (pthread_create; 0 or an errno): tests replace it. When the system
 * refuses a thread, the pool warns once and runs its tasks on the threads made so far. */
extern int (*par_spawn)(pthread_t *th, void *(*fn)(void *), void *arg);
#endif
