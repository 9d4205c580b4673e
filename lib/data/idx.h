/* idx: the MNIST idx file format (as published with MNIST and Fashion-MNIST), read gzipped or
 * raw through zlib (gzread reads both), and written raw.
 *
 * An idx file: magic 0x00 0x00 TYPE NDIM, then NDIM big-endian u32 sizes, then the data.
 * hedge reads type 0x08 (unsigned byte) only, which is what MNIST uses.
 *
 *   idx_set s;
 *   idx_load_split(&s, "/usr/share/datasets/fashion-mnist", "train");  // dies with a message
 *   s.images[i * 784 ...], s.labels[i], s.n
 *   idx_set_free(&s);
 */
#ifndef HEDGE_IDX_H
#define HEDGE_IDX_H
#include <stdint.h>

typedef struct {
    int64_t n;          /* images */
    int rows, cols;     /* 28 x 28 */
    uint8_t *images;    /* n * rows * cols, owned */
    uint8_t *labels;    /* n, owned */
} idx_set;

/* reads one idx u8 file (path, or path + ".gz" if path is missing); ndim and dims out. */
uint8_t *idx_read(const char *path, int *ndim, int64_t dims[4]);
/* split "train" reads train-images-idx3-ubyte[.gz] and train-labels-idx1-ubyte[.gz] from dir;
 * "test" reads the t10k- pair. Checks that the counts agree and labels are < 10. */
void idx_load_split(idx_set *s, const char *dir, const char *split);
void idx_set_free(idx_set *s);
/* writes a raw (uncompressed) idx u8 file atomically */
void idx_write(const char *path, int ndim, const int64_t *dims, const uint8_t *data);

#endif
