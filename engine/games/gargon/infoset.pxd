# Cython types for engine/games/gargon/infoset.py (pure-Python mode: the .py is the source).
import cython

@cython.locals(buf=cython.int[102], off=cython.int[8], plen=cython.int[8], loc=cython.int[102], o=cython.int,
               c=cython.int, j=cython.int, k=cython.int, n=cython.int, t=cython.int, i=cython.int, e=cython.int,
               x=cython.int, r=cython.double, out=list, cards=list)
cpdef list draw_single(list class_cards, list loc_class, list caps, object rand)

@cython.locals(tok=list, j=Py_ssize_t, i=Py_ssize_t, ts=list, cards=list)
cpdef list place(list base, list loc_tokens, list assignment)
