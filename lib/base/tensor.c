#include "tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *names[DT_COUNT] = {"uint8", "int32", "int64", "float32", "float64"};
static const size_t sizes[DT_COUNT] = {1, 4, 8, 4, 8};

size_t dtype_size(int dtype) { return dtype >= 0 && dtype < DT_COUNT ? sizes[dtype] : 0; }
const char *dtype_name(int dtype) { return dtype >= 0 && dtype < DT_COUNT ? names[dtype] : "?"; }

int dtype_parse(const char *name)
{
    for (int i = 0; i < DT_COUNT; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

int64_t shape_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

int64_t tensor_numel(const tensor *t) { return shape_numel(t->ndim, t->shape); }
size_t tensor_nbytes(const tensor *t) { return (size_t)tensor_numel(t) * dtype_size(t->dtype); }

static tensor *tensor_alloc(int dtype, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > TENSOR_MAXDIM)
        die("internal error: tensor with %d dimensions", ndim);
    tensor *t = ecalloc(1, sizeof *t);
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->shape, shape, ndim * sizeof *shape);
    return t;
}

tensor *tensor_new(int dtype, int ndim, const int64_t *shape)
{
    tensor *t = tensor_alloc(dtype, ndim, shape);
    t->cap = tensor_nbytes(t);
    t->data = ealloc_aligned(t->cap);
    t->owns = 1;
    return t;
}

tensor *tensor_view(int dtype, int ndim, const int64_t *shape, void *data)
{
    tensor *t = tensor_alloc(dtype, ndim, shape);
    t->data = data;
    return t;
}

void tensor_free(tensor *t)
{
    if (!t)
        return;
    if (t->owns)
        free(t->data);
    free(t);
}

char *tensor_describe(const tensor *t, char *buf, size_t n)
{
    size_t k = snprintf(buf, n, "%s[", dtype_name(t->dtype));
    for (int i = 0; i < t->ndim && k < n; i++)
        k += snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

double tensor_get(const tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT_U8: return ((const uint8_t *)t->data)[i];
    case DT_I32: return ((const int32_t *)t->data)[i];
    case DT_I64: return (double)((const int64_t *)t->data)[i];
    case DT_F32: return ((const float *)t->data)[i];
    case DT_F64: return ((const double *)t->data)[i];
    }
    return 0;
}

/* 64 floats at a time without a branch inside, in GCC's generic vectors (scalar code where the
 * target has no SIMD): a float is not finite when its exponent bits are all ones; the block that
 * has one is searched by the plain loop. Every input float of train and batcher passes here. */
typedef uint32_t v8u __attribute__((vector_size(8 * sizeof(uint32_t))));
int64_t floats_first_nonfinite(const float *x, int64_t n)
{
    const v8u mask = {0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u,
                      0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u};
    int64_t b = 0;
    for (; b + 64 <= n; b += 64) {
        v8u any = {0};
        for (int k = 0; k < 64; k += 8) {
            v8u u;
            memcpy(&u, &x[b + k], sizeof u);
            any |= (v8u)((u & mask) == mask);
        }
        uint32_t a = 0;
        for (int l = 0; l < 8; l++)
            a |= any[l];
        if (a)
            break;
    }
    for (int64_t i = b; i < n; i++)
        if (!isfinite(x[i]))
            return i;
    return -1;
}
