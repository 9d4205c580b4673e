/* json: the one JSON report writer (lib/base/json.h) */
#include "json.h"

#include <math.h>
#include <string.h>

#include "util.h"

void json_begin(json_writer *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
}

void json_begin_inline(json_writer *w, FILE *f)
{
    json_begin(w, f);
    w->inline_value = 1;
}

void json_report(json_writer *w, FILE *f, const char *program)
{
    json_begin(w, f);
    json_obj(w);
    json_key_str(w, "program", program);
}

/* before any value: the comma of a container that has members, unless a key just went out */
static void value_start(json_writer *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (w->started[w->depth - 1])
            fputs(", ", w->f);
        w->started[w->depth - 1] = 1;
    }
}

static void open_container(json_writer *w, char c, char close)
{
    value_start(w);
    if (w->depth >= JSON_MAXDEPTH)
        die("internal error: JSON nested deeper than %d", JSON_MAXDEPTH);
    fputc(c, w->f);
    w->started[w->depth] = 0;
    w->close[w->depth] = close;
    w->depth++;
}

void json_obj(json_writer *w) { open_container(w, '{', '}'); }
void json_arr(json_writer *w) { open_container(w, '[', ']'); }

void json_end(json_writer *w)
{
    if (w->depth == 0 || w->after_key)
        die("internal error: JSON end without an open container");
    w->depth--;
    fputc(w->close[w->depth], w->f);
    if (w->depth == 0 && !w->inline_value)
        fputc('\n', w->f);
}

void json_key(json_writer *w, const char *key)
{
    if (w->depth == 0 || w->close[w->depth - 1] != '}' || w->after_key)
        die("internal error: JSON key '%s' outside an object", key);
    value_start(w);
    json_string(w->f, key, strlen(key));
    fputs(": ", w->f);
    w->after_key = 1;
}

void json_num(json_writer *w, double v)
{
    value_start(w);
    if (isfinite(v))
        fprintf(w->f, "%.10g", v);
    else
        fputs("null", w->f);
}

void json_numf(json_writer *w, const char *fmt, double v)
{
    value_start(w);
    if (isfinite(v))
        fprintf(w->f, fmt, v);
    else
        fputs("null", w->f);
}

void json_int(json_writer *w, long long v)
{
    value_start(w);
    fprintf(w->f, "%lld", v);
}

void json_uint(json_writer *w, unsigned long long v)
{
    value_start(w);
    fprintf(w->f, "%llu", v);
}

void json_bool(json_writer *w, int v)
{
    value_start(w);
    fputs(v ? "true" : "false", w->f);
}

void json_null(json_writer *w)
{
    value_start(w);
    fputs("null", w->f);
}

void json_strn(json_writer *w, const char *s, size_t n)
{
    value_start(w);
    json_string(w->f, s, n);
}

void json_str(json_writer *w, const char *s) { json_strn(w, s, strlen(s)); }

void json_raw(json_writer *w, const char *text)
{
    value_start(w);
    fputs(text, w->f);
}

void json_nums(json_writer *w, const double *v, int n)
{
    json_arr(w);
    for (int i = 0; i < n; i++)
        json_num(w, v[i]);
    json_end(w);
}

void json_ints(json_writer *w, const int *v, int n)
{
    json_arr(w);
    for (int i = 0; i < n; i++)
        json_int(w, v[i]);
    json_end(w);
}

void json_key_num(json_writer *w, const char *key, double v) { json_key(w, key); json_num(w, v); }
void json_key_int(json_writer *w, const char *key, long long v) { json_key(w, key); json_int(w, v); }
void json_key_uint(json_writer *w, const char *key, unsigned long long v) { json_key(w, key); json_uint(w, v); }
void json_key_str(json_writer *w, const char *key, const char *s) { json_key(w, key); json_str(w, s); }
void json_key_nums(json_writer *w, const char *key, const double *v, int n) { json_key(w, key); json_nums(w, v, n); }
