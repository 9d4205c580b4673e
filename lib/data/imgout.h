/* imgout: grey-scale and RGB image files (PNG through libpng, binary PGM by hand, grey only) and
 * contact-sheet grids.
 *
 * The format follows the file name: ".png" or ".pgm" (imgout_format returns -1 for anything
 * else, so a program can reject the name before doing any work). Files are written atomically
 * (util.h atomic_open): a failed write leaves no half file. The grid owns its pixels. Colour
 * pixels are interleaved, [h][w][3] (R, G, B), as PNG stores them.
 *
 *   imgout_grid g;
 *   imgout_grid_init(&g, 56, 28, 64, 8);       // 64 cells of 56 x 28 (w x h), 8 per row
 *   imgout_grid_put(&g, 0, pixels);             // uint8 [28][56], row-major
 *   imgout_write("sheet.png", g.px, g.w, g.h);  // cells separated by 1-pixel grey lines
 *   imgout_grid_free(&g);
 * In colour: imgout_grid_init_rgb, cells of [28][56][3], imgout_write_rgb_file (PNG only).
 */
#ifndef HEDGE_IMGOUT_H
#define HEDGE_IMGOUT_H
#include <stdint.h>
#include <stdio.h>

enum { IMGOUT_PNG, IMGOUT_PGM };
#define IMGOUT_SEPARATOR 128 /* grey of the grid lines */

int imgout_format(const char *path);
/* 8-bit grey, w x h, row-major; dies (exit 1) on I/O failure */
void imgout_write(const char *path, const uint8_t *px, int w, int h);
/* the same into f, a file from atomic_open(path) that the caller syncs and commits: a program that
 * also writes stdout opens the file before any work and commits it last (util.h) */
void imgout_write_file(FILE *f, const char *path, const uint8_t *px, int w, int h);
/* 8-bit RGB, [h][w][3], into f as above; PNG only: a .pgm path dies ("PGM holds grey images only") */
void imgout_write_rgb_file(FILE *f, const char *path, const uint8_t *px, int w, int h);

typedef struct {
    int cw, ch;        /* cell size */
    int channels;      /* 1 (grey) or 3 (RGB) */
    int cols, rows;
    int w, h;          /* the whole sheet: cols*cw + cols + 1 by rows*ch + rows + 1 */
    uint8_t *px;       /* [h][w][channels] */
} imgout_grid;

/* a sheet for n cells (n >= 1), cols per row (fewer if n < cols), background = separator grey */
void imgout_grid_init(imgout_grid *g, int cw, int ch, int n, int cols);
/* the same in colour (channels 3) */
void imgout_grid_init_rgb(imgout_grid *g, int cw, int ch, int n, int cols);
/* px: [ch][cw][channels] */
void imgout_grid_put(imgout_grid *g, int cell, const uint8_t *px);
void imgout_grid_free(imgout_grid *g);

#endif
