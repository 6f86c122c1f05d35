"""Deterministic seeds: keyed BLAKE2b truncated to 64 bits.

DESIGN "Seeds": ``deal_seed = H(salt, game, deal_index)``,
``bot_seed = H(salt, match_id, seat)``; each hand's shuffle comes from
``(deal_seed, hand_index)``, never from an RNG stream that play consumes.
"""

from __future__ import annotations

import hashlib
import random

_blake2b = hashlib.blake2b


def h64(key: bytes | str, *parts: object) -> int:
    """Keyed BLAKE2b of ``parts`` (joined by ``\\x1f``), truncated to an unsigned 64-bit int.

    :param key: the secret (tournament salt) or a domain string; at most 64 bytes after UTF-8.
    :param parts: values rendered with ``str``.
    :returns: an int in ``[0, 2**64)``.
    """
    if isinstance(key, str):
        key = key.encode()
    if len(key) > 64:
        key = hashlib.blake2b(key, digest_size=64).digest()
    msg = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(msg, key=key, digest_size=8).digest(), "big")


def deal_seed(salt: str, game: str, deal_index: int) -> int:
    """The deal seed of deal ``deal_index`` of ``game`` in a tournament salted with ``salt``."""
    return h64(salt, "deal", game, deal_index)


def bot_seed(salt: str, match_id: str, seat: int) -> int:
    """The seed sent to the bot in ``seat`` of match ``match_id`` (never derived from a deal seed)."""
    return h64(salt, "bot", match_id, seat)


#: the BLAKE2b key of :func:`hand_seed` (a domain string, at most 64 bytes)
_HAND_KEY = b"cardarena-hand"


def hand_seed(deal_seed_: int, hand_index: int, purpose: str = "shuffle") -> int:
    """The seed of hand ``hand_index``'s ``purpose`` RNG: ``h64(b"cardarena-hand", deal_seed_,
    hand_index, purpose)`` (the same value, without the generic argument handling; a shuffle
    is taken per hand, so this is on every playout's path).

    :param deal_seed_, hand_index: ints; ``purpose``: a str (rendered as :func:`h64` does).
    :returns: an int in ``[0, 2**64)``.
    """
    msg = f"{deal_seed_!s}\x1f{hand_index!s}\x1f{purpose!s}".encode()
    return int.from_bytes(_blake2b(msg, key=_HAND_KEY, digest_size=8).digest(), "big")


def hand_rng(deal_seed_: int, hand_index: int, purpose: str = "shuffle") -> random.Random:
    """A fresh RNG for hand ``hand_index`` of a match dealt from ``deal_seed_``.

    Every chance event of a hand (the shuffle, a random first dealer) draws from its own
    ``purpose`` so that play never shifts the stream. Seeded with :func:`hand_seed`.
    """
    return random.Random(hand_seed(deal_seed_, hand_index, purpose))
