# Cython types for engine/games/guinote/rollout.py (pure-Python mode: the .py is the source).
import cython

cdef int T_SUIT[40]
cdef int T_POWER[40]
cdef int T_POINTS[40]
cdef unsigned long long T_ABOVE[40]
cdef unsigned long long T_SUIT_MASK[4]
cdef int T_SEVEN[4]
cdef unsigned long long T_PAIR[4]
cdef unsigned long long ONE
cdef int BIT_INDEX[67]
cdef int SEVEN_POWER, PLAY_, WINDOW_, OVER_, SWAP7_, CALL_, PROCEED_, LAST, NC

@cython.locals(best=cython.int, bc=cython.int, bs=cython.int, i=cython.int, c=cython.int, s=cython.int)
cdef int _winner(int *trick, int tlen, int trump)

@cython.locals(wi=cython.int, win=cython.int, led=cython.int, partner=cython.bint,
               follow=cython.ulonglong, trumps=cython.ulonglong, over=cython.ulonglong)
cdef unsigned long long _strict(unsigned long long h, int *trick, int tlen, int leader, int seat,
                                int n, int trump, bint must_under)

@cython.locals(cnt=cython.int, t=cython.ulonglong, k=cython.int)
cdef int _pick(unsigned long long m, double r)

@cython.locals(n=cython.int, target=cython.int, must_under=cython.bint, hand_no=cython.int,
               trump=cython.int, leader=cython.int, turn=cython.int, phase=cython.int,
               called=cython.int, win_called=cython.bint, tricks_done=cython.int,
               last_winner=cython.int, stock=list, hist=list, hands=cython.ulonglong[4],
               trick=cython.int[4], hp=cython.int[2], sc=cython.int[2], i=cython.int,
               tlen=cython.int, ns=cython.int, done=cython.bint, over=cython.bint,
               side=cython.int, h=cython.ulonglong, r=cython.double, card=cython.int,
               w=cython.int, pts=cython.int, last=cython.bint, fu=cython.int, swap=cython.bint,
               cnt=cython.int, calls=cython.int, s=cython.int, k=cython.int, seven=cython.int,
               value=cython.int)
cdef bint _play_hand(object st, object rand) except -1
