#include "native.h"

/* not written yet */
int write_twhist(Tensor *t, const Source *src) {
    PyErr_SetString(PyExc_NotImplementedError, "twhist");
    return -1;
}
