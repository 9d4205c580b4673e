"""hedge_rng: hedge's random generator (lib/base/rng.c) in Python, for the tests that redraw what
the engine draws (the bootstrap's counts, the verification pairs, the tie keys) to check its
numbers from their definitions: xoshiro256** seeded through splitmix64, rng_below by Lemire's
multiply-and-reject, metrics_tie_key (lib/measures/argsort.h). Integers throughout, so the same
numbers as the C, bit for bit; slow (pure Python): for the tests' small sets."""

M64 = (1 << 64) - 1


def mix(z):
    """rng_mix: splitmix64's finaliser"""
    z = (z + 0x9e3779b97f4a7c15) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def stream(a, b, c, d):
    """RNG_STREAM(a, b, c, d)"""
    return (ord(a) << 56) | (ord(b) << 48) | (ord(c) << 40) | (ord(d) << 32)


class Rng:
    """rng_init(seed, stream), rng_u64, rng_below"""

    def __init__(self, seed, stream_tag):
        x = mix(seed) ^ mix(stream_tag ^ 0x6a09e667f3bcc908)
        self.s = []
        for _ in range(4):
            x = (x + 0x9e3779b97f4a7c15) & M64
            self.s.append(mix(x))
        if not any(self.s):
            self.s[0] = 1

    def u64(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64
        r = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45)
        return r

    def below(self, n):
        m = self.u64() * n
        if (m & M64) < n:
            t = (-n % (1 << 64)) % n
            while (m & M64) < t:
                m = self.u64() * n
        return m >> 64


def tie_key(seed, i):
    """metrics_tie_key(seed, {i}) of an integer id"""
    return mix(mix(seed ^ stream("t", "i", "e", "s")) ^ (i & M64))
