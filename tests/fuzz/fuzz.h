/* fuzz: what the fuzz harnesses (fuzz_stream.c, fuzz_ckpt.c, fuzz_idx.c, fuzz_npy.c) share.
 *
 * hedge rejects bad input with die() (lib/base/util.c), which exits. Under a fuzzer a clean rejection
 * must not end the process, so fuzz_run() sets util_die_hook (die() clears it, so before every
 * input) to a function that siglongjmp()s back. What the reader had allocated or opened when it
 * died is still there: fuzz_run() tracks, while the body runs, every allocation (through the
 * sanitizer allocator's hooks) and every FILE and gzFile opened by path (the link wraps fopen,
 * fclose, gzopen, gzclose), and after a rejection it closes those files and frees those blocks,
 * so that millions of rejections neither grow the memory nor run out of file descriptors.
 * After a body that returns normally nothing is freed: a leak there is a real leak, and
 * LeakSanitizer reports it when the replay driver exits.
 *
 *   static void body(void *arg) { ...stream_open, stream_read...; }
 *   int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
 *       fuzz_run(body, &input);       // 1: body returned, 0: die() rejected the input
 *       return 0;
 *   }
 *
 * Library messages (die's "prog: what went wrong") go to /dev/null unless HEDGE_FUZZ_VERBOSE=1;
 * sanitizer reports write to file descriptor 2 directly and are never hidden.
 */
#ifndef HEDGE_FUZZ_H
#define HEDGE_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* runs body(arg); 1 if it returned, 0 if it died (everything it left was released) */
int fuzz_run(void (*body)(void *), void *arg);
extern long fuzz_accepted; /* inputs whose body returned */
/* a FILE reading data (size may be 0), closed by fuzz_run if the body dies; call it in the body */
FILE *fuzz_fmemopen(const uint8_t *data, size_t size);
/* a memfd holding data, for readers that take a path: its name is "/proc/self/fd/N".
 * One per process, rewritten for each input. */
const char *fuzz_memfd_path(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
