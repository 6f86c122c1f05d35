# C types for engine/games/argute/state.py's play step and legal values (Cython pure-Python mode,
# issue 19); ArguteState itself stays a Python class (it derives from engine.core.SnapshotState).
cimport cython

cdef int COPIES_, VALUES_

@cython.locals(out=list, v=cython.int)
cpdef list _values_held(unsigned long long h)

@cython.locals(h=cython.ulonglong, ids=cython.ulonglong, seq=cython.int, reach=list, totals=list, w=cython.int,
               q=cython.int)
cpdef bint _play(object st, int p, int v, int n) except -1
