//! Walking a container (in memory, or in a spooled temporary file): a ZIP's central directory one entry at a time, an
//! OLE2 compound file's directory, handing each entry a container signature names to the
//! matching (see the parent module). A container that cannot be read, or a named entry whose
//! bytes cannot, ends the walk with a message naming the entry.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path};

use super::{ContainerReadError, Matching};

/// Walks a ZIP (the whole archive, read through the readers `open` makes: one for the
/// central directory, one for the entries), with bounds: the central directory is read one
/// entry at a time and never held whole, as `formats::unzip` does.
pub(super) fn walk_zip<R: Read + Seek>(
    open: impl Fn() -> R,
    m: &mut Matching<'_>,
) -> Result<(), ContainerReadError> {
    let mut it = zip::unstable::read::ZipIterable::try_new(open(), zip::read::Config::default())
        .map_err(ContainerReadError::NotZip)?;
    let mut body = open();
    let files = it.files().map_err(ContainerReadError::NotZip)?;
    for (index, e) in files.enumerate() {
        let e = e.map_err(|source| ContainerReadError::ZipEntry { index, source })?;
        if e.is_dir() {
            continue;
        }
        let Ok(name) = e.name().map(|n| n.trim_end_matches('\0').to_string()) else { continue };
        let Some(p) = m.wanted(&name) else { continue };
        // An entry that cannot be read (an unsupported compression method, damaged data)
        // meets no signature; the others may still match.
        let examined = match e.with_reader(&mut body, zip::ZipReadOptions::new()) {
            Ok(mut r) => m.examine(p, &mut r),
            Err(err) => Err(std::io::Error::other(err)),
        };
        if let Err(source) = examined {
            m.unread(p, ContainerReadError::Entry { what: "ZIP entry", name, source });
        }
        if m.all_seen() {
            break;
        }
    }
    Ok(())
}

/// An OLE2 entry's path as DROID names it: its names below the root, each trimmed of
/// control characters and spaces at either end (`\u{1}CompObj` is `CompObj`), joined by `/`.
fn droid_name(path: &Path) -> String {
    let names: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => {
                Some(n.to_string_lossy().trim_matches(|c| c <= ' ').to_string())
            }
            _ => None,
        })
        .collect();
    names.join("/")
}

/// Walks an OLE2 compound file (the whole file, read through the readers `open` makes) with
/// the `cfb` crate: streams a signature names are read (as far as their signatures need),
/// storages count by name.
pub(super) fn walk_ole2<R: Read + Seek>(
    open: impl Fn() -> R,
    m: &mut Matching<'_>,
) -> Result<(), ContainerReadError> {
    let padded = ZeroPadded::new(open()).map_err(ContainerReadError::NotOle2)?;
    let mut cf = cfb::CompoundFile::open(padded).map_err(ContainerReadError::NotOle2)?;
    // The directory is in memory already (cfb reads it whole); only wanted names are kept.
    let wanted: Vec<(usize, bool, std::path::PathBuf)> = cf
        .walk()
        .filter(|e| !e.is_root())
        .filter_map(|e| Some((m.wanted(&droid_name(e.path()))?, e.is_stream(), e.path().into())))
        .collect();
    for (p, is_stream, path) in wanted {
        if !is_stream {
            m.name_only(p);
            continue;
        }
        let shown = droid_name(&path);
        let examined = cf.open_stream(&path).and_then(|mut r| m.examine(p, &mut r));
        if let Err(source) = examined {
            m.unread(p, ContainerReadError::Entry { what: "OLE2 stream", name: shown, source });
        }
    }
    Ok(())
}

/// Most bytes [`ZeroPadded`] adds past a file's end: its FAT may map sectors the file lacks.
const MAX_PADDING: u64 = 16 * 1024 * 1024;

/// An OLE2 file read as if zeros followed its end as far as its FAT maps sectors. Word and
/// its peers write files whose last FAT sector maps sectors past the end of the file; DROID
/// and siegfried read them, the `cfb` crate refuses them ("FAT has 128 entries, but file has
/// only 34 sectors"). A stream that does reach past the end reads zeros, which no container
/// signature names; the padding is bounded by [`MAX_PADDING`].
struct ZeroPadded<R> {
    inner: R,
    real: u64,
    len: u64,
    pos: u64,
}

impl<R: Read + Seek> ZeroPadded<R> {
    fn new(mut inner: R) -> std::io::Result<ZeroPadded<R>> {
        let real = inner.seek(SeekFrom::End(0))?;
        inner.seek(SeekFrom::Start(0))?;
        let mut header = [0u8; 0x30];
        inner.read_exact(&mut header)?;
        let shift = u16::from_le_bytes([header[0x1E], header[0x1F]]);
        let fat_sectors =
            u32::from_le_bytes([header[0x2C], header[0x2D], header[0x2E], header[0x2F]]);
        let sector = 1u64 << shift.clamp(7, 16);
        // Each FAT sector maps sector/4 sectors; the header takes one sector's room.
        let mapped = u64::from(fat_sectors).saturating_mul(sector / 4).saturating_mul(sector);
        let len = mapped.saturating_add(sector).clamp(real, real.saturating_add(MAX_PADDING));
        Ok(ZeroPadded { inner, real, len, pos: 0 })
    }
}

impl<R: Read + Seek> Read for ZeroPadded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.len {
            return Ok(0);
        }
        let n = if self.pos < self.real {
            let want = buf.len().min(usize::try_from(self.real - self.pos).unwrap_or(usize::MAX));
            self.inner.seek(SeekFrom::Start(self.pos))?;
            self.inner.read(&mut buf[..want])?
        } else {
            let want = buf.len().min(usize::try_from(self.len - self.pos).unwrap_or(usize::MAX));
            buf[..want].fill(0);
            want
        };
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R> Seek for ZeroPadded<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = super::super::window::seek_target(self.pos, self.len, to)?;
        Ok(self.pos)
    }
}
