# C types for engine/search/ismcts.py (Cython pure-Python mode: the .py is the source, issue 19).
cimport cython

cdef class Node:
    cdef public dict children
    cdef public long long visits
    cdef public long long avail
    cdef public double reward
    cdef public int player
    cpdef double mean(self)

@cython.locals(ch=Node, n=cython.longlong, v=cython.double, best=cython.double, children=dict)
cpdef object ucb_select(Node node, list keys, double c)

@cython.locals(root=Node, node=Node, child=Node, ch=Node, nd=Node, best_ch=Node, children=dict, path=list,
               untried=list, done=cython.longlong, hand0=cython.longlong, n=cython.longlong, v=cython.double,
               best=cython.double, nlegal=Py_ssize_t, nuntried=Py_ssize_t)
cpdef tuple so_iterations(object game, object info, list teams, object rng, long long max_it,
                          object deadline, double c, bint hand_rollouts, object policy_seats)
