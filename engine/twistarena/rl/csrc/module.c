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

SmallInts small_ints = {0, 0, 0};

#define SMALL_MAX 256

/* small_ints where this interpreter keeps the small ints in one array, evenly
 * spaced a power of two apart (each is checked); else it stays empty and every
 * int is read through PyLong_AsLong. The objects live as long as the
 * interpreter: CPython never frees them. */
static void find_small_ints(void) {
    PyObject *first = PyLong_FromLong(SMALL_MIN), *second = PyLong_FromLong(SMALL_MIN + 1);
    if (first == NULL || second == NULL) {
        Py_XDECREF(first);
        Py_XDECREF(second);
        PyErr_Clear();
        return;
    }
    uintptr_t base = (uintptr_t)first, step = (uintptr_t)second - base;
    Py_DECREF(first);
    Py_DECREF(second);
    int shift = 0;
    while (shift < 16 && ((uintptr_t)1 << shift) != step) shift++;
    if (shift == 16) return;
    for (long v = SMALL_MIN; v <= SMALL_MAX; v++) {
        PyObject *o = PyLong_FromLong(v);
        if (o == NULL) {
            PyErr_Clear();
            return;
        }
        int in_place = (uintptr_t)o == base + ((uintptr_t)(v - SMALL_MIN) << shift);
        Py_DECREF(o);
        if (!in_place) return;
    }
    small_ints.first = base;
    small_ints.shift = shift;
    small_ints.span = (uintptr_t)(SMALL_MAX - SMALL_MIN + 1) << shift;
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
    if (names == NULL || value == NULL) return -1;
    if (!PyTuple_Check(names)) {
        PyErr_Format(PyExc_TypeError, "expected a tuple of names, got %.100s",
                     Py_TYPE(names)->tp_name);
        return -1;
    }
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

long as_long_slow(PyObject *o, int *failed) {
    if (o == NULL) {
        *failed = 1;
        return -1;
    }
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected an int, got %.100s", Py_TYPE(o)->tp_name);
        *failed = 1;
        return -1;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) *failed = 1;
    return v;
}

long index_long(PyObject *o, int *failed) {
    if (PyLong_Check(o)) return as_long(o, failed);
    PyObject *i = PyNumber_Index(o);
    if (i == NULL) {
        *failed = 1;
        return -1;
    }
    long v = as_long(i, failed);
    Py_DECREF(i);
    return v;
}

/* The games with a writer (csrc/<game>.c). */
static const Game *const GAMES[] = {&TWISTED, &TWHIST, &TRICKY_TWIST};

/* -- SeatTensors: one match's seats' tensors ------------------------------------- */

#define MAX_LAYOUT 256

typedef struct {
    PyObject_HEAD
    PyObject *state;
    PyObject *fields; /* state -> the tuple of the attributes its writer reads */
    PyObject *tables;
    const Game *game; /* NULL: not made yet */
    long n;
    npy_intp size;
    long layout[MAX_LAYOUT];
    Ints ints[MAX_TABLES];
} SeatTensors;

/* A tuple of ints as C longs (PyMem_Malloc'd into *out, freeing what a failed
 * attempt to make the SeatTensors left there). */
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
    for (Py_ssize_t j = 0; j < len && !failed; j++)
        v[j] = as_long(PyTuple_GET_ITEM(tuple, j), &failed);
    out->v = v;
    out->len = len;
    return failed ? -1 : 0;
}

static const char *const TABLE_KINDS[] = {
    [TABLE_INTS] = "a tuple of ints", [TABLE_TUPLE] = "a tuple", [TABLE_DICT] = "a dict",
    [TABLE_INT] = "an int", [TABLE_ANY] = "anything"};

/* Whether ``tab`` is what ``spec`` says (else TypeError naming the table). */
static int table_is(const Game *game, const TableSpec *spec, PyObject *tab) {
    int ok = 1;
    switch (spec->kind) {
    case TABLE_INTS:
        ok = PyTuple_Check(tab);
        for (Py_ssize_t j = 0; ok && j < PyTuple_GET_SIZE(tab); j++)
            ok = PyLong_Check(PyTuple_GET_ITEM(tab, j));
        break;
    case TABLE_TUPLE: ok = PyTuple_Check(tab); break;
    case TABLE_DICT: ok = PyDict_Check(tab); break;
    case TABLE_INT: ok = PyLong_Check(tab); break;
    case TABLE_ANY: break;
    }
    if (!ok)
        PyErr_Format(PyExc_TypeError, "the %s writer's table %s must be %s, got %.100s",
                     game->game, spec->name, TABLE_KINDS[spec->kind], Py_TYPE(tab)->tp_name);
    return ok ? 0 : -1;
}

/* The tables as the game's writer reads them: as many as it names, each of its
 * kind; the tuples of ints also as C longs. */
static int take_tables(SeatTensors *self, const Game *game, PyObject *tables) {
    if (PyTuple_GET_SIZE(tables) != game->table_count) {
        PyErr_Format(PyExc_ValueError, "the %s writer reads %zd tables, got %zd", game->game,
                     game->table_count, PyTuple_GET_SIZE(tables));
        return -1;
    }
    for (Py_ssize_t i = 0; i < game->table_count; i++) {
        PyObject *tab = PyTuple_GET_ITEM(tables, i);
        if (table_is(game, &game->tables[i], tab) < 0) return -1;
        if (game->tables[i].kind == TABLE_INTS && ints_of(tab, &self->ints[i]) < 0) return -1;
    }
    return 0;
}

/* The layout's segment starts: one per segment of the game's writer and one
 * per seat segment for every seat, each an int (else an error). */
static int take_layout(SeatTensors *self, const Game *game, PyObject *layout) {
    Py_ssize_t count = PyTuple_GET_SIZE(layout);
    Py_ssize_t wanted = game->segment_count + game->seat_segment_count * self->n;
    if (count != wanted) {
        PyErr_Format(PyExc_ValueError, "the %s writer reads %zd segment starts for %ld players,"
                     " got %zd", game->game, wanted, self->n, count);
        return -1;
    }
    int failed = 0;
    for (Py_ssize_t i = 0; i < count && !failed; i++)
        self->layout[i] = as_long(PyTuple_GET_ITEM(layout, i), &failed);
    return failed ? -1 : 0;
}

static int seat_tensors_init(SeatTensors *self, PyObject *args, PyObject *kwargs) {
    const char *name;
    PyObject *state, *fields, *layout, *tables;
    Py_ssize_t size;
    static char *keywords[] = {"game", "state", "fields", "size", "layout", "tables", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOnO!O!", keywords, &name, &state,
                                     &fields, &size, &PyTuple_Type, &layout, &PyTuple_Type,
                                     &tables))
        return -1;
    if (self->game != NULL) {  /* a writer may be running on what it holds */
        PyErr_SetString(PyExc_TypeError, "SeatTensors is made once");
        return -1;
    }
    if (!PyCallable_Check(fields)) {
        PyErr_SetString(PyExc_TypeError, "fields must be callable (state -> tuple)");
        return -1;
    }
    const Game *game = NULL;
    for (Py_ssize_t i = 0; i < COUNT_OF(GAMES); i++) {
        if (strcmp(name, GAMES[i]->game) == 0) game = GAMES[i];
    }
    if (game == NULL) {
        PyErr_Format(PyExc_ValueError, "no compiled encoder for %s", name);
        return -1;
    }
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "a negative size");
        return -1;
    }
    PyObject *n = PyObject_GetAttr(state, NAME_num_players);
    if (n == NULL) return -1;
    int failed = 0;
    self->n = as_long(n, &failed);
    Py_DECREF(n);
    if (failed) return -1;
    if (self->n < 1 || self->n > 8 ||
        game->segment_count + game->seat_segment_count * self->n > MAX_LAYOUT) {
        PyErr_SetString(PyExc_ValueError, "1 to 8 players");
        return -1;
    }
    if (take_layout(self, game, layout) < 0 || take_tables(self, game, tables) < 0) return -1;
    self->state = Py_NewRef(state);
    self->fields = Py_NewRef(fields);
    self->tables = Py_NewRef(tables);
    self->size = size;
    self->game = game;
    return 0;
}

/* The Python objects held are the state, the fields getter and the tables: any
 * of them may lead back here (a getter or a state that keeps its environment). */
static int seat_tensors_traverse(SeatTensors *self, visitproc visit, void *arg) {
    Py_VISIT(self->state);
    Py_VISIT(self->fields);
    Py_VISIT(self->tables);
    return 0;
}

static int seat_tensors_clear(SeatTensors *self) {
    Py_CLEAR(self->state);
    Py_CLEAR(self->fields);
    Py_CLEAR(self->tables);
    return 0;
}

static void seat_tensors_dealloc(SeatTensors *self) {
    PyObject_GC_UnTrack(self);
    seat_tensors_clear(self);
    for (int i = 0; i < MAX_TABLES; i++) PyMem_Free((void *)self->ints[i].v);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Seat ``arg``'s tensor of the state as it is now, written over ``data`` (``size``
 * floats, all zero already): 0, or -1 with an exception. */
static int write_seat(SeatTensors *self, PyObject *arg, float *data) {
    if (self->game == NULL || self->fields == NULL) {
        PyErr_SetString(PyExc_TypeError, "SeatTensors was not made (or was cleared)");
        return -1;
    }
    int failed = 0;
    long me = index_long(arg, &failed);
    if (failed) return -1;
    if (me < 0 || me >= self->n) {
        PyErr_Format(PyExc_ValueError, "no seat %ld in a match of %ld", me, self->n);
        return -1;
    }
    /* one call of a Python getter reads the state's attributes: the interpreter's
     * specialized attribute loads are cheaper than getattr from here, and never
     * make CPython build a __dict__ for the state (which would slow every
     * attribute access of the engine's own code from then on) */
    PyObject *fields = PyObject_CallOneArg(self->fields, self->state);
    if (fields == NULL) return -1;
    if (!PyTuple_Check(fields)) {
        Py_DECREF(fields);
        PyErr_SetString(PyExc_TypeError, "the fields getter must return a tuple");
        return -1;
    }
    Tensor t = {data, self->size};
    Source src = {self->state, fields, me, self->n, self->layout, self->tables, self->ints};
    int rc = self->game->write(&t, &src);
    Py_DECREF(fields);
    return rc < 0 ? -1 : 0;
}

static PyObject *seat_tensors_tensor(SeatTensors *self, PyObject *arg) {
    PyObject *out = PyArray_ZEROS(1, &self->size, NPY_FLOAT32, 0);
    if (out == NULL) return NULL;
    if (write_seat(self, arg, (float *)PyArray_DATA((PyArrayObject *)out)) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* tensor_into(seat, out): tensor(seat) written into ``out`` (a writeable, C-contiguous
 * float32 array of the tensor's size, which a caller keeps from step to step:
 * OpenSpiel's observers hold one buffer per player). */
static PyObject *seat_tensors_tensor_into(SeatTensors *self, PyObject *const *args,
                                          Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "tensor_into(seat, out)");
        return NULL;
    }
    PyObject *out = args[1];
    if (!PyArray_Check(out)) {
        PyErr_SetString(PyExc_TypeError, "tensor_into: out must be a numpy array");
        return NULL;
    }
    PyArrayObject *array = (PyArrayObject *)out;
    if (PyArray_TYPE(array) != NPY_FLOAT32 || !PyArray_IS_C_CONTIGUOUS(array) ||
        !PyArray_ISWRITEABLE(array) || PyArray_SIZE(array) != self->size) {
        PyErr_Format(PyExc_ValueError, "tensor_into: out must be a writeable, C-contiguous"
                     " float32 array of %ld elements", (long)self->size);
        return NULL;
    }
    float *data = (float *)PyArray_DATA(array);
    memset(data, 0, (size_t)self->size * sizeof(float));
    if (write_seat(self, args[0], data) < 0) return NULL;
    Py_RETURN_NONE;
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
    int failed = 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        PyObject *item = items[i];
        long id;
        if (PyLong_Check(item)) {
            id = as_long(item, &failed);
        } else {  /* its __index__ may change the list: the id is held while it runs,
                   * and the list's length and items are read again after */
            Py_INCREF(item);
            id = index_long(item, &failed);
            Py_DECREF(item);
            n = PySequence_Fast_GET_SIZE(seq);
            items = PySequence_Fast_ITEMS(seq);
        }
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
    *out = (npy_intp)index_long(size, &failed);
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
    {"tensor_into", (PyCFunction)(void (*)(void))seat_tensors_tensor_into, METH_FASTCALL,
     "tensor_into(seat, out): tensor(seat) written into out (a writeable, C-contiguous"
     " float32 array of the tensor's size), in place of what it held"},
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
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)seat_tensors_init,
    .tp_dealloc = (destructor)seat_tensors_dealloc,
    .tp_traverse = (traverseproc)seat_tensors_traverse,
    .tp_clear = (inquiry)seat_tensors_clear,
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

/* (name, length) of each segment. */
static PyObject *segments_of(const Segment *segments, Py_ssize_t count) {
    PyObject *out = PyTuple_New(count);
    for (Py_ssize_t i = 0; out != NULL && i < count; i++) {
        PyObject *item = Py_BuildValue("(sl)", segments[i].name, segments[i].length);
        if (item == NULL) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

/* A tuple of ``count`` names. */
static PyObject *names_of(const char *const *names, Py_ssize_t count, Py_ssize_t stride) {
    PyObject *out = PyTuple_New(count);
    for (Py_ssize_t i = 0; out != NULL && i < count; i++) {
        PyObject *item = PyUnicode_FromString(*(const char *const *)((const char *)names +
                                                                     i * stride));
        if (item == NULL) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

/* WRITERS: game -> {"fields", "segments", "seat_segments", "tables"}: what each
 * writer reads, by name (native.py builds its arguments from these). */
static PyObject *writers(void) {
    PyObject *out = PyDict_New();
    for (Py_ssize_t i = 0; out != NULL && i < COUNT_OF(GAMES); i++) {
        const Game *g = GAMES[i];
        PyObject *fields = names_of(g->fields, g->field_count, sizeof(const char *));
        PyObject *segments = segments_of(g->segments, g->segment_count);
        PyObject *seat = segments_of(g->seat_segments, g->seat_segment_count);
        PyObject *tables = names_of(&g->tables[0].name, g->table_count, sizeof(TableSpec));
        PyObject *desc = fields && segments && seat && tables ? Py_BuildValue(
            "{sOsOsOsO}", "fields", fields, "segments", segments, "seat_segments", seat,
            "tables", tables) : NULL;
        if (desc == NULL || PyDict_SetItemString(out, g->game, desc) < 0) Py_CLEAR(out);
        Py_XDECREF(fields);
        Py_XDECREF(segments);
        Py_XDECREF(seat);
        Py_XDECREF(tables);
        Py_XDECREF(desc);
    }
    return out;
}

PyMODINIT_FUNC PyInit__native(void) {
    import_array();
    if (init_names() < 0) return NULL;
    find_small_ints();
    if (PyType_Ready(&SeatTensorsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    PyObject *described = writers();
    if (described == NULL || PyModule_AddObjectRef(m, "WRITERS", described) < 0 ||
        PyModule_AddObjectRef(m, "SeatTensors", (PyObject *)&SeatTensorsType) < 0) {
        Py_XDECREF(described);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(described);
    return m;
}
