//! Walking a container (in memory, or in a spooled temporary file): a ZIP's central directory one entry at a time, an
//! OLE2 compound file's directory, handing each entry a container signature names to the
//! matching (see the parent module). A container that cannot be read, or a named entry whose
//! bytes cannot, ends the walk with a message naming the entry.

use std::io::{Read, Seek};
use std::path::{Component, Path};

use super::Matching;

/// Walks a ZIP (the whole archive, read through the readers `open` makes: one for the
/// central directory, one for the entries), with bounds: the central directory is read one
/// entry at a time and never held whole, as `formats::unzip` does.
pub(super) fn walk_zip<R: Read + Seek>(
    open: impl Fn() -> R,
    m: &mut Matching<'_>,
) -> Result<(), String> {
    let mut it = zip::unstable::read::ZipIterable::try_new(open(), zip::read::Config::default())
        .map_err(|e| format!("not a readable ZIP archive ({e})"))?;
    let mut body = open();
    let files = it.files().map_err(|e| format!("ZIP central directory unreadable ({e})"))?;
    for (i, e) in files.enumerate() {
        let e = e.map_err(|e| format!("ZIP entry {i} unreadable ({e})"))?;
        if e.is_dir() {
            continue;
        }
        let Ok(name) = e.name().map(|n| n.trim_end_matches('\0').to_string()) else { continue };
        let Some(p) = m.wanted(&name) else { continue };
        let mut r = e
            .with_reader(&mut body, zip::ZipReadOptions::new())
            .map_err(|err| format!("ZIP entry {name:?} unreadable ({err})"))?;
        m.examine(p, &mut r).map_err(|err| format!("ZIP entry {name:?} damaged ({err})"))?;
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

/// Walks an OLE2 compound file (the whole file, read through `source`) with the `cfb` crate:
/// streams a signature names are read (as far as their signatures need), storages count by
/// name.
pub(super) fn walk_ole2<R: Read + Seek>(source: R, m: &mut Matching<'_>) -> Result<(), String> {
    let mut cf = cfb::CompoundFile::open(source)
        .map_err(|e| format!("not a readable OLE2 compound file ({e})"))?;
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
        let mut r =
            cf.open_stream(&path).map_err(|e| format!("OLE2 stream {shown:?} unreadable ({e})"))?;
        m.examine(p, &mut r).map_err(|e| format!("OLE2 stream {shown:?} damaged ({e})"))?;
    }
    Ok(())
}
