//! Blosc buffers whose blocks are zstd frames, decoded with this thread's
//! zstd context.
//!
//! c-blosc 1.x decodes each block with `ZSTD_decompress`, which makes and
//! frees a context for every block, and making one asks the processor for
//! BMI2 with CPUID. A virtual machine traps CPUID: on the 2-core VM the
//! bench runs on, 6% of the decode of a 4 MB bit-shuffled chunk went
//! there, in c-blosc as numcodecs ships it too. Here the blocks are walked
//! as c-blosc's `blosc_d` walks them, with the same checks, each split
//! decoded by a context kept per thread, and c-blosc's own (bit)unshuffle
//! puts the bytes back. Anything but a zstd buffer of the current format,
//! and any header c-blosc would refuse, is left to c-blosc (`None`), so
//! that its answers and errors stay what they were.

use super::{BLOSC_MAX_BLOCKSIZE, BLOSC_MEMCPYED, BLOSC_VERSION_FORMAT, BLOSC_ZSTD_FORMAT};
use crate::error::{Result, ZarrError};
use std::cell::RefCell;
use zstd::zstd_safe::zstd_sys;

/// c-blosc's flags: byte shuffle, bit shuffle, one stream per block.
const DOSHUFFLE: u8 = 0x1;
const DOBITSHUFFLE: u8 = 0x4;
const DONT_SPLIT: u8 = 0x10;
/// A flag c-blosc 1.x refuses ("from the future").
const FUTURE: u8 = 0x8;
/// The zstd format version inside blosc that c-blosc 1.x reads.
const ZSTD_VERSION_FORMAT: u8 = 1;
/// c-blosc splits a block into one stream per byte of the type when the
/// type is at most this wide and the block holds at least MIN_BUFFERSIZE
/// bytes per element.
const MAX_SPLITS: usize = 16;
const MIN_BUFFERSIZE: usize = 128;

// c-blosc's internal (un)shuffle dispatchers, in the static library
// blosc-src builds (hidden from the shared object, not from this link).
// Their signatures are c-blosc 1.21's shuffle.h (the bit shuffles return
// a C int); the tests check every shuffle mode against c-blosc's decode.
extern "C" {
    fn blosc_internal_unshuffle(t: usize, n: usize, s: *const u8, d: *mut u8);
    fn blosc_internal_bitunshuffle(t: usize, n: usize, s: *const u8, d: *mut u8, w: *mut u8)
        -> i32;
    #[cfg(test)]
    fn blosc_internal_shuffle(t: usize, n: usize, s: *const u8, d: *mut u8);
    #[cfg(test)]
    fn blosc_internal_bitshuffle(t: usize, n: usize, s: *const u8, d: *mut u8, w: *mut u8) -> i32;
}

/// A zstd decompression context, freed with its thread.
struct Context(*mut zstd_sys::ZSTD_DCtx);

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the pointer came from ZSTD_createDCtx and is freed once.
        unsafe { zstd_sys::ZSTD_freeDCtx(self.0) };
    }
}

thread_local! {
    static CONTEXT: RefCell<Option<Context>> = const { RefCell::new(None) };
}

fn le_i32(buf: &[u8], at: usize) -> Option<i64> {
    let b = buf.get(at..at.checked_add(4)?)?;
    Some(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
}

fn corrupt(why: &str) -> ZarrError {
    ZarrError::Codec(format!(
        "blosc: cannot decompress ({why}); the data is corrupt"
    ))
}

/// The header's parameters when this module decodes the buffer.
struct Frame {
    typesize: usize,
    flags: u8,
    blocksize: usize,
    nblocks: usize,
    leftover: usize,
}

/// What c-blosc 1.21's `blosc_run_decompression_with_context` checks
/// before it decodes, for a buffer of `input.len()` bytes (the header's
/// compressed size, as check_header made sure) decoding to `nbytes`.
fn frame(input: &[u8], nbytes: usize) -> Option<Frame> {
    let (version, compversion, flags, typesize) = (input[0], input[1], input[2], input[3]);
    let blocksize = usize::try_from(le_i32(input, 8)?).ok()?;
    let zstd_blocks = u32::from(version) == BLOSC_VERSION_FORMAT
        && flags & FUTURE == 0
        && u32::from(flags) & BLOSC_MEMCPYED == 0
        && u32::from(flags >> 5) == BLOSC_ZSTD_FORMAT
        && compversion == ZSTD_VERSION_FORMAT;
    let sane = nbytes > 0
        && blocksize > 0
        && blocksize <= nbytes
        && blocksize <= BLOSC_MAX_BLOCKSIZE as usize
        && typesize > 0;
    if !zstd_blocks || !sane {
        return None;
    }
    let typesize = usize::from(typesize);
    let leftover = nbytes % blocksize;
    let nblocks = nbytes / blocksize + usize::from(leftover > 0);
    if nblocks > (input.len() - 16) / 4 {
        return None;
    }
    // A block split into streams that do not fill it would leave bytes
    // unwritten; c-blosc never writes such a buffer.
    let split = flags & DONT_SPLIT == 0 && typesize <= MAX_SPLITS;
    if split && blocksize / typesize >= MIN_BUFFERSIZE && blocksize % typesize != 0 {
        return None;
    }
    Some(Frame {
        typesize,
        flags,
        blocksize,
        nblocks,
        leftover,
    })
}

/// Decodes a blosc buffer of zstd blocks to its `nbytes` bytes, or None to
/// leave it to c-blosc.
pub(super) fn decode(input: &[u8], nbytes: usize) -> Option<Result<Vec<u8>>> {
    let f = frame(input, nbytes)?;
    Some(CONTEXT.with(|cell| {
        let mut slot = cell.borrow_mut();
        let ctx = match slot.as_ref() {
            Some(c) => c.0,
            None => {
                // SAFETY: plain constructor; null means out of memory.
                let p = unsafe { zstd_sys::ZSTD_createDCtx() };
                if p.is_null() {
                    return Err(ZarrError::Memory(
                        "zstd: cannot create a decompression context".into(),
                    ));
                }
                slot.insert(Context(p)).0
            }
        };
        decode_blocks(input, nbytes, &f, ctx)
    }))
}

fn decode_blocks(
    input: &[u8],
    nbytes: usize,
    f: &Frame,
    ctx: *mut zstd_sys::ZSTD_DCtx,
) -> Result<Vec<u8>> {
    let alloc = |n: usize| {
        let mut v: Vec<u8> = Vec::new();
        v.try_reserve_exact(n).map_err(|_| {
            ZarrError::Memory(format!("blosc: cannot allocate {n} bytes for the output"))
        })?;
        Ok::<_, ZarrError>(v)
    };
    let mut out = alloc(nbytes)?;
    // c-blosc's tmp and tmp2: the block's streams before unshuffling, and
    // bitunshuffle's scratch.
    let mut tmp = alloc(2 * f.blocksize + 4 * f.typesize)?;
    let compressed = input.len() as i64;
    for j in 0..f.nblocks {
        let last = j == f.nblocks - 1 && f.leftover > 0;
        let bsize = if last { f.leftover } else { f.blocksize };
        let shuffle = f.flags & DOSHUFFLE != 0 && f.typesize > 1;
        let bitshuffle = f.flags & DOBITSHUFFLE != 0 && bsize >= f.typesize;
        let nsplits = if f.flags & DONT_SPLIT == 0
            && f.typesize <= MAX_SPLITS
            && bsize / f.typesize >= MIN_BUFFERSIZE
            && !last
        {
            f.typesize
        } else {
            1
        };
        let neblock = bsize / nsplits;
        // SAFETY: block j starts at j * blocksize < nbytes, and its bsize
        // bytes end within nbytes, the capacity of `out`.
        let dest = unsafe { out.as_mut_ptr().add(j * f.blocksize) };
        let target = if shuffle || bitshuffle {
            tmp.as_mut_ptr()
        } else {
            dest
        };
        let mut at = le_i32(input, 16 + 4 * j).ok_or_else(|| corrupt("block offsets"))?;
        for s in 0..nsplits {
            if at < 0 || at > compressed - 4 {
                return Err(corrupt("a block offset is outside the buffer"));
            }
            let cbytes = le_i32(input, at as usize).ok_or_else(|| corrupt("block size"))?;
            at += 4;
            if cbytes < 0 || cbytes > compressed - at {
                return Err(corrupt("a block's size is outside the buffer"));
            }
            let src = &input[at as usize..(at + cbytes) as usize];
            // SAFETY: stream s of the block fills neblock bytes from
            // s * neblock, inside the block (nsplits * neblock <= bsize).
            let to = unsafe { target.add(s * neblock) };
            if cbytes as usize == neblock {
                // SAFETY: `src` holds neblock bytes; `to` has room for them,
                // and the two do not overlap (`input` is borrowed).
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), to, neblock) };
            } else {
                // SAFETY: zstd reads `src` and writes at most neblock bytes
                // at `to`; the context is this thread's.
                let n = unsafe {
                    zstd_sys::ZSTD_decompressDCtx(
                        ctx,
                        to.cast(),
                        neblock,
                        src.as_ptr().cast(),
                        src.len(),
                    )
                };
                // SAFETY: ZSTD_isError only classifies the integer.
                if unsafe { zstd_sys::ZSTD_isError(n) } != 0 || n != neblock {
                    return Err(corrupt("a zstd stream does not decode to its block"));
                }
            }
            at += cbytes;
        }
        if shuffle || bitshuffle {
            // The streams filled bsize bytes of tmp (whole when split:
            // frame() refused a block size that is no multiple of the type).
            let (streams, scratch) = tmp.spare_capacity_mut().split_at_mut(f.blocksize);
            let src: *const u8 = streams.as_ptr().cast();
            if shuffle {
                // SAFETY: c-blosc reads bsize bytes of tmp and writes bsize
                // bytes at dest.
                unsafe { blosc_internal_unshuffle(f.typesize, bsize, src, dest) };
            } else {
                // SAFETY: as above, with scratch of blocksize + 4 * typesize
                // bytes (c-blosc's tmp2).
                let r = unsafe {
                    blosc_internal_bitunshuffle(
                        f.typesize,
                        bsize,
                        src,
                        dest,
                        scratch.as_mut_ptr().cast(),
                    )
                };
                if r < 0 {
                    return Err(corrupt("bit unshuffle"));
                }
            }
        }
    }
    // SAFETY: the blocks wrote every byte of 0..nbytes (each block's bsize
    // bytes, by its streams or its unshuffle).
    unsafe { out.set_len(nbytes) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{blosc_compress_ctx, blosc_decompress_ctx};
    use super::*;
    use std::ffi::CString;

    /// Values that compress, with some noise: runs, a ramp and a few
    /// pseudo-random bytes, so that zstd writes every kind of block.
    fn data(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match (i / 97) % 3 {
                    0 => (i / 13) as u8,
                    1 => (x >> 59) as u8,
                    _ => (x >> 33) as u8,
                }
            })
            .collect()
    }

    /// Bytes that zstd cannot shrink.
    fn noise(n: usize) -> Vec<u8> {
        let mut x = 7u64;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                (x >> 56) as u8
            })
            .collect()
    }

    fn compress(
        data: &[u8],
        clevel: i32,
        shuffle: i32,
        typesize: usize,
        blocksize: usize,
    ) -> Vec<u8> {
        let cap = data.len() + 16;
        let mut out = vec![0u8; cap];
        let cname = CString::new("zstd").unwrap();
        // SAFETY: c-blosc reads data.len() bytes and writes at most cap.
        let n = unsafe {
            blosc_compress_ctx(
                clevel,
                shuffle,
                typesize,
                data.len(),
                data.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                cap,
                cname.as_ptr(),
                blocksize,
                1,
            )
        };
        assert!(n > 0, "c-blosc could not compress");
        out.truncate(n as usize);
        out
    }

    /// c-blosc's own decode, or None where it refuses.
    fn c_blosc(enc: &[u8], nbytes: usize) -> Option<Vec<u8>> {
        let mut out = vec![0u8; nbytes];
        // SAFETY: c-blosc writes at most nbytes bytes; these tests keep the
        // header (and so its sizes) as c-blosc wrote it.
        let n = unsafe {
            blosc_decompress_ctx(enc.as_ptr().cast(), out.as_mut_ptr().cast(), nbytes, 1)
        };
        (n >= 0 && n as usize == nbytes).then_some(out)
    }

    #[test]
    fn every_layout_decodes_as_c_blosc_does() {
        let mut cases = 0;
        let mut kinds = std::collections::BTreeSet::new();
        for typesize in [1usize, 2, 3, 4, 8, 16, 17] {
            for shuffle in 0..=2 {
                for blocksize in [0usize, 256, 1000, 4096, 65536] {
                    for n in [1usize, 7, 100, 4099, 70_001, 300_000] {
                        let input = data(n, (typesize * 31 + n) as u64);
                        let enc = compress(&input, 5, shuffle, typesize, blocksize);
                        // Whatever c-blosc stored plainly (too small or
                        // incompressible) is left to it.
                        let Some(got) = decode(&enc, n) else {
                            assert_ne!(enc[2] & 0x2, 0, "a zstd buffer was left to c-blosc");
                            continue;
                        };
                        let got = got.unwrap();
                        assert!(
                            got == input,
                            "typesize {typesize} shuffle {shuffle} blocksize {blocksize} n {n}"
                        );
                        assert_eq!(Some(got), c_blosc(&enc, n));
                        let f = frame(&enc, n).unwrap();
                        let split = f.flags & DONT_SPLIT == 0
                            && typesize <= MAX_SPLITS
                            && f.blocksize / typesize >= MIN_BUFFERSIZE;
                        kinds.insert((shuffle, split, f.leftover > 0));
                        cases += 1;
                    }
                }
            }
        }
        // Half the layouts are zstd blocks (the others, small or
        // incompressible, c-blosc stored plainly), and they include every
        // shuffle, with and without a leftover block. (c-blosc 1.21 writes
        // zstd blocks whole; split ones are the next test's.)
        assert!(cases > 300, "only {cases} layouts decoded here");
        assert_eq!(kinds.len(), 6, "{kinds:?}");
    }

    /// A blosc buffer of zstd blocks split into one stream per byte of the
    /// type, as c-blosc before 1.14 wrote them (and later ones asked to):
    /// built here, as c-blosc 1.21 splits only blosclz and lz4 blocks.
    /// Streams that zstd does not shrink are stored as they are.
    /// Returns the buffer and how many of its streams are stored plainly.
    fn split_buffer(
        input: &[u8],
        typesize: usize,
        blocksize: usize,
        shuffle: u8,
    ) -> (Vec<u8>, usize) {
        let n = input.len();
        let nblocks = n.div_ceil(blocksize);
        let mut plain = 0;
        let flags = (BLOSC_ZSTD_FORMAT as u8) << 5 | [0, DOSHUFFLE, DOBITSHUFFLE][shuffle as usize];
        let mut out = vec![2, 1, flags, typesize as u8];
        out.extend((n as u32).to_le_bytes());
        out.extend((blocksize as u32).to_le_bytes());
        out.extend([0; 4]);
        out.resize(16 + 4 * nblocks, 0);
        for j in 0..nblocks {
            let block = &input[j * blocksize..n.min((j + 1) * blocksize)];
            let bsize = block.len();
            let last = bsize < blocksize;
            let mut shuffled = vec![0u8; bsize];
            let mut tmp = vec![0u8; bsize];
            // SAFETY: each reads and writes bsize bytes of these buffers.
            unsafe {
                match shuffle {
                    1 if typesize > 1 => blosc_internal_shuffle(
                        typesize,
                        bsize,
                        block.as_ptr(),
                        shuffled.as_mut_ptr(),
                    ),
                    2 if bsize >= typesize => {
                        blosc_internal_bitshuffle(
                            typesize,
                            bsize,
                            block.as_ptr(),
                            shuffled.as_mut_ptr(),
                            tmp.as_mut_ptr(),
                        );
                    }
                    _ => shuffled.copy_from_slice(block),
                }
            }
            let nsplits = if typesize <= MAX_SPLITS && bsize / typesize >= MIN_BUFFERSIZE && !last {
                typesize
            } else {
                1
            };
            let start = out.len() as u32;
            out[16 + 4 * j..20 + 4 * j].copy_from_slice(&start.to_le_bytes());
            for stream in shuffled.chunks(bsize / nsplits) {
                let z = zstd::bulk::compress(stream, 3).unwrap();
                let stored = if z.len() < stream.len() {
                    &z[..]
                } else {
                    stream
                };
                plain += usize::from(stored.len() == stream.len());
                out.extend((stored.len() as u32).to_le_bytes());
                out.extend(stored);
            }
        }
        let cbytes = out.len() as u32;
        out[12..16].copy_from_slice(&cbytes.to_le_bytes());
        (out, plain)
    }

    #[test]
    fn split_blocks_decode_as_c_blosc_does() {
        let mut raw_streams = 0;
        for typesize in [2usize, 4, 8, 16] {
            for shuffle in 0..=2u8 {
                for (blocksize, n) in [
                    (typesize * 128, typesize * 128 * 3 + 5),
                    (typesize * 512, typesize * 2000),
                ] {
                    for noisy in [false, true] {
                        let input = if noisy {
                            noise(n)
                        } else {
                            data(n, typesize as u64)
                        };
                        let (enc, stored) = split_buffer(&input, typesize, blocksize, shuffle);
                        let f = frame(&enc, n).expect("a zstd buffer");
                        assert_eq!(f.flags & DONT_SPLIT, 0);
                        let got = decode(&enc, n).unwrap().unwrap();
                        assert!(
                            got == input,
                            "typesize {typesize} shuffle {shuffle} blocksize {blocksize}"
                        );
                        assert_eq!(Some(got), c_blosc(&enc, n));
                        raw_streams += stored;
                    }
                }
            }
        }
        // The noisy inputs' streams went in as they are.
        assert!(
            raw_streams >= 24 * 3,
            "{raw_streams} streams stored plainly"
        );
    }

    #[test]
    fn other_compressors_and_plain_copies_are_left_to_c_blosc() {
        let input = data(10_000, 3);
        let enc = compress(&input, 0, 1, 4, 0);
        assert!(decode(&enc, input.len()).is_none());
        let mut lz4 = enc.clone();
        lz4[2] = (lz4[2] & 0x1f) | (1 << 5);
        assert!(decode(&lz4, input.len()).is_none());
        let enc = compress(&input, 5, 1, 4, 0);
        let mut future = enc.clone();
        future[2] |= 0x8;
        assert!(decode(&future, input.len()).is_none());
        let mut version = enc.clone();
        version[1] = 2;
        assert!(decode(&version, input.len()).is_none());
    }

    #[test]
    fn damage_gives_what_c_blosc_gives() {
        // Every byte after the header, changed, in a small split, shuffled
        // buffer with a leftover block: the same bytes or an error on both
        // sides, and an error named as corrupt data here.
        let input = data(5000, 9);
        let enc = compress(&input, 5, 1, 4, 1024);
        assert_eq!(enc[2] >> 5, BLOSC_ZSTD_FORMAT as u8);
        let (mut same, mut refused) = (0, 0);
        for at in 16..enc.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = enc.clone();
                bad[at] ^= flip;
                let here = decode(&bad, input.len()).expect("the header is unchanged");
                match (here, c_blosc(&bad, input.len())) {
                    (Ok(a), Some(b)) => {
                        assert!(a == b, "byte {at} ^ {flip:#x}: c-blosc decodes other bytes");
                        same += 1;
                    }
                    (Err(e), None) => {
                        assert!(e.message().contains("corrupt"), "{}", e.message());
                        refused += 1;
                    }
                    (Ok(_), None) => {
                        panic!("byte {at} ^ {flip:#x}: decoded here, refused by c-blosc")
                    }
                    (Err(e), Some(_)) => panic!(
                        "byte {at} ^ {flip:#x}: refused here ({}), decoded by c-blosc",
                        e.message()
                    ),
                }
            }
        }
        assert!(same > 0 && refused > 0, "same {same}, refused {refused}");
    }
}
