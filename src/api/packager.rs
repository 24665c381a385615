//! [`Packager`]: any harvest in, a package out, whatever its shape.

use std::path::{Path, PathBuf};

use crate::index::tap::{PackageIndex, SharedIndex, write_package_index};
use crate::index::warc::IndexError;
use crate::package::captures::build_capture_package;
use crate::package::pandas::build_pandas_package;
use crate::package::{PackageError, PackageOptions, PackageReport, build_package};
use crate::sources::Source;
use crate::sources::capture::CaptureError;
use crate::sources::mirror::Mirror;
use crate::sources::mirror_files::ScratchError;
use crate::sources::open::{self, CaptureHarvest, Instances, OpenError, Opened, OpenedMirror};
use crate::sources::pandas::PandasError;

/// Hears how a run goes, package by package (a PANDAS title makes several).
pub trait PackageProgress: Send + Sync {
    /// A package is started; about `bytes` will be read (0 when not known beforehand).
    fn start(&self, bytes: u64) {
        let _ = bytes;
    }
    /// `bytes` more were read.
    fn advance(&self, bytes: u64) {
        let _ = bytes;
    }
    /// The package is made, or failed.
    fn finish(&self) {}
}

/// Progress nobody hears.
struct Silent;
impl PackageProgress for Silent {}

/// Packages a harvest: a Heritrix job, ARC/WARC files, a PANDAS instance or title, a wget or
/// HTTrack mirror (or its `.zip`), a NEDLIB harvest or a Kulturarw3 archive, recognised by
/// its shape. The package is built in a temporary beside `out` and renamed when complete.
///
/// ```no_run
/// use webaip::{PackageOptions, Packager};
///
/// let report = Packager::new("samples/heritrix-job")
///     .out("out/job-package")
///     .options(PackageOptions::default().deterministic(true))
///     .run()?;
/// println!("{} in {}", report.objid, report.package.display());
/// # Ok::<(), webaip::PackagerError>(())
/// ```
///
/// Packaging runs on the current rayon thread pool: call it inside `pool.install` to bound
/// its threads.
pub struct Packager {
    sources: Vec<PathBuf>,
    out: Option<PathBuf>,
    options: PackageOptions,
    index: Option<PathBuf>,
    unzip_dir: Option<PathBuf>,
    progress: Box<dyn PackageProgress>,
}

/// What a run made.
#[derive(Debug)]
pub struct Packaged {
    /// The packages: one, or one per instance of a PANDAS title (each in a folder of `out`
    /// named by the instance).
    pub packages: Vec<PackageReport>,
    /// For a mirror: what was read of it (site URL, crawl date, and where each came from).
    pub mirror: Option<Box<Mirror>>,
    /// True when the source was PANDAS instances, reported as a list even of one.
    pub pandas: bool,
}

impl Packaged {
    /// True when a package has findings (made, but with something to look at).
    pub fn has_findings(&self) -> bool {
        self.packages.iter().any(PackageReport::has_findings)
    }
}

/// Why a [`Packager`] made no package.
#[derive(Debug, thiserror::Error)]
pub enum PackagerError {
    /// No output folder was given.
    #[error("no package folder given (Packager::out)")]
    NoOut,
    /// The package folder is inside the source, or the source inside it.
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
    /// The source gave no package to make (a title directory without an instance).
    #[error("{}: holds nothing to package", crate::sources::path_text(.0))]
    NothingMade(PathBuf),
    /// The source is of no shape webaip reads, or cannot be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A PANDAS instance cannot be read.
    #[error(transparent)]
    Pandas(#[from] PandasError),
    /// A NEDLIB or Kulturarw3 harvest cannot be opened.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// The file list of an instance or mirror cannot be read.
    #[error("the scratch list of the source's files: {0}")]
    Scratch(#[from] ScratchError),
    /// The package could not be made.
    #[error(transparent)]
    Package(#[from] PackageError),
    /// One package was asked for ([`Packager::run`]), or an index, of a PANDAS title of
    /// several instances.
    #[error("{}: a PANDAS title directory of several instances{}", .path.display(),
        if *.index { ": the index is made of one package: package one instance at a time" }
        else { "" })]
    Title {
        /// The title directory.
        path: PathBuf,
        /// True when it was the index that needed one package.
        index: bool,
    },
    /// The package was made, but its index could not be written.
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl Packager {
    /// A packager of one source (a folder, an archive file, a `.zip` of a mirror).
    pub fn new(source: impl Into<PathBuf>) -> Self {
        Packager::of_sources(vec![source.into()])
    }

    /// A packager of several ARC/WARC files, packaged together.
    pub fn of_sources(sources: Vec<PathBuf>) -> Self {
        Packager {
            sources,
            out: None,
            options: PackageOptions::default(),
            index: None,
            unzip_dir: None,
            progress: Box::new(Silent),
        }
    }

    /// The package folder to create (else `options.out`).
    pub fn out(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out = Some(dir.into());
        self
    }

    /// The options ([`PackageOptions::default`] unless given).
    pub fn options(mut self, options: PackageOptions) -> Self {
        self.options = options;
        self
    }

    /// Also write the package's access index (CDXJ, sorted) to `file`, made while the records
    /// are written; written only once the package is.
    pub fn index(mut self, file: impl Into<PathBuf>) -> Self {
        self.index = Some(file.into());
        self
    }

    /// Where a mirror's `.zip` is unpacked (removed at the end); by default beside the
    /// package, on its file system, else in the temporary folder.
    pub fn unzip_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.unzip_dir = Some(dir.into());
        self
    }

    /// Who hears of the bytes read.
    pub fn progress(mut self, progress: impl PackageProgress + 'static) -> Self {
        self.progress = Box::new(progress);
        self
    }

    /// Makes the one package of the source; a PANDAS title of several instances is refused
    /// ([`Packager::run_all`] makes one package each).
    pub fn run(self) -> Result<PackageReport, PackagerError> {
        let source = self.sources.first().cloned().unwrap_or_default();
        let run = self.make(Want::One)?;
        run.packages.into_iter().next().ok_or(PackagerError::NothingMade(source))
    }

    /// Makes the packages of the source: one, or one per instance of a PANDAS title.
    pub fn run_all(self) -> Result<Packaged, PackagerError> {
        self.make(Want::All)
    }

    fn make(mut self, want: Want) -> Result<Packaged, PackagerError> {
        if let Some(out) = self.out.take() {
            self.options.out = out;
        }
        if self.options.out.as_os_str().is_empty() {
            return Err(PackagerError::NoOut);
        }
        // Before anything is unpacked or written: a second run would package the first package.
        for source in &self.sources {
            crate::layout::refuse_nesting(source, &self.options.out)?;
            if let Some(index) = &self.index {
                crate::layout::refuse_output_in_input(source, index)?;
            }
        }
        let unzip_dir = self.unzip_dir.clone().unwrap_or_else(|| default_unzip_dir(&self.options));
        let unzip = open::Unzip { dir: &unzip_dir, heads: None };
        let opened =
            open::open(&self.sources, &self.options.reading, self.options.capture_date, unzip)?;
        let Some(index_file) = self.index.clone() else { return self.build(opened, want) };
        // The index is of one package; a title run makes one per instance.
        if matches!(&opened, Opened::Pandas(i) if i.title && want == Want::All) {
            return Err(PackagerError::Title { path: self.sources[0].clone(), index: true });
        }
        let index = PackageIndex::shared(Default::default(), crate::index::build::SORT_BUDGET);
        self.options.index = Some(std::sync::Arc::clone(&index));
        let run = self.build(opened, want)?;
        write_index(index, &index_file)?;
        Ok(run)
    }

    /// Builds what was opened, by its shape.
    fn build(self, opened: Opened, want: Want) -> Result<Packaged, PackagerError> {
        let single = |report| Packaged { packages: vec![report], mirror: None, pandas: false };
        match opened {
            Opened::Archives(source) => Ok(single(self.archives(&source)?)),
            Opened::Captures(harvest) => Ok(single(self.captures(&harvest)?)),
            Opened::Mirror(m) => self.mirror(*m),
            Opened::Pandas(instances) => self.pandas(&instances, want),
        }
    }

    /// ARC and WARC files (a Heritrix job, a folder of them, a list): one package.
    fn archives(&self, source: &Source) -> Result<PackageReport, PackagerError> {
        let total: u64 = source
            .archives
            .iter()
            .map(|a| &a.path)
            .chain(source.aux.iter().map(|a| &a.path))
            .filter_map(|p| p.symlink_metadata().ok())
            .map(|m| m.len())
            .sum();
        self.tracked(total, |advance| build_package(source, &self.options, advance))
    }

    /// A capture source (NEDLIB, Kulturarw3): one package through the capture pipeline.
    fn captures(&self, harvest: &CaptureHarvest) -> Result<PackageReport, PackagerError> {
        let mut source = harvest.open()?;
        let dir = &harvest.dir;
        self.tracked(0, |advance| {
            build_capture_package(source.as_mut(), dir, &self.options, advance)
        })
    }

    /// A wget or HTTrack mirror: one package, its title and target URL taken from the mirror
    /// where the curator gives none (said first among the report's metadata notes).
    fn mirror(&self, opened: OpenedMirror) -> Result<Packaged, PackagerError> {
        let m = opened.mirror;
        let mut options = self.options.clone();
        let notes = m.describe(&mut options.metadata);
        let total = m.instance.files.total_size()?;
        let mut report =
            self.tracked(total, |advance| build_pandas_package(&m.instance, &options, advance))?;
        report.metadata_notes.splice(0..0, notes);
        Ok(Packaged { packages: vec![report], mirror: Some(Box::new(m)), pandas: false })
    }

    /// PANDAS: one instance, or each of a title's into a folder of `out` named by it.
    fn pandas(&self, instances: &Instances, want: Want) -> Result<Packaged, PackagerError> {
        if want == Want::One && instances.dirs.len() != 1 {
            return Err(PackagerError::Title { path: self.sources[0].clone(), index: false });
        }
        let per_instance = want == Want::All && instances.title;
        let mut packages = Vec::new();
        for dir in &instances.dirs {
            let inst = instances.read(dir)?;
            let mut options = self.options.clone();
            if per_instance {
                options.out = self.options.out.join(&inst.name);
            }
            let total = inst.files.total_size()?;
            packages.push(
                self.tracked(total, |advance| build_pandas_package(&inst, &options, advance))?,
            );
        }
        Ok(Packaged { packages, mirror: None, pandas: true })
    }

    /// Runs `build` with the progress told of its start, its bytes and its end.
    fn tracked(
        &self,
        total: u64,
        build: impl FnOnce(&(dyn Fn(u64) + Sync)) -> Result<PackageReport, PackageError>,
    ) -> Result<PackageReport, PackagerError> {
        let progress = &*self.progress;
        progress.start(total);
        let report = build(&|n| progress.advance(n));
        progress.finish();
        Ok(report?)
    }
}

/// How many packages a run may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    One,
    All,
}

/// Beside the package (the same file system, so its files are not copied across), else the
/// temporary folder.
fn default_unzip_dir(options: &PackageOptions) -> PathBuf {
    match options.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.to_path_buf(),
        None => std::env::temp_dir(),
    }
}

/// Writes the index made while packaging (a failed run never gets here: it leaves none).
fn write_index(index: SharedIndex, file: &Path) -> Result<(), PackagerError> {
    Ok(write_package_index(index, file)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
    }

    /// `run` makes one package: a PANDAS title of several instances is refused before anything
    /// is written, as is an index of one (which `run_all` would make several packages of);
    /// no output folder is an error of its own.
    #[test]
    fn one_package_is_refused_for_a_title_and_an_output_is_required() {
        let tmp = tempfile::tempdir().unwrap();
        let title = tmp.path().join("40123");
        for instance in ["20040517-1412", "20040601-0930"] {
            copy_dir(&samples().join("pandas/40123/20040517-1412"), &title.join(instance));
        }
        let out = tmp.path().join("out");
        let e = Packager::new(&title).out(&out).run().unwrap_err();
        assert!(matches!(&e, PackagerError::Title { index: false, .. }), "{e}");
        assert!(e.to_string().contains("40123"), "{e}");
        let index = tmp.path().join("i.cdxj");
        let e = Packager::new(&title).out(&out).index(&index).run_all().unwrap_err();
        assert!(matches!(&e, PackagerError::Title { index: true, .. }), "{e}");
        assert!(!out.exists() && !index.exists(), "nothing written");
        let e = Packager::new(&title).run_all().unwrap_err();
        assert!(matches!(e, PackagerError::NoOut), "{e}");
    }

    fn copy_dir(from: &Path, to: &Path) {
        for e in walkdir::WalkDir::new(from) {
            let e = e.unwrap();
            let at = to.join(e.path().strip_prefix(from).unwrap());
            match e.file_type().is_dir() {
                true => std::fs::create_dir_all(&at).unwrap(),
                false => drop(std::fs::copy(e.path(), &at).unwrap()),
            }
        }
    }

    /// One PANDAS instance is packaged at `out` itself, its index written beside, and the
    /// progress hears of a start, bytes and an end.
    #[test]
    fn an_instance_is_packaged_with_its_index_and_progress() {
        use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
        #[derive(Default)]
        struct Count(AtomicU64, AtomicU64, AtomicU64);
        impl PackageProgress for &'static Count {
            fn start(&self, _: u64) {
                self.0.fetch_add(1, Relaxed);
            }
            fn advance(&self, n: u64) {
                self.1.fetch_add(n, Relaxed);
            }
            fn finish(&self) {
                self.2.fetch_add(1, Relaxed);
            }
        }
        let count: &'static Count = Box::leak(Box::default());
        let tmp = tempfile::tempdir().unwrap();
        let title = samples().join("pandas/40123");
        let instance = std::fs::read_dir(&title).unwrap().next().unwrap().unwrap().path();
        let (out, index) = (tmp.path().join("pkg"), tmp.path().join("pkg.cdxj"));
        let options = PackageOptions::default().deterministic(true);
        let packager = Packager::new(&instance).out(&out).options(options).index(&index);
        let report = packager.progress(count).run().unwrap();
        assert_eq!(report.package, out);
        assert!(out.join("METS.xml").is_file());
        let lines = std::fs::read_to_string(&index).unwrap();
        assert!(lines.lines().count() > 0 && lines.contains("\"url\""), "{lines}");
        assert_eq!((count.0.load(Relaxed), count.2.load(Relaxed)), (1, 1));
        assert!(count.1.load(Relaxed) > 0);
    }
}
