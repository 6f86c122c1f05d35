# C types for engine/games/whiskey_poker/infoset.py's world builder (Cython pure-Python mode, issue 19).
cimport cython

cdef unsigned long long ONE

@cython.locals(out=list, i=Py_ssize_t, m=cython.ulonglong, c=cython.int)
cpdef list _blocks(list known, list assignment)
