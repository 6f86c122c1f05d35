# Cython types for engine/games/argute/rollout.py (pure-Python mode: the .py is the source).
import cython

cdef int BID_, COPIES_, VALUES_
cdef int T_PER_TRICK[3]

@cython.locals(n=cython.int, phase=cython.int, cur=cython.int, leader=cython.int, tno=cython.int,
               seq=cython.int, hist=list, actors=list, nh=cython.int, hands=cython.ulonglong[7],
               bids=cython.int[7], totals=cython.int[7], reach=cython.int[7], won=cython.int[7],
               per=cython.int[3], i=cython.int, r=cython.double, k=cython.int, h=cython.ulonglong,
               cnt=cython.int, v=cython.int, ids=cython.ulonglong, w=cython.int, q=cython.int)
cdef object _play_hand(object st, object rand, bint record)

@cython.locals(scores=list, top=cython.int, count=cython.int, i=cython.int, x=cython.int)
cdef bint _ends_match(object st, int* bids, int* won, int n) except -1
