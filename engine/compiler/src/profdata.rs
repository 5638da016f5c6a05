//! LLVM's profile files, read and written here, so that a profile-guided
//! build needs only the Rust toolchain: an instrumented binary writes a
//! *raw* profile per process, and `rustc -Cprofile-use` reads only the
//! *indexed* format that `llvm-profdata merge` makes of them, a tool that
//! rustup does not install by default.
//!
//! Only what a build of ours writes is read: raw format version 10 (LLVM
//! 19 to 22), 64-bit little-endian, IR-level instrumentation, with value
//! profiles (the functions an indirect call reached, the sizes of memory
//! copies) and no coverage bitmaps or virtual tables. Anything else is
//! refused with a message, and the build falls back to an `llvm-profdata`
//! if one runs. The indexed file is format version 12, which LLVM 19 and
//! later read.
//!
//! The layouts follow LLVM's `InstrProfData.inc`, `InstrProfReader.cpp`,
//! `InstrProfWriter.cpp` and `OnDiskHashTable.h`, and so does the merge:
//! counts add up, an indirect call's target address becomes its
//! function's name hash (0 when it is not an instrumented function), and
//! a site's equal values are summed and kept most counted first. The
//! output was checked against `llvm-profdata merge` on this project's
//! profiles: the same functions, counts, value profiles and detailed
//! summary, and the same binary built from either file (docs/compiler.md,
//! "Profile-guided builds"); the tests hold it to that tool's merge of two
//! real profiles (`engine/compiler/testdata`).

use md5::{Digest, Md5};
use std::collections::BTreeMap;
use std::io::Read;

const RAW_MAGIC: u64 = 0xff6c_7072_6f66_7281;
const INDEXED_MAGIC: u64 = 0x8169_666f_7270_6cff;
const RAW_VERSION: u64 = 10;
const INDEXED_VERSION: u64 = 12;
/// The version's top byte holds the variant flags.
const VARIANT_MASKS: u64 = 0xff << 56;
/// IR-level instrumentation (what `-Cprofile-generate` does).
const IR_LEVEL: u64 = 1 << 56;
/// The flags a plain IR profile may carry: IR level, and "the entry
/// count is the first counter" (kept as read).
const ENTRY_FIRST: u64 = 1 << 58;
/// Size of a raw profile's data record: name and CFG hashes, four
/// pointer-sized fields, the counter count, three value-site counts, the
/// bitmap byte count (with two bytes of alignment before it).
const RAW_RECORD: usize = 64;
/// Value kinds: indirect-call targets, memory-operation sizes, virtual
/// tables (the last is never written for Rust).
const VALUE_KINDS: usize = 3;
const INDIRECT_CALL_TARGET: usize = 0;
/// A site's values are counted in a byte.
const MAX_VALUES_PER_SITE: usize = 255;
/// Separates names in a raw profile's names section.
const NAME_SEPARATOR: u8 = 1;
/// LLVM's default cutoffs of the detailed summary, in millionths of the
/// total count: the hot and cold thresholds the optimizer uses.
const CUTOFFS: [u64; 16] = [
    10_000, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000, 950_000, 990_000, 999_000,
    999_900, 999_990, 999_999,
];

/// The LLVM versions whose raw profiles this module reads, for messages.
pub const LLVM_READ: &str = "19 to 22";

/// Whether the raw profiles of LLVM `version` (as `rustc -vV` gives it,
/// "22.1.2") are in the format this module reads.
pub fn reads_llvm(version: &str) -> bool {
    let major = version.split('.').next().and_then(|m| m.trim().parse::<u32>().ok());
    major.is_some_and(|m| (19..=22).contains(&m))
}

/// What every instrumented function measured, merged over raw profiles:
/// by name, then by the function's CFG hash (one name may have several).
#[derive(Debug, Default, PartialEq)]
pub struct Profile {
    flags: u64,
    functions: BTreeMap<String, Records>,
}

/// One name's records, by CFG hash.
type Records = BTreeMap<u64, Record>;

/// A value kind's sites, each site's (value, count) pairs.
type Sites = Vec<Vec<(u64, u64)>>;

/// One function's counters, and per value kind its sites' values.
#[derive(Debug, Default, PartialEq)]
struct Record {
    counts: Vec<u64>,
    /// `sites[kind][site]`: (value, count), as [`merged_values`] keeps them.
    sites: [Sites; VALUE_KINDS],
}

impl Record {
    /// Adds `other`'s counts and values (same function, same CFG).
    fn merge(&mut self, other: Record) -> Result<(), String> {
        if self.counts.len() != other.counts.len() {
            return Err(format!(
                "{} counters in one profile, {} in another",
                self.counts.len(),
                other.counts.len()
            ));
        }
        for (k, c) in self.counts.iter_mut().zip(other.counts) {
            *k = k.saturating_add(c);
        }
        for (mine, theirs) in self.sites.iter_mut().zip(other.sites) {
            if mine.len() != theirs.len() {
                return Err(format!(
                    "{} value sites in one profile, {} in another",
                    mine.len(),
                    theirs.len()
                ));
            }
            for (site, values) in mine.iter_mut().zip(theirs) {
                site.extend(values);
                *site = merged_values(std::mem::take(site));
            }
        }
        Ok(())
    }

    /// Size of its value profile data in the indexed format.
    fn value_data_size(&self) -> usize {
        let kinds = self.sites.iter().filter(|s| !s.is_empty());
        8 + kinds
            .map(|sites| (8 + sites.len()).next_multiple_of(8) + 16 * sites.iter().map(Vec::len).sum::<usize>())
            .sum::<usize>()
    }
}

/// A site's values as LLVM's writer leaves them: equal values summed,
/// sorted by count, the larger first, ties by value (LLVM keeps a single
/// profile's ties in the order they came; ours are always sorted), and
/// the [`MAX_VALUES_PER_SITE`] most counted if there are more.
fn merged_values(mut values: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    values.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(values.len());
    for (v, c) in values {
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 = last.1.saturating_add(c),
            _ => out.push((v, c)),
        }
    }
    out.sort_by_key(|&(_, count)| std::cmp::Reverse(count));
    out.truncate(MAX_VALUES_PER_SITE);
    out
}

impl Profile {
    /// Adds a raw profile (same function, same hash: merged).
    pub fn add_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut r = Reader { bytes, at: 0 };
        if bytes.len() < 8 || r.u64()? != RAW_MAGIC {
            return Err("not a raw LLVM profile (64-bit, little-endian)".into());
        }
        let version = r.u64()?;
        if version & !VARIANT_MASKS != RAW_VERSION {
            return Err(format!(
                "raw profile format version {}: Rulesmith reads version {RAW_VERSION} (LLVM {LLVM_READ})",
                version & !VARIANT_MASKS
            ));
        }
        let flags = version & VARIANT_MASKS;
        if flags & IR_LEVEL == 0 || flags & !(IR_LEVEL | ENTRY_FIRST) != 0 {
            return Err(format!(
                "raw profile variant flags {:#x}: not a plain IR-level profile",
                flags >> 56
            ));
        }
        if !self.functions.is_empty() && flags != self.flags {
            return Err("raw profiles of different kinds".into());
        }
        let h = RawHeader::read(&mut r)?;
        if h.num_vtables != 0 || h.vtable_names_size != 0 || h.num_bitmap_bytes != 0 {
            return Err("virtual-table profiles or coverage bitmaps, which Rust does not make".into());
        }
        r.skip(h.binary_ids_size)?;
        let data = r.take(h.num_data.checked_mul(RAW_RECORD).ok_or("too many records")?)?;
        r.skip(h.padding_before_counters)?;
        let counters = r.take(h.num_counters.checked_mul(8).ok_or("too many counters")?)?;
        r.skip(h.padding_after_counters)?;
        r.skip(h.padding_after_bitmap)?;
        let names = names_by_hash(r.take(h.names_size)?)?;
        r.skip(h.names_size.next_multiple_of(8) - h.names_size)?;

        let heads = (0..h.num_data)
            .map(|i| RawRecord::read(&data[i * RAW_RECORD..(i + 1) * RAW_RECORD]))
            .collect::<Result<Vec<_>, _>>()?;
        // Indirect calls record target addresses; profiles name functions
        // by the hash of their names.
        let by_address: BTreeMap<u64, u64> = heads
            .iter()
            .filter(|d| d.function != 0)
            .map(|d| (d.function, d.name_ref))
            .collect();
        let mut read = Vec::with_capacity(heads.len());
        for (i, d) in heads.iter().enumerate() {
            // A record's counter pointer is relative to the record itself.
            let delta = h.counters_delta.wrapping_sub((i * RAW_RECORD) as u64);
            let offset = d.counter_ptr.wrapping_sub(delta);
            let start = usize::try_from(offset).ok().filter(|o| o % 8 == 0);
            let end = start.and_then(|s| d.num_counters.checked_mul(8)?.checked_add(s));
            let Some(raw) = start.zip(end).and_then(|(s, e)| counters.get(s..e)) else {
                return Err(format!("record {i}: counters past the end of the profile"));
            };
            let name = names
                .get(&d.name_ref)
                .ok_or_else(|| format!("record {i}: no name of hash {:#x}", d.name_ref))?;
            let mut record = Record {
                counts: raw.chunks_exact(8).map(le_u64).collect(),
                sites: Default::default(),
            };
            // The value data follow the names, a block per record with
            // value sites, in the records' order.
            if d.value_sites.iter().any(|&n| n > 0) {
                let block = read_value_data(&mut r).map_err(|e| format!("record {i}: {e}"))?;
                for (kind, (sites, &n)) in block.iter().zip(&d.value_sites).enumerate() {
                    if sites.len() != n as usize {
                        return Err(format!(
                            "record {i}: {n} value sites of kind {kind}, but data for {}",
                            sites.len()
                        ));
                    }
                }
                for (kind, sites) in block.into_iter().enumerate() {
                    record.sites[kind] = sites
                        .into_iter()
                        .map(|values| {
                            let values = values.into_iter().map(|(v, c)| {
                                if kind == INDIRECT_CALL_TARGET {
                                    (by_address.get(&v).copied().unwrap_or(0), c)
                                } else {
                                    (v, c)
                                }
                            });
                            merged_values(values.collect())
                        })
                        .collect();
                }
            }
            read.push((name.clone(), d.hash, record));
        }
        self.flags = flags;
        for (name, hash, record) in read {
            let records = self.functions.entry(name.clone()).or_default();
            match records.get_mut(&hash) {
                Some(kept) => kept.merge(record).map_err(|e| format!("{name}: {e}"))?,
                None => {
                    records.insert(hash, record);
                }
            }
        }
        Ok(())
    }

    /// The profile in LLVM's indexed format (version 12), what
    /// `-Cprofile-use` reads.
    pub fn to_indexed(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let put = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_le_bytes());
        let put32 = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        // Header: magic, version, unused, hash type (MD5), then the offsets
        // of the hash table, memory profile (none), binary ids, temporal
        // traces (none) and virtual table names, patched in below.
        for v in [INDEXED_MAGIC, INDEXED_VERSION | self.flags, 0, 0, 0, 0, 0, 0, 0] {
            put(&mut out, v);
        }
        let summary = self.summary();
        put(&mut out, summary.fields.len() as u64);
        put(&mut out, summary.entries.len() as u64);
        for f in summary.fields {
            put(&mut out, f);
        }
        for (cutoff, min_count, num_counts) in summary.entries {
            for v in [cutoff, min_count, num_counts] {
                put(&mut out, v);
            }
        }

        // An on-disk chained hash table keyed by function name: the
        // buckets' items right after the summary (readers also walk them in
        // order), then the bucket table, each bucket's offset from the
        // file's start (0: empty).
        let n = self.functions.len();
        let buckets = if n <= 2 { 1 } else { (n * 4 / 3 + 1).next_power_of_two() };
        let mut chains: Vec<Vec<(u64, &String, &Records)>> = vec![Vec::new(); buckets];
        for (name, records) in &self.functions {
            let hash = md5_low(name.as_bytes());
            chains[(hash as usize) & (buckets - 1)].push((hash, name, records));
        }
        let mut offsets = vec![0u64; buckets];
        for (b, chain) in chains.iter().enumerate() {
            if chain.is_empty() {
                continue;
            }
            offsets[b] = out.len() as u64;
            out.extend_from_slice(&(chain.len() as u16).to_le_bytes());
            for &(hash, name, records) in chain {
                let data_len: usize = records
                    .values()
                    .map(|r| 8 * (3 + r.counts.len()) + r.value_data_size())
                    .sum();
                put(&mut out, hash);
                put(&mut out, name.len() as u64);
                put(&mut out, data_len as u64);
                out.extend_from_slice(name.as_bytes());
                for (&cfg_hash, r) in records {
                    put(&mut out, cfg_hash);
                    put(&mut out, r.counts.len() as u64);
                    for &c in &r.counts {
                        put(&mut out, c);
                    }
                    // No bitmap bytes.
                    put(&mut out, 0);
                    // Value profile data: its size, its kinds, then per
                    // kind with sites: the kind, the site count, each
                    // site's value count (bytes, padded to 8), the values.
                    put32(&mut out, r.value_data_size() as u32);
                    put32(&mut out, r.sites.iter().filter(|s| !s.is_empty()).count() as u32);
                    for (kind, sites) in r.sites.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
                        put32(&mut out, kind as u32);
                        put32(&mut out, sites.len() as u32);
                        let header_end = out.len() - 8 + (8 + sites.len()).next_multiple_of(8);
                        out.extend(sites.iter().map(|v| v.len() as u8));
                        out.resize(header_end, 0);
                        for &(v, c) in sites.iter().flatten() {
                            put(&mut out, v);
                            put(&mut out, c);
                        }
                    }
                }
            }
        }
        out.resize(out.len().next_multiple_of(8), 0);
        let table = out.len() as u64;
        put(&mut out, buckets as u64);
        put(&mut out, n as u64);
        for o in offsets {
            put(&mut out, o);
        }
        // Binary ids and virtual table names: empty sections.
        let binary_ids = out.len() as u64;
        put(&mut out, 0);
        let vtable_names = out.len() as u64;
        put(&mut out, 0);
        for (field, value) in [(4, table), (6, binary_ids), (8, vtable_names)] {
            out[field * 8..field * 8 + 8].copy_from_slice(&value.to_le_bytes());
        }
        out
    }

    /// The profile summary LLVM's writer computes: the first counter of a
    /// function counts as its entry, the others as internal blocks; the
    /// detailed entries give, per cutoff, the least count among the
    /// largest counts that make up that share of the total.
    fn summary(&self) -> Summary {
        let (mut functions, mut blocks, mut max_entry, mut max_block, mut max_internal, mut total) =
            (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        let mut frequencies: BTreeMap<u64, u64> = BTreeMap::new();
        for r in self.functions.values().flat_map(|r| r.values()) {
            functions += 1;
            for (i, &c) in r.counts.iter().enumerate() {
                if i == 0 {
                    max_entry = max_entry.max(c);
                } else {
                    max_internal = max_internal.max(c);
                }
                max_block = max_block.max(c);
                total = total.saturating_add(c);
                blocks += 1;
                *frequencies.entry(c).or_default() += 1;
            }
        }
        let mut entries = Vec::with_capacity(CUTOFFS.len());
        let mut largest = frequencies.iter().rev();
        let (mut sum, mut seen, mut count) = (0u128, 0u64, 0u64);
        for cutoff in CUTOFFS {
            let desired = total as u128 * cutoff as u128 / 1_000_000;
            while sum < desired {
                let Some((&c, &freq)) = largest.next() else { break };
                count = c;
                sum += c as u128 * freq as u128;
                seen += freq;
            }
            entries.push((cutoff, count, seen));
        }
        Summary {
            fields: [functions, blocks, max_entry, max_block, max_internal, total],
            entries,
        }
    }
}

struct Summary {
    /// Functions, blocks, largest entry count, largest block count,
    /// largest internal block count, total count.
    fields: [u64; 6],
    /// (cutoff, least count, how many counts) per cutoff.
    entries: Vec<(u64, u64, u64)>,
}

/// A raw data record: what it measured is elsewhere in the file.
struct RawRecord {
    name_ref: u64,
    hash: u64,
    counter_ptr: u64,
    /// The function's address in the instrumented binary (0 when its
    /// address is never taken), for indirect-call targets.
    function: u64,
    num_counters: usize,
    value_sites: [u16; VALUE_KINDS],
}

impl RawRecord {
    fn read(bytes: &[u8]) -> Result<RawRecord, String> {
        let mut d = Reader { bytes, at: 0 };
        let (name_ref, hash, counter_ptr) = (d.u64()?, d.u64()?, d.u64()?);
        let _bitmap = d.u64()?;
        let function = d.u64()?;
        let _values = d.u64()?;
        let num_counters = d.u32()? as usize;
        let value_sites = [d.u16()?, d.u16()?, d.u16()?];
        Ok(RawRecord {
            name_ref,
            hash,
            counter_ptr,
            function,
            num_counters,
            value_sites,
        })
    }
}

/// One record's block of value data (the same layout as in the indexed
/// format): its size, its kinds, then per kind the site count, each
/// site's value count (bytes, padded to 8) and the (value, count) pairs.
/// Returns the values by kind and site (no sites for a kind not given).
fn read_value_data(r: &mut Reader<'_>) -> Result<[Sites; VALUE_KINDS], String> {
    let start = r.at;
    let size = r.u32()? as usize;
    let kinds = r.u32()?;
    let mut by_kind: [Sites; VALUE_KINDS] = Default::default();
    for _ in 0..kinds {
        let kind = r.u32()? as usize;
        let n = r.u32()? as usize;
        if kind >= VALUE_KINDS || !by_kind[kind].is_empty() {
            return Err(format!("value data of kind {kind} given twice or unknown"));
        }
        let counts = r.take(n)?.to_vec();
        r.skip((8 + n).next_multiple_of(8) - 8 - n)?;
        for c in counts {
            let values = (0..c)
                .map(|_| Ok((r.u64()?, r.u64()?)))
                .collect::<Result<_, String>>()?;
            by_kind[kind].push(values);
        }
    }
    if r.at - start != size {
        return Err(format!(
            "a value data block of {} bytes, said to be {size}",
            r.at - start
        ));
    }
    Ok(by_kind)
}

/// The raw header past its magic and version.
struct RawHeader {
    binary_ids_size: usize,
    num_data: usize,
    padding_before_counters: usize,
    num_counters: usize,
    padding_after_counters: usize,
    num_bitmap_bytes: usize,
    padding_after_bitmap: usize,
    names_size: usize,
    counters_delta: u64,
    num_vtables: u64,
    vtable_names_size: u64,
}

impl RawHeader {
    fn read(r: &mut Reader<'_>) -> Result<RawHeader, String> {
        let mut size = || {
            r.u64()
                .and_then(|v| usize::try_from(v).map_err(|_| "a size past memory".to_string()))
        };
        let h = RawHeader {
            binary_ids_size: size()?,
            num_data: size()?,
            padding_before_counters: size()?,
            num_counters: size()?,
            padding_after_counters: size()?,
            num_bitmap_bytes: size()?,
            padding_after_bitmap: size()?,
            names_size: size()?,
            counters_delta: {
                let counters = r.u64()?;
                // The bitmap and names deltas (addresses).
                r.u64()?;
                r.u64()?;
                counters
            },
            num_vtables: r.u64()?,
            vtable_names_size: r.u64()?,
        };
        // The last value kind.
        r.u64()?;
        Ok(h)
    }
}

/// The names section: chunks of a LEB128 length, a LEB128 compressed
/// length (0: stored as is) and the names, zlib-compressed or not,
/// separated by [`NAME_SEPARATOR`]. Keyed as the records refer to them,
/// by [`md5_low`].
fn names_by_hash(section: &[u8]) -> Result<BTreeMap<u64, String>, String> {
    let mut r = Reader { bytes: section, at: 0 };
    let mut names = BTreeMap::new();
    while r.at < section.len() {
        let plain_len = r.uleb128()?;
        let packed_len = r.uleb128()?;
        let text = if packed_len == 0 {
            r.take(plain_len)?.to_vec()
        } else {
            let mut text = Vec::with_capacity(plain_len);
            flate2::read::ZlibDecoder::new(r.take(packed_len)?)
                .read_to_end(&mut text)
                .map_err(|e| format!("names section: {e}"))?;
            text
        };
        if text.len() != plain_len {
            return Err("names section: a chunk of the wrong length".into());
        }
        for name in text.split(|&b| b == NAME_SEPARATOR).filter(|n| !n.is_empty()) {
            let name = String::from_utf8(name.to_vec()).map_err(|_| "names section: a name not in UTF-8")?;
            names.insert(md5_low(name.as_bytes()), name);
        }
    }
    Ok(names)
}

/// LLVM's `MD5Hash`: the digest's first 8 bytes, little-endian.
fn md5_low(bytes: &[u8]) -> u64 {
    let digest = Md5::digest(bytes);
    le_u64(&digest[..8])
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!("cut short: {n} bytes wanted at byte {}", self.at));
        };
        let b = &self.bytes[self.at..end];
        self.at = end;
        Ok(b)
    }

    fn skip(&mut self, n: usize) -> Result<(), String> {
        self.take(n).map(drop)
    }

    fn u64(&mut self) -> Result<u64, String> {
        self.take(8).map(le_u64)
    }

    fn u32(&mut self) -> Result<u32, String> {
        self.take(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn u16(&mut self) -> Result<u16, String> {
        self.take(2).map(|b| u16::from_le_bytes(b.try_into().expect("2 bytes")))
    }

    fn uleb128(&mut self) -> Result<usize, String> {
        let mut value = 0usize;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            value |= ((b & 0x7f) as usize) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("names section: a length of more than 64 bits".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata")
                .join(name),
        )
        .unwrap()
    }

    /// A record as read back: CFG hash, counts, and per kind with sites
    /// (kind, each site's (value, count) pairs).
    type Read = (u64, Vec<u64>, Vec<(u32, Sites)>);

    /// What an indexed profile holds, read back through its hash table
    /// the way LLVM looks a function up (bucket by the name's MD5): the
    /// variant flags, the summary's bytes and the records by name.
    fn read_indexed(bytes: &[u8]) -> (u64, Vec<u8>, BTreeMap<String, Vec<Read>>) {
        let mut r = Reader { bytes, at: 0 };
        assert_eq!(r.u64().unwrap(), INDEXED_MAGIC);
        let version = r.u64().unwrap();
        assert_eq!(version & !VARIANT_MASKS, INDEXED_VERSION);
        let header: Vec<u64> = (0..7).map(|_| r.u64().unwrap()).collect();
        let (fields, entries) = (r.u64().unwrap() as usize, r.u64().unwrap() as usize);
        let summary = bytes[r.at - 16..r.at + 8 * fields + 24 * entries].to_vec();
        let mut t = Reader {
            bytes,
            at: header[2] as usize,
        };
        let (buckets, entries) = (t.u64().unwrap(), t.u64().unwrap());
        assert!(buckets.is_power_of_two());
        let mut functions = BTreeMap::new();
        for b in 0..buckets {
            let offset = t.u64().unwrap() as usize;
            if offset == 0 {
                continue;
            }
            let mut item = Reader { bytes, at: offset };
            for _ in 0..item.u16().unwrap() {
                let hash = item.u64().unwrap();
                let (key_len, data_len) = (item.u64().unwrap() as usize, item.u64().unwrap() as usize);
                let name = String::from_utf8(item.take(key_len).unwrap().to_vec()).unwrap();
                assert_eq!(hash, md5_low(name.as_bytes()), "{name}");
                assert_eq!(hash & (buckets - 1), b, "{name} is found in its bucket");
                let mut data = Reader {
                    bytes: item.take(data_len).unwrap(),
                    at: 0,
                };
                let mut records = Vec::new();
                while data.at < data_len {
                    let cfg_hash = data.u64().unwrap();
                    let n = data.u64().unwrap();
                    let counts = (0..n).map(|_| data.u64().unwrap()).collect();
                    assert_eq!(data.u64().unwrap(), 0, "no bitmap bytes");
                    let kinds = read_value_data(&mut data).unwrap_or_else(|e| panic!("{name}: {e}"));
                    let kinds = (0u32..).zip(kinds).filter(|(_, sites)| !sites.is_empty()).collect();
                    records.push((cfg_hash, counts, kinds));
                }
                records.sort();
                functions.insert(name, records);
            }
        }
        assert_eq!(functions.len() as u64, entries);
        (version & VARIANT_MASKS, summary, functions)
    }

    fn merged(raw: &[&[u8]]) -> Result<Profile, String> {
        let mut p = Profile::default();
        for r in raw {
            p.add_raw(r)?;
        }
        Ok(p)
    }

    #[test]
    fn merging_gives_what_llvm_profdata_gives() {
        let (a, b) = (fixture("a.profraw"), fixture("b.profraw"));
        let ours = merged(&[&a, &b]).unwrap().to_indexed();
        let theirs = fixture("a-b-by-llvm-profdata-19.profdata");
        let (flags, summary, functions) = read_indexed(&ours);
        assert_eq!(flags, IR_LEVEL);
        // Both kinds of value profile were read: the fixture calls through
        // function pointers (one of them to std, a target of no name,
        // hash 0) and copies slices of nine sizes.
        let kinds: Vec<(u32, &Sites)> = functions
            .values()
            .flatten()
            .flat_map(|(_, _, kinds)| kinds.iter().map(|(k, sites)| (*k, sites)))
            .collect();
        let targets: Vec<u64> = kinds
            .iter()
            .filter(|k| k.0 == 0)
            .flat_map(|k| k.1.iter().flatten().map(|v| v.0))
            .collect();
        assert!(targets.contains(&0) && targets.iter().any(|&t| t != 0), "{targets:?}");
        assert!(
            kinds.iter().any(|k| k.0 == 1 && k.1.iter().any(|s| s.len() == 9)),
            "{kinds:?}"
        );
        assert_eq!((flags, summary, functions), read_indexed(&theirs));
    }

    #[test]
    fn the_counts_and_values_of_runs_add_up() {
        let (a, b) = (fixture("a.profraw"), fixture("b.profraw"));
        let once = merged(&[&a]).unwrap();
        let twice = merged(&[&a, &b]).unwrap();
        assert_eq!(
            once.functions.keys().collect::<Vec<_>>(),
            twice.functions.keys().collect::<Vec<_>>()
        );
        fn records(p: &Profile) -> Vec<&Record> {
            p.functions.values().flat_map(|r| r.values()).collect()
        }
        assert!(
            records(&once).iter().flat_map(|r| &r.counts).any(|&c| c > 100),
            "the loops were counted"
        );
        for (name, records) in &once.functions {
            for (hash, r) in records {
                let doubled = Record {
                    counts: r.counts.iter().map(|c| 2 * c).collect(),
                    sites: r.sites.clone().map(|k| {
                        k.into_iter()
                            .map(|s| s.into_iter().map(|(v, c)| (v, 2 * c)).collect())
                            .collect()
                    }),
                };
                assert_eq!(twice.functions[name][hash], doubled, "{name}");
            }
        }
        // The summary counts every block: the largest count is one of them.
        let s = twice.summary();
        let largest = records(&twice).iter().flat_map(|r| &r.counts).max().copied();
        assert_eq!(Some(s.fields[3]), largest);
        assert_eq!(s.entries.len(), CUTOFFS.len());
        assert!(s.entries.windows(2).all(|w| w[0].1 >= w[1].1 && w[0].2 <= w[1].2));
    }

    #[test]
    fn a_site_keeps_its_values_summed_most_counted_first_and_at_most_255() {
        assert_eq!(
            merged_values(vec![(5, 1), (2, 3), (5, 4), (9, 3), (1, 3)]),
            vec![(5, 5), (1, 3), (2, 3), (9, 3)]
        );
        let many: Vec<(u64, u64)> = (0..300).map(|v| (v, v % 100)).collect();
        let kept = merged_values(many);
        assert_eq!(kept.len(), MAX_VALUES_PER_SITE);
        assert_eq!(kept[..3], [(99, 99), (199, 99), (299, 99)], "the most counted first");
        assert!(kept.iter().all(|&(_, c)| c >= 15), "the least counted are dropped");
    }

    #[test]
    fn what_is_not_our_kind_of_raw_profile_is_refused_with_the_reason() {
        let a = fixture("a.profraw");
        let with = |at: usize, bytes: &[u8]| {
            let mut p = a.clone();
            p[at..at + bytes.len()].copy_from_slice(bytes);
            merged(&[&p]).unwrap_err()
        };
        assert!(with(0, b"not raw!").contains("not a raw LLVM profile"));
        assert!(merged(&[&a[..4]]).unwrap_err().contains("not a raw LLVM profile"));
        let e = with(8, &[11]);
        assert!(e.contains("format version 11") && e.contains("LLVM 19 to 22"), "{e}");
        assert!(with(15, &[0]).contains("not a plain IR-level profile"));
        // Coverage bitmaps (the header's seventh size).
        assert!(with(56, &[1]).contains("coverage bitmaps"));
        let ids = u64::from_le_bytes(a[16..24].try_into().unwrap()) as usize;
        let record = |i: usize| 128 + ids + i * RAW_RECORD;
        // The first record's counter pointer, moved far past the counters.
        let e = with(record(0) + 16, &[0, 0, 0, 0, 0, 0, 0, 0x40]);
        assert!(e.contains("record 0: counters past the end"), "{e}");
        // A record that says it has value sites of a kind its block lacks.
        let e = with(record(0) + 56, &[1]);
        assert!(e.contains("record 0:") && e.contains("value"), "{e}");
        for cut in [100, 300, a.len() - 20] {
            let e = merged(&[&a[..cut]]).unwrap_err();
            assert!(e.contains("cut short"), "{cut}: {e}");
        }
        // A function whose counters changed between profiles.
        let mut p = merged(&[&a]).unwrap();
        let (name, records) = p.functions.iter_mut().next().unwrap();
        let name = name.clone();
        records.values_mut().next().unwrap().counts.push(0);
        let e = p.add_raw(&a).unwrap_err();
        assert!(e.contains(&name) && e.contains("counters in one profile"), "{e}");
    }

    #[test]
    fn the_llvm_versions_read_are_those_of_raw_format_10() {
        for (v, reads) in [
            ("22.1.2", true),
            ("19.1.7", true),
            ("18.1.8", false),
            ("23.0.0", false),
            ("", false),
        ] {
            assert_eq!(reads_llvm(v), reads, "{v}");
        }
    }
}
