/* evalreport: bin/evaluate's table and JSON of the results of hedge_evaluate (lib/engine/hedge.h), one
 * column per set, as pipelines/evaluate.sh printed them: rows ap, ece, knn (k = K), R@k of each k
 * asked, p1, rprec, map_r, map, mrr, their class averages, nmi, ami, tau, auroc, aurc, eaurc;
 * a number %.10g (the programs' JSON), "-" where undefined (JSON null), with its reason in the
 * notes under the table (JSON "notes").
 *
 *   evalreport R = {.names = {"input"}, .r = res, .nsets = 1, .o = &o, .distance = "euclidean"};
 *   evalreport_notes(&R);
 *   evalreport_table(stdout, &R, 0);         // 1: aligned text columns instead of markdown
 *   evalreport_json(jf, &R);
 */
#ifndef HEDGE_EVALREPORT_H
#define HEDGE_EVALREPORT_H
#include <stdio.h>

#include "hedge.h"

#define EVALREPORT_MAXSETS 2
#define EVALREPORT_MAXNOTES 64

typedef struct {
    const char *names[EVALREPORT_MAXSETS];
    const hedge_result *r;   /* [nsets] */
    int nsets;
    const hedge_options *o;
    const char *distance;    /* "euclidean", "cosine", "mls" */
    int gallery;             /* a gallery was searched (for the notes) */
    const char *gallery_name; /* its name (evalreport_json_galleries), or NULL */
    int few;                 /* the set whose queries have fewer neighbours than knn_k (its k), or -1 */
    const char *reject[EVALREPORT_MAXSETS]; /* -o DIR: each set's error-versus-reject curve, or NULL */
    char *notes[EVALREPORT_MAXNOTES];
    int nnotes;
} evalreport;

/* the notes from the results' reasons (identical reasons of one set joined in one note) */
void evalreport_notes(evalreport *R);
void evalreport_table(FILE *f, const evalreport *R, int text);
void evalreport_json(FILE *f, const evalreport *R);
/* several galleries' reports R[0 .. ng) as one JSON object: {"program": "evaluate", "galleries":
 * [{"gallery": NAME, then evalreport_json's keys}, ...]} */
void evalreport_json_galleries(FILE *f, const evalreport *R, int ng);
void evalreport_free(evalreport *R);
/* the whole evaluation as one self-contained HTML page (lib/engine/evalhtml.c): the table and
 * notes, then each set's figures in inline SVG (evaluate --report; hedge.h's hedge_report) */
void evalreport_html(FILE *f, const evalreport *R, const char *title);
/* the error-versus-reject curve of a set's kNN answers (r->knn_eta, r->knn_correct; ids as S's, or
 * the index) into path (atomic_open), as ktau --reject-tsv writes it; 0 when r has none */
int evalreport_reject(const char *path, const hedge_result *r, const hedge_set *S, uint64_t seed);
#endif
