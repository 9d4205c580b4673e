/* lossopt: the loss settings of train's command line (lib/training/lossopt.h) */
#include "lossopt.h"

#include <string.h>

#include "util.h"

static const char *names[LOSSOPT_MAX];
static int nnames = -1;

/* every loss's settings with an option, each name once */
static void collect(void)
{
    if (nnames >= 0)
        return;
    nnames = 0;
    for (int l = 0; loss_kinds[l]; l++)
        for (int i = 0; i < loss_nsettings(loss_kinds[l]); i++) {
            const setting *s = loss_setting(loss_kinds[l], i);
            if (s->type == SETTING_NONE || !s->option)
                continue;
            int seen = 0;
            for (int k = 0; k < nnames && !seen; k++)
                seen = !strcmp(names[k], s->option);
            if (!seen && nnames < LOSSOPT_MAX)
                names[nnames++] = s->option;
        }
}

int lossopt_count(void)
{
    collect();
    return nnames;
}

const char *lossopt_name(int k)
{
    collect();
    return k >= 0 && k < nnames ? names[k] : NULL;
}

int lossopt_index(const char *name)
{
    collect();
    for (int k = 0; k < nnames; k++)
        if (!strcmp(names[k], name))
            return k;
    return -1;
}

static const char *type_name(setting_type t)
{
    return t == SETTING_INT ? "int" : t == SETTING_REAL ? "real" : t == SETTING_CHOICE ? "choice" : "none";
}

static void list_rows(FILE *f, const char *loss, const loss_kind *L, int from, int to)
{
    loss_config dflt = loss_config_new(L); /* (its defaults: spe's K is 1) */
    for (int i = from; i < to; i++) {
        const setting *s = loss_setting(L, i);
        char flag[64], range[256], def[64];
        if (s->type == SETTING_NONE)
            continue;
        double d = loss_get(&dflt, i);
        fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", loss, s->option ? setting_flag(s, flag, sizeof flag) : "-",
                s->arg ? s->arg : "-", s->key ? s->key : "-", type_name(s->type), setting_range(s, range, sizeof range),
                setting_format(s, d, def, sizeof def), s->help);
    }
}

int lossopt_list(FILE *f, const char *loss)
{
    const loss_kind *only = loss ? loss_find(loss) : NULL;
    if (loss && !only)
        return -1;
    fprintf(f, "loss\toption\tvalue\tkey\ttype\trange\tdefault\thelp\n");
    if (!only)
        list_rows(f, "*", loss_kinds[0], 0, LOSS_NCOMMON);
    for (int l = 0; loss_kinds[l]; l++) {
        const loss_kind *L = loss_kinds[l];
        if (only && L != only)
            continue;
        /* one loss: the five it takes too, with its own defaults */
        list_rows(f, L->name, L, only ? 0 : LOSS_NCOMMON, loss_nsettings(L));
    }
    return 0;
}

/* appends word to buf (used of n), starting an indented line when the line would pass 96 */
static size_t wrap(char *buf, size_t n, size_t used, size_t *col, const char *word)
{
    size_t w = strlen(word);
    if (*col + 1 + w > 96 && used < n) {
        used += (size_t)snprintf(buf + used, n - used, "\n   ");
        *col = 3;
    }
    if (used < n)
        used += (size_t)snprintf(buf + used, n - used, " %s", word);
    *col += 1 + w;
    return used;
}

const char *lossopt_help(char *buf, size_t n)
{
    static const char head[] = "  loss settings (train [--loss NAME] --settings: whose, ranges, defaults):";
    size_t used = (size_t)snprintf(buf, n, "%s", head), col = sizeof head - 1;
    collect();
    for (int k = 0; k < nnames && used < n; k++) {
        char word[80];
        snprintf(word, sizeof word, "%s%s", names[k][1] ? "--" : "-", names[k]);
        used = wrap(buf, n, used, &col, word);
    }
    if (used < n)
        snprintf(buf + used, n - used, "\n");
    return buf;
}

const struct option *lossopt_longopts(const struct option *base, int n, int val0)
{
    static struct option all[2 * LOSSOPT_MAX + 1];
    collect();
    if (n + nnames >= (int)(sizeof all / sizeof *all))
        die("lossopt: %d options, more than %d", n + nnames, (int)(sizeof all / sizeof *all) - 1);
    memcpy(all, base, (size_t)n * sizeof *base);
    int m = n;
    for (int k = 0; k < nnames; k++)
        if (names[k][1])
            all[m++] = (struct option){names[k], 1, 0, val0 + k};
    all[m] = (struct option){0, 0, 0, 0};
    return all;
}

void lossopt_add(lossopt *g, int k, const char *text)
{
    if (g->n >= LOSSOPT_MAX)
        usage_die("more than %d loss settings given", LOSSOPT_MAX);
    g->option[g->n] = lossopt_name(k);
    g->text[g->n++] = text;
}

const char *lossopt_configure(const lossopt *g, const loss_kind *L, int D, int shots, loss_config *lc)
{
    *lc = loss_config_new(L);
    for (int k = 0; k < g->n; k++) {
        int i = loss_option_index(L, g->option[k]);
        if (i < 0) {
            char who[256], flag[64];
            setting demo = {.option = g->option[k]};
            loss_owners(g->option[k], who, sizeof who);
            usage_die("%s is an option of the %s loss%s, not of %s", setting_flag(&demo, flag, sizeof flag), who,
                      strchr(who, ' ') ? "es" : "", L->name);
        }
        loss_put(lc, i, setting_parse(loss_setting(L, i), g->text[k]));
        lc->given |= 1u << i;
    }
    return L->settle ? L->settle(lc, D, shots) : NULL;
}
