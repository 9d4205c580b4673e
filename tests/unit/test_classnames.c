/* classnames: names made from strings (sorted by their bytes, distinct, each string's index),
 * written as meta class_names and read back, the union of sets matched by name with each set's
 * classes renumbered (the numbers hedge.evaluate's _named_classes gives, derived by hand below),
 * and every refusal with its one line: a meta that is not an array of names, str beside bin, a
 * NUL, a str that is not UTF-8, names out of order or repeated, a class beyond the names, a named
 * set beside one of integers, str names beside bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "classnames.h"
#include "util.h"

/* runs f(arg) in a child whose stderr goes to a file; 1 when it exited 1 having said exactly want */
static int dies_saying(void (*f)(const void *), const void *arg, const char *want)
{
    char path[] = "/tmp/test_classnames.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        f(arg);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    char got[1024] = "";
    FILE *r = fopen(path, "r");
    size_t n = r ? fread(got, 1, sizeof got - 1, r) : 0;
    got[n] = 0;
    if (r)
        fclose(r);
    close(fd);
    unlink(path);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 1 && !strcmp(got, want);
    if (!ok)
        fprintf(stderr, "got (status %d): %s\nwanted: %s\n", WEXITSTATUS(status), got, want);
    return ok;
}

static void test_from_and_back(void)
{
    /* "b" "a" "c" "a" "" "ab" "\xc3\xa9" (U+00E9) "z": by bytes "" < "a" < "ab" < "b" < "c" < "z" <
     * U+00E9 (0xc3 > 0x7a, as U+00E9 > U+007A) */
    char *s[] = {"b", "a", "c", "a", "", "ab", "\xc3\xa9", "z"};
    size_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = strlen(s[i]);
    int32_t codes[8];
    classnames N;
    classnames_from(&N, "x.npz", "array 'labels'", 8, s, len, 0, codes);
    const int32_t want[8] = {3, 1, 4, 1, 0, 2, 6, 5};
    CHECK(N.present && !N.bytes && N.n == 7 && !memcmp(codes, want, sizeof want));
    const char *order[7] = {"", "a", "ab", "b", "c", "z", "\xc3\xa9"};
    for (int i = 0; i < 7; i++)
        CHECK(N.len[i] == strlen(order[i]) && !strcmp(N.s[i], order[i]));
    /* meta class_names and back, str and bin */
    stream_header *h = header_new("embeddings", 0);
    classnames_set(h, &N);
    const stream_meta *m = header_meta(h, "class_names");
    CHECK(m && m->type == META_RAW && m->raw[0] == 0x97 && m->raw[1] == 0xa0 && m->raw[2] == 0xa1);
    classnames R;
    classnames_read(&R, "x.hs", h);
    CHECK(R.present && !R.bytes && R.n == 7);
    for (int i = 0; i < 7; i++)
        CHECK(R.len[i] == N.len[i] && !memcmp(R.s[i], N.s[i], N.len[i]));
    classnames_check(&R, "x.hs", want, 8);
    classnames_free(&R);
    N.bytes = 1;
    classnames_set(h, &N);
    m = header_meta(h, "class_names");
    CHECK(m && m->raw[1] == 0xc4 && m->raw[2] == 0); /* bin 8 of length 0: the empty name */
    classnames_read(&R, "x.hs", h);
    CHECK(R.present && R.bytes && R.n == 7 && !strcmp(R.s[6], "\xc3\xa9"));
    classnames_free(&R);
    N.present = 0; /* not present: the key goes */
    classnames_set(h, &N);
    CHECK(!header_meta(h, "class_names"));
    N.present = 1;
    classnames_free(&N);
    classnames_read(&R, "x.hs", h);
    CHECK(!R.present && R.n == 0);
    header_free(h);
}

static void test_unify(void)
{
    /* queries a, c, c (names [a, c]), gallery b, c, d, d (names [b, c, d]): the union [a, b, c, d],
     * np.unique's order: the queries 0, 2, 2, the gallery 1, 2, 3, 3 */
    char *qs[] = {"a", "c"}, *gs[] = {"b", "c", "d"};
    size_t ql[] = {1, 1}, gl[] = {1, 1, 1};
    int32_t qc[3] = {0, 1, 1}, gc[4] = {0, 1, 2, 2}, tmp[3];
    classnames Q, G, U;
    classnames_from(&Q, "q", "q", 2, qs, ql, 0, tmp);
    classnames_from(&G, "g", "g", 3, gs, gl, 0, tmp);
    classnames_part p[2] = {{&Q, qc, 3, "q.hs"}, {&G, gc, 4, "g.hs"}};
    classnames_unify(&U, p, 2);
    CHECK(U.present && U.n == 4 && !strcmp(U.s[0], "a") && !strcmp(U.s[3], "d"));
    CHECK(qc[0] == 0 && qc[1] == 2 && qc[2] == 2);
    CHECK(gc[0] == 1 && gc[1] == 2 && gc[2] == 3 && gc[3] == 3);
    classnames_free(&U);
    /* no set named: nothing changes */
    classnames P = {0};
    int32_t pc[2] = {7, 5};
    classnames_part q[2] = {{&P, pc, 2, "a"}, {&P, pc, 0, "b"}};
    classnames_unify(&U, q, 2);
    CHECK(!U.present && pc[0] == 7 && pc[1] == 5);
    classnames_free(&Q);
    classnames_free(&G);
}

/* the refusals: a header with meta class_names holding raw msgpack bytes, read */
typedef struct {
    const char *raw;
    size_t len;
} rawmeta;

static void read_raw(const void *arg)
{
    const rawmeta *r = arg;
    stream_header *h = header_new("embeddings", 0);
    header_set_raw(h, "class_names", (const unsigned char *)r->raw, r->len);
    classnames N;
    classnames_read(&N, "x.hs", h);
}

static void read_str(const void *arg)
{
    stream_header *h = header_new("embeddings", 0);
    header_set_str(h, "class_names", arg);
    classnames N;
    classnames_read(&N, "x.hs", h);
}

static void class_beyond(const void *arg)
{
    char *s[] = {"a", "b", "c"};
    size_t len[] = {1, 1, 1};
    int32_t codes[3], cls[3] = {0, 2, 3};
    classnames N;
    classnames_from(&N, "x", "x", 3, s, len, 0, codes);
    classnames_check(&N, "x.hs", cls, *(const int *)arg);
    classnames_free(&N);
}

static void unify_mixed(const void *arg)
{
    int kind = *(const int *)arg;
    char *s[] = {"a"};
    size_t len[] = {1};
    int32_t codes[1], c1[1] = {0}, c2[1] = {0};
    classnames A, B = {0}, U;
    classnames_from(&A, "x", "x", 1, s, len, 0, codes);
    if (kind)
        classnames_from(&B, "x", "x", 1, s, len, 1, codes);
    classnames_part p[2] = {{&A, c1, 1, "q.hs"}, {&B, c2, 1, "g.npz"}};
    classnames_unify(&U, p, 2);
}

static void test_refusals(void)
{
    static const rawmeta mixed = {"\x92\xa1" "a" "\xc4\x01" "b", 6}, num = {"\x92\xa1" "a" "\x05", 4},
                         order = {"\x92\xa1" "b" "\xa1" "a", 5}, twice = {"\x92\xa1" "a" "\xa1" "a", 5},
                         nul = {"\x91\xa3" "a\0b", 5}, utf = {"\x91\xa2" "\xff" "a", 4}, map = {"\x80", 1};
    CHECK(dies_saying(read_str, "a",
                      "test_classnames: x.hs: meta class_names is a str: expected an array of names (str or bin)\n"));
    CHECK(dies_saying(read_raw, &map,
                      "test_classnames: x.hs: meta class_names is a map: expected an array of names (str or bin)\n"));
    CHECK(dies_saying(read_raw, &mixed, "test_classnames: x.hs: meta class_names: name 1 is bin (bytes), name 0 str: "
                                        "expected all str (text) or all bin (bytes)\n"));
    CHECK(dies_saying(read_raw, &num, "test_classnames: x.hs: meta class_names: name 1 is an int: expected names, "
                                      "all str (text) or all bin (bytes)\n"));
    CHECK(dies_saying(read_raw, &order, "test_classnames: x.hs: meta class_names: name 1 'a' is not after name 0 'b': "
                                        "expected the names ascending by their bytes, each once\n"));
    CHECK(dies_saying(read_raw, &twice, "test_classnames: x.hs: meta class_names: name 1 'a' is not after name 0 'a': "
                                        "expected the names ascending by their bytes, each once\n"));
    CHECK(dies_saying(read_raw, &nul, "test_classnames: x.hs: meta class_names: name 0 'a\\x00b' holds a NUL byte: "
                                      "expected names without one\n"));
    CHECK(dies_saying(read_raw, &utf, "test_classnames: x.hs: meta class_names: name 0 '\\xffa' is a str that is not "
                                      "UTF-8 (byte 0): expected text, or bin for names that are bytes\n"));
    int three = 3, two = 2;
    CHECK(dies_saying(class_beyond, &three,
                      "test_classnames: x.hs: record 2: class 3, but meta class_names holds 3 names (classes 0 to 2)\n"));
    class_beyond(&two); /* the first two are in range: it returns (dying here fails the test) */
    int plain = 0, bytes = 1;
    CHECK(dies_saying(unify_mixed, &plain, "test_classnames: g.npz: its labels are integers, but those of q.hs are names: "
                                           "expected names in both or in neither\n"));
    CHECK(dies_saying(unify_mixed, &bytes, "test_classnames: g.npz: its class names are bytes (bin), those of q.hs str: "
                                           "expected both str (text) or both bytes (bin)\n"));
}

int main(void)
{
    util_prog = "test_classnames";
    test_from_and_back();
    test_unify();
    test_refusals();
    return check_done("classnames");
}
