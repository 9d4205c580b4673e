/* probe: the OpenBLAS sgemm probe of the benchmarks: kernel name and GFLOPS of a 2048^3 sgemm
 * with 1 and 2 threads (best of 5), as "core NAME", "gflops1 X", "gflops2 Y". `probe core`: the
 * kernel's name alone (the one hedge's programs run, which the peers in faiss.sh are given). */
#include <stdio.h>
#include <string.h>

#include "blas.h"
#include "util.h"

int main(int argc, char **argv)
{
    util_init(argv[0]);
    blas_init(argv, 1);
    printf("core %s\n", blas_corename());
    if (argc > 1 && !strcmp(argv[1], "core"))
        return 0;
    printf("gflops1 %.1f\n", blas_probe_gflops(2048, 5));
    blas_set_threads(2);
    printf("gflops2 %.1f\n", blas_probe_gflops(2048, 5));
    return 0;
}
