/* Shared helpers of the compiled tensor encoders (twistarena.rl._native).
 *
 * Each game's writer fills a seat's tensor from scratch, straight from the
 * engine state's attributes, into a new zeroed float32 array. Every write is
 * bounds-checked: a wrong offset raises IndexError instead of touching memory
 * outside the tensor. Numbers are computed in double and rounded to float32
 * once, as numpy does when Python assigns a float to a float32 element, so the
 * result equals the Python encoders' bit for bit.
 */
#ifndef TWISTARENA_NATIVE_H
#define TWISTARENA_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The tensor being written. */
typedef struct {
    float *data;
    Py_ssize_t size;
} Tensor;

/* A table of ints (a tuple in ``tables``) as a C array, made once per match. */
typedef struct {
    const long *v;
    Py_ssize_t len;
} Ints;

#define MAX_TABLES 16

/* What a game's writer is given: the state, its fields (the attributes the
 * writer reads, as a tuple in the order of its Game's ``fields``), the
 * observing seat, the player count, the tensor's layout (the start of each
 * segment, in the order of its Game's ``segments`` then, per relative seat,
 * ``seat_segments``: its length was checked against them when the SeatTensors
 * was made) and the game's constant tables (a tuple, in the order and of the
 * kinds of its Game's ``tables``: checked likewise). */
typedef struct {
    PyObject *state;
    PyObject *fields;
    long me;
    long n;
    const long *lay;
    PyObject *tables;
    const Ints *ints; /* ints[i]: tables[i] as C longs where it is a tuple of ints */
} Source;

typedef int (*Writer)(Tensor *t, const Source *src);

/* One segment of the tensor a writer fills: the encoder's name for it
 * (tensors.py; a seat's block adds ``_<relative seat>``) and its length where
 * the writer assumes one (0: set by the player count or the options). */
typedef struct {
    const char *name;
    long length;
} Segment;

/* What a table must be; checked when a SeatTensors is made, so that a writer
 * reads each as what it is. */
typedef enum { TABLE_INTS, TABLE_TUPLE, TABLE_DICT, TABLE_INT, TABLE_ANY } TableKind;

typedef struct {
    const char *name;
    TableKind kind;
} TableSpec;

/* A game's writer and what it reads, by name: native.py builds the layout and
 * the tables from these names and a test holds the fields getter and the
 * encoder's segments to them (``_native.WRITERS``). */
typedef struct {
    const char *game;
    Writer write;
    const char *const *fields;
    Py_ssize_t field_count;
    const Segment *segments;
    Py_ssize_t segment_count;
    const Segment *seat_segments;
    Py_ssize_t seat_segment_count;
    const TableSpec *tables;
    Py_ssize_t table_count;
} Game;

#define COUNT_OF(a) ((Py_ssize_t)(sizeof(a) / sizeof((a)[0])))

extern const Game TWISTED, TWHIST, TRICKY_TWIST;

/* Interned attribute names, made once at import (module.c). */
#define NAMES(X) X(num_players) X(_decision) X(kind) X(seat) X(bonus) X(round_total) \
    X(observation) X(action_mask)

#define DECLARE_NAME(n) extern PyObject *NAME_##n;
NAMES(DECLARE_NAME)
#undef DECLARE_NAME

/* out[i] = v, or IndexError (returns -1). */
static inline int put(Tensor *t, long i, double v) {
    if (i < 0 || i >= t->size) {
        PyErr_Format(PyExc_IndexError, "tensor element %ld out of 0..%zd", i, t->size - 1);
        return -1;
    }
    t->data[i] = (float)v;
    return 0;
}

/* out[i] += v, rounded to float32 (as numpy's ``out[i] += 1.0``). */
static inline int add(Tensor *t, long i, double v) {
    if (i < 0 || i >= t->size) {
        PyErr_Format(PyExc_IndexError, "tensor element %ld out of 0..%zd", i, t->size - 1);
        return -1;
    }
    t->data[i] = (float)((double)t->data[i] + v);
    return 0;
}

/* Seat ``s`` as seen from the observer: 0 is the observer, 1 the next seat. */
static inline long rel(const Source *src, long s) {
    long r = s - src->me, n = src->n;
    if (r >= 0 && r < n) return r;  /* the usual case: no division */
    if (r < 0 && r >= -n) return r + n;
    return (r % n + n) % n;
}

/* Field i of the state (borrowed; the writer has checked the fields' count). */
static inline PyObject *field(const Source *src, Py_ssize_t i) {
    return PyTuple_GET_ITEM(src->fields, i);
}

/* CPython keeps one object of each small int (-5..256) and lays them out in one
 * array; module.c checks at import that this interpreter does (else
 * small_ints.span is 0). An int is read by its place there when it is one of
 * them (cards, seats and counts mostly are): as fast as reading its digit, and
 * right by construction, since no other object can lie at those addresses. */
typedef struct {
    uintptr_t first; /* the address of the int SMALL_MIN */
    uintptr_t span;  /* the array's size in bytes */
    int shift;       /* log2 of the distance between two of them */
} SmallInts;

#define SMALL_MIN (-5)
extern SmallInts small_ints;

/* as_long for an int that is not a small one, or for anything else (module.c). */
long as_long_slow(PyObject *o, int *failed);

/* An int's value (sets *failed, with TypeError for anything but an int, on an
 * error; ``o`` NULL: an error is set already). Only ints are read, so reading
 * one never runs Python code: a writer may hold borrowed items across it. */
static inline long as_long(PyObject *o, int *failed) {
    uintptr_t offset = (uintptr_t)o - small_ints.first;
    if (__builtin_expect(offset < small_ints.span, 1) &&
        (offset & (((uintptr_t)1 << small_ints.shift) - 1)) == 0)
        return SMALL_MIN + (long)(offset >> small_ints.shift);
    return as_long_slow(o, failed);
}

/* A caller's integer (an int or what has __index__, as a seat or an action id
 * may be) as a C long (sets *failed on an error). */
long index_long(PyObject *o, int *failed);

/* Field i as a C long (sets *failed on an error). */
static inline long field_long(const Source *src, Py_ssize_t i, int *failed) {
    return as_long(field(src, i), failed);
}

/* Whether the fields tuple has ``count`` items (else TypeError). */
int fields_are(const Source *src, Py_ssize_t count);

/* A list or tuple's length, or -1 with TypeError. */
static inline Py_ssize_t seq_len(PyObject *seq) {
    if (PyList_Check(seq)) return PyList_GET_SIZE(seq);
    if (PyTuple_Check(seq)) return PyTuple_GET_SIZE(seq);
    PyErr_Format(PyExc_TypeError, "expected a list or tuple, got %.100s", Py_TYPE(seq)->tp_name);
    return -1;
}

/* Item i of a list or tuple (borrowed; i must be in range). */
static inline PyObject *seq_item(PyObject *seq, Py_ssize_t i) {
    return PyList_Check(seq) ? PyList_GET_ITEM(seq, i) : PyTuple_GET_ITEM(seq, i);
}

/* Item i of a list or tuple (borrowed), or NULL with IndexError. */
static inline PyObject *seq_at(PyObject *seq, Py_ssize_t i) {
    Py_ssize_t n = seq_len(seq);
    if (n < 0) return NULL;
    if (i < 0 || i >= n) {
        PyErr_Format(PyExc_IndexError, "item %zd of a sequence of %zd", i, n);
        return NULL;
    }
    return seq_item(seq, i);
}

/* index[c] (a tuple of ints) (sets *failed, with IndexError, outside it). */
static inline long lookup(PyObject *index, long c, int *failed) {
    if (c < 0 || c >= PyTuple_GET_SIZE(index)) {
        PyErr_Format(PyExc_IndexError, "%ld is outside the table", c);
        *failed = 1;
        return -1;
    }
    return as_long(PyTuple_GET_ITEM(index, c), failed);
}

/* index->v[c] (sets *failed, with IndexError, outside it). */
static inline long at(const Ints *index, long c, int *failed) {
    if (c < 0 || c >= index->len) {
        PyErr_Format(PyExc_IndexError, "%ld is outside the encoder's table", c);
        *failed = 1;
        return -1;
    }
    return index->v[c];
}

/* Flags at base + index[c] for each int c of seq (index NULL: base + c). The
 * items are read one by one from the sequence as it is (reading an int runs no
 * Python code, so it cannot change under the loop). */
static inline int flags(Tensor *t, long base, PyObject *seq, const Ints *index) {
    Py_ssize_t n = seq_len(seq);
    if (n < 0) return -1;
    int failed = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = as_long(seq_item(seq, i), &failed);
        if (failed) return -1;
        if (index != NULL) {
            c = at(index, c, &failed);
            if (failed) return -1;
        }
        if (put(t, base + c, 1.0) < 0) return -1;
    }
    return 0;
}

/* Flags at base + b for each bit b set in the int ``bits`` (map NULL), or at
 * base + map[b] for each set bit the map places (bits past it are not shown). */
int bit_flags(Tensor *t, long base, PyObject *bits, const Ints *map);

/* The set bits of an int (sets *failed on an error). */
int bit_count(PyObject *bits, int *failed);

/* Position of ``value`` in the tuple ``names`` (identity first, then ==), or -1
 * with ValueError (TypeError: ``names`` is not a tuple; NULL: an error is set). */
long position(PyObject *names, PyObject *value);

/* Item i of the game's tables (borrowed), or NULL with IndexError (the count
 * was checked when the SeatTensors was made: this guards a writer's slip). */
static inline PyObject *table(const Source *src, Py_ssize_t i) {
    if (i < 0 || i >= PyTuple_GET_SIZE(src->tables)) {
        PyErr_Format(PyExc_IndexError, "table %zd of %zd", i, PyTuple_GET_SIZE(src->tables));
        return NULL;
    }
    return PyTuple_GET_ITEM(src->tables, i);
}

#endif
