"""``java.util.Random``, bit for bit, for MULAN's random tie draws.

MULAN's BR-kNN-a and BR-kNN-b (``mulan.classifier.lazy.BRkNN``) break ties with
a ``java.util.Random(1)`` created in the classifier's constructor. To reproduce
their bipartitions exactly, mlknn needs the same stream. The generator is fully
specified by the Java API documentation of ``java.util.Random`` (a 48-bit linear
congruential generator, Knuth TAOCP vol. 2, 3.2.1); this module implements that
specification and nothing else:

* ``setSeed(seed)``: ``state = (seed XOR 0x5DEECE66D) mod 2**48``;
* ``next(bits)``: ``state = (state * 0x5DEECE66D + 0xB) mod 2**48``, returning
  the top ``bits`` bits of the state as a signed 32-bit ``int``;
* ``nextInt(bound)``: for a power of two, ``(bound * next(31)) >> 31`` (the high
  bits, which are the better ones of an LCG); otherwise ``next(31) % bound``,
  drawing again while the 32-bit expression ``bits - val + (bound - 1)``
  overflows (the rejection that makes the result uniform);
* ``nextDouble()``: ``((next(26) << 27) + next(27)) * 2**-53``.

Python integers are unbounded, so the 32-bit wrap-around of Java's ``int`` is
written out where the specification relies on it. The draws are inherently
sequential (each depends on the previous state); callers use one draw per tied
row, so a plain Python object is the right tool (no array of states).
"""

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1
_INT_MAX = (1 << 31) - 1


def _to_int32(value: int) -> int:
    """Java's ``(int)`` cast: the low 32 bits, as a signed value."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value > _INT_MAX else value


class JavaRandom:
    """The stream of ``new java.util.Random(seed)``.

    Parameters
    ----------
    seed : int
        Java ``long`` seed (any Python int; reduced modulo 2**64 as a ``long``
        would be, then scrambled as ``setSeed`` does).

    Examples
    --------
    >>> from mlknn.algorithms._java_random import JavaRandom
    >>> rng = JavaRandom(1)
    >>> [rng.next_int(10) for _ in range(5)]
    [5, 8, 7, 3, 4]
    """

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self.set_seed(seed)

    @classmethod
    def from_state(cls, state: int) -> "JavaRandom":
        """A generator continuing from a saved 48-bit :attr:`state` (no scrambling)."""
        rng = cls.__new__(cls)
        rng._state = int(state) & _MASK
        return rng

    def set_seed(self, seed: int) -> None:
        """``Random.setSeed(long)``: scramble the seed with the multiplier."""
        self._state = (int(seed) ^ _MULTIPLIER) & _MASK

    @property
    def state(self) -> int:
        """The 48-bit internal state (for tests and checkpoints)."""
        return self._state

    def next_bits(self, bits: int) -> int:
        """``Random.next(bits)``: advance the LCG once, return its top ``bits`` bits.

        Parameters
        ----------
        bits : int, 1 <= bits <= 32

        Returns
        -------
        int
            A signed 32-bit value (negative only for ``bits == 32``).
        """
        self._state = (self._state * _MULTIPLIER + _ADDEND) & _MASK
        return _to_int32(self._state >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``Random.nextInt()`` (no bound: 32 random bits) or ``nextInt(bound)``.

        Parameters
        ----------
        bound : int, optional
            Exclusive upper bound, >= 1.

        Returns
        -------
        int
            Uniform in ``[0, bound)``; a signed 32-bit value without a bound.

        Raises
        ------
        ValueError
            When ``bound <= 0`` (Java throws ``IllegalArgumentException``).
        """
        if bound is None:
            return self.next_bits(32)
        bound = int(bound)
        if bound <= 0 or bound > _INT_MAX:
            raise ValueError(f"The 'bound' of nextInt must be an int in [1, 2**31 - 1]. Got {bound} instead.")
        r = self.next_bits(31)
        m = bound - 1
        if bound & m == 0:
            # Power of two: the top log2(bound) bits of next(31).
            return (bound * r) >> 31
        u = r
        r = u % bound
        # Java's loop condition ``u - r + m < 0`` is an int overflow test: reject the
        # last, incomplete block of 2**31 values so that every residue is equally likely.
        while u - r + m > _INT_MAX:
            u = self.next_bits(31)
            r = u % bound
        return r

    def next_double(self) -> float:
        """``Random.nextDouble()``: 53 random bits as a float in [0, 1)."""
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * (1.0 / (1 << 53))
