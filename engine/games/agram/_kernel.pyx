# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Agram's typed hand rollout: the C kernel beside :meth:`AgramState.finish_hand`'s Python loop.

Plays the current deal out with Agram's rollout policy (a uniformly random legal card,
``int(rng.random() * count)``, :mod:`engine.games.agram.rollout`) on 64-bit card masks
(Agram's ids are 0..51) and returns the seat that wins the sixth trick. It draws exactly
the random numbers of the Python loop (one ``rng.random()`` per card, also for a forced
card), so compiled and pure runs agree; ``tests/games/test_agram_kernel.py`` compares both.
Built by ``setup.py`` when a compiler is present (``engine/compiled.py`` ``KERNELS``).
"""

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil


def play_out_hand(list hands, int cur, unsigned long long lmask, int best, int bseat, int k,
                  int tno, int n, int tricks, object rng, list hist=None):
    """The winner of the deal in progress when it is played out with the rollout policy.

    :param hands: per seat its card mask (ints below ``2**52``; not modified).
    :param cur: the seat to act; ``lmask``/``best``/``bseat``/``k`` describe the trick in
        progress as in :class:`AgramState` (``lmask`` 0 before the lead); ``tno`` tricks done.
    :param n: seats (2..5); ``tricks``: tricks per deal (6).
    :param rng: a :class:`random.Random`; one ``rng.random()`` is drawn per card played.
    :param hist: if given, each card played is appended to it (the deal's history).
    :returns: the seat that won the last trick.
    """
    cdef unsigned long long hs[8]
    cdef unsigned long long h, f, m, b
    cdef int i, r, card
    cdef double x
    if n < 2 or n > 8 or len(hands) != n:
        raise ValueError(f"agram kernel: {n} seats with {len(hands)} hands")
    for i in range(n):
        hs[i] = hands[i]
    rand = rng.random
    while True:
        h = hs[cur]
        f = h & lmask
        m = f if f else h
        if not m:
            raise ValueError(f"agram kernel: seat {cur} has no card to play")
        x = rand()
        r = <int>(x * __builtin_popcountll(m))
        while r:
            m &= m - 1
            r -= 1
        card = __builtin_ctzll(m)
        if hist is not None:
            hist.append(card)
        b = 1ULL << card
        if lmask:
            if b & lmask and card > best:
                best = card
                bseat = cur
        else:
            lmask = 0x1FFFULL << (13 * (card // 13))
            best = card
            bseat = cur
        hs[cur] = h ^ b
        k += 1
        if k < n:
            cur = cur + 1 if cur + 1 < n else 0
            continue
        k = 0
        lmask = 0
        tno += 1
        if tno >= tricks:
            return bseat
        cur = bseat
