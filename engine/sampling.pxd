# C types for engine/sampling.py (Cython pure-Python mode: the .py is the source, issue 19).
cimport cython

cdef class Sampler:
    cdef public object problem
    cdef public list classes
    cdef public list class_cards
    cdef public list loc_classes
    cdef public Py_ssize_t nloc
    cdef public dict _memo
    cdef public dict _steps
    cdef public object total
    cdef public object card_total

    @cython.locals(pools=list, out=list, loc=list, nxt=list, pool=list, cls=list, cum=list, ks=list, k=tuple,
                   steps=dict, loc_classes=list, got=tuple, j=Py_ssize_t, ci=Py_ssize_t, kc=Py_ssize_t,
                   c=Py_ssize_t, n=Py_ssize_t, t=Py_ssize_t, i=Py_ssize_t, e=Py_ssize_t, m=Py_ssize_t,
                   x=cython.double)
    cpdef tuple sample(self, object rng)

@cython.locals(k=Py_ssize_t)
cpdef object randbelow(object rng, object n)
