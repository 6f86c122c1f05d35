# Cython types for engine/games/cuckoo/rollout.py (pure-Python mode: the .py is the source).
import cython

cdef int THRESHOLD_, KEEP_, SWAP_, ACCEPT_, BLOCK_, CUT_, TURN_, RESPOND_
cdef double NOISE_
cdef int VALUE_[52]
cdef int KING_[52]

@cython.locals(n=cython.int, m=cython.int, order=cython.int[20], cards=cython.int[20],
               holder=cython.int[20], know=cython.ulonglong[20], i=cython.int, public=cython.ulonglong,
               automatic=cython.int, pos=cython.int, phase=cython.int, blocked=cython.ulonglong,
               spos=cython.int, hist=list, stcards=list, disc=cython.int, p=cython.int, q=cython.int,
               last=cython.bint, a=cython.int, v=cython.int, top=cython.int, x=cython.int,
               knowers=cython.longlong)
cdef long long _play_hand(object st, object rand) except -1

@cython.locals(i=cython.int, k=cython.Py_ssize_t, public=cython.ulonglong, pos=cython.int, phase=cython.int,
               blocked=cython.ulonglong, a=cython.int, p=cython.int, q=cython.int, x=cython.int)
cdef unsigned long long _follow(int n, int* order, int m, list hist, Py_ssize_t nh, int* holder,
                                unsigned long long* know) except? 0xffffffffffffffff

@cython.locals(m=cython.int, i=cython.int, order_=cython.int[20], holder=cython.int[20],
               know=cython.ulonglong[20], public=cython.ulonglong, disc=cython.int, knowers=cython.longlong)
cpdef long long discard_knowers(int n, tuple order, list history) except -1
