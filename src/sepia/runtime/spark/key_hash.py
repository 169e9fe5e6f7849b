"""Spark's `hash` of a stateful key (unit, partition), computed in Python.

Spark places a row of the stateful stage on partition pmod(hash(unit, partition), n): its
`Murmur3Hash` expression with seed 42, each column hashed with the running hash as its
seed (an int by `hashInt`, a string's UTF-8 bytes by `hashUnsafeBytes`, a null leaves the
seed as it is). `job.stateful_partitions` needs those hashes before the query starts; asked
of Spark, as a small job over the keys, they took 1.5 s on an idle two-core machine (a
first job's cost in a fresh session) for what is here a few microseconds. `hashUnsafeBytes`
is Spark's own variant of Murmur3: the bytes past the last whole word are mixed in one at a
time, each a signed byte widened to a word, where the reference algorithm packs them into
one word. Tested against Spark's `hash` (`tests/runtime/spark/engine/test_stateful_partitions.py`).
"""

from __future__ import annotations

SEED = 42
_C1, _C2 = 0xCC9E2D51, 0x1B873593
_MASK = 0xFFFFFFFF


def spark_hash(unit: int, partition: str | None) -> int:
    """Spark's hash(unit, partition) of an int and a nullable string column (signed)."""
    seed = _hash_int(unit, SEED)
    if partition is not None:
        seed = _hash_bytes(partition.encode("utf-8"), seed)
    return seed - (1 << 32) if seed & 0x80000000 else seed


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (32 - shift))) & _MASK


def _mix_k1(k1: int) -> int:
    k1 = (k1 * _C1) & _MASK
    return (_rotl(k1, 15) * _C2) & _MASK


def _mix_h1(h1: int, k1: int) -> int:
    h1 = _rotl(h1 ^ k1, 13)
    return (h1 * 5 + 0xE6546B64) & _MASK


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    return h1 ^ (h1 >> 16)


def _hash_int(value: int, seed: int) -> int:
    return _fmix(_mix_h1(seed & _MASK, _mix_k1(value & _MASK)), 4)


def _hash_bytes(data: bytes, seed: int) -> int:
    h1 = seed & _MASK
    whole = len(data) - len(data) % 4
    for at in range(0, whole, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[at : at + 4], "little")))
    for byte in data[whole:]:
        signed = byte - 256 if byte > 127 else byte
        h1 = _mix_h1(h1, _mix_k1(signed & _MASK))
    return _fmix(h1, len(data))
