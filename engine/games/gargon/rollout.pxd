# Cython types for engine/games/gargon/rollout.py (pure-Python mode: the .py is the source).
import cython

cdef int PLAY_, PASS_DRAW_, REPLACE_, OVER_, DONE_, PASS_, DRAW_A_, STOP_, NCAPS, SEL_STEP
cdef int DONE_BIT, NOPLAN
cdef int POP9[512]
cdef int TOP9[512]
cdef int POW3[6]
cdef int POW5[5]
cdef int MULT[4]
cdef int AM_LO[512]
cdef int AM_HI[256]
cdef object AM_KEY
cdef int START_PLAN[343]
cdef int DONE_PKEY[343]
cdef int DONE_CAP1[343]
cdef tuple DONE_PAT

cdef int _pop(int m)

cdef int _top(int m)

@cython.locals(c=cython.int)
cdef void _split(object mask, int *words, int off)

@cython.locals(c=cython.int, w=object)
cdef object _join(int *words, int off)

cdef bint _any(int *words, int off)

@cython.locals(word=cython.int)
cdef int _plan(int code, int key, bint start, unsigned short[:] plans) except -1

@cython.locals(mm=cython.int[6], cc=cython.int[6], total=cython.int, c=cython.int, need=cython.int,
               m=cython.int, done=cython.int, k=cython.int)
cdef int _select(int *hc, int plan, bint can_pass, double r)

@cython.locals(c=cython.int, need=cython.int, m=cython.int)
cdef bint _is_legal(int *hc, int plan, bint can_pass, int action)

@cython.locals(c=cython.int, b1=cython.int, b2=cython.int, s=cython.int, m=cython.int, hi=cython.int,
               i=cython.int, battle=cython.int, top=cython.int)
cdef void _battles(int *played, int *stash, int *discard, int n)

@cython.locals(lo=list, hi=list, i=cython.int, total=cython.int[5], c=cython.int, top=cython.int,
               leaders=cython.int, s=cython.int, m=cython.int, k=cython.int, code=cython.int)
cdef int _rank_code(int *stash, int n, object amulets) except -1

@cython.locals(n=cython.int, pass_choice=cython.bint, replacement=cython.bint, start=cython.int,
               turn=cython.int, phase=cython.int, passed=cython.int, psize=cython.int, pkey=cython.int,
               cap1=cython.bint, col_played=cython.int, drawn_now=cython.int, draw_target=cython.int,
               repl_i=cython.int, repl_left=cython.int, ended=cython.bint, round_no=cython.int,
               piles=list, draws=list, nhist=cython.int, hands=cython.int[30], played=cython.int[30],
               stash=cython.int[30], discard=cython.int[6], selm=cython.int[6], hc=cython.int[6],
               sel=cython.int[3], repl=cython.int[5], s=cython.int, nsel=cython.int, i=cython.int,
               sel_code=cython.int, nrepl=cython.int, nt=cython.bint, er=cython.bint, r=cython.double,
               p=cython.int, c=cython.int, lc=cython.int, key=cython.int, last=cython.bint, k=cython.int,
               action=cython.int, v=cython.int, low=cython.int, pl=list, card=cython.int, i_act=cython.int)
cdef int _play(object st, object rand, unsigned short[:] plans, list actions, int na) except -1
