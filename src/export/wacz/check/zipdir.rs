//! The ZIP's central directory and local headers, read here rather than through the `zip`
//! crate: the crate keeps one member per name (the last), and does not compare a local header
//! with its central directory entry, while a WACZ reader that streams the file sees the local
//! headers and one that seeks sees the directory; both views must agree.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};

/// End of central directory record.
const EOCD: &[u8; 4] = b"PK\x05\x06";
/// ZIP64 end of central directory locator.
const EOCD64_LOCATOR: &[u8; 4] = b"PK\x06\x07";
/// ZIP64 end of central directory record.
const EOCD64: &[u8; 4] = b"PK\x06\x06";
/// Central directory file header.
const CENTRAL: &[u8; 4] = b"PK\x01\x02";
/// Local file header.
const LOCAL: &[u8; 4] = b"PK\x03\x04";
/// The end record and its longest comment.
const EOCD_SEARCH: u64 = 22 + 0xFFFF;
/// General purpose flag: sizes and CRC follow the data, the local header holds zeros.
const FLAG_DESCRIPTOR: u16 = 1 << 3;

/// One central directory entry, with what its local header says.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The name as stored (UTF-8, or shown lossily).
    pub name: String,
    /// Byte offset of the central directory entry in the file.
    pub central_at: u64,
    pub method: u16,
    pub crc: u32,
    pub compressed: u64,
    pub size: u64,
    /// Byte offset of the local header.
    pub header_start: u64,
    /// Byte offset of the data (after the local header); `None` when the local header
    /// cannot be read.
    pub data_start: Option<u64>,
    /// How the local header differs from the central directory entry (empty when it agrees).
    pub local_differs: Vec<String>,
}

/// Why the central directory cannot be read: the file is not a usable ZIP.
#[derive(Debug, thiserror::Error)]
pub(super) enum ZipDirError {
    /// Reading failed.
    #[error("{why}", why = crate::layout::describe_io(.0))]
    Io(#[from] io::Error),
    /// The structure is broken at a byte offset.
    #[error("{what} (at byte {at})")]
    Broken { at: u64, what: String },
}

fn broken(at: u64, what: impl Into<String>) -> ZipDirError {
    ZipDirError::Broken { at, what: what.into() }
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(a)
}

fn read_at(file: &File, at: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(at))?;
    let mut buf = vec![0u8; len];
    f.read_exact(&mut buf)?;
    Ok(buf)
}

/// Where the central directory is: (offset, size, entries).
fn locate(file: &File, len: u64) -> Result<(u64, u64, u64), ZipDirError> {
    let start = len.saturating_sub(EOCD_SEARCH);
    let tail = read_at(file, start, (len - start) as usize)?;
    // The last end record whose comment reaches the file's end exactly; else the last one.
    let found: Vec<usize> = tail
        .windows(4)
        .enumerate()
        .filter(|(i, w)| *w == EOCD && i + 22 <= tail.len())
        .map(|(i, _)| i)
        .collect();
    let Some(&i) = found
        .iter()
        .rev()
        .find(|&&i| i + 22 + u16_at(&tail, i + 20) as usize == tail.len())
        .or(found.last())
    else {
        return Err(broken(len, "no end of central directory record"));
    };
    let eocd_at = start + i as u64;
    let e = &tail[i..i + 22];
    let (mut entries, mut size, mut offset) =
        (u16_at(e, 10) as u64, u32_at(e, 12) as u64, u32_at(e, 16) as u64);
    let mut dir_end = eocd_at;
    if eocd_at >= 20 {
        let loc = read_at(file, eocd_at - 20, 20)?;
        if &loc[..4] == EOCD64_LOCATOR {
            let at64 = u64_at(&loc, 8);
            if at64.checked_add(56).is_none_or(|end| end > eocd_at - 20) {
                return Err(broken(eocd_at - 20, "ZIP64 end record lies outside the file"));
            }
            let r = read_at(file, at64, 56)?;
            if &r[..4] != EOCD64 {
                return Err(broken(at64, "no ZIP64 end of central directory record"));
            }
            (entries, size, offset) = (u64_at(&r, 32), u64_at(&r, 40), u64_at(&r, 48));
            dir_end = at64;
        }
    }
    if offset.checked_add(size) != Some(dir_end) {
        let what = format!(
            "the central directory ({size} bytes at {offset}) does not end where the end \
             record is"
        );
        return Err(broken(eocd_at, what));
    }
    Ok((offset, size, entries))
}

/// Reads the central directory, and each entry's local header.
pub(super) fn read(file: &File, len: u64) -> Result<Vec<Entry>, ZipDirError> {
    let (offset, size, count) = locate(file, len)?;
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(offset))?;
    let mut dir = BufReader::with_capacity(1 << 16, f.take(size));
    let mut at = offset;
    let mut out = Vec::new();
    let mut fixed = [0u8; 46];
    for _ in 0..count {
        dir.read_exact(&mut fixed)
            .map_err(|_| broken(at, "the central directory ends before its last entry"))?;
        if &fixed[..4] != CENTRAL {
            return Err(broken(at, "not a central directory entry"));
        }
        let (nlen, xlen, clen) =
            (u16_at(&fixed, 28) as usize, u16_at(&fixed, 30) as usize, u16_at(&fixed, 32));
        let mut var = vec![0u8; nlen + xlen + clen as usize];
        dir.read_exact(&mut var).map_err(|_| broken(at, "central directory entry cut short"))?;
        let mut e = Entry {
            name: String::from_utf8_lossy(&var[..nlen]).into_owned(),
            central_at: at,
            method: u16_at(&fixed, 10),
            crc: u32_at(&fixed, 16),
            compressed: u32_at(&fixed, 20) as u64,
            size: u32_at(&fixed, 24) as u64,
            header_start: u32_at(&fixed, 42) as u64,
            data_start: None,
            local_differs: Vec::new(),
        };
        let extra = &var[nlen..nlen + xlen];
        zip64_central(extra, &mut e);
        local(file, len, u16_at(&fixed, 8), &var[..nlen], &mut e)?;
        at += 46 + var.len() as u64;
        out.push(e);
    }
    Ok(out)
}

/// The ZIP64 extra field's values, for those the fixed fields mark as `0xFFFFFFFF`.
fn zip64_central(extra: &[u8], e: &mut Entry) {
    let Some(mut v) = zip64_field(extra) else { return };
    for field in [&mut e.size, &mut e.compressed, &mut e.header_start] {
        if *field == 0xFFFF_FFFF && v.len() >= 8 {
            *field = u64_at(v, 0);
            v = &v[8..];
        }
    }
}

/// The data of the ZIP64 extended information extra field (id 1), if any.
fn zip64_field(mut extra: &[u8]) -> Option<&[u8]> {
    while extra.len() >= 4 {
        let (id, n) = (u16_at(extra, 0), u16_at(extra, 2) as usize);
        let data = extra.get(4..4 + n)?;
        if id == 1 {
            return Some(data);
        }
        extra = &extra[4 + n..];
    }
    None
}

/// Reads `e`'s local header: where its data starts, and how it differs from the central
/// directory entry (`flags` from it, `name` as stored there).
fn local(file: &File, len: u64, flags: u16, name: &[u8], e: &mut Entry) -> io::Result<()> {
    let end = e.header_start.checked_add(30 + name.len() as u64);
    if end.is_none_or(|end| end > len) {
        return Ok(());
    }
    let head = read_at(file, e.header_start, 30)?;
    if &head[..4] != LOCAL {
        e.local_differs.push(format!("no local header at byte {}", e.header_start));
        return Ok(());
    }
    let (nlen, xlen) = (u16_at(&head, 26) as u64, u16_at(&head, 28) as u64);
    let var_end = e.header_start + 30 + nlen + xlen;
    if var_end > len {
        return Ok(());
    }
    let var = read_at(file, e.header_start + 30, (nlen + xlen) as usize)?;
    e.data_start = Some(var_end);
    let local_name = &var[..nlen as usize];
    let mut differs = Vec::new();
    if local_name != name {
        differs.push(format!("its name is `{}`", String::from_utf8_lossy(local_name)));
    }
    if u16_at(&head, 8) != e.method {
        differs.push(format!("compression method {}, not {}", u16_at(&head, 8), e.method));
    }
    let local_flags = u16_at(&head, 6);
    if flags & FLAG_DESCRIPTOR == 0 && local_flags & FLAG_DESCRIPTOR == 0 {
        let (mut csize, mut size) = (u32_at(&head, 18) as u64, u32_at(&head, 22) as u64);
        if let Some(v) = zip64_field(&var[nlen as usize..])
            && v.len() >= 16
        {
            if size == 0xFFFF_FFFF {
                size = u64_at(v, 0);
            }
            if csize == 0xFFFF_FFFF {
                csize = u64_at(v, 8);
            }
        }
        let crc = u32_at(&head, 14);
        if crc != e.crc {
            differs.push(format!("CRC-32 {crc:08x}, not {:08x}", e.crc));
        }
        if (csize, size) != (e.compressed, e.size) {
            differs.push(format!(
                "sizes {csize} (compressed) and {size}, not {} and {}",
                e.compressed, e.size
            ));
        }
    }
    if !differs.is_empty() {
        e.local_differs.push(format!(
            "the local header at byte {} differs from the central directory entry at byte {}: {}",
            e.header_start,
            e.central_at,
            differs.join("; ")
        ));
    }
    Ok(())
}
