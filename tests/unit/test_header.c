/* header: the header model in memory (meta setters and getters, copies, fields), what a marker
 * of an elided lineage says, and the header's JSON, against hand-written expectations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "header.h"
#include "stream.h"
#include "util.h"

static char *json_of(const stream_header *h, int with_inputs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    header_print_json(f, h, with_inputs);
    fclose(f);
    return buf;
}

static void check_meta(void)
{
    stream_header *h = header_new("embeddings", 1);
    header_set_int(h, "a", -7);
    header_set_float(h, "b", 0.25);
    header_set_str(h, "c", "text");
    header_set_bool(h, "d", 5);
    int64_t shape[2] = {2, 3};
    tensor *t = tensor_new(DT_F32, 2, shape);
    for (int i = 0; i < 6; i++)
        ((float *)t->data)[i] = (float)i / 2;
    header_set_tensor(h, "e", t);
    ((float *)t->data)[0] = 99; /* the header holds a copy */
    tensor_free(t);
    CHECK(h->nmeta == 5);
    CHECK(header_int(h, "a", 0) == -7);
    CHECK(header_int(h, "b", 0) == 0);          /* a float read as an int: truncated */
    CHECK(header_float(h, "a", 0) == -7.0);
    CHECK(header_float(h, "missing", 1.5) == 1.5);
    CHECK(!strcmp(header_str(h, "c", ""), "text"));
    CHECK(header_int(h, "d", 0) == 1);          /* a bool is 0 or 1 */
    const tensor *e = header_tensor(h, "e");
    CHECK(e && e->ndim == 2 && e->shape[1] == 3 && ((float *)e->data)[0] == 0 && ((float *)e->data)[5] == 2.5f);
    CHECK(!header_tensor(h, "a"));

    /* a key set again keeps its place; a deleted one leaves the others in order */
    header_set_str(h, "a", "now a string");
    CHECK(h->nmeta == 5 && !strcmp(h->meta[0].key, "a") && h->meta[0].type == META_STR);
    header_del_meta(h, "b");
    CHECK(h->nmeta == 4 && !strcmp(h->meta[0].key, "a") && !strcmp(h->meta[1].key, "c"));
    header_del_meta(h, "no such key");
    CHECK(h->nmeta == 4);

    /* copy_meta: keys the destination has are replaced where they are, others appended */
    stream_header *d = header_new("other", 0);
    header_set_int(d, "z", 1);
    header_set_int(d, "c", 2);
    header_copy_meta(d, h);
    CHECK(d->nmeta == 5 && !strcmp(d->meta[0].key, "z") && !strcmp(d->meta[1].key, "c"));
    CHECK(!strcmp(header_str(d, "c", ""), "text") && !strcmp(d->meta[4].key, "e"));

    /* a deep copy: changing the original changes nothing in the copy */
    int64_t fs[1] = {4};
    header_add_field(h, "mu", DT_F32, 1, fs);
    header_add_input(h, d);
    header_set_seed(h, 42);
    stream_header *c = header_copy(h);
    header_set_int(h, "c", 3);
    header_set_int(h->inputs[0], "z", 9);
    CHECK(!strcmp(header_str(c, "c", ""), "text") && header_int(c->inputs[0], "z", 0) == 1);
    CHECK(c->nfields == 1 && header_field_find(c, "mu") == 0 && header_field_find(c, "sigma") < 0);
    CHECK(c->has_seed && c->seed == 42 && c->batched == 1 && !strcmp(c->kind, "embeddings"));
    header_free(c);
    header_free(d);
    header_free(h);
}

/* every meta type, a NaN, a tensor of more than 16 values, a raw value, provenance and an input */
static void check_json(void)
{
    stream_header *in = header_new("images", 0);
    int64_t px[2] = {2, 2};
    header_add_field(in, "image", DT_U8, 2, px);
    free(in->program);
    in->program = estrdup("mkdigits");

    stream_header *h = header_new("pairs", 1);
    free(h->program);
    h->program = estrdup("pair\"score");
    char *argv[] = {"pairscore", "--self", "a\tb"};
    header_provenance(h, 3, argv);
    free(h->program); /* header_provenance names util_prog; a name of our own instead */
    h->program = estrdup("pair\"score");
    header_set_seed(h, 18446744073709551615ULL);
    int64_t one[1] = {1};
    header_add_field(h, "score", DT_F64, 0, NULL);
    header_add_field(h, "label", DT_I32, 1, one);
    header_set_int(h, "n", -3);
    header_set_float(h, "x", 1.0 / 3); /* 9 significant digits, not the reports' 10 */
    header_set_float(h, "bad", NAN);
    header_set_bool(h, "yes", 1);
    header_set_str(h, "s", "\xc3\xa9\n");
    int64_t n20[1] = {20};
    tensor *t = tensor_new(DT_I32, 1, n20);
    for (int i = 0; i < 20; i++)
        ((int32_t *)t->data)[i] = i * i;
    header_set_tensor(h, "t", t);
    tensor_free(t);
    /* [1, "a", nil, {2: true}] as msgpack, by hand */
    static const unsigned char raw[] = {0x94, 0x01, 0xa1, 'a', 0xc0, 0x81, 0x02, 0xc3};
    header_set_raw(h, "r", raw, sizeof raw);
    static const unsigned char junk[] = {0xc1};
    header_set_raw(h, "j", junk, sizeof junk);
    /* the writer's version (header_new/header_provenance: util_version) printed as "hedge";
     * an input read without one (older streams) prints none */
    free(h->version);
    h->version = estrdup("9.9.9-gabc\"1");
    free(in->version);
    in->version = NULL;
    header_add_input(h, in);

    const char *own =
        "{\"format\": \"hedge-stream\", \"version\": 1, \"kind\": \"pairs\", \"batched\": true, "
        "\"fields\": [{\"name\": \"score\", \"dtype\": \"float64\", \"shape\": []}, "
        "{\"name\": \"label\", \"dtype\": \"int32\", \"shape\": [1]}], "
        "\"meta\": {\"n\": -3, \"x\": 0.333333333, \"bad\": null, \"yes\": true, \"s\": \"\xc3\xa9\\u000a\", "
        "\"t\": {\"dtype\": \"int32\", \"shape\": [20], \"count\": 20, "
        "\"values\": [0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225]}, "
        "\"r\": [1, \"a\", null, {\"2\": true}], \"j\": null}, "
        "\"provenance\": {\"program\": \"pair\\\"score\", \"args\": [\"--self\", \"a\\u0009b\"], "
        "\"seed\": 18446744073709551615, \"hedge\": \"9.9.9-gabc\\\"1\"";
    const char *input =
        "{\"format\": \"hedge-stream\", \"version\": 1, \"kind\": \"images\", \"batched\": false, "
        "\"fields\": [{\"name\": \"image\", \"dtype\": \"uint8\", \"shape\": [2, 2]}], \"meta\": {}, "
        "\"provenance\": {\"program\": \"mkdigits\", \"args\": [], \"input\": []}}";
    char want[4096];
    snprintf(want, sizeof want, "%s}}", own);
    char *got = json_of(h, 0);
    CHECK(!strcmp(got, want)); /* no newline after it: the caller's text goes on */
    if (strcmp(got, want))
        fprintf(stderr, "got  %s\nwant %s\n", got, want);
    free(got);
    snprintf(want, sizeof want, "%s, \"input\": [%s]}}", own, input);
    got = json_of(h, 1);
    CHECK(!strcmp(got, want));
    if (strcmp(got, want))
        fprintf(stderr, "got  %s\nwant %s\n", got, want);
    free(got);
    header_free(h);
    header_free(in);
}

/* a lineage as deep as readers take it prints whole: 3 levels of JSON per header */
static void check_json_deep(void)
{
    stream_header *h = header_new("images", 0);
    int64_t s[1] = {2};
    header_add_field(h, "x", DT_F32, 1, s);
    for (int level = 1; level < STREAM_LINEAGE_READ_MAX; level++) {
        stream_header *up = header_new("images", 0);
        header_add_field(up, "x", DT_F32, 1, s);
        header_add_input(up, h);
        header_free(h);
        h = up;
    }
    char *got = json_of(h, 1);
    int n = 0;
    for (const char *p = got; (p = strstr(p, "hedge-stream")); p++)
        n++;
    CHECK(n == STREAM_LINEAGE_READ_MAX);
    size_t len = strlen(got);
    CHECK(len > 3 * STREAM_LINEAGE_READ_MAX && got[len - 1] == '}');
    free(got);
    header_free(h);
}

static stream_header *node(const char *program, const char *kind)
{
    stream_header *h = header_new(kind, 0);
    free(h->program);
    h->program = estrdup(program);
    return h;
}

/* root(p1) <- [x(p2) <- [o1], m(marker) <- [o2, o1']]: the marker adds its own counts */
static void check_elide(void)
{
    stream_header *o1 = node("mkdigits", "images"), *o2 = node("mkshapes", "images");
    stream_header *x = node("p2", "pairs"), *m = node("...", "elided"), *root = node("p1", "scores");
    header_set_int(m, "elided_levels", 4);
    header_set_int(m, "elided_headers", 6);
    header_set_str(m, "elided_programs", "q,p2,p1");
    header_set_int(m, "elided_origins", 2);
    header_add_input(x, o1);
    header_add_input(m, o2);
    header_add_input(m, o1);
    header_add_input(root, x);
    header_add_input(root, m);
    CHECK(header_lineage_depth(o1) == 1 && header_lineage_depth(root) == 3);

    header_elision e;
    header_elide(root, &e);
    CHECK(e.levels == 5);   /* root, then the marker's 4 */
    CHECK(e.headers == 8);  /* root, x and the marker's 6 */
    CHECK(!strcmp(e.programs, "p1,p2,q"));
    CHECK(e.origins_dropped == 2);
    CHECK(e.norigins == 3 && e.origins[0] == root->inputs[0]->inputs[0] &&
          e.origins[1] == root->inputs[1]->inputs[0] && e.origins[2] == root->inputs[1]->inputs[1]);
    header_elision_free(&e);

    /* the program list is a summary of at most 255 characters */
    stream_header *chain = node("origin", "images");
    for (int i = 0; i < 60; i++) {
        char name[16];
        snprintf(name, sizeof name, "program%02d", i);
        stream_header *up = node(name, "images");
        header_add_input(up, chain);
        header_free(chain);
        chain = up;
    }
    header_elide(chain, &e);
    CHECK(e.headers == 60 && e.levels == 60 && e.norigins == 1);
    CHECK(strlen(e.programs) == 25 * 10 - 1 && !strncmp(e.programs, "program59,program58,", 20));
    header_elision_free(&e);
    header_free(chain);

    header_free(root);
    header_free(x);
    header_free(m);
    header_free(o1);
    header_free(o2);
}

/* what stream_field_need(src, ...) says when it dies (exit 1), "" when it returns the index want */
static const char *need_says_src(const char *src, const stream_header *h, const char *name, int dtype, int ndim,
                                 const int64_t *shape, int want)
{
    static char msg[512];
    char path[] = "/tmp/test_header.XXXXXX";
    int fd = mkstemp(path);
    msg[0] = 0;
    if (fd < 0)
        return "mkstemp failed";
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        if (!freopen(path, "w", stderr))
            _exit(3);
        _exit(stream_field_need(src, h, name, dtype, ndim, shape) == want ? 0 : 2);
    }
    int st = 0;
    waitpid(p, &st, 0);
    ssize_t n = read(fd, msg, sizeof msg - 1);
    msg[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1))
        return "neither died with exit 1 nor returned the field's index";
    return msg;
}

/* what stream_field_need (of stream "s.hs") says when it dies (exit 1), "" when it returns the
 * index want */
static const char *need_says(const stream_header *h, const char *name, int dtype, int ndim, const int64_t *shape,
                             int want)
{
    return need_says_src("s.hs", h, name, dtype, ndim, shape, want);
}

/* stream_field_need: a field's dtype and item shape, one check (issue 34: a scalar field of shape
 * [0] was read past its record) */
static void check_field_need(void)
{
    stream_header *h = header_new("retrieval", 0);
    header_add_field(h, "ap", DT_F32, 0, NULL);
    header_add_field(h, "z", DT_F32, 1, (int64_t[]){0});
    header_add_field(h, "recall", DT_U8, 1, (int64_t[]){3});
    header_add_field(h, "mu", DT_F32, 2, (int64_t[]){2, 4});
    header_add_field(h, "image", DT_U8, 2, (int64_t[]){28, 56});
    const int64_t any[2] = {FIELD_ANY, FIELD_ANY};
    /* taken: the index */
    CHECK(!strcmp(need_says(h, "ap", DT_F32, 0, NULL, 0), ""));
    CHECK(!strcmp(need_says(h, "recall", DT_U8, 1, (int64_t[]){3}, 2), ""));
    CHECK(!strcmp(need_says(h, "recall", DT_U8, 1, any, 2), ""));
    CHECK(!strcmp(need_says(h, "mu", DT_F32, 2, (int64_t[]){FIELD_ANY, 4}, 3), ""));
    CHECK(!strcmp(need_says(h, "mu", DT_F32, 2, any, 3), ""));
    CHECK(!strcmp(need_says(h, "image", DT_U8, FIELD_ANY, NULL, 4), ""));
    /* refused: one line naming the field, what it is and what was expected */
    CHECK(!strcmp(need_says(h, "z", DT_F32, 0, NULL, 1),
                  "test_header: s.hs: field 'z' is float32 [0], expected float32 [] (one value per record)\n"));
    CHECK(!strcmp(need_says(h, "ap", DT_I32, 0, NULL, 0),
                  "test_header: s.hs: field 'ap' is float32 [], expected int32 [] (one value per record)\n"));
    CHECK(!strcmp(need_says(h, "ap", DT_F32, 1, any, 0),
                  "test_header: s.hs: field 'ap' is float32 [], expected float32 [n] (n >= 1)\n"));
    CHECK(!strcmp(need_says(h, "z", DT_F32, 1, any, 1),
                  "test_header: s.hs: field 'z' is float32 [0], expected float32 [n] (n >= 1)\n"));
    CHECK(!strcmp(need_says(h, "recall", DT_U8, 1, (int64_t[]){4}, 2),
                  "test_header: s.hs: field 'recall' is uint8 [3], expected uint8 [4]\n"));
    CHECK(!strcmp(need_says(h, "mu", DT_F32, 2, (int64_t[]){FIELD_ANY, 5}, 3),
                  "test_header: s.hs: field 'mu' is float32 [2, 4], expected float32 [n, 5] (n >= 1)\n"));
    CHECK(!strcmp(need_says(h, "mu", DT_F32, 1, any, 3),
                  "test_header: s.hs: field 'mu' is float32 [2, 4], expected float32 [n] (n >= 1)\n"));
    CHECK(!strcmp(need_says(h, "image", DT_F32, FIELD_ANY, NULL, 4),
                  "test_header: s.hs: field 'image' is uint8 [28, 56], expected float32\n"));
    CHECK(!strcmp(need_says(h, "eta", DT_F32, 0, NULL, 0),
                  "test_header: s.hs: the retrieval stream has no field 'eta', expected float32 [] (one value per "
                  "record)\n"));
    /* a batched stream's scalar is one value per item; src NULL is "input" */
    h->batched = 1;
    CHECK(!strcmp(need_says_src(NULL, h, "z", DT_F32, 0, NULL, 1),
                  "test_header: input: field 'z' is float32 [0], expected float32 [] (one value per item)\n"));
    header_free(h);
}

int main(void)
{
    util_prog = "test_header";
    check_meta();
    check_json();
    check_json_deep();
    check_elide();
    check_field_need();
    return check_done("test_header");
}
