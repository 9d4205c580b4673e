/* columns: the scalar fields of every record of a stream as columns of doubles, for the programs
 * that compute on whole columns (ktau, apcurve). The maths on them lives in lib/measures/ap.h, lib/measures/tau.h,
 * lib/measures/aurc.h and lib/measures/ece.h; this is the reading. The name keeps its metrics_ prefix from before
 * the move (issue 22: metrics did maths, not I/O), so that its callers read as they did.
 *
 * Ownership: the columns are allocated here and belong to the caller (free each).
 *
 *   const char *names[2] = {"eta", "correct"};
 *   double *cols[2];
 *   int64_t n = metrics_read_columns(in, 2, names, cols);   // cols[0][i]: record i's eta
 */
#ifndef HEDGE_COLUMNS_H
#define HEDGE_COLUMNS_H
#include <stdint.h>

#include "stream.h"

/* cols[f] (allocated here, the caller frees each) gets field names[f] of every record; returns the
 * number of records. Dies on a batched stream, and unless each field exists and holds one number
 * per record. */
int64_t metrics_read_columns(stream_reader *r, int nf, const char *const *names, double **cols);
#endif
