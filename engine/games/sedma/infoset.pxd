# C types for engine/games/sedma/infoset.py's sampler walk (Cython pure-Python mode, issue 19).
cimport cython

@cython.locals(got=list, acc=object, i=Py_ssize_t)
cpdef list _lump_weights(Py_ssize_t c, Py_ssize_t total, Py_ssize_t rest, Py_ssize_t lo, Py_ssize_t hi)

@cython.locals(left=list, rem=tuple, out=list, j=Py_ssize_t, ranks=list, size=Py_ssize_t, cum=list, opts=list,
               nopt=Py_ssize_t, k=Py_ssize_t, kappa=tuple, nxt=tuple, comp=list, i=Py_ssize_t, here=tuple,
               later=tuple, x=Py_ssize_t, rest=Py_ssize_t, total=Py_ssize_t, c=Py_ssize_t, lo=Py_ssize_t,
               hi=Py_ssize_t, kk=Py_ssize_t, ws=list, m=cython.longlong, bits=Py_ssize_t,
               r=cython.longlong)
cpdef list draw_counts(dict steps, list plan, list tracked, list unseen_by_rank, object rng)

@cython.locals(out=list, base=Py_ssize_t, j=Py_ssize_t, m=Py_ssize_t, loc=list, t=Py_ssize_t, i=Py_ssize_t)
cpdef list shuffle_orders(list sizes, object rng)
