/* twistarena.rl._spielhistory: copy the history OpenSpiel keeps in C++ from one
 * of our OpenSpiel states to another.
 *
 * OpenSpiel clones a Python game's state by making a new initial state through
 * Python and deep-copying each Python attribute, which alone costs several
 * times a C++ game's whole clone. Our states' own clone (openspiel.py) makes
 * the new state and copies the match itself; what Python cannot copy is the
 * history and move number that OpenSpiel's C++ `State` keeps (they have no
 * setter). This module copies those two fields.
 *
 * It knows where they are only by asking OpenSpiel: `State::FullHistory()`,
 * exported by pyspiel, returns a reference to the history field, which gives
 * its offset in the object; the move number follows it (spiel.h). Before any
 * copy, `probe` reads a state through that layout and openspiel.py compares
 * what it read with what the state answers through OpenSpiel's own calls (its
 * history, players, move number, player and action counts); only when all of
 * it agrees does it call `enable`. Anything else (another OpenSpiel build,
 * another layout of pybind's objects, no symbol) leaves OpenSpiel's own clone
 * in place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>

#include <cstdint>
#include <vector>

namespace {

/* spiel.h's State::PlayerAction: Player (int), Action (int64_t). */
struct PlayerAction {
    int player;
    int64_t action;
};
static_assert(sizeof(PlayerAction) == 16, "OpenSpiel's PlayerAction is 16 bytes");

using History = std::vector<PlayerAction>;
using FullHistoryFn = const History &(*)(const void *);

/* the offset of State::history_ once enabled (0: not enabled) */
Py_ssize_t history_offset = 0;
/* the Python type (our state class) whose instances may be copied */
PyTypeObject *state_type = nullptr;

/* How a pybind11 instance holds its C++ object: in the word after the object
 * header (its simple layout), or in the first entry of the array that word
 * points to (the layout of a holder too large to sit in the object, as with
 * pybind's smart holder). Only ever trusted after `probe` agreed. */
int copy_indirect = 0;  /* the layout `enable` was given */

inline char *cpp_state(PyObject *obj, int indirect) {
    char *word = *reinterpret_cast<char **>(reinterpret_cast<char *>(obj) + sizeof(PyObject));
    return indirect ? *reinterpret_cast<char **>(word) : word;
}

/* probe(pyspiel_path, state, indirect) -> (offset, num_distinct_actions,
 * num_players, move_number, players, actions), read through the layout
 * FullHistory gives; `indirect` picks the pybind layout to read it through. */
PyObject *probe(PyObject *, PyObject *args) {
    const char *path;
    PyObject *state;
    int layout;
    if (!PyArg_ParseTuple(args, "sOp", &path, &state, &layout)) return nullptr;
    void *library = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) {
        PyErr_Format(PyExc_LookupError, "pyspiel is not loaded from %s", path);
        return nullptr;
    }
    auto full_history = reinterpret_cast<FullHistoryFn>(
        dlsym(library, "_ZNK10open_spiel5State11FullHistoryEv"));
    dlclose(library);  /* NOLOAD took a reference: pyspiel stays loaded */
    if (full_history == nullptr) {
        PyErr_SetString(PyExc_LookupError, "pyspiel exports no State::FullHistory");
        return nullptr;
    }
    char *object = cpp_state(state, layout);
    if (object == nullptr) {
        PyErr_SetString(PyExc_LookupError, "the state holds no C++ object");
        return nullptr;
    }
    /* an inline accessor: `this` plus a constant, nothing read */
    const char *field = reinterpret_cast<const char *>(&full_history(object));
    Py_ssize_t offset = field - object;
    if (offset < static_cast<Py_ssize_t>(sizeof(void *) + 2 * sizeof(int)) || offset > 256) {
        PyErr_Format(PyExc_LookupError, "unexpected history offset %zd", offset);
        return nullptr;
    }
    /* the vector's three words, checked before anything they point to is read */
    auto words = reinterpret_cast<const uintptr_t *>(field);
    uintptr_t begin = words[0], end = words[1], capacity = words[2];
    if (end < begin || capacity < end || (end - begin) % sizeof(PlayerAction) != 0 ||
        (begin == 0 && end != 0) || (end - begin) / sizeof(PlayerAction) > 100000) {
        PyErr_SetString(PyExc_LookupError, "the history field does not look like a vector");
        return nullptr;
    }
    const History &history = *reinterpret_cast<const History *>(field);
    PyObject *players = PyList_New(static_cast<Py_ssize_t>(history.size()));
    PyObject *actions = PyList_New(static_cast<Py_ssize_t>(history.size()));
    if (players == nullptr || actions == nullptr) {
        Py_XDECREF(players);
        Py_XDECREF(actions);
        return nullptr;
    }
    for (size_t i = 0; i < history.size(); i++) {
        PyList_SET_ITEM(players, i, PyLong_FromLong(history[i].player));
        PyList_SET_ITEM(actions, i, PyLong_FromLongLong(history[i].action));
    }
    /* spiel.h: `const int num_distinct_actions_; const int num_players_;` just
     * before the history, `int move_number_;` just after */
    const int *before = reinterpret_cast<const int *>(field) - 2;
    int move_number = *reinterpret_cast<const int *>(field + sizeof(History));
    return Py_BuildValue("(niiiNN)", offset, before[0], before[1], move_number, players,
                         actions);
}

/* enable(offset, indirect, state_type): copy from now on, for instances of
 * state_type, through the layout probe agreed on. */
PyObject *enable(PyObject *, PyObject *args) {
    Py_ssize_t offset;
    int layout;
    PyObject *type;
    if (!PyArg_ParseTuple(args, "npO!", &offset, &layout, &PyType_Type, &type)) return nullptr;
    copy_indirect = layout;
    Py_XDECREF(reinterpret_cast<PyObject *>(state_type));
    Py_INCREF(type);
    state_type = reinterpret_cast<PyTypeObject *>(type);
    history_offset = offset;
    Py_RETURN_NONE;
}

/* copy(destination, source): the source's history and move number into the
 * destination, both instances of the enabled state type. */
PyObject *copy(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "copy(destination, source)");
        return nullptr;
    }
    if (history_offset == 0) {
        PyErr_SetString(PyExc_RuntimeError, "the history copy is not enabled");
        return nullptr;
    }
    if (!PyObject_TypeCheck(args[0], state_type) || !PyObject_TypeCheck(args[1], state_type)) {
        PyErr_SetString(PyExc_TypeError, "copy() takes two of our OpenSpiel states");
        return nullptr;
    }
    char *destination = cpp_state(args[0], copy_indirect) + history_offset;
    const char *source = cpp_state(args[1], copy_indirect) + history_offset;
    *reinterpret_cast<History *>(destination) = *reinterpret_cast<const History *>(source);
    *reinterpret_cast<int *>(destination + sizeof(History)) =
        *reinterpret_cast<const int *>(source + sizeof(History));
    Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"probe", probe, METH_VARARGS,
     "probe(pyspiel_path, state, indirect): the state's C++ fields as read through a layout"},
    {"enable", enable, METH_VARARGS, "enable(offset, indirect, state_type): allow copy()"},
    {"copy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(copy)),
     METH_FASTCALL, "copy(destination, source): OpenSpiel's history and move number"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "twistarena.rl._spielhistory",
    "Copies the history OpenSpiel keeps in C++ between our OpenSpiel states.", -1, methods,
    nullptr, nullptr, nullptr, nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__spielhistory(void) { return PyModule_Create(&module); }
