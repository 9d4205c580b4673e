/* fuzz_npy: lib/data/npy.h's readers of .npz zip archives (stored or deflated) and bare .npy arrays on
 * arbitrary bytes, through both their users: the public generator's image-id files
 * (digits_ids_parse, lib/data/digits.h) and fromnpz's importer (npzimport_read, lib/data/npzimport.h),
 * which reads the bytes from a path (a memfd) as each kind (embeddings, images, features), its
 * stream written to /dev/null. digits_ids_parse reports a bad file by its return value; the
 * harness turns that into die() so that the replay counts rejections as the other targets do. */
#include <stdlib.h>

#include "digits.h"
#include "fuzz.h"
#include "npzimport.h"
#include "util.h"

static const uint8_t *in_data;
static size_t in_size;
static FILE *null; /* /dev/null */

static void ids(void *arg)
{
    (void)arg;
    digits_ids d;
    const char *err = digits_ids_parse(&d, in_data, in_size);
    if (err)
        die("%s", err);
    digits_ids_free(&d);
}

static void import(void *arg)
{
    const npzimport_options *o = arg;
    npzimport im;
    npzimport_read(&im, o);
    stream_header *h = npzimport_header(&im, o, 0, NULL);
    stream_writer *w = stream_create(null, h);
    npzimport_write(&im, w);
    stream_finish(w);
    npzimport_free(&im);
    header_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char buf[1 << 16]; /* static: stdio must not allocate while an input runs (fuzz.h) */
    if (!null && (!(null = fopen("/dev/null", "w")) || setvbuf(null, buf, _IOFBF, sizeof buf)))
        abort();
    in_data = data, in_size = size;
    fuzz_run(ids, NULL);
    npzimport_options o = {.input = fuzz_memfd_path(data, size)};
    for (o.kind = 0; o.kind < NPZIMPORT_NKINDS; o.kind++)
        fuzz_run(import, &o);
    return 0;
}
