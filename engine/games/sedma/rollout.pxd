# Cython types for engine/games/sedma/rollout.py (pure-Python mode: the .py is the source).
import cython

cdef int PLAY_, DECIDE_, CONTINUE_, END_
cdef unsigned long long ONE, POINT_
cdef int BIT_INDEX[67]

@cython.locals(cnt=cython.int)
cdef int _count(unsigned long long m)

cdef int _low(unsigned long long m)

@cython.locals(points=list, s=cython.int)
cdef list _hand_points(list won, int nsides, int last_side)

@cython.locals(n=cython.int, stock=list, nstock=cython.int, spos=cython.int, leader=cython.int,
               cur=cython.int, phase=cython.int, sr=cython.int, winning=cython.int,
               trick=cython.ulonglong, ntricks=cython.int, lastw=cython.int, hist=list,
               side_of=cython.int[4], hands=cython.ulonglong[4], won=cython.ulonglong[4],
               i=cython.int, side=cython.int, hand=cython.ulonglong, t=cython.ulonglong,
               r=cython.double, k=cython.int, x=cython.int, action=cython.int,
               seven=cython.ulonglong, starter=cython.ulonglong, cnt=cython.int, card=cython.int,
               q=cython.int, w=cython.int, left=cython.int, need=cython.int, seat=cython.int)
cdef int _play_hand(object st, object rand) except -1
