/* tensor: a dtype, a shape and a pointer to row-major data (the ggml/numpy picture).
 *
 * A tensor either owns its data (tensor_new: 64-byte aligned, zeroed, freed by tensor_free)
 * or is a view (tensor_view: data belongs to someone else, tensor_free only frees the struct).
 *
 *   int64_t shape[2] = {28, 56};
 *   tensor *t = tensor_new(DT_U8, 2, shape);
 *   uint8_t *px = t->data;           // 1568 bytes
 *   tensor_free(t);
 */
#ifndef HEDGE_TENSOR_H
#define HEDGE_TENSOR_H
#include <stddef.h>
#include <stdint.h>

enum dtype { DT_U8, DT_I32, DT_I64, DT_F32, DT_F64, DT_COUNT };
#define TENSOR_MAXDIM 6

typedef struct {
    int dtype;
    int ndim;
    int64_t shape[TENSOR_MAXDIM];
    void *data;
    int owns;       /* 1: data was allocated by tensor_new */
    size_t cap;     /* bytes allocated, for owned tensors that are reused */
} tensor;

size_t dtype_size(int dtype);
const char *dtype_name(int dtype);  /* numpy names: "uint8", "int32", ... */
int dtype_parse(const char *name);  /* -1 if unknown */

int64_t shape_numel(int ndim, const int64_t *shape);
int64_t tensor_numel(const tensor *t);
size_t tensor_nbytes(const tensor *t);
tensor *tensor_new(int dtype, int ndim, const int64_t *shape);
tensor *tensor_view(int dtype, int ndim, const int64_t *shape, void *data);
void tensor_free(tensor *t);
/* "uint8[28,56]" into buf */
char *tensor_describe(const tensor *t, char *buf, size_t n);
/* element i as a double, whatever the dtype */
double tensor_get(const tensor *t, int64_t i);
/* the index of the first of x[0 .. n) that is NaN or infinite, -1 if all are finite */
int64_t floats_first_nonfinite(const float *x, int64_t n);

#endif
