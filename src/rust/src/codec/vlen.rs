//! `vlen-utf8` codec (zarr-extensions codecs/vlen-utf8): array -> bytes for
//! the `string` data type, also numcodecs' VLenUTF8 object codec of Zarr
//! v2. No configuration. A chunk is a u32le element count, then for each
//! element (in C order) a u32le byte length and the UTF-8 bytes.

use super::registry::CodecSpec;
use super::v2::V2Config;
use super::{config, Mode};
use crate::error::{Result, ZarrError};

pub const NAME: &str = "vlen-utf8";

pub static SPEC: CodecSpec = CodecSpec {
    name: NAME,
    // The object codec of Zarr v2 string arrays: metadata/v2 places it
    // by the data type, not as a filter or compressor.
    v2: Some(V2Config {
        id: "vlen-utf8",
        from_v2: |_, _, _| Ok(serde_json::json!({"name": NAME, "configuration": {}})),
        to_v2: |_| serde_json::Map::new(),
        filter: true,
    }),
    mode: Mode::ArrayToBytes,
    params: &[],
    defaults: Some(|_, _| config(&[])),
    build: None,
};

fn read_u32(data: &[u8], at: usize, what: &str) -> Result<u32> {
    data.get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| {
            ZarrError::CorruptChunk(format!("{what}: vlen-utf8 data ends early at byte {at}"))
        })
}

/// Decode a chunk of `n` strings.
pub fn decode(data: &[u8], n: usize, what: &str) -> Result<Vec<String>> {
    let count = read_u32(data, 0, what)? as usize;
    if count != n {
        return Err(ZarrError::CorruptChunk(format!(
            "{what}: vlen-utf8 chunk holds {count} strings, expected {n}"
        )));
    }
    let mut out = Vec::with_capacity(n);
    let mut at = 4;
    for i in 0..n {
        let len = read_u32(data, at, what)? as usize;
        at += 4;
        let bytes = data.get(at..at + len).ok_or_else(|| {
            ZarrError::CorruptChunk(format!(
                "{what}: vlen-utf8 string {i} runs past the end of the chunk"
            ))
        })?;
        let s = std::str::from_utf8(bytes).map_err(|e| {
            ZarrError::CorruptChunk(format!("{what}: string {i} is not valid UTF-8 ({e})"))
        })?;
        out.push(s.to_owned());
        at += len;
    }
    if at != data.len() {
        return Err(ZarrError::CorruptChunk(format!(
            "{what}: {} bytes left over after {n} vlen-utf8 strings",
            data.len() - at
        )));
    }
    Ok(out)
}

/// Encode strings, in C order of the chunk.
pub fn encode<S: AsRef<str>>(items: &[S]) -> Result<Vec<u8>> {
    let total: usize = items.iter().map(|s| 4 + s.as_ref().len()).sum();
    let mut out = Vec::with_capacity(4 + total);
    let count = u32::try_from(items.len())
        .map_err(|_| ZarrError::Codec("vlen-utf8: too many strings in one chunk".into()))?;
    out.extend_from_slice(&count.to_le_bytes());
    for s in items {
        let b = s.as_ref().as_bytes();
        let len = u32::try_from(b.len())
            .map_err(|_| ZarrError::Codec("vlen-utf8: a string is longer than 4 GiB".into()))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_including_empty_and_unicode() {
        let items = ["", "a", "日本語", "emoji 🎉", "with\nnewline"];
        let enc = encode(&items).unwrap();
        assert_eq!(&enc[..4], &5u32.to_le_bytes());
        assert_eq!(decode(&enc, 5, "c").unwrap(), items);
    }

    #[test]
    fn malformed_chunks_are_corrupt() {
        let enc = encode(&["abc", "de"]).unwrap();
        assert_eq!(decode(&enc, 3, "c").unwrap_err().kind(), "corrupt_chunk");
        assert_eq!(
            decode(&enc[..enc.len() - 1], 2, "c").unwrap_err().kind(),
            "corrupt_chunk"
        );
        let mut bad = enc.clone();
        bad[8] = 0xff; // inside "abc"
        let e = decode(&bad, 2, "chunk 'c/0'").unwrap_err();
        assert!(e.message().contains("UTF-8") && e.message().contains("chunk 'c/0'"));
        let mut extra = enc;
        extra.push(0);
        assert_eq!(decode(&extra, 2, "c").unwrap_err().kind(), "corrupt_chunk");
    }
}
