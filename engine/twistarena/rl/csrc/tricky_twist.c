#include "native.h"

/* not written yet */
int write_tricky_twist(Tensor *t, const Source *src) {
    PyErr_SetString(PyExc_NotImplementedError, "tricky_twist");
    return -1;
}
