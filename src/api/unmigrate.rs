//! [`unmigrate`]: the original ARC files given back from a package's containers or from WARC
//! files written by `migrate`, each written under a temporary name and renamed when it is
//! what it should be.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::migrate::rebuild::{
    ArcSink, ArcStart, RebuildOptions, StoredPayloads, package_statements, rebuild_arcs,
};
use crate::temporaries::{self, TempName};

pub use crate::migrate::rebuild::{
    ArcRebuild, Difference as ArcDifference, MissingOriginal, OtherPayload, Outcome as ArcBytes,
    RebuildError,
};

/// How [`unmigrate`] writes the ARCs.
#[derive(Debug, Clone, Default)]
pub struct UnmigrateOptions {
    /// Write each gzip ARC's uncompressed stream (its name without `.gz`) instead of its
    /// file.
    pub stream: bool,
    /// Replace existing files.
    pub force: bool,
    /// The packages a deduplicated package's revisits refer to (`--with`): the payloads they
    /// leave out are taken from there, each checked against the revisit's digest.
    pub with: Vec<PathBuf>,
}

/// What [`unmigrate`] gave back.
#[derive(Debug, Clone, Serialize)]
pub struct Unmigrated {
    /// The folder the ARCs went to.
    pub out: PathBuf,
    /// Each ARC's rebuild, checked against what its migration recorded.
    pub arcs: Vec<ArcRebuild>,
    /// The files written: those of the ARCs rebuilt as they should be.
    pub written: Vec<PathBuf>,
    /// Temporaries a killed earlier run left in `out`, removed.
    pub removed_leftovers: Vec<PathBuf>,
}

impl Unmigrated {
    /// True when every ARC is what it should be.
    pub fn as_expected(&self) -> bool {
        self.arcs.iter().all(ArcRebuild::as_expected)
    }
}

/// Why [`unmigrate`] could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum UnmigrateError {
    /// The output folder cannot be made.
    #[error("{}: {}", .path.display(), crate::layout::describe_io(.source))]
    Out {
        /// The folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A package's containers differ from its METS, or a container cannot be read, or an
    /// ARC cannot be written.
    #[error(transparent)]
    Rebuild(#[from] RebuildError),
    /// The output folder is inside an input package, or holds one.
    #[error(transparent)]
    Nesting(#[from] crate::layout::NestingError),
    /// A package was deduplicated against packages not given with `--with`.
    #[error(
        "{}: its ARCs come back only with payloads stored in package(s) {} (it was \
         deduplicated against them): give each with --with; nothing written",
        package.display(),
        missing.join(", ")
    )]
    NeedsPackages {
        /// The package.
        package: PathBuf,
        /// The OBJIDs of the packages it requires that were not given.
        missing: Vec<String>,
    },
    /// A `--with` package (or a package's METS) cannot be read for its OBJID or dependencies.
    #[error("{}: {what}", path.display())]
    With {
        /// The package.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

/// The bytes [`unmigrate`] reads of `inputs` (a package's containers twice: hashed against
/// its METS, then read), for a progress bar.
pub fn unmigrate_input_bytes(inputs: &[PathBuf]) -> u64 {
    inputs.iter().map(|i| input_bytes(i) * (1 + u64::from(i.is_dir()))).sum()
}

/// Gives back the original ARC files of `inputs` in the folder `out` (made if missing):
/// each package folder's content and viral containers, checked against the SHA-512 its METS
/// states before anything is rebuilt (and each ARC file made against the SHA-512 its PREMIS
/// object states), then the WARC files given alone (content containers and their viral
/// twins). `progress` hears of the bytes read.
///
/// Each ARC is written under a locked temporary name in `out` and renamed only when it is
/// what it should be; one that is not is in the report (see [`Unmigrated::as_expected`]) and
/// leaves no file. An existing file is not replaced unless `options.force`; the temporaries
/// of a killed run are removed first. Runs on the current rayon pool (a gzip ARC's members
/// are compressed again in parallel).
pub fn unmigrate(
    inputs: &[PathBuf],
    out: &Path,
    options: &UnmigrateOptions,
    progress: &dyn Fn(u64),
) -> Result<Unmigrated, UnmigrateError> {
    for input in inputs.iter().chain(&options.with) {
        crate::layout::refuse_output_in_input(input, out)?;
    }
    // The input packages hold originals too: a revisit of one of them is given by it.
    let input_packages: Vec<PathBuf> = inputs.iter().filter(|i| i.is_dir()).cloned().collect();
    let mut holders = options.with.clone();
    holders.extend(input_packages.iter().filter(|p| !options.with.contains(p)).cloned());
    let given = with_objids(&holders)?;
    for p in &input_packages {
        needs_only(p, &given)?;
    }
    std::fs::create_dir_all(out)
        .map_err(|source| UnmigrateError::Out { path: out.to_path_buf(), source })?;
    let cleaned = temporaries::remove_dead(out, PARTIAL);
    let mut sink = DirSink {
        out: out.to_path_buf(),
        stream: options.stream,
        force: options.force,
        pending: None,
        written: Vec::new(),
    };
    let (packages, warcs): (Vec<&PathBuf>, Vec<&PathBuf>) = inputs.iter().partition(|i| i.is_dir());
    let opts = RebuildOptions { make_file: !options.stream, ..RebuildOptions::default() };
    // Revisits refer to the `--with` packages, the input packages, and (`--dedup-within`) to
    // their own package or WARC file: one table of them for the run (a revisit's own package
    // or file searched first); payloads are copied beside the ARCs.
    let mut sources = holders;
    sources.extend(warcs.iter().map(|w| (*w).clone()));
    let mut payloads = StoredPayloads::new(sources, Some(out.to_path_buf()));
    let mut arcs = Vec::new();
    for p in packages {
        let stated = package_statements(p, progress)?;
        let opts = RebuildOptions { package_objects: Some(stated.objects), ..opts.clone() };
        arcs.extend(rebuild_arcs(&stated.containers, &opts, &mut payloads, &mut sink, progress)?);
    }
    if !warcs.is_empty() {
        let all: Vec<PathBuf> = warcs.into_iter().cloned().collect();
        arcs.extend(rebuild_arcs(&all, &opts, &mut payloads, &mut sink, progress)?);
    }
    Ok(Unmigrated {
        out: out.to_path_buf(),
        arcs,
        written: sink.written,
        removed_leftovers: cleaned.removed.iter().map(|n| out.join(n)).collect(),
    })
}

/// The OBJID of each package given (`--with`, or as an input).
fn with_objids(with: &[PathBuf]) -> Result<Vec<String>, UnmigrateError> {
    with.iter()
        .map(|w| {
            crate::index::digests::package_objid(w)
                .map_err(|e| UnmigrateError::With { path: w.clone(), what: e.to_string() })
        })
        .collect()
}

/// Refuses the package `p` when its METS says its ARCs require (the containers migrated from
/// them were deduplicated against) packages whose OBJIDs are not `given` (by `--with` or as
/// inputs): before anything is written, every one is named. A copied WARC's revisits do not
/// concern the ARCs.
fn needs_only(p: &Path, given: &[String]) -> Result<(), UnmigrateError> {
    let mets = p.join(crate::layout::METS);
    let missing = crate::store::deps::missing_arc_dependencies(&mets, given)
        .map_err(|e| UnmigrateError::With { path: mets.clone(), what: e.to_string() })?;
    match missing.is_empty() {
        true => Ok(()),
        false => Err(UnmigrateError::NeedsPackages { package: p.to_path_buf(), missing }),
    }
}

/// Bytes of the containers in a package's content/ and viral/ (or of the WARC file given).
fn input_bytes(input: &Path) -> u64 {
    let size = |p: &Path| std::fs::symlink_metadata(p).map_or(0, |m| m.len());
    if !input.is_dir() {
        return size(input);
    }
    let mut total = 0;
    for dir in [crate::layout::CONTENT_DIR, crate::layout::VIRAL_DIR] {
        let Ok(entries) = std::fs::read_dir(input.join(dir)) else { continue };
        total += entries.flatten().map(|e| size(&e.path())).sum::<u64>();
    }
    total
}

/// Writes each ARC to `out` under a temporary name; renames it when it is as it should be.
struct DirSink {
    out: PathBuf,
    stream: bool,
    force: bool,
    pending: Option<PendingArc>,
    written: Vec<PathBuf>,
}

/// An ARC being written: its temporary, and the name it gets when it is as it should be.
struct PendingArc {
    temporary: tempfile::TempPath,
    dest: PathBuf,
}

/// The temporaries an ARC is written to, locked while a run writes them: those of a killed
/// run are removed by the next one.
const PARTIAL: TempName = TempName { prefix: ".webaip-unmigrate-", suffix: "", dirs: false };

/// The ARC's name (taken from the package: input) as a file name in the output directory: one
/// plain component, no control character (a CR or LF would forge lines of listings), not a
/// hidden name (nor one of the run's temporaries, which a later run would remove).
fn safe_name(name: &str) -> io::Result<&str> {
    let why = if name.is_empty() || name == "." || name == ".." {
        Some("not a file name")
    } else if name.contains(['/', '\\']) {
        Some("it holds a path separator")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if name.starts_with('.') {
        Some("a hidden name")
    } else if name.len() > 255 {
        Some("longer than 255 bytes")
    } else {
        None
    };
    match why {
        Some(why) => Err(io::Error::other(format!(
            "refused ARC name {:?} as an output file name: {why}",
            crate::formats::warc::header::escape_controls(name)
        ))),
        None => Ok(name),
    }
}

impl ArcSink for DirSink {
    fn begin(&mut self, arc: &ArcStart<'_>) -> io::Result<Option<Box<dyn Write + Send>>> {
        let name = safe_name(arc.name)?;
        let name = match (arc.gzip, self.stream) {
            (true, true) => name.strip_suffix(".gz").unwrap_or(name),
            _ => name,
        };
        let dest = self.out.join(safe_name(name)?);
        if !self.force && std::fs::symlink_metadata(&dest).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists (--force replaces it)", dest.display()),
            ));
        }
        let tmp = temporaries::locked_output_in(&self.out, PARTIAL)?;
        let (file, temporary): (File, tempfile::TempPath) = tmp.into_parts();
        self.pending = Some(PendingArc { temporary, dest });
        Ok(Some(Box::new(BufWriter::with_capacity(1 << 20, file))))
    }

    fn end(&mut self, report: &ArcRebuild, out: Option<Box<dyn Write + Send>>) -> io::Result<()> {
        let Some(PendingArc { temporary, dest }) = self.pending.take() else { return Ok(()) };
        if let Some(mut o) = out {
            o.flush()?;
        }
        // A rebuild that is not what it should be leaves no file that looks complete.
        if !report.as_expected() {
            return Ok(());
        }
        File::open(&temporary)?.sync_all()?;
        temporary.persist(&dest).map_err(|e| e.error)?;
        self.written.push(dest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ARC name from a package becomes a file name only when it is one plain, visible
    /// component without control characters.
    #[test]
    fn only_plain_names_become_files() {
        assert_eq!(safe_name("IAH-2008.arc.gz").unwrap(), "IAH-2008.arc.gz");
        let long = "a".repeat(256);
        for bad in ["", ".", "..", "a/b", "a\\b", "a\nb", "a\u{85}b", ".webaip-unmigrate-x", &long]
        {
            let e = safe_name(bad).unwrap_err().to_string();
            assert!(e.starts_with("refused ARC name"), "{bad:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
