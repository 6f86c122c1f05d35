# Cython types for engine/games/whiskey_poker/rollout.py (pure-Python mode: the .py is the source).
import cython

cdef int BET1_, EX1_, BET2_, EX2_, BET3_, CHECK_, BET_, CALL_, RAISE_, FOLD_
cdef int EXCHANGE_, KNOCK_, PASS_, STAND_, TAKE_ALL_, TAKE_BASE_
cdef unsigned long long ONE

@cython.locals(k=cython.int, q=cython.int)
cdef int _next(unsigned long long active, int n, int seat)

@cython.locals(c=cython.int)
cdef int _count(unsigned long long m)

@cython.locals(n=cython.int, betting=cython.int, small=cython.int, big=cython.int, cap=cython.int,
               circuits=cython.int, ndp=cython.int, dealer=cython.int, hands=cython.ulonglong[9],
               put=cython.int[9], rc=cython.int[9], i=cython.int, widow=cython.ulonglong,
               exposed=cython.ulonglong, phase=cython.int, p=cython.int, active=cython.ulonglong,
               pot=cython.int, hi=cython.int, bets=cython.int, to_act=cython.int, knocker=cython.int,
               passed=cython.ulonglong, turns=cython.int, rx=tuple, shown=tuple, hist=list,
               end=cython.int, start=cython.int, bit=cython.ulonglong, a=cython.int, x=cython.ulonglong,
               m=cython.ulonglong, nxt=cython.int, rnd=cython.int, unit=cython.int)
cdef int _play_hand(object st, object rand) except -1

@cython.locals(go=cython.double, r=cython.double)
cdef int _bet_move(int rnd, int t, int bets, int cap, object rand) except -1

cdef object EVAL_
cdef int PH_[52]

@cython.locals(c=cython.int[5], k=cython.int, i=cython.int)
cdef long long _strength(unsigned long long mask) except? -1
