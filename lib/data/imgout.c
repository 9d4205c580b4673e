/* imgout.c: PNG (libpng) and PGM writers, grids. See imgout.h. */
#include "imgout.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && !strcasecmp(s + n - m, suffix);
}

int imgout_format(const char *path)
{
    if (ends_with(path, ".png"))
        return IMGOUT_PNG;
    if (ends_with(path, ".pgm"))
        return IMGOUT_PGM;
    return -1;
}

static const char *png_path; /* for the libpng error callback, which cannot take our context */

static void png_fail(png_structp png, png_const_charp msg)
{
    die("cannot write %s: libpng: %s", png_path, msg);
}

/* channels 1 (grey) or 3 (RGB, interleaved) */
static void write_png(FILE *f, const char *path, const uint8_t *px, int w, int h, int channels)
{
    png_path = path;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, NULL);
    if (!png)
        die("cannot write %s: libpng initialisation failed", path);
    png_infop info = png_create_info_struct(png);
    if (!info)
        die("cannot write %s: libpng initialisation failed", path);
    png_init_io(png, f);
    int type = channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY;
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, px + (size_t)y * w * channels);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
}

void imgout_write_file(FILE *f, const char *path, const uint8_t *px, int w, int h)
{
    int fmt = imgout_format(path);
    if (fmt < 0)
        die("%s: image files must end in .png or .pgm", path);
    if (fmt == IMGOUT_PNG)
        write_png(f, path, px, w, h, 1);
    else {
        fprintf(f, "P5\n%d %d\n255\n", w, h);
        fwrite(px, 1, (size_t)w * h, f);
    }
}

void imgout_write_rgb_file(FILE *f, const char *path, const uint8_t *px, int w, int h)
{
    int fmt = imgout_format(path);
    if (fmt < 0)
        die("%s: image files must end in .png or .pgm", path);
    if (fmt == IMGOUT_PGM)
        die("%s: PGM holds grey images only; name the file .png for colour images", path);
    write_png(f, path, px, w, h, 3);
}

void imgout_write(const char *path, const uint8_t *px, int w, int h)
{
    if (imgout_format(path) < 0)
        die("%s: image files must end in .png or .pgm", path);
    FILE *f = atomic_open(path);
    imgout_write_file(f, path, px, w, h);
    atomic_commit(f);
}

static void grid_init(imgout_grid *g, int cw, int ch, int channels, int n, int cols)
{
    g->cw = cw;
    g->ch = ch;
    g->channels = channels;
    g->cols = n < cols ? n : cols;
    g->rows = (n + cols - 1) / cols;
    g->w = g->cols * (cw + 1) + 1;
    g->h = g->rows * (ch + 1) + 1;
    g->px = emalloc((size_t)g->w * g->h * channels);
    memset(g->px, IMGOUT_SEPARATOR, (size_t)g->w * g->h * channels);
}

void imgout_grid_init(imgout_grid *g, int cw, int ch, int n, int cols)
{
    grid_init(g, cw, ch, 1, n, cols);
}

void imgout_grid_init_rgb(imgout_grid *g, int cw, int ch, int n, int cols)
{
    grid_init(g, cw, ch, 3, n, cols);
}

void imgout_grid_put(imgout_grid *g, int cell, const uint8_t *px)
{
    int x0 = 1 + (cell % g->cols) * (g->cw + 1), y0 = 1 + (cell / g->cols) * (g->ch + 1);
    size_t c = (size_t)g->channels;
    for (int y = 0; y < g->ch; y++)
        memcpy(g->px + ((size_t)(y0 + y) * g->w + x0) * c, px + (size_t)y * g->cw * c, g->cw * c);
}

void imgout_grid_free(imgout_grid *g)
{
    free(g->px);
    g->px = NULL;
}
