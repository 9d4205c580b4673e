/* fuzz_stream: the stream reader (lib/streams/stream.c) on arbitrary bytes: the header, every record up
 * to the trailer, and the header (lineage included) and a deep copy of it printed as JSON. */
#include <stdlib.h>

#include "fuzz.h"
#include "stream.h"

typedef struct {
    const uint8_t *data;
    size_t size;
    FILE *out; /* /dev/null */
} input;

static void body(void *arg)
{
    const input *in = arg;
    FILE *f = fuzz_fmemopen(in->data, in->size);
    stream_reader *r = stream_open(f, "input");
    header_print_json(in->out, r->header, 1);
    stream_header *copy = header_copy(r->header);
    header_print_json(in->out, copy, 1);
    header_free(copy);
    stream_record rec = {0};
    while (stream_read(r, &rec))
        if (r->header->batched)
            (void)record_batch(&rec);
    record_free(&rec);
    stream_close(r);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null;
    static char buf[1 << 16]; /* static: stdio must not allocate while an input runs (fuzz.h) */
    if (!null && (!(null = fopen("/dev/null", "w")) || setvbuf(null, buf, _IOFBF, sizeof buf)))
        abort();
    input in = {data, size, null};
    fuzz_run(body, &in);
    return 0;
}
