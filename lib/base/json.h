/* json: the one writer of hedge's JSON reports (every program's --json, tshow's header).
 *
 * A report is one line: ", " between members, ": " after a key, a newline after the outermost
 * value. Numbers are %.10g, with null for NaN and infinities (JSON has neither); strings are
 * escaped by json_string (lib/base/util.h). Commas are the writer's business, not the caller's:
 *
 *   json_writer w;
 *   json_report(&w, f, "ktau");                    // {"program": "ktau"
 *   json_key_num(&w, "tau", tau);
 *   json_key(&w, "bins"); json_arr(&w); ... json_end(&w);
 *   json_end(&w);                                  // "}\n"
 *
 * Nesting past JSON_MAXDEPTH or an end without an open is an internal error (die).
 */
#ifndef HEDGE_JSON_H
#define HEDGE_JSON_H
#include <stdint.h>
#include <stdio.h>

/* a stream header's JSON (header_print_json) nests 3 levels per level of lineage, and readers
 * take lineages 64 levels deep */
#define JSON_MAXDEPTH 256

typedef struct {
    FILE *f;
    int depth;
    int after_key;                       /* a key was written: its value comes next, no comma */
    unsigned char started[JSON_MAXDEPTH]; /* the container at each level has a member already */
    char close[JSON_MAXDEPTH];           /* '}' or ']' */
    int inline_value;                    /* no newline after the outermost value */
} json_writer;

void json_begin(json_writer *w, FILE *f);
/* a program's report: json_begin, the outer object, and its first member "program": PROGRAM
 * (every --json report and --summary line opens so) */
void json_report(json_writer *w, FILE *f, const char *program);
/* as json_begin, for one value inside other text: no newline after it */
void json_begin_inline(json_writer *w, FILE *f);
void json_obj(json_writer *w);
void json_arr(json_writer *w);
/* closes the innermost object or array; the outermost one ends with a newline */
void json_end(json_writer *w);
void json_key(json_writer *w, const char *key);
void json_num(json_writer *w, double v);
/* a number printed with printf's format FMT (e.g. "%.4f"), for reports that always had one */
void json_numf(json_writer *w, const char *fmt, double v);
void json_int(json_writer *w, long long v);
void json_uint(json_writer *w, unsigned long long v);
void json_bool(json_writer *w, int v);
void json_null(json_writer *w);
void json_str(json_writer *w, const char *s);
void json_strn(json_writer *w, const char *s, size_t n);
/* an already formatted JSON value (e.g. header_print_json's), written as it is */
void json_raw(json_writer *w, const char *text);
/* arrays of numbers: [v0, v1, ...] */
void json_nums(json_writer *w, const double *v, int n);
void json_ints(json_writer *w, const int *v, int n);

/* key and value in one call */
void json_key_num(json_writer *w, const char *key, double v);
void json_key_int(json_writer *w, const char *key, long long v);
void json_key_uint(json_writer *w, const char *key, unsigned long long v);
void json_key_str(json_writer *w, const char *key, const char *s);
void json_key_nums(json_writer *w, const char *key, const double *v, int n);
#endif
