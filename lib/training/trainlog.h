/* trainlog: train's --log (a TSV of the loss and its parts every 50 steps) and the bookkeeping of
 * its step loop (images trained on, rates, the progress line).
 *
 * The log of a resumed run is cut back to the checkpoint's step, so that log and checkpoint agree
 * after a kill -9: its header line is kept, then every whole line up to the first one that is past
 * the step, cut short (a kill in the middle of a write) or not a step; the rest is dropped, and the
 * run appends. Each line goes to the file as it is written (a reader, trainstat, sees a run's
 * progress within TRAINLOG_EVERY steps); trainlog_sync puts the lines so far onto the disk: train
 * calls it before each checkpoint, so that a checkpoint is never ahead of its log. A log with
 * lines in it is cut back or emptied only at the run's first step: a run that trains none leaves
 * it as it was (and writes no checkpoint either).
 *
 * trainlog_read reads a log back (trainstat): the last step logged and the rate of the last
 * minute, from the step and seconds columns. The seconds count from the start of the process
 * that wrote the line, so they start again where a resumed run appended (at the checkpoint's
 * step, the last line kept): a rate is taken within the last such session only.
 *
 * Ownership: a trainlog owns its FILE (NULL without --log); path is the caller's string.
 *
 *   trainlog g;
 *   trainlog_open(&g, path, resumed, ci.step);   // path NULL: no file, the bookkeeping only
 *   trainlog_start(&g);                          // the clock of the rates starts
 *   for (each step) {
 *       ... train the step; then, with the step number after it:
 *       trainlog_step(&g, ci.step, ci.steps, n, loss, &st, lr);
 *       trainlog_progress(&g, pairs, loss, &st, text, sizeof text);   // the progress line's text
 *       ... trainlog_sync(&g) before a checkpoint
 *   }
 *   trainlog_close(&g);                          // dies when the log cannot be written
 *
 *   trainlog_state s;
 *   if (trainlog_read("run/train.log", &s) && s.lines) ... s.step, s.rate (0: not known yet)
 */
#ifndef HEDGE_TRAINLOG_H
#define HEDGE_TRAINLOG_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loss.h"

/* the columns of the log */
#define TRAINLOG_HEADER "step\tloss\tnll\tkl\ta\tb\tmean_var\timages_per_s\tseconds\tlr\tacc\tse2\n"
/* a line every this many steps, and at the last step */
#define TRAINLOG_EVERY 50

typedef struct {
    FILE *f;                     /* NULL: no log file */
    const char *path;
    double t0, tlast, now;       /* the start, the last line, the last step (now_seconds) */
    long long images, images_last; /* trained on since the start; at the last line */
    int resumed, begun;          /* a resumed run's log; cut back or emptied (at the first step) */
    int64_t step;                /* the step a resumed run began at */
} trainlog;

/* opens path (NULL: none) for a new run (written afresh with the header) or a resumed one at step
 * (cut back as above, then appended; a missing, empty or non-regular log starts afresh); a
 * regular log with lines in it is left as it is until the first trainlog_step */
void trainlog_open(trainlog *g, const char *path, int resumed, int64_t step);
void trainlog_start(trainlog *g);
/* a step of n images ended, step now being the steps done: counts them, and writes the log line
 * when step is a multiple of TRAINLOG_EVERY or the last of steps */
void trainlog_step(trainlog *g, int64_t step, int64_t steps, int n, double loss, const loss_stats *st, double lr);
/* the progress line's text after a step: loss, the accuracy of episodes and groups or a and b of
 * pairs, the mean variance and the images per second since the start */
void trainlog_progress(const trainlog *g, int pairs, double loss, const loss_stats *st, char *buf, size_t size);
/* the lines so far onto the disk (fflush and fsync; a pipe or a terminal has nothing to sync) */
void trainlog_sync(trainlog *g);
void trainlog_close(trainlog *g);

/* the rate is over about the last this many seconds (of the last session) */
#define TRAINLOG_RATE_WINDOW 60.0
typedef struct {
    long long lines; /* whole step lines read (0: none yet) */
    int64_t step;    /* the last line's step */
    double rate;     /* steps per second: from the last line back to the latest line of its session
                        at least TRAINLOG_RATE_WINDOW seconds before it, else to the session's start
                        (step 0, or the step it resumed at, second 0); 0 when not known */
} trainlog_state;
/* reads the log at path: 0 when there is no such file (*s zeroed), else 1 with *s filled; a
 * last line without its newline (being written) is left out. Dies naming path and line when the
 * file is not a train log (another first line, a line that is not a step and its seconds). */
int trainlog_read(const char *path, trainlog_state *s);
#endif
