/* json: the report writer's commas, nesting, numbers and escapes against hand-written text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"

static char *written(void (*fill)(json_writer *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_writer w;
    json_begin(&w, f);
    fill(&w);
    fclose(f);
    return buf;
}

static void report(json_writer *w)
{
    static const double v[3] = {0.5, NAN, 1e-12};
    static const int k[2] = {1, 10};
    json_obj(w);
    json_key_str(w, "program", "re\"trie\\ve\n");
    json_key_int(w, "queries", -3);
    json_key_uint(w, "seed", 18446744073709551615ULL);
    json_key_nums(w, "recall", v, 3);
    json_key(w, "at");
    json_ints(w, k, 2);
    json_key(w, "empty");
    json_arr(w);
    json_end(w);
    json_key(w, "bins");
    json_arr(w);
    for (int b = 0; b < 2; b++) {
        json_obj(w);
        json_key_int(w, "bin", b);
        json_key(w, "mean");
        json_numf(w, "%.4f", 2.0 / 3);
        json_end(w);
    }
    json_end(w);
    json_key(w, "inf");
    json_num(w, INFINITY);
    json_key(w, "ok");
    json_bool(w, 1);
    json_key(w, "none");
    json_null(w);
    json_key(w, "header");
    json_raw(w, "{\"a\": 1}");
    json_end(w);
}

static void bare_array(json_writer *w)
{
    json_arr(w);
    json_num(w, 3);
    json_str(w, "x");
    json_end(w);
}

static void a_report(json_writer *w)
{
    FILE *f = w->f;
    json_report(w, f, "knn");
    json_key_int(w, "k", 5);
    json_end(w);
}

static void key_in_array(json_writer *w)
{
    json_arr(w);
    json_key(w, "nope");
}

static void end_after_key(json_writer *w)
{
    json_obj(w);
    json_key(w, "k");
    json_end(w);
}

int main(void)
{
    char *s = written(report);
    const char *want = "{\"program\": \"re\\\"trie\\\\ve\\u000a\", \"queries\": -3, "
                       "\"seed\": 18446744073709551615, \"recall\": [0.5, null, 1e-12], \"at\": [1, 10], "
                       "\"empty\": [], \"bins\": [{\"bin\": 0, \"mean\": 0.6667}, {\"bin\": 1, \"mean\": 0.6667}], "
                       "\"inf\": null, \"ok\": true, \"none\": null, \"header\": {\"a\": 1}}\n";
    CHECK(strcmp(s, want) == 0);
    if (strcmp(s, want))
        fprintf(stderr, "got:  %swant: %s", s, want);
    free(s);
    s = written(bare_array);
    CHECK(strcmp(s, "[3, \"x\"]\n") == 0);
    free(s);
    s = written(a_report);
    CHECK(strcmp(s, "{\"program\": \"knn\", \"k\": 5}\n") == 0);
    free(s);
    if (check_child()) {
        free(written(key_in_array));
        _exit(0);
    }
    CHECK(check_died());
    if (check_child()) {
        free(written(end_after_key));
        _exit(0);
    }
    CHECK(check_died());
    return check_done("json");
}
