/* fuzz_idx: the idx reader (idx_read, lib/data/idx.h) on arbitrary bytes, gzipped or raw (zlib's
 * gzread tells them apart by the gzip magic). It takes a path: the bytes sit in a memfd. */
#include <stdlib.h>

#include "fuzz.h"
#include "idx.h"

static void body(void *arg)
{
    int ndim;
    int64_t dims[4];
    uint8_t *data = idx_read(arg, &ndim, dims);
    free(data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_run(body, (void *)fuzz_memfd_path(data, size));
    return 0;
}
