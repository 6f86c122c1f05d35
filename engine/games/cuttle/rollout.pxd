# Cython types for engine/games/cuttle/rollout.py (pure-Python mode: the .py is the source).
import cython

ctypedef unsigned long long u64

cdef u64 ACES_, TWOS_, THREES_, FOURS_, FIVES_, SIXES_, SEVENS_, EIGHTS_, NINES_
cdef u64 JACKS_, QUEENS_, KINGS_, NUMBERS_
cdef int MAIN_, COUNTER_, TAKE_, DISCARD_, SEVEN_, OVER_
cdef int K_DRAW_, K_PASS_, K_POINTS_, K_SCUTTLE_, K_GLASSES_, K_QUEEN_, K_KING_, K_JACK_
cdef int K_ONEOFF_, K_ONEOFF_T_, K_COUNTER_, K_DECLINE_, K_TAKE_, K_DISCARD_
cdef int T_VALUE[52]
cdef int T_ORDER[52]
cdef u64 T_BEATS[52]
cdef int T_THRESHOLD[5]
cdef u64 ONE
cdef int BIT_INDEX[67]
cdef int LEGAL_MAX
cdef int OUT[1400]

@cython.locals(cnt=cython.int)
cdef int _count(u64 m) noexcept

cdef int _low(u64 m) noexcept

@cython.locals(total=cython.int)
cdef int _points(u64 ctrl) noexcept


cdef class _Table:
    cdef u64 hands[2]
    cdef u64 ctrl[2]
    cdef u64 perm[2]
    cdef u64 frozen[2]
    cdef u64 fresh[2]
    cdef u64 exposed[2]
    cdef int deck[52]
    cdef int jk[208]
    cdef int njk[52]
    cdef int susp[52]
    cdef int chain[4]
    cdef int nd, nsusp, nchain, hl, max_turns
    cdef u64 scrap, public
    cdef int phase, to_act, turn_p, turns, passes, target, seven, winner, stamp
    cdef bint nine_freezes
    cdef list hist, actors, draws, shown, glimpses

    @cython.locals(p=cython.int, i=cython.int, deck=list)
    cpdef int load(self, object st) except -1
    @cython.locals(i=cython.int, base=cython.int, jacks=dict)
    cpdef int store(self, object st) except -1
    @cython.locals(n=cython.int, r=cython.double, k=cython.int)
    cpdef int run(self, object rand) except -1
    @cython.locals(ph=cython.int, p=cython.int, n=cython.int, m=u64)
    cdef int legal(self) except -1
    @cython.locals(n=cython.int, i=cython.int)
    cpdef bint is_legal(self, int action) except -1
    @cython.locals(n=cython.int, m=u64, rest=u64, c1=cython.int, c2=cython.int, i=cython.int,
                   a=cython.int, j=cython.int)
    cdef int discards(self, u64 hand) except -1
    @cython.locals(o=cython.int, num=u64, m=u64, c=cython.int, plain=u64, t29=u64)
    cdef int plays(self, u64 cards, int p, int n) except -1
    cdef int _each(self, int kind, u64 cards, int t, int n) except -1
    cdef int _targets(self, int kind, int c, u64 targets, int n) except -1
    @cython.locals(m=u64, base=cython.int)
    cdef u64 targets_2_9(self, int p) except? 0
    @cython.locals(stamp=cython.int, p=cython.int, kind=cython.int, c=cython.int, ph=cython.int,
                   x=cython.int)
    cdef int step(self, int action) except -1
    @cython.locals(o=cython.int, b=u64, i=cython.int)
    cdef int play(self, int p, int kind, int c, int t, int stamp) except -1
    @cython.locals(b=u64)
    cdef int from_hand(self, int p, int c, int stamp) except -1
    @cython.locals(seen=cython.bint, x=cython.int)
    cdef int log_draw(self, int p, int stamp, int kind, tuple cards) except -1
    cdef int reveal_seven(self) except -1
    cdef int flip(self, int base) except -1
    @cython.locals(b=u64, base=cython.int, k=cython.int, side=cython.int)
    cdef int remove_target(self, int t) except -1
    @cython.locals(i=cython.int, odd=cython.int, b=u64)
    cdef int resolve(self, int stamp) except -1
    @cython.locals(base=cython.int, i=cython.int)
    cdef int _scrap_jacks(self) except -1
    @cython.locals(base=cython.int, side=cython.int, tb=u64)
    cdef int table_effect(self, u64 b) except -1
    @cython.locals(p=cython.int, o=cython.int, m=u64, x=cython.int, k=cython.int, room=cython.int,
                   got=tuple, i=cython.int)
    cdef int hand_effect(self, u64 b, int stamp) except -1
    @cython.locals(i=cython.int)
    cdef int finish(self) except -1
    @cython.locals(p=cython.int)
    cdef int end_turn(self, bint passed) except -1


cdef _Table _TABLE
