/* fuzz_ckpt: the checkpoint reader (ckpt_load, lib/training/ckpt.c) on arbitrary bytes, as train
 * --resume calls it (optimizer state wanted). It takes a path: the bytes sit in a memfd. */
#include "ckpt.h"
#include "fuzz.h"

static void body(void *arg)
{
    ckpt_info ci;
    optim *o = NULL;
    stream_header *h = NULL;
    model *m = ckpt_load(arg, &ci, &o, 1, &h);
    double a, b;
    (void)ckpt_match_ab(m, &a, &b);
    model_free(m);
    optim_free(o);
    header_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_run(body, (void *)fuzz_memfd_path(data, size));
    return 0;
}
