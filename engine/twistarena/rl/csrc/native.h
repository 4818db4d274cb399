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
 * writer reads, as a tuple in the order the game's Python getter lists them),
 * the observing seat, the player count, the tensor's layout (the start of each
 * segment, in the order the game's Python side lists them) and the game's
 * constant tables (a tuple). */
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

int write_twisted(Tensor *t, const Source *src);
int write_twhist(Tensor *t, const Source *src);
int write_tricky_twist(Tensor *t, const Source *src);

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

/* An int object's value (sets *failed on an error). Cards, seats and counts are
 * small ints, read here without a call where the int is stored in one digit. */
static inline long as_long(PyObject *o, int *failed) {
    if (PyLong_CheckExact(o)) {
#if PY_VERSION_HEX >= 0x030C0000
        if (PyUnstable_Long_IsCompact((PyLongObject *)o))
            return (long)PyUnstable_Long_CompactValue((PyLongObject *)o);
#else
        Py_ssize_t digits = Py_SIZE(o);
        if (digits == 0) return 0;
        if (digits == 1) return (long)((PyLongObject *)o)->ob_digit[0];
        if (digits == -1) return -(long)((PyLongObject *)o)->ob_digit[0];
#endif
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) *failed = 1;
    return v;
}

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

/* Flags at base + index[c] for each int c of seq (index NULL: base + c). */
static inline int flags(Tensor *t, long base, PyObject *seq, const Ints *index) {
    Py_ssize_t n;
    PyObject **items;
    if (PyList_Check(seq)) {
        n = PyList_GET_SIZE(seq);
        items = ((PyListObject *)seq)->ob_item;
    } else if (PyTuple_Check(seq)) {
        n = PyTuple_GET_SIZE(seq);
        items = ((PyTupleObject *)seq)->ob_item;
    } else {
        return seq_len(seq) < 0 ? -1 : 0;
    }
    int failed = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = as_long(items[i], &failed);
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
 * with ValueError. */
long position(PyObject *names, PyObject *value);

/* Item i of the game's tables (borrowed). */
static inline PyObject *table(const Source *src, Py_ssize_t i) {
    return PyTuple_GET_ITEM(src->tables, i);
}

#endif
