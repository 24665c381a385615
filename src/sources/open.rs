//! The one dispatch on input shape: [`open`] recognises a source ([`super::detect`]), unpacks
//! a mirror's `.zip`, reads a mirror, and hands back what each shape is read through. Packaging
//! (`crate::Packager`) and listing (`crate::pages::list`) both start here, so a new shape, or a
//! new way of reading one, is added once.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::capture::{CaptureError, CaptureSource};
use super::mirror::{self, Mirror, MirrorError, MirrorOptions};
use super::nedlib::{NedlibDate, NedlibOptions};
use super::pandas::{self, Instance, PandasError, Zone};
use super::unzip::{self, Unpacked};
use super::{CaptureShape, Input, Source, SourceError, detect};

/// How sources are read, beyond their paths: what `package` and `pages` take alike.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Time zone of PANDAS instance names and HTTrack log times (`--timezone`).
    pub zone: Zone,
    /// The date NEDLIB captures get (`--nedlib-date`).
    pub nedlib_date: NedlibDate,
    /// How many times its size a mirror's `.zip` may unpack to (`--max-zip-expansion`).
    pub max_zip_expansion: u64,
    /// The site URL a mirror without a log stands for (`--url-prefix`).
    pub url_prefix: Option<String>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            zone: Zone::Utc,
            nedlib_date: NedlibDate::ServerDate,
            max_zip_expansion: unzip::DEFAULT_ZIP_EXPANSION,
            url_prefix: None,
        }
    }
}

/// Where and how a mirror's `.zip` is unpacked.
#[derive(Debug, Clone, Copy)]
pub struct Unzip<'a> {
    /// The folder the temporary unpacked copy is made in (made when missing).
    pub dir: &'a Path,
    /// Write only the first this many bytes of each page (listing reads no more); `None`:
    /// whole files, as packaging needs them.
    pub heads: Option<u64>,
}

/// A source recognised and opened, ready to be read.
#[derive(Debug)]
pub enum Opened {
    /// A Heritrix job or ARC/WARC files, with what was found and what was missing.
    Archives(Box<Source>),
    /// PANDAS instance directories, each read when its turn comes.
    Pandas(Instances),
    /// A wget or HTTrack mirror, read (from its unpacked `.zip`, kept while this lives).
    Mirror(Box<OpenedMirror>),
    /// A harvest read as captures (NEDLIB, Kulturarw3).
    Captures(CaptureHarvest),
}

/// PANDAS instance directories: one given, or those of a title directory.
#[derive(Debug)]
pub struct Instances {
    /// The instance directories, in name order.
    pub dirs: Vec<PathBuf>,
    /// True when a title directory was given (one package per instance).
    pub title: bool,
    zone: Zone,
}

impl Instances {
    /// Reads one instance (its file list is held open while the result lives: read one at a
    /// time).
    pub fn read(&self, dir: &Path) -> Result<Instance, PandasError> {
        pandas::read_instance(dir, self.zone)
    }
}

/// A mirror read, and the unpacked copy of its `.zip` when it came as one.
#[derive(Debug)]
pub struct OpenedMirror {
    /// The mirror.
    pub mirror: Mirror,
    /// The unpacked `.zip`, removed when dropped.
    pub unpacked: Option<Unpacked>,
}

/// A harvest whose source module yields captures, opened when read.
#[derive(Debug, Clone)]
pub struct CaptureHarvest {
    /// Its folder.
    pub dir: PathBuf,
    /// NEDLIB or Kulturarw3.
    pub shape: CaptureShape,
    nedlib: NedlibOptions,
}

impl CaptureHarvest {
    /// Opens its capture source.
    pub fn open(&self) -> Result<Box<dyn CaptureSource>, CaptureError> {
        super::open_captures(&self.dir, self.shape, self.nedlib)
    }
}

/// Why a source could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Of no shape webaip reads, or unreadable.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The `.zip` holds no mirror, or cannot be unpacked within its bounds.
    #[error(transparent)]
    Unzip(MirrorError),
    /// The mirror cannot be read.
    #[error(transparent)]
    Mirror(MirrorError),
    /// The folder a `.zip` is unpacked in cannot be made.
    #[error(
        "cannot make {}, the folder a mirror's zip is unpacked in: {}",
        super::path_text(path),
        crate::layout::describe_io(source)
    )]
    UnzipDir {
        /// The folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Recognises `inputs` and opens them for reading: the one place where input shapes are told
/// apart. A mirror's `.zip` is unpacked as `unzip` says, and the mirror read, its files dated
/// `capture_date` where nothing else dates them.
pub fn open(
    inputs: &[PathBuf],
    read: &ReadOptions,
    capture_date: Option<DateTime<Utc>>,
    unzip: Unzip,
) -> Result<Opened, OpenError> {
    let mirror_options = |name| MirrorOptions {
        url_prefix: read.url_prefix.clone(),
        capture_date,
        zone: read.zone,
        name,
    };
    Ok(match detect(inputs)? {
        Input::Archives(source) => Opened::Archives(source),
        Input::Pandas { instances, title } => {
            Opened::Pandas(Instances { dirs: instances, title, zone: read.zone })
        }
        Input::Captures(dir, shape) => {
            let nedlib = NedlibOptions { date_source: read.nedlib_date };
            Opened::Captures(CaptureHarvest { dir, shape, nedlib })
        }
        Input::Mirror(dir, kind) => {
            let m = mirror::read_mirror(&dir, kind, &mirror_options(None));
            let mirror = m.map_err(OpenError::Mirror)?;
            Opened::Mirror(Box::new(OpenedMirror { mirror, unpacked: None }))
        }
        Input::MirrorZip(zip) => {
            let u = unpack(&zip, read.max_zip_expansion, unzip)?;
            let options = mirror_options(Some(super::file_text(&zip)));
            // Listing takes what unpacking refused as quirks; packaging also notes leftovers.
            let m = match unzip.heads {
                Some(_) => u.read_refusing(&zip, &options),
                None => u.read_mirror(&zip, &options),
            };
            let mirror = m.map_err(OpenError::Mirror)?;
            Opened::Mirror(Box::new(OpenedMirror { mirror, unpacked: Some(u) }))
        }
    })
}

/// Unpacks `zip` below `unzip.dir` (made first), whole or only the heads of its pages.
fn unpack(zip: &Path, expansion: u64, unzip: Unzip) -> Result<Unpacked, OpenError> {
    std::fs::create_dir_all(unzip.dir)
        .map_err(|source| OpenError::UnzipDir { path: unzip.dir.to_path_buf(), source })?;
    match unzip.heads {
        Some(head) => unzip::unpack_zip_heads(zip, unzip.dir, expansion, head),
        None => unzip::unpack_zip(zip, unzip.dir, expansion),
    }
    .map_err(OpenError::Unzip)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed sample opens as its shape; a mirror's `.zip` made here is unpacked and
    /// read (whole, and heads only) and its unpacked copy goes when the opened source does.
    #[test]
    fn samples_open_as_their_shapes_and_zips_unpack_beside() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let read = ReadOptions::default();
        let work = tempfile::tempdir().unwrap();
        let whole = Unzip { dir: work.path(), heads: None };
        let open_one = |p: &Path, unzip| open(&[p.to_path_buf()], &read, None, unzip).unwrap();
        assert!(matches!(open_one(&samples.join("heritrix-job"), whole), Opened::Archives(_)));
        match open_one(&samples.join("pandas/40123"), whole) {
            Opened::Pandas(i) => {
                assert!(i.title && !i.dirs.is_empty());
                assert!(!i.read(&i.dirs[0]).unwrap().name.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match open_one(&samples.join("nedlib"), whole) {
            Opened::Captures(c) => assert!(c.open().is_ok() && c.shape == CaptureShape::Nedlib),
            other => panic!("{other:?}"),
        }
        let zip = work.path().join("site.zip");
        zip_mirror(&samples.join("mirror"), &zip);
        let unzip_dir = work.path().join("made/here");
        for heads in [None, Some(16)] {
            let opened = open_one(&zip, Unzip { dir: &unzip_dir, heads });
            let Opened::Mirror(m) = opened else { panic!("{heads:?}: not a mirror") };
            let root = m.unpacked.as_ref().unwrap().root.clone();
            assert!(root.starts_with(&unzip_dir) && root.is_dir(), "{}", root.display());
            assert!(m.mirror.instance.files.total_size().unwrap() > 0);
            drop(m);
            assert!(!root.exists(), "the unpacked copy is removed with the opened mirror");
        }
        let e = open(&[work.path().join("none")], &read, None, whole).unwrap_err();
        assert!(matches!(e, OpenError::Source(SourceError::Io { .. })), "{e}");
    }

    /// Zips the files below `dir` (stored, not compressed) into `zip`.
    fn zip_mirror(dir: &Path, zip: &Path) {
        let mut w = zip::ZipWriter::new(std::fs::File::create(zip).unwrap());
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let e = e.unwrap();
            if e.file_type().is_file() {
                let name = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                w.start_file(name, stored).unwrap();
                std::io::Write::write_all(&mut w, &std::fs::read(e.path()).unwrap()).unwrap();
            }
        }
        w.finish().unwrap();
    }
}
