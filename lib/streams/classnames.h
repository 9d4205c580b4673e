/* classnames: class labels that are names (formats/stream.md, "Class names"). A stream whose
 * labels are names (identities such as "n000123") carries them in meta class_names, ascending
 * by their bytes and distinct, and each item's class is the index of its name there. This module
 * reads and checks that meta against the classes, makes it from strings (fromnpz's '<U' and '|S'
 * labels) and matches sets read together by name, as hedge.evaluate does
 * (python/hedge/_evaluate.py, _named_classes): each set's classes are renumbered to the
 * positions of its names in the sorted union of every set's names, so the numbers are those of
 * integer labels numbered in that order.
 *
 * Ownership: a classnames owns its names (classnames_free); classnames_unify writes the union
 * into a classnames of its own. Errors die with one line naming the source (src).
 *
 *   classnames Nq, Ng, U;
 *   classnames_read(&Nq, "q.hs", qheader);             // Nq.present 0: integer classes
 *   classnames_check(&Nq, "q.hs", qcls, nq);           // every class an index into the names
 *   ...
 *   classnames_part p[2] = {{&Nq, qcls, nq, "q.hs"}, {&Ng, gcls, ng, "g.hs"}};
 *   classnames_unify(&U, p, 2);                        // qcls, gcls renumbered into U
 *   classnames_set(out_header, &U);                    // what is written carries the union
 *   classnames_free(&U), classnames_free(&Nq), classnames_free(&Ng);
 */
#ifndef HEDGE_CLASSNAMES_H
#define HEDGE_CLASSNAMES_H
#include <stddef.h>
#include <stdint.h>

#include "stream.h"

#define CLASSNAMES_KEY "class_names"
#define CLASSNAMES_MAX_BYTES (16LL << 20) /* the names together: a header holds them at every lineage level */

typedef struct {
    int present;  /* 0: the classes are integers (no class_names); the rest is empty */
    int bytes;    /* 1: the names are bytes (msgpack bin, numpy '|S'); 0: text (str, UTF-8, '<U') */
    int64_t n;    /* names */
    char **s;     /* [n] each NUL-terminated after its len[i] bytes (none holds a NUL), ascending, distinct */
    size_t *len;  /* [n] */
} classnames;

/* h's meta class_names into N, checked (an array of names, all str or all bin, str valid UTF-8,
 * no NUL, ascending and distinct, at most CLASSNAMES_MAX_BYTES); N->present 0 when h has none */
void classnames_read(classnames *N, const char *src, const stream_header *h);
/* every cls[i] is an index into N's names (nothing to check when N is not present): else
 * "src: record i: class c, but meta class_names holds K names (classes 0 to K-1)" */
void classnames_check(const classnames *N, const char *src, const int32_t *cls, int64_t n);
/* the names of n strings (s[i], len[i] bytes; bytes: as classnames.bytes) into N, sorted and
 * distinct, and codes[i] the index of s[i] among them (src, what: for the message when they pass
 * CLASSNAMES_MAX_BYTES) */
void classnames_from(classnames *N, const char *src, const char *what, int64_t n, char *const *s, const size_t *len,
                     int bytes, int32_t *codes);

/* one set read together with others: its names (present or not) and its classes, renumbered */
typedef struct {
    const classnames *names;
    int32_t *cls;         /* [n] */
    int64_t n;
    const char *src;
} classnames_part;
/* the sets p[0 .. np) matched by name: all named or none (else dies naming the two), names all
 * str or all bin; each named set's classes renumbered into the sorted union of their names, left
 * in U (U->present 0 when no set is named: nothing changes). U is the caller's to free. */
void classnames_unify(classnames *U, const classnames_part *p, int np);

/* N as h's meta class_names, replacing one; N not present: h's class_names removed */
void classnames_set(stream_header *h, const classnames *N);
void classnames_copy(classnames *dst, const classnames *src);
/* 1 when a and b name the same classes alike (both absent, or the same names of the same kind) */
int classnames_equal(const classnames *a, const classnames *b);
void classnames_free(classnames *N);
/* name i as a message shows it: quoted, escaped, the first 40 bytes ("'n000123'") */
const char *classnames_show(const classnames *N, int64_t i, char *buf, size_t size);
#endif
