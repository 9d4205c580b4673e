/* centroids: class centroids of embeddings, accumulated item by item, and the ordering statistics
 * of HIB's appendix D (bin/centroids).
 *
 * A class's centroid is the mean over its items of the mean of their C component means (D); with
 * variances, also the mean over its items of their variance per dimension (a mixture's by its
 * moments, lib/measures/proto.h proto_gaussian). Classes are kept in order of first appearance.
 * Ordering (1-D embeddings of N-digit numbers): the classes sorted by the first dimension of their
 * centroids (equal values: the lower class first); an adjacent pair shares a digit when the two
 * classes have the same digit at some position (ones, tens, ... up to N); a run is a maximal series
 * of consecutive classes in which every adjacent pair shares a digit (at least two classes).
 *
 *   centroid_set s;
 *   centroid_set_init(&s, D);
 *   centroid_add(&s, cls, mu, var, C);               // per item: mu (C, D), var (C, D) or NULL
 *   centroid_order_stats st;
 *   centroid_order(&s, 2, &st);                       // sorts s.c
 *   centroid_set_free(&s);
 */
#ifndef HEDGE_CENTROIDS_H
#define HEDGE_CENTROIDS_H

#define CENTROID_MAXD 64   /* dimensions with variances (proto_gaussian's scratch on the stack) */
#define CENTROID_MAXCLASS 100000000

typedef struct {
    int cls;
    long n;          /* items */
    double *sum;     /* (D) sum over the items of the mean of their component means */
    double *vsum;    /* (D) sum over the items of their variance (0 without variances) */
} centroid;

typedef struct {
    int D;
    int n, cap;      /* classes */
    centroid *c;     /* [n] in order of first appearance, until centroid_order sorts them */
    int *slot;       /* class -> index in c, -1 for none */
    int slotcap;
} centroid_set;

typedef struct {
    int shared;      /* adjacent pairs that share a digit */
    int runs;
    double mean_run; /* mean number of classes in a run, 0 without a run */
} centroid_order_stats;

void centroid_set_init(centroid_set *s, int D);
void centroid_set_free(centroid_set *s);
/* one item of class cls (0 .. CENTROID_MAXCLASS): means mu (C, D), variances var (C, D) or NULL
 * (then D <= CENTROID_MAXD). The caller has checked the values (finite, var >= 0). */
void centroid_add(centroid_set *s, int cls, const float *mu, const float *var, int C);
/* sorts the classes by their centroids' first dimension (no centroid_add after: the class slots
 * are stale) and counts shared pairs and runs */
void centroid_order(centroid_set *s, int digits, centroid_order_stats *st);
#endif
