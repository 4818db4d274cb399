/* twistarena.wire._encode: per-game protobuf messages serialized straight from
 * the engine's dicts.
 *
 * A DecisionRequest carries the seat's observation, re-encoded part by part as
 * the match moves (wire.ObservationEncoder). Building the protobuf message from
 * the dict (its constructor walks every nested dict and list) and serializing it
 * was about half of building a request. A Schema, made once per message type
 * from its descriptor (wire.schema_of), writes the same bytes as
 * ``cls(**data).SerializeToString()`` in one pass over the dict: fields in
 * number order, zero values left out (proto3), repeated int32 packed.
 *
 * It knows the kinds the observation messages use (int32, bool, string, nested
 * and repeated messages, repeated int32 and string). Anything else in the data
 * (an unknown key, None, a number out of int32, a value of the wrong type)
 * raises TypeError or ValueError, and the caller falls back to the protobuf
 * library, which says what is wrong. tests/wire/test_compiled_encoding.py
 * holds the bytes to the library's for every observation and public view of
 * many random matches.
 *
 * Schema.encode_parts and encode_slots run wire.ObservationEncoder's loops too: each
 * part of an observation is taken from the bytes kept for its slot while its
 * version holds, else built and encoded, and all of them go into one buffer.
 *
 * DecisionFrames writes the rest of a request (its ids, deadline, legal actions,
 * the acceptance and events that ride along, the ServerMessage around it) in
 * one buffer too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { K_INT32 = 1, K_BOOL, K_STRING, K_MESSAGE, K_REPEATED_INT32, K_REPEATED_STRING,
       K_REPEATED_MESSAGE };

struct Schema;

typedef struct {
    PyObject *name;       /* the dict key */
    uint32_t number;      /* the field number */
    int kind;             /* K_* */
    struct Schema *child; /* the nested message's schema (K_MESSAGE, K_REPEATED_MESSAGE) */
} Field;

typedef struct Schema {
    PyObject_HEAD
    Py_ssize_t count;
    Field *fields; /* by field number */
    PyObject *spec; /* the tuple it was made from (keeps names and children alive) */
} Schema;

static PyTypeObject SchemaType;

/* -- the output buffer ------------------------------------------------------ */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buffer;

static int reserve(Buffer *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more) cap *= 2;
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int varint_size(uint64_t v) {
    int n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writes v (room must be reserved). */
static inline void put_varint(Buffer *b, uint64_t v) {
    while (v >= 0x80) {
        b->data[b->len++] = (char)(v | 0x80);
        v >>= 7;
    }
    b->data[b->len++] = (char)v;
}

static int write_varint(Buffer *b, uint64_t v) {
    if (reserve(b, 10) < 0) return -1;
    put_varint(b, v);
    return 0;
}

static int write_key(Buffer *b, uint32_t number, int wire_type) {
    return write_varint(b, ((uint64_t)number << 3) | (uint64_t)wire_type);
}

/* -- values ------------------------------------------------------------------- */

/* An int32 field's value (TypeError: not an int; ValueError: out of range). */
static int int32_of(PyObject *o, int64_t *out) {
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected an int, got %.80s", Py_TYPE(o)->tp_name);
        return -1;
    }
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%lld is out of int32", v);
        return -1;
    }
    *out = v;
    return 0;
}

static int write_string(Buffer *b, uint32_t number, PyObject *o, int skip_empty) {
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a str, got %.80s", Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(o, &size);
    if (utf8 == NULL) return -1;
    if (size == 0 && skip_empty) return 0;
    if (write_key(b, number, 2) < 0 || write_varint(b, (uint64_t)size) < 0 ||
        reserve(b, size) < 0)
        return -1;
    memcpy(b->data + b->len, utf8, (size_t)size);
    b->len += size;
    return 0;
}

static int write_message(Buffer *b, const Schema *schema, PyObject *data);
static int write_raw(Buffer *b, const char *data, Py_ssize_t size);

/* Starts a length-delimited field: its key, and one byte kept for its length (the
 * usual case); the position of that byte, or -1. */
static Py_ssize_t open_field(Buffer *b, uint32_t number) {
    if (write_key(b, number, 2) < 0 || reserve(b, 1) < 0) return -1;
    return b->len++;
}

/* Ends the field opened at ``at``: its length, once known, goes before its
 * content (moved on when the length takes more than the byte kept). */
static int close_field(Buffer *b, Py_ssize_t at) {
    Py_ssize_t size = b->len - at - 1;
    int n = varint_size((uint64_t)size);
    if (n > 1) {
        if (reserve(b, n - 1) < 0) return -1;
        memmove(b->data + at + n, b->data + at + 1, (size_t)size);
        b->len += n - 1;
    }
    Py_ssize_t end = b->len;
    b->len = at;
    put_varint(b, (uint64_t)size);
    b->len = end;
    return 0;
}

/* A nested message: key, length, then its fields. */
static int write_nested(Buffer *b, uint32_t number, const Schema *schema, PyObject *data) {
    Py_ssize_t at = open_field(b, number);
    if (at < 0 || write_message(b, schema, data) < 0) return -1;
    return close_field(b, at);
}

static int write_field(Buffer *b, const Field *f, PyObject *v) {
    int64_t i;
    switch (f->kind) {
    case K_INT32:
        if (int32_of(v, &i) < 0) return -1;
        if (i == 0) return 0;
        if (write_key(b, f->number, 0) < 0) return -1;
        return write_varint(b, (uint64_t)i);  /* a negative int32: ten bytes */
    case K_BOOL:
        if (!PyBool_Check(v)) {
            PyErr_Format(PyExc_TypeError, "expected a bool, got %.80s", Py_TYPE(v)->tp_name);
            return -1;
        }
        if (v == Py_False) return 0;
        if (write_key(b, f->number, 0) < 0) return -1;
        return write_varint(b, 1);
    case K_STRING:
        return write_string(b, f->number, v, 1);
    case K_MESSAGE:
        return write_nested(b, f->number, f->child, v);
    default:
        break;
    }
    if (!PyList_Check(v) && !PyTuple_Check(v)) {
        PyErr_Format(PyExc_TypeError, "expected a list, got %.80s", Py_TYPE(v)->tp_name);
        return -1;
    }
    PyObject *seq = v;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    if (n == 0) return 0;
    if (f->kind == K_REPEATED_INT32) {  /* packed: key, length, the varints */
        Py_ssize_t size = 0;
        for (Py_ssize_t k = 0; k < n; k++) {
            if (int32_of(items[k], &i) < 0) return -1;
            size += varint_size((uint64_t)i);
        }
        if (write_key(b, f->number, 2) < 0 || write_varint(b, (uint64_t)size) < 0 ||
            reserve(b, size) < 0)
            return -1;
        for (Py_ssize_t k = 0; k < n; k++) {
            int32_of(items[k], &i);
            put_varint(b, (uint64_t)i);
        }
        return 0;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        int rc = f->kind == K_REPEATED_STRING ? write_string(b, f->number, items[k], 0)
                                              : write_nested(b, f->number, f->child, items[k]);
        if (rc < 0) return -1;
    }
    return 0;
}

static int write_message(Buffer *b, const Schema *schema, PyObject *data) {
    if (!PyDict_Check(data)) {
        PyErr_Format(PyExc_TypeError, "expected a dict, got %.80s", Py_TYPE(data)->tp_name);
        return -1;
    }
    Py_ssize_t found = 0;
    for (Py_ssize_t k = 0; k < schema->count; k++) {
        const Field *f = &schema->fields[k];
        PyObject *v = PyDict_GetItemWithError(data, f->name);
        if (v == NULL) {
            if (PyErr_Occurred()) return -1;
            continue;
        }
        found++;
        if (v == Py_None) {
            PyErr_Format(PyExc_TypeError, "%U is None", f->name);
            return -1;
        }
        if (write_field(b, f, v) < 0) return -1;
    }
    if (found != PyDict_GET_SIZE(data)) {
        PyErr_SetString(PyExc_ValueError, "a key that is not a field of the message");
        return -1;
    }
    return 0;
}

/* -- google.protobuf.Struct ------------------------------------------------------ */

static int write_value(Buffer *b, PyObject *v, int depth);
static int write_struct_fields(Buffer *b, PyObject *dict, int depth);

/* A Value (a message) as field ``number``. */
static int write_value_field(Buffer *b, uint32_t number, PyObject *v, int depth) {
    Py_ssize_t at = open_field(b, number);
    if (at < 0 || write_value(b, v, depth) < 0) return -1;
    return close_field(b, at);
}

/* A Value's one member: null_value 1, number_value 2, string_value 3, bool_value 4,
 * struct_value 5, list_value 6 (a member of a oneof is written even when zero). */
static int write_value(Buffer *b, PyObject *v, int depth) {
    if (depth > 64) {
        PyErr_SetString(PyExc_ValueError, "nested too deep");
        return -1;
    }
    if (v == Py_None) {
        if (write_key(b, 1, 0) < 0) return -1;
        return write_varint(b, 0);
    }
    if (PyBool_Check(v)) {
        if (write_key(b, 4, 0) < 0) return -1;
        return write_varint(b, v == Py_True);
    }
    if (PyLong_Check(v) || PyFloat_Check(v)) {
        double d;
        if (PyLong_Check(v)) {  /* exact in a double up to 2**53; beyond, the library */
            int overflow = 0;
            long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (i == -1 && PyErr_Occurred()) return -1;
            if (overflow || i > (1LL << 53) || i < -(1LL << 53)) {
                PyErr_SetString(PyExc_ValueError, "an int a double cannot hold exactly");
                return -1;
            }
            d = (double)i;
        } else {
            d = PyFloat_AS_DOUBLE(v);
        }
        if (write_key(b, 2, 1) < 0 || reserve(b, 8) < 0) return -1;
        uint64_t bits;
        memcpy(&bits, &d, 8);
        for (int k = 0; k < 8; k++) b->data[b->len++] = (char)(bits >> (8 * k));
        return 0;
    }
    if (PyUnicode_Check(v)) return write_string(b, 3, v, 0);
    if (PyDict_Check(v)) {
        Py_ssize_t at = open_field(b, 5);
        if (at < 0 || write_struct_fields(b, v, depth + 1) < 0) return -1;
        return close_field(b, at);
    }
    if (PyList_Check(v) || PyTuple_Check(v)) {  /* ListValue: each item a Value (field 1) */
        Py_ssize_t at = open_field(b, 6);
        if (at < 0) return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        PyObject **items = PySequence_Fast_ITEMS(v);
        for (Py_ssize_t k = 0; k < n; k++) {
            if (write_value_field(b, 1, items[k], depth + 1) < 0) return -1;
        }
        return close_field(b, at);
    }
    PyErr_Format(PyExc_TypeError, "a %.80s in a Struct", Py_TYPE(v)->tp_name);
    return -1;
}

/* A Struct's fields (field 1: one map entry each, key 1 and value 2), in the
 * dict's order. */
static int write_struct_fields(Buffer *b, PyObject *dict, int depth) {
    if (!PyDict_Check(dict)) {
        PyErr_Format(PyExc_TypeError, "expected a dict, got %.80s", Py_TYPE(dict)->tp_name);
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "a Struct's keys are str");
            return -1;
        }
        Py_ssize_t at = open_field(b, 1);
        if (at < 0 || write_string(b, 1, key, 0) < 0 ||
            write_value_field(b, 2, value, depth + 1) < 0 || close_field(b, at) < 0)
            return -1;
    }
    return 0;
}

/* struct_bytes(data): google.protobuf.Struct of the dict data, serialized (its
 * entries in the dict's order; a map's order is not part of the wire format). */
/* The bytes written (NULL with the error set when ``failed``); frees the buffer. */
static PyObject *finish_buffer(Buffer *b, int failed) {
    PyObject *out = failed ? NULL : PyBytes_FromStringAndSize(b->data ? b->data : "", b->len);
    PyMem_Free(b->data);
    return out;
}

static PyObject *struct_bytes(PyObject *self, PyObject *data) {
    Buffer b = {NULL, 0, 0};
    return finish_buffer(&b, write_struct_fields(&b, data, 0) < 0);
}

/* The ``count`` field numbers in ``tuple``, into ``out`` (ValueError: not so). */
static int field_numbers(PyObject *tuple, uint32_t *out, int count) {
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) != count) {
        PyErr_Format(PyExc_ValueError, "expected a tuple of %d field numbers", count);
        return -1;
    }
    for (int k = 0; k < count; k++) {
        long n = PyLong_AsLong(PyTuple_GET_ITEM(tuple, k));
        if (n == -1 && PyErr_Occurred()) return -1;
        if (n < 1 || n > 536870911) {
            PyErr_Format(PyExc_ValueError, "%ld is not a field number", n);
            return -1;
        }
        out[k] = (uint32_t)n;
    }
    return 0;
}

/* event_message(numbers, seq, kind, data, text): a serialized Event (numbers: the
 * field numbers of seq, kind, data and text), its data Struct written from the
 * dict as struct_bytes does; what wire.event_bytes joined from five pieces. */
static PyObject *event_message(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "event_message() takes 5 arguments");
        return NULL;
    }
    uint32_t number[4];
    if (field_numbers(args[0], number, 4) < 0) return NULL;
    long long seq = PyLong_AsLongLong(args[1]);
    if (seq == -1 && PyErr_Occurred()) return NULL;
    Buffer b = {NULL, 0, 0};
    Py_ssize_t at = -1;
    int failed = (seq != 0 && (write_key(&b, number[0], 0) < 0 ||
                               write_varint(&b, (uint64_t)seq) < 0)) ||
                 write_string(&b, number[1], args[2], 1) < 0 ||
                 (at = open_field(&b, number[2])) < 0 ||
                 write_struct_fields(&b, args[3], 0) < 0 || close_field(&b, at) < 0 ||
                 write_string(&b, number[3], args[4], 1) < 0;
    return finish_buffer(&b, failed);
}

/* -- the Schema type ----------------------------------------------------------- */

static int schema_init(Schema *self, PyObject *args, PyObject *kwargs) {
    PyObject *spec;
    static char *keywords[] = {"fields", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!", keywords, &PyTuple_Type, &spec))
        return -1;
    Py_ssize_t count = PyTuple_GET_SIZE(spec);
    Field *fields = PyMem_Calloc((size_t)(count ? count : 1), sizeof(Field));
    if (fields == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = PyTuple_GET_ITEM(spec, k), *name, *child;
        unsigned int number;
        int kind;
        if (!PyArg_ParseTuple(item, "UIiO", &name, &number, &kind, &child)) goto fail;
        if (kind < K_INT32 || kind > K_REPEATED_MESSAGE || number == 0 || number >= (1u << 29)) {
            PyErr_SetString(PyExc_ValueError, "a field of an unknown kind or number");
            goto fail;
        }
        int nested = kind == K_MESSAGE || kind == K_REPEATED_MESSAGE;
        if (nested != (child != Py_None) ||
            (nested && !PyObject_TypeCheck(child, &SchemaType))) {
            PyErr_SetString(PyExc_TypeError, "a message field needs its Schema, no other field has one");
            goto fail;
        }
        if (k > 0 && number <= fields[k - 1].number) {
            PyErr_SetString(PyExc_ValueError, "fields must come by increasing number");
            goto fail;
        }
        fields[k].name = name;  /* borrowed: spec, kept below, holds it */
        fields[k].number = number;
        fields[k].kind = kind;
        fields[k].child = nested ? (Schema *)child : NULL;
    }
    PyMem_Free(self->fields);
    self->fields = fields;
    self->count = count;
    Py_XSETREF(self->spec, Py_NewRef(spec));
    return 0;
fail:
    PyMem_Free(fields);
    return -1;
}

static int schema_traverse(Schema *self, visitproc visit, void *arg) {
    Py_VISIT(self->spec);
    return 0;
}

static int schema_clear(Schema *self) {
    Py_CLEAR(self->spec);
    return 0;
}

static void schema_dealloc(Schema *self) {
    PyObject_GC_UnTrack(self);
    schema_clear(self);
    PyMem_Free(self->fields);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *schema_encode(Schema *self, PyObject *data) {
    Buffer b = {NULL, 0, 0};
    return finish_buffer(&b, write_message(&b, self, data) < 0);
}

/* One part's bytes: the kept ones when its slot holds this version, else the
 * part built and encoded (and kept when it has a version). The part is built by
 * build() when seat is NULL (a part of encode_parts), else by build(seat, slot)
 * (encode_slots). New reference, or NULL. */
static PyObject *slot_bytes(Schema *self, PyObject *slots, PyObject *slot, PyObject *version,
                            PyObject *build, PyObject *seat) {
    if (version != Py_None) {
        PyObject *kept = PyDict_GetItemWithError(slots, slot);  /* borrowed */
        if (kept == NULL && PyErr_Occurred()) return NULL;
        if (kept != NULL && PyTuple_Check(kept) && PyTuple_GET_SIZE(kept) == 2 &&
            PyBytes_Check(PyTuple_GET_ITEM(kept, 1))) {
            Py_INCREF(kept);  /* a version's __eq__ is Python code: it may change slots */
            PyObject *was = PyTuple_GET_ITEM(kept, 0);
            int same = was == version ? 1 : PyObject_RichCompareBool(was, version, Py_EQ);
            PyObject *bytes = same > 0 ? Py_NewRef(PyTuple_GET_ITEM(kept, 1)) : NULL;
            Py_DECREF(kept);
            if (same < 0) return NULL;
            if (same) return bytes;
        }
    }
    PyObject *data;
    if (seat == NULL) {
        data = PyObject_CallNoArgs(build);
    } else {
        PyObject *args[2] = {seat, slot};
        data = PyObject_Vectorcall(build, args, 2, NULL);
    }
    if (data == NULL) return NULL;
    Buffer b = {NULL, 0, 0};
    int failed = write_message(&b, self, data) < 0;
    Py_DECREF(data);
    PyObject *encoded = finish_buffer(&b, failed);
    if (encoded == NULL || version == Py_None) return encoded;
    PyObject *entry = PyTuple_Pack(2, version, encoded);
    if (entry == NULL || PyDict_SetItem(slots, slot, entry) < 0) {
        Py_XDECREF(entry);
        Py_DECREF(encoded);
        return NULL;
    }
    Py_DECREF(entry);
    return encoded;
}

/* The field ``number`` (the Observation's member) holding the concatenation of
 * the parts' messages, each re-encoded only when its version changed: each item
 * of ``parts`` is a (slot, version, build) tuple when seat is NULL, else a
 * (slot, version) tuple built by build(seat, slot). */
static PyObject *encode_each_part(Schema *self, PyObject *slots, PyObject *parts,
                                  PyObject *number_object, PyObject *build, PyObject *seat) {
    if (!PyDict_Check(slots) || (!PyList_Check(parts) && !PyTuple_Check(parts))) {
        PyErr_SetString(PyExc_TypeError, "parts: a dict of kept parts, a list of parts");
        return NULL;
    }
    long number = PyLong_AsLong(number_object);
    if (number == -1 && PyErr_Occurred()) return NULL;
    if (number <= 0 || number >= (1L << 29)) {
        PyErr_SetString(PyExc_ValueError, "not a field number");
        return NULL;
    }
    Py_ssize_t width = seat == NULL ? 3 : 2;
    Buffer b = {NULL, 0, 0};
    Py_ssize_t at = open_field(&b, (uint32_t)number);
    int failed = at < 0;
    /* Held, and the length read again each time: a build is Python code. */
    for (Py_ssize_t k = 0; !failed && k < PySequence_Fast_GET_SIZE(parts); k++) {
        PyObject *part = Py_NewRef(PySequence_Fast_GET_ITEM(parts, k));
        PyObject *encoded = NULL;
        if (!PyTuple_Check(part) || PyTuple_GET_SIZE(part) != width) {
            PyErr_SetString(PyExc_TypeError, seat == NULL
                            ? "a part is a (slot, version, build) tuple"
                            : "a slot is a (slot, version) tuple");
        } else {
            encoded = slot_bytes(self, slots, PyTuple_GET_ITEM(part, 0),
                                 PyTuple_GET_ITEM(part, 1),
                                 seat == NULL ? PyTuple_GET_ITEM(part, 2) : build, seat);
        }
        Py_DECREF(part);
        failed = encoded == NULL ||
                 write_raw(&b, PyBytes_AS_STRING(encoded), PyBytes_GET_SIZE(encoded)) < 0;
        Py_XDECREF(encoded);
    }
    if (!failed) failed = close_field(&b, at) < 0;
    return finish_buffer(&b, failed);
}

/* encode_parts(slots, parts, number): wire.ObservationEncoder.encode's loop. */
static PyObject *schema_encode_parts(Schema *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "encode_parts() takes 3 arguments");
        return NULL;
    }
    return encode_each_part(self, args[0], args[1], args[2], NULL, NULL);
}

/* encode_slots(slots, parts, build, seat, number): wire.ObservationEncoder.encode_slots's
 * loop, which makes nothing for a kept part (no build per part). */
static PyObject *schema_encode_slots(Schema *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "encode_slots() takes 5 arguments");
        return NULL;
    }
    return encode_each_part(self, args[0], args[1], args[4], args[2], args[3]);
}

static PyMethodDef schema_methods[] = {
    {"encode", (PyCFunction)schema_encode, METH_O,
     "encode(data): the message of the dict data, serialized"},
    {"encode_parts", (PyCFunction)(void (*)(void))schema_encode_parts, METH_FASTCALL,
     "encode_parts(slots, parts, number): field number holding the parts' messages"},
    {"encode_slots", (PyCFunction)(void (*)(void))schema_encode_slots, METH_FASTCALL,
     "encode_slots(slots, parts, build, seat, number): encode_parts, each part built "
     "by build(seat, slot)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SchemaType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "twistarena.wire._encode.Schema",
    .tp_doc = PyDoc_STR("Schema(fields): one message type's fields, (name, number, kind,"
                        " child Schema or None) by increasing number; encode(dict) -> bytes"),
    .tp_basicsize = sizeof(Schema),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)schema_init,
    .tp_dealloc = (destructor)schema_dealloc,
    .tp_traverse = (traverseproc)schema_traverse,
    .tp_clear = (inquiry)schema_clear,
    .tp_methods = schema_methods,
};


/* -- a DecisionRequest's frame ------------------------------------------------ */

/* The fields of a DecisionRequest around its observation and legal actions, and
 * the ServerMessage around it, written in one buffer: the same bytes as
 * wire.decision_body and wire.decision_message, which joined a dozen small bytes
 * objects per request. The field numbers come from the descriptors (Python). */

enum { F_DECISION_ID, F_SEAT, F_OBSERVATION, F_DEADLINE, F_TIME_LEFT, F_ACCEPTED, F_EVENTS,
       F_SM_DECISION, F_TS_SECONDS, F_TS_NANOS, F_COUNT };

typedef struct {
    PyObject_HEAD
    uint32_t number[F_COUNT];
} Frames;

static PyTypeObject FramesType;

static int frames_init(Frames *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"numbers", NULL};
    PyObject *numbers;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", keywords, &numbers)) return -1;
    return field_numbers(numbers, self->number, F_COUNT);
}

/* A bytes-like argument's bytes (bytes only: what the callers pass). */
static int bytes_of(PyObject *o, const char **data, Py_ssize_t *size) {
    if (!PyBytes_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected bytes, got %.80s", Py_TYPE(o)->tp_name);
        return -1;
    }
    *data = PyBytes_AS_STRING(o);
    *size = PyBytes_GET_SIZE(o);
    return 0;
}

static int write_raw(Buffer *b, const char *data, Py_ssize_t size) {
    if (reserve(b, size) < 0) return -1;
    memcpy(b->data + b->len, data, (size_t)size);
    b->len += size;
    return 0;
}

static int write_bytes_field(Buffer *b, uint32_t number, PyObject *o) {
    const char *data;
    Py_ssize_t size;
    if (bytes_of(o, &data, &size) < 0 || write_key(b, number, 2) < 0 ||
        write_varint(b, (uint64_t)size) < 0)
        return -1;
    return write_raw(b, data, size);
}

/* A varint field, left out when 0 (proto3); negative: 64-bit two's complement. */
static int write_varint_field(Buffer *b, uint32_t number, long long v) {
    if (v == 0) return 0;
    if (write_key(b, number, 0) < 0) return -1;
    return write_varint(b, (uint64_t)v);
}

/* body(match_id_field, decision_id, seat, observation, legal_actions, deadline_ns) */
static PyObject *frames_body(Frames *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "body() takes 6 arguments");
        return NULL;
    }
    long long decision_id = PyLong_AsLongLong(args[1]);
    if (decision_id == -1 && PyErr_Occurred()) return NULL;
    long long seat = PyLong_AsLongLong(args[2]);
    if (seat == -1 && PyErr_Occurred()) return NULL;
    long long deadline_ns = PyLong_AsLongLong(args[5]);
    if (deadline_ns == -1 && PyErr_Occurred()) return NULL;
    if (deadline_ns < 0) {
        PyErr_SetString(PyExc_ValueError, "deadline_ns must not be negative");
        return NULL;
    }
    PyObject *legal = args[4];
    if (!PyList_Check(legal) && !PyTuple_Check(legal)) {
        PyErr_Format(PyExc_TypeError, "expected a list, got %.80s", Py_TYPE(legal)->tp_name);
        return NULL;
    }
    const char *data;
    Py_ssize_t size;
    Buffer b = {NULL, 0, 0};
    int failed = bytes_of(args[0], &data, &size) < 0 || reserve(&b, 512) < 0 ||
                 write_raw(&b, data, size) < 0 ||
                 write_varint_field(&b, self->number[F_DECISION_ID], decision_id) < 0 ||
                 write_varint_field(&b, self->number[F_SEAT], seat) < 0 ||
                 write_bytes_field(&b, self->number[F_OBSERVATION], args[3]) < 0;
    Py_ssize_t n = failed ? 0 : PySequence_Fast_GET_SIZE(legal);
    PyObject **items = failed ? NULL : PySequence_Fast_ITEMS(legal);
    for (Py_ssize_t k = 0; k < n && !failed; k++)
        failed = bytes_of(items[k], &data, &size) < 0 || write_raw(&b, data, size) < 0;
    if (!failed) {
        Py_ssize_t at = open_field(&b, self->number[F_DEADLINE]);
        failed = at < 0 ||
                 write_varint_field(&b, self->number[F_TS_SECONDS],
                                    deadline_ns / 1000000000LL) < 0 ||
                 write_varint_field(&b, self->number[F_TS_NANOS],
                                    deadline_ns % 1000000000LL) < 0 ||
                 close_field(&b, at) < 0;
    }
    return finish_buffer(&b, failed);
}

/* message(body, time_left_ms, accepted, events): the ServerMessage(decision=...). */
static PyObject *frames_message(Frames *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "message() takes 4 arguments");
        return NULL;
    }
    long long left = PyLong_AsLongLong(args[1]);
    if (left == -1 && PyErr_Occurred()) return NULL;
    PyObject *events = args[3];
    if (!PyList_Check(events) && !PyTuple_Check(events)) {
        PyErr_Format(PyExc_TypeError, "expected a list, got %.80s", Py_TYPE(events)->tp_name);
        return NULL;
    }
    const char *data;
    Py_ssize_t size;
    Buffer b = {NULL, 0, 0};
    Py_ssize_t at = -1;
    int failed = bytes_of(args[0], &data, &size) < 0 || reserve(&b, size + 64) < 0 ||
                 (at = open_field(&b, self->number[F_SM_DECISION])) < 0 ||
                 write_raw(&b, data, size) < 0 ||
                 write_varint_field(&b, self->number[F_TIME_LEFT], left) < 0 ||
                 bytes_of(args[2], &data, &size) < 0 ||
                 (size > 0 && write_bytes_field(&b, self->number[F_ACCEPTED], args[2]) < 0);
    Py_ssize_t n = failed ? 0 : PySequence_Fast_GET_SIZE(events);
    PyObject **items = failed ? NULL : PySequence_Fast_ITEMS(events);
    for (Py_ssize_t k = 0; k < n && !failed; k++)
        failed = write_bytes_field(&b, self->number[F_EVENTS], items[k]) < 0;
    if (!failed) failed = close_field(&b, at) < 0;
    return finish_buffer(&b, failed);
}

static PyMethodDef frames_methods[] = {
    {"body", (PyCFunction)(void (*)(void))frames_body, METH_FASTCALL,
     "body(match_id_field, decision_id, seat, observation, legal_actions, deadline_ns)"},
    {"message", (PyCFunction)(void (*)(void))frames_message, METH_FASTCALL,
     "message(body, time_left_ms, accepted, events)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FramesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "twistarena.wire._encode.DecisionFrames",
    .tp_doc = PyDoc_STR("DecisionFrames(numbers): a DecisionRequest's fields around its"
                        " observation, and its ServerMessage, written in one buffer"),
    .tp_basicsize = sizeof(Frames),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)frames_init,
    .tp_methods = frames_methods,
};

static PyMethodDef module_methods[] = {
    {"struct_bytes", (PyCFunction)struct_bytes, METH_O,
     "struct_bytes(data): the google.protobuf.Struct of the dict data, serialized"},
    {"event_message", (PyCFunction)(void (*)(void))event_message, METH_FASTCALL,
     "event_message(numbers, seq, kind, data, text): a serialized Event"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_encode",
    .m_doc = "Per-game protobuf messages and Structs serialized from the engine's dicts"
             " (see twistarena.wire.message_encoder and event_bytes).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__encode(void) {
    if (PyType_Ready(&SchemaType) < 0 || PyType_Ready(&FramesType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Schema", (PyObject *)&SchemaType) < 0 ||
        PyModule_AddObjectRef(m, "DecisionFrames", (PyObject *)&FramesType) < 0 ||
        PyModule_AddIntConstant(m, "INT32", K_INT32) < 0 ||
        PyModule_AddIntConstant(m, "BOOL", K_BOOL) < 0 ||
        PyModule_AddIntConstant(m, "STRING", K_STRING) < 0 ||
        PyModule_AddIntConstant(m, "MESSAGE", K_MESSAGE) < 0 ||
        PyModule_AddIntConstant(m, "REPEATED_INT32", K_REPEATED_INT32) < 0 ||
        PyModule_AddIntConstant(m, "REPEATED_STRING", K_REPEATED_STRING) < 0 ||
        PyModule_AddIntConstant(m, "REPEATED_MESSAGE", K_REPEATED_MESSAGE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
