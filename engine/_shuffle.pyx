# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The typed deal shuffle: ``random.Random(seed).shuffle(deck)`` bit for bit, in C.

Python's ``random.Random`` is MT19937 seeded by ``init_by_array`` with the seed's 32-bit
words (CPython ``Modules/_randommodule.c``), and ``Random.shuffle`` is Fisher-Yates from the
top, each index drawn by ``_randbelow(i + 1)``: ``getrandbits(k)`` (the top ``k`` bits of
one 32-bit output, ``k = (i + 1).bit_length()``) redrawn while ``>= i + 1``. This kernel does
exactly that on a C state, so every recorded deal (the reproducibility contract:
``tests/engine``, the conformance suite) is unchanged. Seeding costs ~1,250 integer steps (``init_genrand``'s table is the same for every seed: copied);
the first 227 outputs are twisted on demand (a deal needs ~60–150), the rest of the table
only if a deck is that long. ``engine/deal.py`` uses it when built and checks it against
``random.Random`` once at import (a Python whose ``shuffle`` changed falls back to it);
``tests/engine/test_deal_kernel.py`` compares both on many seeds and deck sizes.
Built by ``setup.py`` when a compiler is present (``engine/compiled.py`` ``KERNELS``).
"""

from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy

cdef enum:
    N = 624
    M = 397


cdef struct MT:
    uint32_t mt[N]
    int i          # next output index
    bint lazy      # the table's first N - M words are twisted on demand


cdef inline uint32_t _twist_word(uint32_t *mt, int kk, int partner) noexcept nogil:
    cdef uint32_t y = (mt[kk] & 0x80000000U) | (mt[kk + 1 if kk + 1 < N else 0] & 0x7fffffffU)
    return mt[partner] ^ (y >> 1) ^ (0x9908b0dfU if y & 1U else 0U)


cdef uint32_t _BASE[N]


cdef void _init_base() noexcept nogil:
    cdef int i
    _BASE[0] = 19650218U
    for i in range(1, N):
        _BASE[i] = 1812433253U * (_BASE[i - 1] ^ (_BASE[i - 1] >> 30)) + <uint32_t>i


_init_base()


cdef void _seed(MT *s, uint64_t seed) noexcept nogil:
    """CPython's ``random_seed`` for a non-negative int below ``2**64`` (``init_by_array``)."""
    cdef uint32_t key[2]
    cdef int klen, i, j, k
    cdef uint32_t *mt = s.mt
    key[0] = <uint32_t>(seed & 0xffffffffU)
    key[1] = <uint32_t>(seed >> 32)
    klen = 2 if key[1] else 1
    memcpy(mt, _BASE, sizeof(_BASE))    # init_genrand(19650218), the same for every seed
    i = 1
    j = 0
    for k in range(N if N > klen else klen, 0, -1):
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + <uint32_t>j
        i += 1
        j += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
        if j >= klen:
            j = 0
    for k in range(N - 1, 0, -1):
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - <uint32_t>i
        i += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
    mt[0] = 0x80000000U
    s.i = 0
    s.lazy = True


cdef uint32_t _next(MT *s) noexcept nogil:
    """``genrand_uint32``: the next tempered output."""
    cdef int kk
    cdef uint32_t *mt = s.mt
    cdef uint32_t y
    if s.i >= N:                      # a whole new table, as CPython does
        for kk in range(N - M):
            mt[kk] = _twist_word(mt, kk, kk + M)
        for kk in range(N - M, N):
            mt[kk] = _twist_word(mt, kk, kk + M - N)
        s.i = 0
        s.lazy = False
    elif s.lazy:
        if s.i < N - M:               # word i of the first twist: needs only untwisted words
            mt[s.i] = _twist_word(mt, s.i, s.i + M)
        else:                         # the rest of the first twist, in CPython's order
            for kk in range(N - M, N):
                mt[kk] = _twist_word(mt, kk, kk + M - N)
            s.lazy = False
    y = mt[s.i]
    s.i += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9d2c5680U
    y ^= (y << 15) & 0xefc60000U
    y ^= y >> 18
    return y


def shuffle_seeded(list deck, uint64_t seed):
    """Shuffle ``deck`` in place exactly as ``random.Random(seed).shuffle(deck)``.

    :param deck: any list (its items are only moved).
    :param seed: the RNG seed, ``0 <= seed < 2**64``.
    """
    cdef MT s
    cdef Py_ssize_t i
    cdef uint32_t n, r
    cdef int k
    _seed(&s, seed)
    for i in range(len(deck) - 1, 0, -1):
        n = <uint32_t>(i + 1)
        k = 32 - __builtin_clz(n)          # n.bit_length()
        r = _next(&s) >> (32 - k)
        while r >= n:
            r = _next(&s) >> (32 - k)
        deck[i], deck[r] = deck[r], deck[i]


def random_words(uint64_t seed, int count):
    """The first ``count`` ``random.Random(seed).getrandbits(32)`` values (for the tests)."""
    cdef MT s
    _seed(&s, seed)
    return [_next(&s) for _ in range(count)]


cdef extern from *:
    int __builtin_clz(unsigned int) nogil


def block_masks(list deck, int n, int per_hand, int first):
    """Per seat the mask of its cards when ``deck`` is dealt as ``engine.deal.deal_hands`` deals it.

    Seat ``(first + i) % n`` gets the ``i``-th block of ``per_hand`` cards.

    :param deck: card ids (ints ``0..63``), at least ``n * per_hand`` of them.
    :raises ValueError: a card outside ``0..63`` (the caller then uses ``mask_of``) or a short deck.
    """
    cdef int i, j, c
    cdef unsigned long long m
    if n < 1 or per_hand < 0 or n * per_hand > len(deck):
        raise ValueError(f"cannot deal {per_hand} cards to {n} seats from {len(deck)} cards")
    out = [0] * n
    for i in range(n):
        m = 0
        for j in range(i * per_hand, (i + 1) * per_hand):
            c = deck[j]
            if c < 0 or c > 63:
                raise ValueError(f"card id {c} does not fit a 64-bit mask")
            m |= 1ULL << c
        out[(first + i) % n] = m
    return out
