/* Symbols numba's IR names on paths no call of the kernel's entry points reaches.

   The kernel raises nothing (IEEE 754 division, no bounds checks, no allocation) and its
   arrays wrap the caller's memory without a meminfo, so numba's exception reporting (the
   Python C API) and its allocator are never called. Defining them here lets the FMU link
   against the C library alone. Hidden: they never interpose on a host's own Python. */
#include <stddef.h>
#include <stdint.h>

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN void *PyExc_RuntimeError = NULL;
HIDDEN void *PyExc_StopIteration = NULL;
HIDDEN void *PyExc_SystemError = NULL;

HIDDEN void NRT_Free(void *p) { (void)p; }
HIDDEN void NRT_MemInfo_call_dtor(void *p) { (void)p; }
HIDDEN void *PyBytes_FromStringAndSize(const char *s, intptr_t n) { (void)s; (void)n; return NULL; }
HIDDEN void *PyUnicode_FromString(const char *s) { (void)s; return NULL; }
HIDDEN void PyErr_Clear(void) {}
HIDDEN void PyErr_SetNone(void *e) { (void)e; }
HIDDEN void PyErr_SetString(void *e, const char *s) { (void)e; (void)s; }
HIDDEN void PyErr_WriteUnraisable(void *o) { (void)o; }
HIDDEN void Py_DecRef(void *o) { (void)o; }
HIDDEN void numba_do_raise(void *e) { (void)e; }
HIDDEN int numba_gil_ensure(void) { return 0; }
HIDDEN void numba_gil_release(void *s) { (void)s; }
HIDDEN void *numba_runtime_build_excinfo_struct(void *a, void *b) { (void)a; (void)b; return NULL; }
HIDDEN void *numba_unpickle(const char *d, int n, const char *h) { (void)d; (void)n; (void)h; return NULL; }
