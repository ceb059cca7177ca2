//! Shards of strings (`vlen-utf8` or fixed-width inner chunks): strings
//! move between the shard and its inner chunks one by one, not as bytes.

use super::*;

/// The offset of each element of a block of `shape`, visited in C order,
/// in a buffer with `strides`, plus `base`.
fn offsets(shape: &[usize], strides: &[usize], base: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(shape.iter().product());
    for_each_index(shape, |_, idx| {
        out.push(base + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>())
    });
    out
}

impl Sharding {
    fn fill_string(&self) -> Result<String> {
        String::from_utf8(self.inner.fill().to_vec()).map_err(|_| {
            ZarrError::Metadata("the fill value of a string array is not UTF-8".into())
        })
    }

    /// A whole shard of strings -> its strings in C order of `shard_shape`.
    /// Inner chunks are decoded in parallel; missing ones read as the fill
    /// value.
    pub fn decode_shard_strings(
        &self,
        data: &[u8],
        shard_shape: &[usize],
        ctx: &CodecContext,
    ) -> Result<Vec<String>> {
        let jobs = self.stored_inner_chunks(data, shard_shape, ctx)?;
        let decoded: Vec<Vec<String>> = collect_tasks(&jobs, pool::threads(), |(_, entry)| {
            let bytes = self.inner_bytes(data, *entry, ctx.what)?.to_vec();
            self.inner.decode_strings(bytes, &self.inner_shape, ctx)
        })?;
        let n: usize = shard_shape.iter().product();
        let mut out = vec![self.fill_string()?; n];
        let out_strides = c_strides(shard_shape);
        let inner_strides = self.inner.stored_strides(&self.inner_shape);
        // Where each element of an inner chunk (in C order) is in its buffer.
        let src = offsets(&self.inner_shape, &inner_strides, 0);
        for ((idx, _), mut strings) in jobs.iter().zip(decoded) {
            let base = self.inner_base(idx, &out_strides);
            for (&from, to) in src
                .iter()
                .zip(offsets(&self.inner_shape, &out_strides, base))
            {
                out[to] = std::mem::take(&mut strings[from]);
            }
        }
        Ok(out)
    }

    /// Strings in C order of `shard_shape` -> a whole shard. Inner chunks
    /// are encoded in parallel; those equal to the fill value everywhere
    /// are not stored.
    pub fn encode_shard_strings<S: AsRef<str> + Sync>(
        &self,
        items: &[S],
        shard_shape: &[usize],
    ) -> Result<Vec<u8>> {
        let (grid, positions) = self.inner_positions(shard_shape)?;
        let fill = self.fill_string()?;
        let n: usize = shard_shape.iter().product();
        if items.len() != n {
            return Err(ZarrError::Type(format!(
                "{} strings for a shard of {n} elements",
                items.len()
            )));
        }
        let data_strides = c_strides(shard_shape);
        let inner_strides = self.inner.stored_strides(&self.inner_shape);
        let dst = offsets(&self.inner_shape, &inner_strides, 0);
        let inner_n: usize = self.inner_shape.iter().product();
        let encoded: Vec<Option<Vec<u8>>> = collect_tasks(
            &positions,
            pool::threads(),
            |idx| -> Result<Option<Vec<u8>>> {
                let base = self.inner_base(idx, &data_strides);
                let mut buf: Vec<&str> = vec![""; inner_n];
                for (&to, from) in dst
                    .iter()
                    .zip(offsets(&self.inner_shape, &data_strides, base))
                {
                    buf[to] = items[from].as_ref();
                }
                if buf.iter().all(|s| *s == fill) {
                    return Ok(None);
                }
                self.inner.encode_strings(&buf, &self.inner_shape).map(Some)
            },
        )?;
        Ok(self.assemble(encoded, &grid)?.concat())
    }
}
