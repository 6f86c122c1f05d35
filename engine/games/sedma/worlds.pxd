# C types for engine/games/sedma/worlds.py (Cython pure-Python mode, issue 19).
cimport cython

cdef list _LUMP
cdef unsigned long long ONE

@cython.locals(key=Py_ssize_t, got=object, acc=object, i=Py_ssize_t)
cpdef list _lump_weights(Py_ssize_t c, Py_ssize_t total, Py_ssize_t rest, Py_ssize_t lo, Py_ssize_t hi)

@cython.locals(left=cython.int[8], comp=cython.int[8], at=cython.int[8], rem=tuple, out=list, j=Py_ssize_t,
               ranks=list, size=Py_ssize_t, cum=list, opts=list, nopt=Py_ssize_t, k=Py_ssize_t, kappa=tuple,
               nxt=tuple, i=Py_ssize_t, here=tuple, later=tuple, x=Py_ssize_t, rmask=cython.int,
               hmask=cython.int, rest=Py_ssize_t, total=Py_ssize_t, c=Py_ssize_t, lo=Py_ssize_t,
               hi=Py_ssize_t, kk=Py_ssize_t, ws=list, m=cython.longlong, bits=Py_ssize_t,
               r=cython.longlong)
cpdef list draw_counts(dict steps, list plan, list tracked, list unseen_by_rank, object rng)

@cython.locals(out=list, base=Py_ssize_t, j=Py_ssize_t, m=Py_ssize_t, loc=list, t=Py_ssize_t, i=Py_ssize_t,
               x=cython.double)
cpdef list shuffle_orders(list sizes, object rng)

@cython.locals(heads=cython.int[8], out=list, base=Py_ssize_t, j=Py_ssize_t, idx=Py_ssize_t, comp=list,
               pmask=cython.int, mine=list, other=list, x=Py_ssize_t, k=Py_ssize_t, h=Py_ssize_t, q=list,
               t=Py_ssize_t, order=list, n_other=Py_ssize_t, kept=list, i=Py_ssize_t, rest=list)
cpdef tuple split_hands(list split, list comps, list queues, list orders)

@cython.locals(n=Py_ssize_t, hands=list, ptr=cython.int[4], s=Py_ssize_t, r=list, m=cython.ulonglong, i=Py_ssize_t,
               stock=list)
cpdef tuple deal_of(list recv, list schedule, list stock_rest)
