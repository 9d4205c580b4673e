/* lossopt: the loss settings given on train's command line, whose options come from the losses'
 * tables (lib/training/loss.h): the option table of getopt_long for them, and the loss_config a
 * new run starts from (the options given over the loss's defaults, each checked to belong to the
 * loss chosen, then what the loss derives from them: its settle).
 *
 *   lossopt g = {0};
 *   struct option *lo = lossopt_longopts(base, nbase, LOSSOPT_VAL);  // train's options + the losses'
 *   ... case c >= LOSSOPT_VAL: lossopt_add(&g, c, optarg);           // kept as given
 *   const char *bad = lossopt_configure(&g, L, D, shots, &lc);       // NULL, or what is wrong
 */
#ifndef HEDGE_LOSSOPT_H
#define HEDGE_LOSSOPT_H
#include <getopt.h>
#include <stdio.h>

#include "loss.h"

#define LOSSOPT_MAX 64
typedef struct {
    int n;
    const char *option[LOSSOPT_MAX]; /* "ce-topk", "K", as given, in order */
    const char *text[LOSSOPT_MAX];
} lossopt;

/* the distinct options of every loss's settings, in registry order: count and the name of
 * option k (getopt_long's val for it is base + k) */
int lossopt_count(void);
const char *lossopt_name(int k);
/* the k of an option's name, -1 if no loss has it */
int lossopt_index(const char *name);
/* the settings of loss (NULL: of every loss) as a table, tab-separated with a header line: loss
 * ("*" for the five every loss takes), option, value, key, type, range, default, help; -1 when
 * there is no loss of that name */
int lossopt_list(FILE *f, const char *loss);
/* the help text's lines on the settings, from the tables, into buf */
const char *lossopt_help(char *buf, size_t n);
/* base's n entries (not terminated), then every loss setting's long option but the one-letter ones (short
 * options: -K; has_arg 1, val val0 + k), then the terminator: a static array */
const struct option *lossopt_longopts(const struct option *base, int n, int val0);
/* option k given with the value text (usage_die past LOSSOPT_MAX options) */
void lossopt_add(lossopt *g, int k, const char *text);
/* the settings of a new run of loss L with embeddings of D dimensions (shots: the support images
 * per class of an episode stream, 0 otherwise) into lc. Misuse dies (usage_die): an option that
 * L has no setting of (naming the losses that have), a value out of its type or range; what the
 * loss finds wrong in its settle is returned (NULL: none) */
const char *lossopt_configure(const lossopt *g, const loss_kind *L, int D, int shots, loss_config *lc);
#endif
