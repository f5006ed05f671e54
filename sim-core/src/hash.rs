//! The stable hash used for run digests and RNG stream derivation: 64-bit FNV-1a
//! (Fowler–Noll–Vo, offset basis 0xcbf29ce484222325, prime 0x100000001b3).
//!
//! Never `std`'s `DefaultHasher`, whose output may change between Rust releases.

/// Incremental 64-bit FNV-1a.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a64(u64);

impl Default for Fnv1a64 {
    fn default() -> Self {
        Self::new()
    }
}

impl Fnv1a64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A fresh hasher.
    pub const fn new() -> Self {
        Fnv1a64(Self::OFFSET)
    }
    /// Feeds bytes.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
    /// `PRIME^k` (wrapping): feeding `k` zero bytes multiplies the state by it, since a
    /// zero byte leaves the XOR step unchanged.
    const fn prime_pow(k: u32) -> u64 {
        let mut p = 1u64;
        let mut i = 0;
        while i < k {
            p = p.wrapping_mul(Self::PRIME);
            i += 1;
        }
        p
    }
    const PRIME_4: u64 = Self::prime_pow(4);
    const PRIME_8: u64 = Self::prime_pow(8);

    /// Feeds one byte.
    #[inline]
    pub fn write_u8(&mut self, b: u8) {
        self.0 ^= b as u64;
        self.0 = self.0.wrapping_mul(Self::PRIME);
    }

    /// Feeds a `u64` as 8 little-endian bytes: the same digest as
    /// `write(&v.to_le_bytes())`, cheaper when the high bytes are zero (most ids and
    /// generation counters of the run digest): a run of zero bytes is one multiplication
    /// by a power of the prime instead of an XOR and a multiplication per byte.
    #[inline]
    pub fn write_u64(&mut self, v: u64) {
        if v == 0 {
            self.0 = self.0.wrapping_mul(Self::PRIME_8);
        } else if v >> 32 == 0 {
            for i in 0..4 {
                self.write_u8((v >> (8 * i)) as u8);
            }
            self.0 = self.0.wrapping_mul(Self::PRIME_4);
        } else {
            for i in 0..8 {
                self.write_u8((v >> (8 * i)) as u8);
            }
        }
    }
    /// The digest so far.
    pub const fn finish(&self) -> u64 {
        self.0
    }
}

/// Debug builds' state checks (the nothing-owed paths of TCP's ACK and SCTP's poll): the
/// FNV-1a digest of formatted text, taken as it is written, without allocating (the
/// allocation-per-packet test runs debug builds).
#[cfg(debug_assertions)]
pub(crate) fn fmt_digest(args: std::fmt::Arguments<'_>) -> u64 {
    struct Writer(Fnv1a64);
    impl std::fmt::Write for Writer {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut w = Writer(Fnv1a64::new());
    std::fmt::Write::write_fmt(&mut w, args).expect("formatting into a hasher");
    w.0.finish()
}

/// FNV-1a of a byte string in one call.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a64::new();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn known_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    /// The fast `write_u64` (zero runs as one multiplication) is FNV-1a of the 8
    /// little-endian bytes, for values with every pattern of zero high bytes.
    #[test]
    fn write_u64_is_bytewise() {
        let mut values = vec![0u64, 1, 0xff, 0x1_0000_0000, u64::MAX, 0xffff_ffff];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for bits in 0..=64 {
            x = x.rotate_left(7) ^ x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            values.push(if bits == 64 {
                x
            } else {
                x & ((1u64 << bits) - 1)
            });
        }
        for (i, &v) in values.iter().enumerate() {
            let mut fast = Fnv1a64::new();
            let mut slow = Fnv1a64::new();
            // A state other than the offset basis too.
            fast.write(&[i as u8]);
            slow.write(&[i as u8]);
            fast.write_u64(v);
            slow.write(&v.to_le_bytes());
            assert_eq!(fast.finish(), slow.finish(), "value {v:#x}");
        }
    }
}
