# C types for engine/games/argute/infoset.py's world filling (Cython pure-Python mode, issue 19).
cimport cython

cdef unsigned long long ONE

@cython.locals(st=object, hands=list, dealt=list, nopp=Py_ssize_t, j=Py_ssize_t, mask=cython.ulonglong,
               c=cython.int, o=Py_ssize_t, bids=list, hist=list, i=Py_ssize_t, b=cython.int)
cpdef object fill_world(object tmpl, object m, list start_hands, list opps, list assignment, list bidders,
                        list bid_at, list choices)

@cython.locals(odds=object, j=Py_ssize_t, done=list, held=cython.int[6], c=cython.int, v=cython.int, p=cython.int)
cpdef object held_odds(list assignment, list played_at)
