//! A codec chain (v3-core.rst "Codecs"): its parsing, the JSON it writes
//! back and what the engine asks of it. Running it on chunks is in run.rs.

use super::{
    bytes, cast_value, categorize, fixed_string, registry, scale_offset, sharding, spec, transpose,
    vlen, BytesToBytes, Mode,
};
use crate::dtype::{DataType, Endian};
use crate::error::{Result, ZarrError};
use serde_json::{Map, Value};

mod run;

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
pub(super) fn bytes_to_bytes(
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
}
