/* setting: one setting of a plug-in (a loss today), declared once in a table in the plug-in's
 * own file: its command-line option, the name of its value in usage texts, its checkpoint key,
 * its type and range, its default and one line of help. `train`'s options and --help, its
 * --settings listing, the checkpoint's save and load and the man page's test all read the
 * tables (lib/training/loss.h), so adding a setting is one line of one table.
 *
 * Every value is held as a double: an INT is a whole number in [lo, hi], a REAL a number in
 * [lo, hi], a CHOICE the index of its name in `choices`. A default of NaN means "derived" (the
 * plug-in works it out from what it is given; the help line says how).
 *
 *   static const char *const forms[] = {"soft", "hinge", NULL};
 *   static const setting s = {"triplet", "FORM", "triplet", SETTING_CHOICE, 0, 0, 0, forms,
 *                             "the form of the triplet loss"};
 *   double v = setting_parse(&s, "hinge");            // 1; usage_die (exit 2) on nonsense
 *   char buf[32]; setting_format(&s, v, buf, sizeof buf);   // "hinge"
 */
#ifndef HEDGE_SETTING_H
#define HEDGE_SETTING_H
#include <stddef.h>

typedef enum { SETTING_NONE, SETTING_INT, SETTING_REAL, SETTING_CHOICE } setting_type;

typedef struct {
    const char *option;  /* train's option without dashes: "ce-topk" is --ce-topk, one letter "K" is -K;
                          * NULL: not an option (a value the plug-in derives and the checkpoint keeps) */
    const char *arg;     /* the value's name in usage texts: "N", "X", "NAME" */
    const char *key;     /* the checkpoint's key; NULL: not stored (an option the plug-in derives a
                          * stored setting from) */
    setting_type type;   /* SETTING_NONE: an unused slot of a table */
    double lo, hi;       /* INT, REAL: the range, both ends included */
    double def;          /* the default (CHOICE: the index of its name); NaN: derived */
    const char *const *choices; /* CHOICE: the names, NULL-terminated */
    const char *help;    /* one line: what it is (the default and range are added where shown) */
} setting;

/* "-K" or "--ce-topk" (or the key, for a setting that is no option) into buf */
const char *setting_flag(const setting *s, char *buf, size_t n);
/* the value of text for s, as the command line gives it: usage_die (exit 2, naming the option)
 * unless it is of s's type and in its range */
double setting_parse(const setting *s, const char *text);
/* CHOICE: the index of name in s->choices, -1 when it is none of them */
int setting_choice(const setting *s, const char *name);
/* 1 when v is of s's type and in its range */
int setting_valid(const setting *s, double v);
/* v as setting_parse takes it: "32", "0.5", "hinge"; "derived" for NaN */
const char *setting_format(const setting *s, double v, char *buf, size_t n);
/* the range as text: "1..1024", "0.001..10000", "soft | hinge" */
const char *setting_range(const setting *s, char *buf, size_t n);

#endif
