//! Booleans eight to a byte, a word at a time: numcodecs' `packbits`
//! puts the first of eight in the highest bit (NumPy's `packbits`), the
//! registry's `packbits` in the lowest. One table lookup unpacks a byte
//! into eight; one multiplication gathers eight bytes into one.

/// Which bit of a packed byte holds the first of its eight booleans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOrder {
    /// The highest (numcodecs, NumPy).
    MsbFirst,
    /// The lowest (the registry's `packbits`).
    LsbFirst,
}

/// The eight booleans (bytes 0 or 1, as a little-endian word) of each
/// packed byte.
const fn spread_table(order: BitOrder) -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut word = 0u64;
        let mut i = 0;
        while i < 8 {
            let bit = match order {
                BitOrder::MsbFirst => (b >> (7 - i)) & 1,
                BitOrder::LsbFirst => (b >> i) & 1,
            };
            word |= (bit as u64) << (8 * i);
            i += 1;
        }
        table[b] = word;
        b += 1;
    }
    table
}

static SPREAD_MSB: [u64; 256] = spread_table(BitOrder::MsbFirst);
static SPREAD_LSB: [u64; 256] = spread_table(BitOrder::LsbFirst);

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The eight bytes of `word` (little endian) as the bits of one byte, in
/// order `MSB` (the first byte in the highest bit) or not: a byte that is
/// not zero is a set bit. The products of distinct byte and multiplier
/// bits land on distinct positions, so no carry reaches the top byte,
/// which collects the eight bits.
fn gather<const MSB: bool>(word: u64) -> u8 {
    let ones = ((((word & LOW7) + LOW7) | word) & HIGH) >> 7;
    let magic: u64 = if MSB {
        0x8040_2010_0804_0201
    } else {
        0x0102_0408_1020_4080
    };
    (ones.wrapping_mul(magic) >> 56) as u8
}

/// `input`'s bytes (zero is false, anything else true) packed eight to a
/// byte, appended to `out`; the last byte's unused bits are zero.
pub fn pack(input: &[u8], order: BitOrder, out: &mut Vec<u8>) {
    match order {
        BitOrder::MsbFirst => pack_in::<true>(input, out),
        BitOrder::LsbFirst => pack_in::<false>(input, out),
    }
}

fn pack_in<const MSB: bool>(input: &[u8], out: &mut Vec<u8>) {
    let words = input.chunks_exact(8);
    let tail = words.remainder();
    out.extend(words.map(|w| gather::<MSB>(u64::from_le_bytes(w.try_into().unwrap()))));
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        out.push(gather::<MSB>(u64::from_le_bytes(last)));
    }
}

/// The first `n` booleans (bytes 0 or 1) of `packed`, which holds at least
/// `n` bits. Each output byte is written once: zeroing the buffer first
/// was a quarter of the time (1e6 booleans: 0.055 ms with it, 0.041 ms
/// without; numcodecs 0.045 ms).
pub fn unpack(packed: &[u8], n: usize, order: BitOrder) -> Vec<u8> {
    debug_assert!(packed.len() * 8 >= n);
    let table = match order {
        BitOrder::MsbFirst => &SPREAD_MSB,
        BitOrder::LsbFirst => &SPREAD_LSB,
    };
    let mut out = Vec::with_capacity(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    let whole = n / 8;
    let dst = spare.as_mut_ptr().cast::<u8>();
    for (i, &b) in packed[..whole].iter().enumerate() {
        // SAFETY: bytes 8 i .. 8 i + 8 lie within the `n` taken (i < n / 8).
        unsafe {
            dst.add(8 * i)
                .cast::<[u8; 8]>()
                .write_unaligned(table[b as usize].to_le_bytes())
        };
    }
    let tail = &mut spare[8 * whole..];
    if !tail.is_empty() {
        let word = table[packed[whole] as usize].to_le_bytes();
        for (o, &w) in tail.iter_mut().zip(&word) {
            o.write(w);
        }
    }
    // SAFETY: the loop wrote the first 8 * whole bytes, the tail the rest.
    unsafe { out.set_len(n) };
    out
}
