/* fuzz_npy: the reader of the public generator's image-id files (digits_ids_parse, lib/digits.h, on
 * lib/npy.h: .npz zip archives, stored or deflated, and bare .npy arrays) on arbitrary bytes. It parses
 * from memory and reports a bad file by its return value; the harness turns that into die() so
 * that the replay counts rejections as the other targets do. */
#include "digits.h"
#include "fuzz.h"
#include "util.h"

static const uint8_t *in_data;
static size_t in_size;

static void body(void *arg)
{
    (void)arg;
    digits_ids d;
    const char *err = digits_ids_parse(&d, in_data, in_size);
    if (err)
        die("%s", err);
    digits_ids_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in_data = data, in_size = size;
    fuzz_run(body, NULL);
    return 0;
}
