/* twistarena.rl._native: the games' observation tensors and action masks
 * written in compiled code.
 *
 * A learner asks for a tensor at every step, and writing one in Python costs
 * several engine decisions; here it costs a fraction of one. The Python
 * encoders (tensors.py, from the observation dict) stay the definition of a
 * tensor: tests/rl/test_live.py holds these to them at every decision of many
 * random matches, and tests/rl/test_native.py gives these bad input.
 */
#include "native.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#define DEFINE_NAME(n) PyObject *NAME_##n = NULL;
NAMES(DEFINE_NAME)
#undef DEFINE_NAME

static int init_names(void) {
#define INTERN(n) \
    if ((NAME_##n = PyUnicode_InternFromString(#n)) == NULL) return -1;
    NAMES(INTERN)
#undef INTERN
    return 0;
}

int fields_are(const Source *src, Py_ssize_t count) {
    if (PyTuple_GET_SIZE(src->fields) != count) {
        PyErr_Format(PyExc_TypeError, "the writer reads %zd fields, the getter gave %zd", count,
                     PyTuple_GET_SIZE(src->fields));
        return -1;
    }
    return 0;
}

int bit_flags(Tensor *t, long base, PyObject *bits, const Ints *map) {
    int failed = 0;
    long v = as_long(bits, &failed);
    if (failed) return -1;
    if (v < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative bitmask");
        return -1;
    }
    for (long b = 0; v != 0; b++, v >>= 1) {
        if (!(v & 1)) continue;
        if (map != NULL && b >= map->len) break;  /* only bits the map places are shown */
        if (put(t, base + (map != NULL ? map->v[b] : b), 1.0) < 0) return -1;
    }
    return 0;
}

int bit_count(PyObject *bits, int *failed) {
    long v = as_long(bits, failed);
    if (*failed) return 0;
    return __builtin_popcountl((unsigned long)v);
}

long position(PyObject *names, PyObject *value) {
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyTuple_GET_ITEM(names, i) == value) return (long)i;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(names, i), value, Py_EQ);
        if (eq < 0) return -1;
        if (eq) return (long)i;
    }
    PyErr_Format(PyExc_ValueError, "%R is not one of %R", value, names);
    return -1;
}

/* -- SeatTensors: one match's seats' tensors ------------------------------------- */

#define MAX_LAYOUT 256

typedef struct {
    PyObject_HEAD
    PyObject *state;
    PyObject *fields; /* state -> the tuple of the attributes its writer reads */
    PyObject *tables;
    Writer write;
    long n;
    npy_intp size;
    long layout[MAX_LAYOUT];
    Ints ints[MAX_TABLES];
} SeatTensors;

/* A tuple of ints as C longs (PyMem_Malloc'd into *out). */
static int ints_of(PyObject *tuple, Ints *out) {
    PyMem_Free((void *)out->v);
    out->v = NULL;
    out->len = 0;
    Py_ssize_t len = PyTuple_GET_SIZE(tuple);
    long *v = PyMem_Malloc(sizeof(long) * (size_t)(len > 0 ? len : 1));
    if (v == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int failed = 0;
    for (Py_ssize_t j = 0; j < len; j++) v[j] = as_long(PyTuple_GET_ITEM(tuple, j), &failed);
    out->v = v;
    out->len = len;
    return failed ? -1 : 0;
}

/* tables[i] as C longs when it is a non-empty tuple of ints (else an empty Ints). */
static int table_ints(SeatTensors *self) {
    Py_ssize_t count = PyTuple_GET_SIZE(self->tables);
    if (count > MAX_TABLES) {
        PyErr_SetString(PyExc_ValueError, "too many tables");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *tab = PyTuple_GET_ITEM(self->tables, i);
        PyMem_Free((void *)self->ints[i].v);
        self->ints[i].v = NULL;
        self->ints[i].len = 0;
        if (!PyTuple_Check(tab) || PyTuple_GET_SIZE(tab) == 0 ||
            !PyLong_Check(PyTuple_GET_ITEM(tab, 0)))
            continue;
        if (ints_of(tab, &self->ints[i]) < 0) return -1;
    }
    return 0;
}

static int seat_tensors_init(SeatTensors *self, PyObject *args, PyObject *kwargs) {
    const char *game;
    PyObject *state, *fields, *layout, *tables;
    Py_ssize_t size;
    static char *keywords[] = {"game", "state", "fields", "size", "layout", "tables", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOnO!O!", keywords, &game, &state,
                                     &fields, &size, &PyTuple_Type, &layout, &PyTuple_Type,
                                     &tables))
        return -1;
    if (!PyCallable_Check(fields)) {
        PyErr_SetString(PyExc_TypeError, "fields must be callable (state -> tuple)");
        return -1;
    }
    if (strcmp(game, "twisted") == 0) self->write = write_twisted;
    else if (strcmp(game, "twhist") == 0) self->write = write_twhist;
    else if (strcmp(game, "tricky_twist") == 0) self->write = write_tricky_twist;
    else {
        PyErr_Format(PyExc_ValueError, "no compiled encoder for %s", game);
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(layout);
    if (count > MAX_LAYOUT || size < 0) {
        PyErr_SetString(PyExc_ValueError, "layout too long or negative size");
        return -1;
    }
    int failed = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        self->layout[i] = as_long(PyTuple_GET_ITEM(layout, i), &failed);
        if (failed) return -1;
    }
    PyObject *n = PyObject_GetAttr(state, NAME_num_players);
    if (n == NULL) return -1;
    self->n = as_long(n, &failed);
    Py_DECREF(n);
    if (failed) return -1;
    if (self->n < 1 || self->n > 8) {
        PyErr_SetString(PyExc_ValueError, "1 to 8 players");
        return -1;
    }
    Py_XSETREF(self->state, Py_NewRef(state));
    Py_XSETREF(self->fields, Py_NewRef(fields));
    Py_XSETREF(self->tables, Py_NewRef(tables));
    self->size = size;
    return table_ints(self);
}

static void seat_tensors_dealloc(SeatTensors *self) {
    Py_XDECREF(self->state);
    Py_XDECREF(self->fields);
    Py_XDECREF(self->tables);
    for (int i = 0; i < MAX_TABLES; i++) PyMem_Free((void *)self->ints[i].v);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *seat_tensors_tensor(SeatTensors *self, PyObject *arg) {
    int failed = 0;
    long me = as_long(arg, &failed);
    if (failed) return NULL;
    if (me < 0 || me >= self->n) {
        PyErr_Format(PyExc_ValueError, "no seat %ld in a match of %ld", me, self->n);
        return NULL;
    }
    /* one call of a Python getter reads the state's attributes: the interpreter's
     * specialized attribute loads are cheaper than getattr from here, and never
     * make CPython build a __dict__ for the state (which would slow every
     * attribute access of the engine's own code from then on) */
    PyObject *fields = PyObject_CallOneArg(self->fields, self->state);
    if (fields == NULL) return NULL;
    if (!PyTuple_Check(fields)) {
        Py_DECREF(fields);
        PyErr_SetString(PyExc_TypeError, "the fields getter must return a tuple");
        return NULL;
    }
    PyObject *out = PyArray_ZEROS(1, &self->size, NPY_FLOAT32, 0);
    int rc = -1;
    if (out != NULL) {
        Tensor t = {(float *)PyArray_DATA((PyArrayObject *)out), self->size};
        Source src = {self->state, fields, me, self->n, self->layout, self->tables, self->ints};
        rc = self->write(&t, &src);
    }
    Py_DECREF(fields);
    if (rc < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    return out;
}

/* -- masks ------------------------------------------------------------------------- */

/* A new int8 array of ``size`` with 1 at index[id] (a tuple) for each id of
 * ``ids`` (IndexError for an id that is not in the space). */
static PyObject *make_mask(PyObject *ids, PyObject *index, npy_intp size) {
    PyObject *seq = PySequence_Fast(ids, "legal ids must be a sequence");
    if (seq == NULL) return NULL;
    PyObject *out = PyArray_ZEROS(1, &size, NPY_INT8, 0);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    npy_int8 *data = (npy_int8 *)PyArray_DATA((PyArrayObject *)out);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int failed = 0;
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        long id = as_long(PySequence_Fast_GET_ITEM(seq, i), &failed);
        long place = failed ? -1 : lookup(index, id, &failed);
        if (!failed && (place < 0 || place >= size)) {
            PyErr_Format(PyExc_IndexError, "%ld is not an action id of this space", id);
            failed = 1;
        }
        if (!failed) data[place] = 1;
    }
    Py_DECREF(seq);
    if (failed) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* A mask's space as the callers give it: ``index`` a tuple (engine id -> mask
 * index) and ``size`` an int, not negative, into *out; -1 with an exception. */
static int mask_space(PyObject *index, PyObject *size, npy_intp *out) {
    if (!PyTuple_Check(index)) {
        PyErr_SetString(PyExc_TypeError, "a mask's index must be a tuple");
        return -1;
    }
    int failed = 0;
    *out = (npy_intp)as_long(size, &failed);
    if (failed) return -1;
    if (*out < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative mask size");
        return -1;
    }
    return 0;
}

/* mask(legal_ids, index, size): an int8 array of ``size`` with 1 at index[id]
 * for each legal id (``index``: a tuple, engine id -> mask index). */
static PyObject *mask(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    npy_intp size;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "mask(legal_ids, index, size)");
        return NULL;
    }
    if (mask_space(args[1], args[2], &size) < 0) return NULL;
    return make_mask(args[0], args[1], size);
}


/* observation(index, size, seat, legal_ids): PettingZoo's observation of the
 * seat, the dict of its tensor and its action mask (as mask(legal_ids, index,
 * size) makes it), in one call (an environment asks for one every step; the
 * space comes first so that functools.partial can bind it). */
static PyObject *seat_tensors_observation(SeatTensors *self, PyObject *const *args,
                                          Py_ssize_t nargs) {
    npy_intp size;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "observation(index, size, seat, legal_ids)");
        return NULL;
    }
    if (mask_space(args[0], args[1], &size) < 0) return NULL;
    PyObject *tensor = seat_tensors_tensor(self, args[2]);
    if (tensor == NULL) return NULL;
    PyObject *mask = make_mask(args[3], args[0], size);
    PyObject *out = mask == NULL ? NULL : PyDict_New();
    if (out == NULL || PyDict_SetItem(out, NAME_observation, tensor) < 0 ||
        PyDict_SetItem(out, NAME_action_mask, mask) < 0)
        Py_CLEAR(out);
    Py_DECREF(tensor);
    Py_XDECREF(mask);
    return out;
}

static PyMethodDef seat_tensors_methods[] = {
    {"tensor", (PyCFunction)seat_tensors_tensor, METH_O,
     "tensor(seat): the seat's tensor of the state as it is now (a new float32 array)"},
    {"observation", (PyCFunction)(void (*)(void))seat_tensors_observation, METH_FASTCALL,
     "observation(index, size, seat, legal_ids): {'observation': tensor(seat),"
     " 'action_mask': mask(legal_ids, index, size)}"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SeatTensorsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "twistarena.rl._native.SeatTensors",
    .tp_doc = PyDoc_STR("SeatTensors(game, state, fields, size, layout, tables): a match's"
                        " seats' tensors, each written anew from the state by tensor(seat)"),
    .tp_basicsize = sizeof(SeatTensors),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)seat_tensors_init,
    .tp_dealloc = (destructor)seat_tensors_dealloc,
    .tp_methods = seat_tensors_methods,
};

static PyMethodDef methods[] = {
    {"mask", (PyCFunction)(void (*)(void))mask, METH_FASTCALL,
     "mask(legal_ids, index, size): the int8 action mask of the legal ids"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The games' observation tensors and action masks in compiled code"
             " (see twistarena.rl.native).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    import_array();
    if (init_names() < 0) return NULL;
    if (PyType_Ready(&SeatTensorsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "SeatTensors", (PyObject *)&SeatTensorsType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
