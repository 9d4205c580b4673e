/* trainlog and lossopt, the machinery train's main stands on: a resumed log is cut back to the
 * checkpoint's step (header kept; a line past the step, cut short or not a step ends it) at the
 * run's first step, and a run that trains none leaves a log as it was; a line is written every
 * TRAINLOG_EVERY steps and at the last; lossopt's defaults, overrides and the check that an
 * option belongs to its loss; a log read back (trainstat): the last step, the rate of the last
 * minute of its last session, each line readable as soon as it is written. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lossopt.h"
#include "trainlog.h"

static char path[] = "/tmp/test_trainlogXXXXXX";

static void put(const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* a run resumed at step 100 (new: a new run) that trains one step, 101, which writes no line */
static void one_step(int resumed)
{
    trainlog g;
    loss_stats st = {0};
    trainlog_open(&g, path, resumed, resumed ? 100 : 0);
    trainlog_start(&g);
    trainlog_step(&g, resumed ? 101 : 1, 200, 32, 0.25, &st, 1e-3);
    trainlog_close(&g);
}

static int has(const char *want)
{
    char got[4096] = {0};
    FILE *f = fopen(path, "r");
    size_t n = fread(got, 1, sizeof got - 1, f);
    fclose(f);
    got[n] = 0;
    if (strcmp(got, want))
        fprintf(stderr, "log is\n%s\nexpected\n%s\n", got, want);
    return !strcmp(got, want);
}

/* a log of n lines at steps[i] and seconds[i] (the other columns 0) */
static void put_log(const int *steps, const double *seconds, int n)
{
    FILE *f = fopen(path, "w");
    fputs(TRAINLOG_HEADER, f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%d\t0\t0\t0\t0\t0\t0\t0\t%g\t0\t0\t0\n", steps[i], seconds[i]);
    fclose(f);
}

/* trainlog_read on p exits 1 (in a child) */
static int read_dies(const char *p)
{
    if (check_child()) {
        trainlog_state s;
        trainlog_read(p, &s);
        _exit(0);
    }
    return check_died();
}

int main(void)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    trainlog g;
    /* resumed at step 100: lines 50 and 100 stay, 150 goes, and so does everything after it;
     * but not before the run has trained a step: a run that trains none (its input failed)
     * leaves the log as it was, resumed or new */
    const char *ahead = TRAINLOG_HEADER "50\t1\n100\t2\n150\t3\n100\t4\n";
    put(ahead);
    trainlog_open(&g, path, 1, 100);
    trainlog_start(&g);
    trainlog_close(&g);
    CHECK(has(ahead));
    trainlog_open(&g, path, 0, 0);
    trainlog_close(&g);
    CHECK(has(ahead));
    one_step(1);
    CHECK(has(TRAINLOG_HEADER "50\t1\n100\t2\n"));
    /* a line cut short (a kill during a write), then a line that is not a step */
    put(TRAINLOG_HEADER "50\t1\n10");
    one_step(1);
    CHECK(has(TRAINLOG_HEADER "50\t1\n"));
    put(TRAINLOG_HEADER "50\t1\nnan\t2\n");
    one_step(1);
    CHECK(has(TRAINLOG_HEADER "50\t1\n"));
    /* an empty log, or a new run: written afresh with the header (an empty one at once) */
    put("");
    trainlog_open(&g, path, 1, 100);
    trainlog_close(&g);
    CHECK(has(TRAINLOG_HEADER));
    put(ahead);
    one_step(0);
    CHECK(has(TRAINLOG_HEADER));
    put("50\t1\n");
    trainlog_open(&g, path, 0, 0);
    /* lines at steps 50 and 60 (the last of 60), none at 49; images counted for every step */
    loss_stats st = {.nll = 0.5, .a = 2, .b = 1};
    trainlog_start(&g);
    for (int s = 49; s <= 60; s++)
        trainlog_step(&g, s, 60, 32, 0.25, &st, 1e-3);
    CHECK(g.images == 12 * 32);
    trainlog_close(&g);
    FILE *f = fopen(path, "r");
    char line[256];
    int lines = 0, steps[3] = {0};
    while (fgets(line, sizeof line, f))
        if (lines < 3)
            steps[lines++] = atoi(line);
    fclose(f);
    CHECK(lines == 3 && steps[1] == 50 && steps[2] == 60);
    char text[160];
    trainlog_progress(&g, 1, 0.25, &st, text, sizeof text);
    CHECK(!strncmp(text, "loss 0.2500 a 2.000 b 1.000 var 0 ", 34));

    /* a line reaches the file as it is written, before any sync or close: a reader sees it */
    trainlog_state rs;
    trainlog_open(&g, path, 0, 0);
    trainlog_start(&g);
    for (int s = 1; s <= 50; s++)
        trainlog_step(&g, s, 100, 32, 0.25, &st, 1e-3);
    CHECK(trainlog_read(path, &rs) == 1 && rs.lines == 1 && rs.step == 50);
    trainlog_close(&g);

    /* reading back: no file; the header only; a rate over the last 60 s of the session */
    unlink(path);
    CHECK(trainlog_read(path, &rs) == 0 && rs.lines == 0 && rs.step == 0 && rs.rate == 0);
    put(TRAINLOG_HEADER);
    CHECK(trainlog_read(path, &rs) == 1 && rs.lines == 0 && rs.rate == 0);
    /* steps 50k at 10k seconds, k = 1..10: from (500, 100 s) back to the latest line at least
     * 60 s before it, (200, 40 s): 300 steps in 60 s, 5 steps/s */
    put_log((int[]){50, 100, 150, 200, 250, 300, 350, 400, 450, 500},
            (double[]){10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 10);
    CHECK(trainlog_read(path, &rs) == 1 && rs.lines == 10 && rs.step == 500);
    CHECK_CLOSE(rs.rate, 5.0, 1e-12);
    /* a session shorter than the window: from its start, step 0 at second 0: 100 / 16 */
    put_log((int[]){50, 100}, (double[]){9, 16}, 2);
    CHECK(trainlog_read(path, &rs) == 1 && rs.step == 100);
    CHECK_CLOSE(rs.rate, 6.25, 1e-12);
    /* resumed at step 200 (the seconds start again): the rate is the new session's alone, from
     * step 200 at second 0 to (300, 14 s): 100 / 14; a last line without its newline is left out */
    put_log((int[]){50, 100, 150, 200, 250, 300}, (double[]){10, 20, 30, 40, 4, 14}, 6);
    FILE *a = fopen(path, "a");
    fputs("350\t0.1", a);
    fclose(a);
    CHECK(trainlog_read(path, &rs) == 1 && rs.lines == 6 && rs.step == 300);
    CHECK_CLOSE(rs.rate, 100.0 / 14, 1e-12);
    /* not a train log, or a line that is not a step and its seconds: exit 1 (bad data) */
    put("step\tloss\n50\t1\n");
    CHECK(read_dies(path));
    put(TRAINLOG_HEADER "50\t0\t0\n");
    CHECK(read_dies(path));
    unlink(path);

    /* lossopt: nothing given is the loss's defaults (spe: K = 1); options by name, in order,
     * over them; an option of another loss is misuse */
    const loss_kind *vib = loss_find("vib"), *triplet = loss_find("triplet"), *spe = loss_find("spe");
    lossopt none = {0}, some = {0};
    loss_config lc;
    CHECK(lossopt_configure(&none, vib, 2, 0, &lc) == NULL);
    CHECK(lc.K == 8 && lc.beta == 1e-4 && lc.margin == 1 && lc.a0 == 1 && lc.b0 == 0 && lc.given == 0);
    CHECK(lossopt_configure(&none, spe, 2, 5, &lc) == NULL && lc.K == 1);
    CHECK_CLOSE(loss_value(&lc, spe, "gamma0"), 0.1, 1e-15); /* derived: 5 x 2 x 0.01 */
    CHECK(lossopt_index("K") >= 0 && lossopt_index("ce-topk") >= 0 && lossopt_index("gamma0") < 0);
    lossopt_add(&some, lossopt_index("K"), "4");
    lossopt_add(&some, lossopt_index("beta"), "0.01");
    lossopt_add(&some, lossopt_index("a0"), "3");
    lossopt_add(&some, lossopt_index("K"), "6"); /* the last one given wins */
    CHECK(lossopt_configure(&some, vib, 2, 0, &lc) == NULL);
    CHECK(lc.K == 6 && lc.beta == 0.01 && lc.a0 == 3 && lc.b0 == 0);
    CHECK(LOSS_GIVEN(&lc, LOSS_K) && LOSS_GIVEN(&lc, LOSS_A0) && !LOSS_GIVEN(&lc, LOSS_B0));
    lossopt_add(&some, lossopt_index("mining"), "hard"); /* --mining belongs to the triplet losses */
    CHECK(lossopt_configure(&some, triplet, 2, 0, &lc) == NULL && loss_value(&lc, triplet, "mining") == 1);
    if (check_child()) {
        lossopt_configure(&some, vib, 2, 0, &lc);
        _exit(0);
    }
    CHECK(check_exited(2)); /* misuse */
    lossopt bad = {0};
    lossopt_add(&bad, lossopt_index("mining"), "easy");
    if (check_child()) {
        lossopt_configure(&bad, triplet, 2, 0, &lc);
        _exit(0);
    }
    CHECK(check_exited(2)); /* not a name of the setting */
    /* every loss setting's option is getopt's, but -K (short) */
    const struct option base[] = {{"out", 1, 0, 'o'}};
    const struct option *lo = lossopt_longopts(base, 1, 300);
    int n = 0, seen_K = 0;
    for (; lo[n].name; n++)
        seen_K |= !strcmp(lo[n].name, "K");
    CHECK(n == 1 + lossopt_count() - 1 && !seen_K && !strcmp(lo[0].name, "out"));
    return check_done("test_trainlog");
}
