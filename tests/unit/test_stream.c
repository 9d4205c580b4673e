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
    return check_done("test_stream");
}
