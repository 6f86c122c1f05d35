# Cython types for engine/games/whiskey_poker/rollout.py (pure-Python mode: the .py is the source).
import cython

ctypedef unsigned long long u64

cdef int PENDING_
cdef int BET1_, EX1_, BET2_, EX2_, BET3_, CHECK_, BET_, CALL_, RAISE_, FOLD_
cdef int EXCHANGE_, KNOCK_, PASS_, STAND_, TAKE_ALL_, TAKE_BASE_
cdef u64 ONE, R_
cdef int BIT_INDEX_[67]
cdef double BETF_[18]
cdef double CALLF_[18]
cdef double CALL2F_[18]
cdef double RAISEF_[18]
cdef int DRAW_AT_[8193]
cdef int DRAW_NEED_[512]
cdef int DRAW_DROP_[512]
cdef object EVAL_
cdef int PH_[52]

cdef int _low(u64 m) noexcept

@cython.locals(r=cython.int)
cdef int _high(u64 m) noexcept

cdef bint _is_straight(u64 u) noexcept

@cython.locals(c=cython.int[5], k=cython.int, m=u64, b=u64)
cdef long long _strength(u64 mask) except? -1

@cython.locals(s0=u64, s1=u64, s2=u64, s3=u64, u=u64, d=cython.int, pair=u64)
cpdef int tier(u64 mask) except -1

@cython.locals(i=cython.int, go=cython.double, r=cython.double)
cdef int _bet_move(int rnd, int t, int bets, int cap, object rand) except -1

@cython.locals(t=cython.int)
cdef int _exchange1_move(int p, u64 hand, u64 widow, int last_x, bint any_x, bint knocked, bint must_knock,
                         object rand) except -1

@cython.locals(s=u64[4], ws=u64[4], u=u64, wu=u64, best_a=cython.int, best=cython.longlong,
               v=cython.longlong, ncand=cython.int, multi=u64, single=u64, give=cython.int, low=cython.int,
               k=cython.int, match=u64, r=cython.int, w=cython.int, h=cython.int, i=cython.int,
               need=cython.int, top=cython.int)
cpdef int _exchange2_move(u64 hand, u64 widow, bint knocked) except -1

@cython.locals(k=cython.int)
cdef int _suit_of(u64* suits, int r) noexcept

@cython.locals(k=cython.int, q=cython.int)
cdef int _next(u64 active, int n, int seat) noexcept

@cython.locals(c=cython.int)
cdef int _count(u64 m) noexcept

@cython.locals(n=cython.int, betting=cython.int, small=cython.int, big=cython.int, cap=cython.int,
               circuits=cython.int, ndp=cython.int, dealer=cython.int, hands=u64[9],
               put=cython.int[9], rc=cython.int[9], i=cython.int, widow=u64,
               exposed=u64, phase=cython.int, p=cython.int, active=u64,
               pot=cython.int, hi=cython.int, bets=cython.int, to_act=cython.int, knocker=cython.int,
               passed=u64, turns=cython.int, rx=tuple, shown=tuple, hist=list, last_x=cython.int,
               any_x=cython.int, end=cython.int, start=cython.int, bit=u64, a=cython.int, x=u64,
               m=u64, nxt=cython.int, rnd=cython.int, unit=cython.int)
cdef int _play_hand(object st, object rand, bint record) except -1

@cython.locals(res=list, pw=cython.longlong[9], best=cython.longlong, low=cython.longlong, first=cython.int,
               k=cython.int, s=cython.int, v=cython.longlong, nw=cython.int, share=cython.int, odd=cython.int,
               i=cython.int)
cdef int _settle(object st, int n, int dealer, u64 active, u64* hands, int* put, int pot, int betting,
                 int end) except -1
