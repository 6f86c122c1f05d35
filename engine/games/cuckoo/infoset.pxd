# Cython types for engine/games/cuckoo/infoset.py (pure-Python mode: the .py is the source).
import cython

@cython.locals(n=cython.int, i=cython.int, _j=cython.int, e=cython.int, t=cython.int, x=cython.int,
               r=cython.double, cards=cython.int[52], free=list)
cpdef tuple draw_deal(list pool, int nfree, object rand)
