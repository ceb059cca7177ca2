//! Codec chains (v3-core.rst "Codecs"). Codecs are sorted by what they take
//! and give: array -> array (`transpose`), array -> bytes (`bytes`), and
//! bytes -> bytes (`gzip`, `zstd`, `blosc`, `crc32c`). The engine never
//! permutes element data for `transpose`: it reads the composed order as
//! strides (see `transpose::stored_strides`) and scatters straight into R's
//! column-major buffer.

use crate::dtype::DataType;
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Mutex;

pub mod astype;
pub mod bitround;
pub mod blosc;
pub mod bytes;
pub mod bz2;
pub mod cast_value;
pub mod categorize;
pub mod checksum32;
pub mod crc32c;
pub mod delta;
pub mod fixed_string;
pub mod fixedscaleoffset;
pub mod gzip;
pub mod level;
mod limited;
pub mod lz4;
pub mod lzma;
pub mod numeric;
pub mod packbits;
pub mod pcodec;
pub mod quantize;
pub mod registry;
pub mod scale_offset;
pub mod sharding;
pub mod shuffle;
#[cfg(test)]
mod test_util;
pub mod transpose;
pub mod v2;
pub mod value;
pub mod vlen;
pub mod zfp;
pub mod zlib;
pub mod zstd;

pub use registry::{configuration_members, spec, spec_of_v2_id, CodecSpec, REGISTRY};

use crate::dtype::Endian;

/// What a codec takes and gives, which fixes its place in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ArrayToArray,
    ArrayToBytes,
    BytesToBytes,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::ArrayToArray => "array -> array",
            Mode::ArrayToBytes => "array -> bytes",
            Mode::BytesToBytes => "bytes -> bytes",
        }
    }
}

/// A configuration object from its members.
pub(crate) fn config(members: &[(&str, Value)]) -> Map<String, Value> {
    members
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Warnings raised while decoding in worker threads, handed to R afterwards.
#[derive(Debug, Default)]
pub struct Warnings(Mutex<Vec<String>>);

impl Warnings {
    pub fn push(&self, msg: String) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(msg);
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// What a decode may need besides its input.
pub struct CodecContext<'a> {
    /// A checksum mismatch is an error (true) or a warning (false, the default).
    pub strict_checksums: bool,
    pub warnings: &'a Warnings,
    /// Names the chunk in messages, e.g. "array '/t' chunk 'c/0/1'".
    pub what: &'a str,
}

impl CodecContext<'_> {
    /// A checksum mismatch, described by `msg`: an error under
    /// `strict_checksums`, else a warning (the data is still returned).
    pub fn mismatch(&self, msg: String) -> Result<()> {
        if self.strict_checksums {
            return Err(ZarrError::Checksum(msg));
        }
        self.warnings.push(msg);
        Ok(())
    }
}

pub trait BytesToBytes: Send + Sync + std::fmt::Debug {
    /// The codec's declaration in the registry.
    fn spec(&self) -> &'static CodecSpec;
    fn name(&self) -> &'static str {
        self.spec().name
    }
    /// The configuration as the codec writes it to zarr.json.
    fn configuration(&self) -> Map<String, Value>;
    fn encode(&self, input: Vec<u8>) -> Result<Vec<u8>>;
    /// `encode` into `out`, whose memory is reused (its contents are
    /// replaced); None where the codec cannot, and `encode` must be used.
    fn encode_into(&self, _input: &[u8], _out: &mut Vec<u8>) -> Option<Result<()>> {
        None
    }
    /// Decode `input`. `decoded_len` is the size the output must have when
    /// this is the first codec after array -> bytes (lets decompressors
    /// allocate once). The bytes may belong to a larger buffer (an inner
    /// chunk in a shard fetched whole), so codecs read them where they are.
    fn decode_slice(
        &self,
        input: &[u8],
        decoded_len: Option<usize>,
        ctx: &CodecContext,
    ) -> Result<Vec<u8>>;
    /// `decode_slice` of bytes the codec may keep: a codec whose output is
    /// its input cut short (crc32c) gives back the same buffer.
    fn decode(
        &self,
        input: Vec<u8>,
        decoded_len: Option<usize>,
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        self.decode_slice(&input, decoded_len, ctx)
    }
    /// `encode` of the elements of a chunk of `shape` (C order, after the
    /// transposes): array -> bytes codecs that compress fields (zfp)
    /// need it; the others ignore it.
    fn encode_shaped(&self, input: Vec<u8>, _shape: &[usize]) -> Result<Vec<u8>> {
        self.encode(input)
    }
    /// `decode_slice` into the elements of a chunk of `shape`.
    fn decode_shaped(
        &self,
        input: &[u8],
        _shape: &[usize],
        decoded_len: Option<usize>,
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        self.decode_slice(input, decoded_len, ctx)
    }
    /// Whether the codec reads its input's elements as little endian
    /// whatever the array's byte order (bitround, whose configuration has
    /// no type string to say it).
    fn little_endian_input(&self) -> bool {
        false
    }
    /// The `{"name": ..., "configuration": ...}` entry of zarr.json (a
    /// codec without members writes its name alone, as zarr-python does).
    fn to_json(&self) -> Value {
        let cfg = self.configuration();
        let mut entry = Map::new();
        entry.insert("name".into(), self.name().into());
        // zarr-python's numcodecs.* codecs refuse an entry without one.
        if !cfg.is_empty() || self.name().starts_with("numcodecs.") {
            entry.insert("configuration".into(), Value::Object(cfg));
        }
        Value::Object(entry)
    }
}

/// The array -> bytes codec of a chain.
#[derive(Debug)]
pub enum ArrayToBytes {
    /// `bytes`; `endian` is None only for one-byte types.
    Bytes { endian: Option<Endian> },
    /// `sharding_indexed`: the chunk is a shard of inner chunks.
    Sharding(Box<sharding::Sharding>),
    /// `vlen-utf8`: strings.
    VlenUtf8,
    /// `numpy.fixed_string`: strings of NumPy's fixed-width dtypes (Zarr v2).
    FixedString(fixed_string::FixedString),
    /// `numcodecs.categorize`: strings as positions in a list of labels.
    Categorize(categorize::Categorize),
}

/// An array -> array codec that computes on element values.
#[derive(Debug)]
pub enum ValueCodec {
    ScaleOffset(scale_offset::ScaleOffset),
    CastValue(cast_value::CastValue),
}

impl ValueCodec {
    fn name(&self) -> &'static str {
        match self {
            ValueCodec::ScaleOffset(_) => scale_offset::NAME,
            ValueCodec::CastValue(_) => cast_value::NAME,
        }
    }

    /// Elements of the codec's input type -> of its output type.
    fn encode(&self, data: Vec<u8>) -> Result<Vec<u8>> {
        match self {
            ValueCodec::ScaleOffset(c) => {
                let mut data = data;
                c.encode(&mut data)?;
                Ok(data)
            }
            ValueCodec::CastValue(c) => c.encode(&data),
        }
    }

    fn decode(&self, data: Vec<u8>) -> Result<Vec<u8>> {
        match self {
            ValueCodec::ScaleOffset(c) => {
                let mut data = data;
                c.decode(&mut data)?;
                Ok(data)
            }
            ValueCodec::CastValue(c) => c.decode(&data),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            ValueCodec::ScaleOffset(c) => c.to_json(),
            ValueCodec::CastValue(c) => c.to_json(),
        }
    }
}

/// The array -> array codecs in chain order: indices into the chain's
/// transposes and value codecs (elementwise codecs commute with a
/// transpose, so only the order of the JSON needs it).
#[derive(Debug, Clone, Copy)]
enum ArrayToArray {
    Transpose(usize),
    Value(usize),
}

/// A parsed, validated `codecs` list.
#[derive(Debug)]
pub struct CodecChain {
    /// Each transpose `order` in chain order (kept to write them back as given).
    pub transposes: Vec<Vec<usize>>,
    /// `scale_offset` and `cast_value`, in chain order.
    values: Vec<ValueCodec>,
    array_to_array: Vec<ArrayToArray>,
    /// The data type the array -> bytes codec stores: the array's, or the
    /// last `cast_value`'s.
    stored_dtype: DataType,
    pub array_to_bytes: ArrayToBytes,
    pub bytes_to_bytes: Vec<Box<dyn BytesToBytes>>,
    dtype: DataType,
    /// Native-endian bytes of the fill value (sharding fills missing inner
    /// chunks with it, and does not store inner chunks equal to it).
    fill: Vec<u8>,
}

fn codec_name_and_config(v: &Value) -> Result<(String, Map<String, Value>)> {
    match v {
        Value::String(s) => Ok((s.clone(), Map::new())),
        Value::Object(o) => {
            let name = o
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| ZarrError::Metadata(format!("codec without a name: {v}")))?;
            let config = match o.get("configuration") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(c)) => c.clone(),
                Some(other) => {
                    return Err(ZarrError::Metadata(format!(
                        "codec '{name}' has a configuration that is not an object: {other}"
                    )))
                }
            };
            Ok((name.to_string(), config))
        }
        _ => Err(ZarrError::Metadata(format!(
            "codec entry is not an object: {v}"
        ))),
    }
}

/// The `bytes` codec's byte order. After numcodecs' filters (which
/// zarr-python 3 places before it) it orders their output, which the
/// engine produces in the filters' own order, little endian: absent for a
/// one-byte output, it is taken as little.
fn filtered_endian(
    config: &Map<String, Value>,
    dtype: DataType,
    filters: &[Box<dyn BytesToBytes>],
) -> Result<Option<Endian>> {
    let Some(first) = filters.first() else {
        return bytes::parse_endian(config, dtype);
    };
    match bytes::parse_endian(config, DataType::UInt8)? {
        Some(Endian::Big) if dtype.size() > 1 => Err(ZarrError::Unsupported(format!(
            "codec '{}' before a big-endian 'bytes' codec is not supported",
            first.name()
        ))),
        _ if dtype.size() > 1 => Ok(Some(Endian::Little)),
        _ => Ok(None),
    }
}

/// Build a bytes -> bytes codec by name; `None` if the name is no codec
/// here, an error if it names a codec of another mode.
fn bytes_to_bytes(
    name: &str,
    config: &Map<String, Value>,
    dtype: DataType,
) -> Result<Option<Box<dyn BytesToBytes>>> {
    match spec(name) {
        Some(s) if s.build.is_some() => s.build_bytes(config, dtype).map(Some),
        Some(_) => Ok(None),
        None => match registry::numcodecs_alias(name, config, dtype)? {
            Some((s, config)) => s.build_bytes(&config, dtype).map(Some),
            None => Ok(None),
        },
    }
}

/// One bytes -> bytes codec from its zarr.json entry (for the R codec
/// classes, which encode and decode a single step).
pub fn bytes_codec_from_json(v: &Value, dtype: DataType) -> Result<Box<dyn BytesToBytes>> {
    let (name, config) = codec_name_and_config(v)?;
    bytes_to_bytes(&name, &config, dtype)?
        .ok_or_else(|| ZarrError::Unsupported(format!("'{name}' is not a bytes -> bytes codec")))
}

impl CodecChain {
    /// Parse a codec list for chunks of `ndim` dimensions of `dtype`, whose
    /// fill value has the native-endian bytes `fill`.
    pub fn from_json(
        codecs: &[Value],
        dtype: DataType,
        fill: &[u8],
        ndim: usize,
    ) -> Result<CodecChain> {
        let mut transposes = Vec::new();
        let mut values: Vec<ValueCodec> = Vec::new();
        let mut array_to_array = Vec::new();
        let mut array_to_bytes = None;
        let mut b2b: Vec<Box<dyn BytesToBytes>> = Vec::new();
        // The type and fill value the next codec receives.
        let array_dtype = dtype;
        let mut dtype = dtype;
        let mut stored_fill = fill.to_vec();
        // numcodecs' filters that zarr-python 3 writes as array -> array
        // codecs before `bytes`: they run on the elements right after it.
        let mut filters: Vec<Box<dyn BytesToBytes>> = Vec::new();
        for v in codecs {
            let (name, config) = codec_name_and_config(v)?;
            let a2a = matches!(
                name.as_str(),
                transpose::NAME | scale_offset::NAME | cast_value::NAME
            );
            if a2a && array_to_bytes.is_some() {
                return Err(ZarrError::Metadata(format!(
                    "codec '{name}' (array -> array) must come before the array -> bytes codec"
                )));
            }
            let a2b = match name.as_str() {
                transpose::NAME => {
                    if let Some(f) = filters.first() {
                        return Err(ZarrError::Unsupported(format!(
                            "codec 'transpose' after codec '{}' is not supported",
                            f.name()
                        )));
                    }
                    array_to_array.push(ArrayToArray::Transpose(transposes.len()));
                    transposes.push(transpose::parse_order(&config, ndim)?);
                    continue;
                }
                scale_offset::NAME | cast_value::NAME => {
                    // (numcodecs' filters run right after `bytes`: one
                    // before this codec would run in the wrong order)
                    if let Some(f) = filters.first() {
                        return Err(ZarrError::Unsupported(format!(
                            "codec '{name}' after codec '{}' is not supported",
                            f.name()
                        )));
                    }
                    let codec = if name == scale_offset::NAME {
                        ValueCodec::ScaleOffset(scale_offset::ScaleOffset::from_config(
                            &config, dtype,
                        )?)
                    } else {
                        ValueCodec::CastValue(cast_value::CastValue::from_config(&config, dtype)?)
                    };
                    // Missing chunks and shards' missing inner chunks hold
                    // the fill value as each codec passes it on.
                    stored_fill = codec.encode(stored_fill).map_err(|e| {
                        ZarrError::Metadata(format!(
                            "the fill value cannot be encoded: {}",
                            e.message()
                        ))
                    })?;
                    if let ValueCodec::CastValue(c) = &codec {
                        dtype = c.target();
                    }
                    array_to_array.push(ArrayToArray::Value(values.len()));
                    values.push(codec);
                    continue;
                }
                bytes::NAME if dtype == DataType::String => {
                    return Err(ZarrError::Metadata(format!(
                        "strings need the 'vlen-utf8' (or '{}') codec, not 'bytes'",
                        fixed_string::NAME
                    )))
                }
                bytes::NAME => ArrayToBytes::Bytes {
                    endian: filtered_endian(&config, dtype, &filters)?,
                },
                sharding::NAME => ArrayToBytes::Sharding(Box::new(
                    sharding::Sharding::from_config(&config, dtype, &stored_fill, ndim)?,
                )),
                vlen::NAME if dtype == DataType::String => ArrayToBytes::VlenUtf8,
                fixed_string::NAME if dtype == DataType::String => {
                    ArrayToBytes::FixedString(fixed_string::FixedString::from_config(&config)?)
                }
                categorize::NAME if dtype == DataType::String => {
                    ArrayToBytes::Categorize(categorize::Categorize::from_config(&config)?)
                }
                vlen::NAME | fixed_string::NAME | categorize::NAME => {
                    return Err(ZarrError::Metadata(format!(
                        "codec '{name}' is for strings, not {}",
                        dtype.name()
                    )))
                }
                "vlen-bytes" => {
                    return Err(ZarrError::Unsupported(format!(
                        "codec '{name}' is not supported yet"
                    )))
                }
                other => match bytes_to_bytes(other, &config, dtype)? {
                    Some(c) if array_to_bytes.is_none() && c.spec().mode == Mode::ArrayToArray => {
                        filters.push(c);
                        continue;
                    }
                    // numcodecs' serializers (pcodec): in place of `bytes`
                    // (zarr-python 3), or right after it (Zarr v2's
                    // compressor), they take the little-endian elements.
                    Some(c) if c.spec().mode == Mode::ArrayToBytes => {
                        let endian = (dtype.size() > 1).then_some(Endian::Little);
                        let plain = match &array_to_bytes {
                            None => true,
                            Some(ArrayToBytes::Bytes { endian: e }) if b2b.is_empty() && *e == endian => false,
                            Some(_) => {
                                return Err(ZarrError::Metadata(format!(
                                    "codec '{other}' takes the place of 'bytes' (little endian), after array -> array codecs only"
                                )))
                            }
                        };
                        b2b.push(c);
                        if plain {
                            ArrayToBytes::Bytes { endian }
                        } else {
                            continue;
                        }
                    }
                    Some(c) => {
                        if array_to_bytes.is_none() {
                            return Err(ZarrError::Metadata(format!(
                                "codec '{other}' (bytes -> bytes) must come after the array -> bytes codec"
                            )));
                        }
                        b2b.push(c);
                        continue;
                    }
                    None => return Err(ZarrError::Unsupported(format!("unknown codec '{other}'"))),
                },
            };
            if array_to_bytes.is_some() {
                return Err(ZarrError::Metadata(
                    "more than one array -> bytes codec".into(),
                ));
            }
            array_to_bytes = Some(a2b);
        }
        let array_to_bytes = array_to_bytes.ok_or_else(|| {
            ZarrError::Metadata(
                "the codecs list has no array -> bytes codec (such as 'bytes')".into(),
            )
        })?;
        if !filters.is_empty() && !matches!(array_to_bytes, ArrayToBytes::Bytes { .. }) {
            return Err(ZarrError::Unsupported(format!(
                "codec '{}' before an array -> bytes codec other than 'bytes' is not supported",
                filters[0].name()
            )));
        }
        filters.append(&mut b2b);
        let b2b = filters;
        if let ArrayToBytes::Bytes {
            endian: Some(Endian::Big),
        } = array_to_bytes
        {
            if let Some(c) = b2b.iter().find(|c| c.little_endian_input()) {
                return Err(ZarrError::Unsupported(format!(
                    "codec '{}' on big-endian elements is not supported",
                    c.name()
                )));
            }
        }
        if let ArrayToBytes::FixedString(f) = &array_to_bytes {
            // Missing chunks read as the fill value, so it must be storable.
            let text = std::str::from_utf8(fill).map_err(|_| {
                ZarrError::Metadata("the fill value of a string array is not UTF-8".into())
            })?;
            if let Some(why) = f.refusal(text) {
                return Err(ZarrError::Metadata(format!("fill value: {why}")));
            }
        }
        if array_dtype != DataType::String && fill.len() != array_dtype.size() {
            return Err(ZarrError::Metadata(format!(
                "a fill value of {} bytes for {}",
                fill.len(),
                array_dtype.name()
            )));
        }
        Ok(CodecChain {
            transposes,
            values,
            array_to_array,
            stored_dtype: dtype,
            array_to_bytes,
            bytes_to_bytes: b2b,
            dtype: array_dtype,
            fill: fill.to_vec(),
        })
    }

    pub fn to_json(&self) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .array_to_array
            .iter()
            .map(|a| match *a {
                ArrayToArray::Transpose(i) => transpose::to_json(&self.transposes[i]),
                ArrayToArray::Value(i) => self.values[i].to_json(),
            })
            .collect();
        // The leading array -> array filters stand before `bytes`, where
        // zarr-python 3 expects them.
        let filters = self
            .bytes_to_bytes
            .iter()
            .take_while(|c| c.spec().mode == Mode::ArrayToArray)
            .count();
        let (before, mut after) = self.bytes_to_bytes.split_at(filters);
        out.extend(before.iter().map(|c| c.to_json()));
        match &self.array_to_bytes {
            // A serializer of numcodecs' stands for `bytes` and itself.
            ArrayToBytes::Bytes { .. }
                if after
                    .first()
                    .is_some_and(|c| c.spec().mode == Mode::ArrayToBytes) =>
            {
                out.push(after[0].to_json());
                after = &after[1..];
            }
            ArrayToBytes::Bytes { endian } => out.push(bytes::to_json(*endian)),
            ArrayToBytes::Sharding(s) => out.push(s.to_json()),
            ArrayToBytes::VlenUtf8 => {
                out.push(serde_json::json!({"name": "vlen-utf8", "configuration": {}}))
            }
            ArrayToBytes::FixedString(f) => out.push(f.to_json()),
            ArrayToBytes::Categorize(c) => out.push(c.to_json()),
        }
        out.extend(after.iter().map(|c| c.to_json()));
        out
    }

    /// The order of the stored (encoded) chunk's dimensions: stored dim `i`
    /// is logical dim `order[i]`. None when there is no transpose.
    pub fn order(&self) -> Option<Vec<usize>> {
        let mut it = self.transposes.iter();
        let mut acc = it.next()?.clone();
        for o in it {
            acc = transpose::compose(&acc, o);
        }
        Some(acc)
    }

    /// Element strides of each logical dimension in a decoded chunk: the
    /// array -> bytes codec lays its input out in C order, and its input is
    /// the chunk permuted by the transposes.
    pub fn stored_strides(&self, chunk_shape: &[usize]) -> Vec<usize> {
        transpose::stored_strides(chunk_shape, self.order().as_deref())
    }

    /// The chunk shape as the array -> bytes codec sees it (after transposes).
    pub fn encoded_shape(&self, chunk_shape: &[usize]) -> Vec<usize> {
        match self.order() {
            Some(o) => o.iter().map(|&d| chunk_shape[d]).collect(),
            None => chunk_shape.to_vec(),
        }
    }

    /// The sharding codec when a chunk can be read one inner chunk at a
    /// time: sharding is the array -> bytes codec and nothing transforms
    /// the shard around it. Shards of strings are always read whole (the
    /// inner-chunk path scatters fixed-size elements).
    pub fn partial_sharding(&self) -> Option<&sharding::Sharding> {
        match &self.array_to_bytes {
            ArrayToBytes::Sharding(s)
                if self.array_to_array.is_empty()
                    && self.bytes_to_bytes.is_empty()
                    && self.dtype != DataType::String =>
            {
                Some(s)
            }
            _ => None,
        }
    }

    /// Whether a stored chunk is its elements themselves, native endian,
    /// laid out with `stored_strides`: only transposes and `bytes` in the
    /// machine's byte order (or of one-byte elements), nothing after.
    pub fn stores_plain_elements(&self) -> bool {
        self.values.is_empty()
            && self.bytes_to_bytes.is_empty()
            && matches!(
                self.array_to_bytes,
                ArrayToBytes::Bytes { endian } if endian.is_none_or(|e| e == Endian::native())
            )
    }

    /// The names of the value codecs (`scale_offset`, `cast_value`), in
    /// chain order.
    pub fn value_codec_names(&self) -> Vec<&'static str> {
        self.values.iter().map(ValueCodec::name).collect()
    }

    /// The sharding codec, if it is the array -> bytes codec.
    pub fn sharding(&self) -> Option<&sharding::Sharding> {
        match &self.array_to_bytes {
            ArrayToBytes::Sharding(s) => Some(s),
            _ => None,
        }
    }

    /// The fixed-width string codec that stores the elements, if any (also
    /// inside shards): it limits what strings can be written.
    pub fn fixed_string(&self) -> Option<&fixed_string::FixedString> {
        match &self.array_to_bytes {
            ArrayToBytes::FixedString(f) => Some(f),
            ArrayToBytes::Sharding(s) => s.inner.fixed_string(),
            _ => None,
        }
    }

    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    pub fn fill(&self) -> &[u8] {
        &self.fill
    }

    /// Stored bytes of one chunk of `chunk_shape` -> its native-endian
    /// elements, laid out with `stored_strides(chunk_shape)`.
    pub fn decode(
        &self,
        data: Vec<u8>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        self.decode_stored(Cow::Owned(data), chunk_shape, ctx)
    }

    /// `decode` of stored bytes inside a larger buffer, copied only where
    /// a codec needs its own (see `BytesToBytes::decode_slice`).
    pub fn decode_slice(
        &self,
        data: &[u8],
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        self.decode_stored(Cow::Borrowed(data), chunk_shape, ctx)
    }

    fn decode_stored(
        &self,
        data: Cow<'_, [u8]>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let stored = self.decode_to_stored(data, chunk_shape, ctx)?;
        let mut data = stored;
        for c in self.values.iter().rev() {
            data = c.decode(data).map_err(|e| {
                e.into_corrupt()
                    .context(&format!("{} ({})", ctx.what, c.name()))
            })?;
        }
        Ok(data)
    }

    /// Stored bytes -> the elements the array -> array codecs decode.
    fn decode_to_stored(
        &self,
        data: Cow<'_, [u8]>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<u8>> {
        let decoded_len = chunk_shape.iter().product::<usize>() * self.stored_dtype.size();
        let mut data = data;
        for (i, c) in self.bytes_to_bytes.iter().enumerate().rev() {
            let hint = match (&self.array_to_bytes, i) {
                (ArrayToBytes::Bytes { .. }, 0) => Some(decoded_len),
                _ => None,
            };
            let decoded = match data {
                // A serializer of numcodecs' decodes elements of the
                // chunk's shape.
                d if c.spec().mode == Mode::ArrayToBytes => {
                    c.decode_shaped(&d, &self.encoded_shape(chunk_shape), hint, ctx)
                }
                Cow::Owned(v) => c.decode(v, hint, ctx),
                Cow::Borrowed(b) => c.decode_slice(b, hint, ctx),
            };
            data = Cow::Owned(decoded.map_err(|e| {
                e.into_corrupt()
                    .context(&format!("{} ({})", ctx.what, c.name()))
            })?);
        }
        let mut data = data.into_owned();
        match &self.array_to_bytes {
            ArrayToBytes::Bytes { endian } => {
                if data.len() != decoded_len {
                    return Err(ZarrError::CorruptChunk(format!(
                        "{}: decoded to {} bytes, expected {} ({} elements of {})",
                        ctx.what,
                        data.len(),
                        decoded_len,
                        decoded_len / self.stored_dtype.size(),
                        self.stored_dtype.name()
                    )));
                }
                if endian.is_some_and(|e| e != Endian::native()) {
                    bytes::swap_bytes(&mut data, self.stored_dtype.swap_unit());
                }
                Ok(data)
            }
            ArrayToBytes::Sharding(s) => {
                s.decode_shard(&data, &self.encoded_shape(chunk_shape), ctx)
            }
            ArrayToBytes::VlenUtf8 | ArrayToBytes::FixedString(_) | ArrayToBytes::Categorize(_) => {
                Err(ZarrError::Type(format!(
                    "{}: strings decode with decode_strings",
                    ctx.what
                )))
            }
        }
    }

    /// Stored bytes of one chunk of strings -> the strings, laid out with
    /// `stored_strides(chunk_shape)`.
    pub fn decode_strings(
        &self,
        data: Vec<u8>,
        chunk_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<String>> {
        let mut data = data;
        for c in self.bytes_to_bytes.iter().rev() {
            data = c.decode(data, None, ctx).map_err(|e| {
                e.into_corrupt()
                    .context(&format!("{} ({})", ctx.what, c.name()))
            })?;
        }
        let n = chunk_shape.iter().product();
        match &self.array_to_bytes {
            ArrayToBytes::VlenUtf8 => vlen::decode(&data, n, ctx.what),
            ArrayToBytes::FixedString(f) => f.decode(&data, n, ctx.what),
            ArrayToBytes::Categorize(c) => c.decode(&data, n, ctx.what),
            ArrayToBytes::Sharding(s) if self.dtype == DataType::String => {
                s.decode_shard_strings(&data, &self.encoded_shape(chunk_shape), ctx)
            }
            _ => Err(ZarrError::Unsupported(format!(
                "{}: this codec chain does not hold strings",
                ctx.what
            ))),
        }
    }

    /// Strings of one chunk of `chunk_shape` (laid out with
    /// `stored_strides`) -> stored bytes.
    pub fn encode_strings<S: AsRef<str> + Sync>(
        &self,
        items: &[S],
        chunk_shape: &[usize],
    ) -> Result<Vec<u8>> {
        let mut data = match &self.array_to_bytes {
            ArrayToBytes::VlenUtf8 => vlen::encode(items)?,
            ArrayToBytes::FixedString(f) => f.encode(items)?,
            ArrayToBytes::Categorize(c) => c.encode(items)?,
            ArrayToBytes::Sharding(s) if self.dtype == DataType::String => {
                s.encode_shard_strings(items, &self.encoded_shape(chunk_shape))?
            }
            _ => {
                return Err(ZarrError::Unsupported(
                    "this codec chain does not hold strings".into(),
                ))
            }
        };
        for c in &self.bytes_to_bytes {
            data = c.encode(data)?;
        }
        Ok(data)
    }

    /// `encode` of `data` into `out`, reusing the memory of both: the
    /// stored bytes replace `out`'s contents, and `data` is left holding
    /// some buffer its caller may fill again (it may be `out`'s old one).
    /// A chunk writer that keeps its buffers thus allocates nothing per
    /// chunk where the last codec can write into a given buffer (zstd).
    pub fn encode_into(
        &self,
        data: &mut Vec<u8>,
        chunk_shape: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        for c in &self.values {
            *data = c.encode(std::mem::take(data))?;
        }
        match &self.array_to_bytes {
            ArrayToBytes::Bytes { endian } => {
                if endian.is_some_and(|e| e != Endian::native()) {
                    bytes::swap_bytes(data, self.stored_dtype.swap_unit());
                }
            }
            ArrayToBytes::Sharding(s) => {
                *data = s.encode_shard(data, &self.encoded_shape(chunk_shape))?;
            }
            ArrayToBytes::VlenUtf8 | ArrayToBytes::FixedString(_) | ArrayToBytes::Categorize(_) => {
                return Err(ZarrError::Type("strings encode with encode_strings".into()))
            }
        }
        let Some((last, rest)) = self.bytes_to_bytes.split_last() else {
            std::mem::swap(data, out);
            return Ok(());
        };
        let shaped = |c: &dyn BytesToBytes, data: Vec<u8>| {
            if c.spec().mode == Mode::ArrayToBytes {
                c.encode_shaped(data, &self.encoded_shape(chunk_shape))
            } else {
                c.encode(data)
            }
        };
        for c in rest {
            *data = shaped(c.as_ref(), std::mem::take(data))?;
        }
        if last.spec().mode == Mode::ArrayToBytes {
            *out = shaped(last.as_ref(), std::mem::take(data))?;
            return Ok(());
        }
        match last.encode_into(data, out) {
            Some(done) => done,
            None => {
                *out = last.encode(std::mem::take(data))?;
                Ok(())
            }
        }
    }

    /// Native-endian elements of one chunk (laid out with `stored_strides`)
    /// -> stored bytes.
    pub fn encode(&self, mut data: Vec<u8>, chunk_shape: &[usize]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(&mut data, chunk_shape, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod registry_tests;

#[cfg(test)]
mod filters_tests;
