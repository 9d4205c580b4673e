/* stream: round trip of header, meta, lineage and records; trailer; every corruption rejected. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rng.h"
#include "stream.h"
#include "tensor.h"
#include "util.h"

static char *write_sample(size_t *len, int records, int with_end)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    stream_header *src = header_new("images", 0);
    header_set_int(src, "digits", 2);
    stream_header *h = header_new("images", 0);
    char *argv[] = {"prog", "-x", "3"};
    header_provenance(h, 3, argv);
    header_set_seed(h, 42);
    header_add_input(h, src);
    int64_t shp[2] = {2, 3};
    header_add_field(h, "image", DT_U8, 2, shp);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_set_int(h, "digits", 2);
    header_set_float(h, "p", 0.25);
    header_set_str(h, "split", "train");
    int64_t ts[1] = {3};
    tensor *t = tensor_new(DT_I32, 1, ts);
    ((int32_t *)t->data)[2] = 7;
    header_set_tensor(h, "classes", t);
    tensor_free(t);
    stream_writer *w = stream_create(f, h);
    for (int i = 0; i < records; i++) {
        uint8_t img[6] = {1, 2, 3, 4, 5, (uint8_t)i};
        int32_t cls = 10 + i;
        void *d[] = {img, &cls};
        stream_write_data(w, d, 0);
    }
    if (with_end)
        stream_finish(w);
    else
        stream_abort(w);
    fclose(f);
    header_free(h);
    header_free(src);
    return buf;
}

/* run fn in a child; return its exit status (a die() inside is exit 1) */
static int child_status(void (*fn)(const char *, size_t), const char *buf, size_t len)
{
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        freopen("/dev/null", "w", stderr);
        fn(buf, len);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void read_all(const char *buf, size_t len)
{
    FILE *f = fmemopen((void *)buf, len, "rb");
    stream_reader *r = stream_open(f, "mem");
    stream_record rec = {0};
    while (stream_read(r, &rec))
        ;
    record_free(&rec);
    stream_close(r);
    fclose(f);
}

/* levels of header along the longest path of the lineage (the stream's own header is 1) */
static int depth_of(const stream_header *h)
{
    int d = 0;
    for (int i = 0; i < h->ninputs; i++) {
        int k = depth_of(h->inputs[i]);
        d = k > d ? k : d;
    }
    return d + 1;
}

/* a chain of n headers, newest first: programs p{n-1} <- ... <- p1 <- origin (p0) */
static stream_header *chain(int n)
{
    stream_header *h = header_new("images", 0);
    free(h->program);
    h->program = strdup("origin");
    header_set_int(h, "level", 0);
    for (int i = 1; i < n; i++) {
        stream_header *up = header_new("images", 0);
        char name[16];
        snprintf(name, sizeof name, i % 2 ? "odd" : "even");
        free(up->program);
        up->program = strdup(name);
        header_set_int(up, "level", i);
        header_add_input(up, h);
        header_free(h);
        h = up;
    }
    return h;
}

static char *write_header(const stream_header *h, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    stream_finish(stream_create(f, h));
    fclose(f);
    return buf;
}

static stream_header *read_header(const char *buf, size_t len)
{
    FILE *f = fmemopen((void *)buf, len, "rb");
    stream_reader *r = stream_open(f, "mem");
    stream_header *h = header_copy(r->header);
    stream_record rec = {0};
    CHECK(!stream_read(r, &rec));
    stream_close(r);
    fclose(f);
    return h;
}

/* A lineage deeper than STREAM_LINEAGE_MAX levels is written with its middle elided: the
 * newest levels and the origin kept, one marker header between them that counts what it
 * stands for. msgpack-c's parser nests at most 32 containers (3 per lineage level): a stream
 * 11 levels deep could not be read at all before. */
static void check_lineage(void)
{
    for (int n = 1; n <= 40; n += n < 12 ? 1 : 9) {
        stream_header *h = chain(n);
        size_t len;
        char *buf = write_header(h, &len);
        stream_header *back = read_header(buf, len);
        int d = depth_of(back), want = n <= STREAM_LINEAGE_MAX ? n : STREAM_LINEAGE_MAX;
        if (d != want)
            fprintf(stderr, "chain of %d: read back %d levels, expected %d\n", n, d, want);
        CHECK(d == want);
        /* the newest levels are whole; the deepest header is the origin */
        const stream_header *x = back;
        int level = 0;
        for (; x->ninputs && level < STREAM_LINEAGE_MAX - 2; level++, x = x->inputs[0])
            CHECK(header_int(x, "level", -1) == n - 1 - level);
        if (n > STREAM_LINEAGE_MAX) { /* x is the marker */
            CHECK(!strcmp(x->kind, "elided") && !strcmp(x->program, "..."));
            CHECK(header_int(x, "elided_levels", 0) == n - STREAM_LINEAGE_MAX + 1);
            CHECK(header_int(x, "elided_headers", 0) == n - STREAM_LINEAGE_MAX + 1);
            CHECK(!strcmp(header_str(x, "elided_programs", ""), n % 2 ? "even,odd" : "odd,even"));
            CHECK(x->ninputs == 1);
            x = x->inputs[0];
        }
        while (x->ninputs)
            x = x->inputs[0];
        CHECK(!strcmp(x->program, "origin") && header_int(x, "level", -1) == 0);
        /* written again (the next program of a pipeline): still bounded, the counts add up */
        if (n > STREAM_LINEAGE_MAX) {
            stream_header *up = header_new("images", 0);
            header_add_input(up, back);
            size_t len2;
            char *buf2 = write_header(up, &len2);
            stream_header *again = read_header(buf2, len2);
            CHECK(depth_of(again) == STREAM_LINEAGE_MAX);
            const stream_header *m = again;
            for (int k = 0; k < STREAM_LINEAGE_MAX - 2; k++)
                m = m->inputs[0];
            CHECK(header_int(m, "elided_levels", 0) == n - STREAM_LINEAGE_MAX + 2);
            header_free(again);
            header_free(up);
            free(buf2);
        }
        header_free(back);
        header_free(h);
        free(buf);
    }
}

int main(void)
{
    util_init("test_stream");
    size_t len;
    char *buf = write_sample(&len, 5, 1);

    FILE *f = fmemopen(buf, len, "rb");
    stream_reader *r = stream_open(f, "mem");
    const stream_header *h = r->header;
    CHECK(!strcmp(h->kind, "images"));
    CHECK(h->nfields == 2 && h->fields[0].dtype == DT_U8 && h->fields[0].shape[1] == 3);
    CHECK(header_int(h, "digits", 0) == 2);
    CHECK_CLOSE(header_float(h, "p", 0), 0.25, 0);
    CHECK(!strcmp(header_str(h, "split", ""), "train"));
    const tensor *ct = header_tensor(h, "classes");
    CHECK(ct && ct->shape[0] == 3 && ((int32_t *)ct->data)[2] == 7);
    CHECK(!strcmp(h->program, "test_stream") && h->nargs == 2 && !strcmp(h->args[1], "3"));
    CHECK(h->has_seed && h->seed == 42);
    CHECK(h->ninputs == 1 && header_int(h->inputs[0], "digits", 0) == 2);
    stream_record rec = {0};
    int n = 0;
    while (stream_read(r, &rec)) {
        CHECK(((uint8_t *)rec.t[0].data)[5] == n);
        CHECK(((int32_t *)rec.t[1].data)[0] == 10 + n);
        CHECK((uintptr_t)rec.t[0].data % 64 == 0);
        n++;
    }
    CHECK(n == 5 && r->count == 5);
    /* the header survives a copy through a writer: lineage is preserved */
    char *b2 = NULL;
    size_t l2;
    FILE *f2 = open_memstream(&b2, &l2);
    stream_header *h2 = header_new("images", 0);
    header_add_input(h2, h);
    header_copy_fields(h2, h);
    stream_finish(stream_create(f2, h2));
    fclose(f2);
    FILE *f3 = fmemopen(b2, l2, "rb");
    stream_reader *r3 = stream_open(f3, "mem2");
    CHECK(r3->header->ninputs == 1 && r3->header->inputs[0]->ninputs == 1);
    CHECK(header_int(r3->header->inputs[0]->inputs[0], "digits", 0) == 2);
    CHECK(!stream_read(r3, &rec));
    stream_close(r3);
    fclose(f3);
    header_free(h2);
    free(b2);
    record_free(&rec);
    stream_close(r);
    fclose(f);

    /* whole stream reads fine in a child too */
    CHECK(child_status(read_all, buf, len) == 0);
    /* truncated anywhere: exit 1 */
    int bad_ok = 1;
    for (size_t cut = 1; cut < len; cut += 7)
        if (child_status(read_all, buf, cut) != 1)
            bad_ok = 0;
    CHECK(bad_ok);
    /* no trailer */
    size_t len2;
    char *noend = write_sample(&len2, 3, 0);
    CHECK(child_status(read_all, noend, len2) == 1);
    free(noend);
    /* a corrupted byte somewhere must never crash: exit 0 or 1 only */
    int crash_free = 1;
    rng g;
    rng_init(&g, 1, 2);
    for (int k = 0; k < 300; k++) {
        char *c = malloc(len);
        memcpy(c, buf, len);
        c[rng_below(&g, len)] ^= (char)(1 + rng_below(&g, 255));
        int s = child_status(read_all, c, len);
        if (s != 0 && s != 1)
            crash_free = 0;
        free(c);
    }
    CHECK(crash_free);
    /* version 2 is rejected: patch the version byte (positive fixint 1 after "version") */
    char *v = memmem(buf, len, "version", 7);
    CHECK(v && v[7] == 1);
    if (v) {
        v[7] = 2;
        CHECK(child_status(read_all, buf, len) == 1);
    }
    /* not a stream at all */
    CHECK(child_status(read_all, "hello", 5) == 1);
    CHECK(child_status(read_all, "", 0) == 1);
    free(buf);
    check_lineage();
    return check_done("test_stream");
}
