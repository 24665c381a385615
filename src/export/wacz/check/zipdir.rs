//! The ZIP's central directory and local headers, read here rather than through the `zip`
//! crate: the crate keeps one member per name (the last), and does not compare a local header
//! with its central directory entry, while a WACZ reader that streams the file sees the local
//! headers and one that seeks sees the directory; both views must agree.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::os::unix::fs::FileExt;

use crate::formats::segment::FileRange;
use crate::layout::{SHOWN_NAME, clip};

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

/// Central directory entries read at most: a WACZ holds a few members per WARC, and each
/// entry kept costs memory (about 100 bytes and its name).
pub(super) const MAX_ENTRIES: u64 = 200_000;

/// One central directory entry, with what its local header says (kept small: the directory
/// may list many thousands).
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The name as stored (UTF-8, or shown lossily).
    pub name: Box<str>,
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
    /// How the local header differs from the central directory entry (`None` when it agrees).
    pub local_differs: Option<Box<str>>,
    /// Sizes and CRC-32 follow the data (a data descriptor).
    pub descriptor: bool,
}

/// Where the ZIP lies in the file (its entries are handed on one by one as they are read).
#[derive(Debug)]
pub(super) struct ZipDir {
    /// Bytes before the ZIP that its offsets do not count (a prefix added after the ZIP was
    /// written): every offset is read this much further, as Python's zipfile does.
    pub shift: u64,
    /// Byte offset of the central directory in the file.
    pub dir_start: u64,
}

/// Where the central directory is, as the end record says.
struct Located {
    offset: u64,
    size: u64,
    entries: u64,
    /// The central directory's true start in the file (its end lies where the end record is).
    dir_start: u64,
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

/// `len` bytes at `at`, read in place: no shared file offset is moved (a reader of the
/// central directory goes on at its own position meanwhile).
fn read_at(file: &File, at: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, at)?;
    Ok(buf)
}

/// `name` as a message shows it: lossily decoded, at most [`SHOWN_NAME`] characters.
pub(super) fn shown(name: &[u8]) -> String {
    clip(&String::from_utf8_lossy(name), SHOWN_NAME)
}

/// Where the central directory is. A ZIP64 end record is looked for right before its
/// locator, and a directory that ends short of the end record is taken to have a prefix
/// before it that its offsets do not count, as Python's zipfile reads both.
fn locate(file: &File, len: u64) -> Result<Located, ZipDirError> {
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
    if eocd_at >= 20 && &read_at(file, eocd_at - 20, 20)?[..4] == EOCD64_LOCATOR {
        let Some(at64) = eocd_at.checked_sub(20 + 56) else {
            return Err(broken(eocd_at - 20, "ZIP64 end record lies outside the file"));
        };
        let r = read_at(file, at64, 56)?;
        if &r[..4] != EOCD64 {
            return Err(broken(at64, "no ZIP64 end of central directory record"));
        }
        (entries, size, offset) = (u64_at(&r, 32), u64_at(&r, 40), u64_at(&r, 48));
        dir_end = at64;
    }
    let Some(dir_start) = dir_end.checked_sub(size).filter(|&start| start >= offset) else {
        let what = format!(
            "the central directory ({size} bytes at {offset}) does not end where the end \
             record is"
        );
        return Err(broken(eocd_at, what));
    };
    Ok(Located { offset, size, entries, dir_start })
}

/// Reads the central directory, and each entry's local header, handing each entry to `each`
/// with the central directory's start (no list of them is held here).
pub(super) fn read(
    file: &File,
    len: u64,
    each: &mut dyn FnMut(Entry, u64),
) -> Result<ZipDir, ZipDirError> {
    let found = locate(file, len)?;
    if found.entries > MAX_ENTRIES {
        let what = format!(
            "the central directory lists {} entries; a WACZ of more than {MAX_ENTRIES} is not read",
            found.entries
        );
        return Err(broken(found.dir_start, what));
    }
    let shift = found.dir_start - found.offset;
    let mut dir =
        BufReader::with_capacity(1 << 16, FileRange::new(file, found.dir_start, found.size));
    let mut at = found.dir_start;
    let mut fixed = [0u8; 46];
    for _ in 0..found.entries {
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
            name: String::from_utf8_lossy(&var[..nlen]).into(),
            central_at: at,
            method: u16_at(&fixed, 10),
            crc: u32_at(&fixed, 16),
            compressed: u32_at(&fixed, 20) as u64,
            size: u32_at(&fixed, 24) as u64,
            header_start: u32_at(&fixed, 42) as u64,
            data_start: None,
            local_differs: None,
            descriptor: u16_at(&fixed, 8) & FLAG_DESCRIPTOR != 0,
        };
        let extra = &var[nlen..nlen + xlen];
        zip64_central(extra, &mut e);
        // Offsets count from the ZIP's start; a prefix before it moves them all.
        e.header_start = e.header_start.saturating_add(shift);
        local(file, len, &var[..nlen], &mut e)?;
        at += 46 + var.len() as u64;
        each(e, found.dir_start);
    }
    Ok(ZipDir { shift, dir_start: found.dir_start })
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
/// directory entry (`name` as stored there).
fn local(file: &File, len: u64, name: &[u8], e: &mut Entry) -> io::Result<()> {
    let end = e.header_start.checked_add(30 + name.len() as u64);
    if end.is_none_or(|end| end > len) {
        return Ok(());
    }
    let head = read_at(file, e.header_start, 30)?;
    if &head[..4] != LOCAL {
        e.local_differs = Some(format!("no local header at byte {}", e.header_start).into());
        return Ok(());
    }
    let (nlen, xlen) = (u16_at(&head, 26) as u64, u16_at(&head, 28) as u64);
    let var_end = e.header_start + 30 + nlen + xlen;
    if var_end > len {
        return Ok(());
    }
    e.data_start = Some(var_end);
    let mut differs = Vec::new();
    // The local name is read only when it could be the same: a name of another length
    // differs whatever it holds (and is shown only in part).
    if nlen as usize != name.len() {
        let part = read_at(file, e.header_start + 30, (nlen as usize).min(SHOWN_NAME * 4))?;
        differs.push(format!("its name is `{}` ({nlen} bytes)", shown(&part)));
    } else if read_at(file, e.header_start + 30, nlen as usize)? != name {
        let part = read_at(file, e.header_start + 30, (nlen as usize).min(SHOWN_NAME * 4))?;
        differs.push(format!("its name is `{}`", shown(&part)));
    }
    let extra = match xlen {
        0 => Vec::new(),
        _ => read_at(file, e.header_start + 30 + nlen, xlen as usize)?,
    };
    if u16_at(&head, 8) != e.method {
        differs.push(format!("compression method {}, not {}", u16_at(&head, 8), e.method));
    }
    e.descriptor |= u16_at(&head, 6) & FLAG_DESCRIPTOR != 0;
    if !e.descriptor {
        let (mut csize, mut size) = (u32_at(&head, 18) as u64, u32_at(&head, 22) as u64);
        if let Some(v) = zip64_field(&extra)
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
        e.local_differs = Some(format!(
            "the local header at byte {} differs from the central directory entry at byte {}: {}",
            e.header_start,
            e.central_at,
            differs.join("; ")
        )
        .into());
    }
    Ok(())
}
