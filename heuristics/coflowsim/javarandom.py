"""``java.util.Random``: the 48-bit linear congruential generator of the Java API.

CoflowSim draws every coflow's deadline multiplier from ``new Random(17)``; its backfill order
and its deadlines depend on those draws, so reproducing CoflowSim needs the exact bits. The
algorithm is fixed by the Java SE API documentation of ``java.util.Random``
(docs/coflowsim-model.md#java-random):

- the seed is scrambled once, ``seed = (seed ^ 0x5DEECE66D) & (2**48 - 1)``;
- ``next(bits)`` advances ``seed = (seed * 0x5DEECE66D + 0xB) & (2**48 - 1)`` and returns the
  top ``bits`` of the 48, read as a signed 32-bit integer;
- ``nextDouble() = ((next(26) << 27) + next(27)) * 2**-53``.
"""

from __future__ import annotations

__all__ = ["JavaRandom"]

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1


class JavaRandom:
    """A bit-exact re-implementation of ``java.util.Random``.

    Parameters
    ----------
    seed
        The seed, as Java's ``long`` (any Python integer; only its low 64 bits matter, and of
        those only the low 48 after scrambling).

    Examples
    --------
    >>> rng = JavaRandom(17)
    >>> rng.next_double()
    0.7323115139597316
    >>> JavaRandom(42).next_double()
    0.7275636800328681
    """

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        self._seed = (int(seed) ^ _MULTIPLIER) & _MASK

    def next_bits(self, bits: int) -> int:
        """Java's ``next(bits)``: the next ``bits`` (1 to 32) pseudo-random bits, as a signed
        32-bit integer.

        Examples
        --------
        >>> JavaRandom(0).next_bits(32)
        -1155484576
        """
        if not 1 <= bits <= 32:
            raise ValueError(f"bits must be in 1..32, got {bits}")
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK
        value = self._seed >> (48 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value

    def next_int(self) -> int:
        """Java's ``nextInt()``: a uniformly distributed signed 32-bit integer.

        Examples
        --------
        >>> JavaRandom(-5).next_int()
        1156638822
        """
        return self.next_bits(32)

    def next_double(self) -> float:
        """Java's ``nextDouble()``: a double in ``[0, 1)`` with 53 random bits.

        Examples
        --------
        >>> rng = JavaRandom(17)
        >>> [round(rng.next_double(), 6) for _ in range(3)]
        [0.732312, 0.69737, 0.082956]
        """
        high = self.next_bits(26) & ((1 << 26) - 1)
        low = self.next_bits(27) & ((1 << 27) - 1)
        return ((high << 27) + low) * 2.0**-53
