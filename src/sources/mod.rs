//! Input shapes: what a harvest looks like on disk, and what it holds.
//!
//! [`detect`] recognises a Heritrix 1.x job directory (`order.xml`, `arcs/`, `logs/`), a
//! Heritrix 3.x job (`crawler-beans.cxml`, timestamped launch folders with `warcs/` or `arcs/`,
//! `logs/`, `reports/`), or a plain list of ARC/WARC files, and says what it found and what it
//! expected but did not find. Every file of a job directory is accounted for: archives become
//! containers, everything else travels in the `Logfile` group (P1.5, P4.2).

pub mod crawl_log;
pub mod pandas;

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The shape of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// A Heritrix 1.x job directory.
    Heritrix1,
    /// A Heritrix 3.x job directory.
    Heritrix3,
    /// ARC/WARC files given one by one.
    FileList,
}

/// The kind of an archive file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArchiveKind {
    /// ARC (migrated to WARC).
    Arc,
    /// WARC (checked and copied byte-exact).
    Warc,
}

/// An ARC or WARC file of the source.
#[derive(Debug, Clone, Serialize)]
pub struct Archive {
    /// Where it is.
    pub path: PathBuf,
    /// ARC or WARC.
    pub kind: ArchiveKind,
}

/// A non-archive file of the source (log, report, configuration), with its path relative to
/// the source root (kept in the package under `logs/`).
#[derive(Debug, Clone, Serialize)]
pub struct AuxFile {
    /// Where it is.
    pub path: PathBuf,
    /// Path inside the package's `logs/` directory.
    pub relative: String,
}

/// What a source holds.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    /// Its shape.
    pub shape: Shape,
    /// The job directory, if there is one.
    pub root: Option<PathBuf>,
    /// ARC and WARC files, in name order.
    pub archives: Vec<Archive>,
    /// Logs, reports and configuration, in path order.
    pub aux: Vec<AuxFile>,
    /// The crawl log, if found.
    pub crawl_log: Option<PathBuf>,
    /// Seed URLs (from `seeds.txt`).
    pub seeds: Vec<String>,
    /// What was found, for the report.
    pub found: Vec<String>,
    /// What a source of this shape usually has but this one does not.
    pub missing: Vec<String>,
}

/// A source that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The path does not exist or cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Nothing to package.
    #[error("{0}")]
    Empty(String),
    /// A mix that is not one harvest.
    #[error("{0}")]
    Mixed(String),
}

/// The archive kind of a file, by name.
pub fn archive_kind(path: &Path) -> Option<ArchiveKind> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let name = name.trim_end_matches(".open").trim_end_matches(".invalid");
    if name.ends_with(".warc") || name.ends_with(".warc.gz") {
        Some(ArchiveKind::Warc)
    } else if name.ends_with(".arc") || name.ends_with(".arc.gz") {
        Some(ArchiveKind::Arc)
    } else {
        None
    }
}

/// Recognises the shape of `inputs`: one job directory, or a list of ARC/WARC files.
pub fn detect(inputs: &[PathBuf]) -> Result<Source, SourceError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SourceError::Io { path: path.clone(), source }
    };
    for p in inputs {
        std::fs::metadata(p).map_err(io(p))?;
    }
    match inputs {
        [dir] if dir.is_dir() => job_dir(dir),
        _ if inputs.iter().any(|p| p.is_dir()) => {
            Err(SourceError::Mixed("give one job directory, or ARC/WARC files, not both".into()))
        }
        _ => {
            let mut archives = Vec::new();
            for p in inputs {
                let kind = archive_kind(p).ok_or_else(|| {
                    SourceError::Mixed(format!(
                        "{}: not an ARC or WARC file (by its name)",
                        p.display()
                    ))
                })?;
                archives.push(Archive { path: p.clone(), kind });
            }
            let found = vec![format!("{} archive file(s) given one by one", archives.len())];
            Ok(Source {
                shape: Shape::FileList,
                root: None,
                archives,
                aux: Vec::new(),
                crawl_log: None,
                seeds: Vec::new(),
                found,
                missing: vec![
                    "crawl.log and crawler configuration (not part of a file list)".into(),
                ],
            })
        }
    }
}

fn job_dir(root: &Path) -> Result<Source, SourceError> {
    let mut archives = Vec::new();
    let mut aux = Vec::new();
    let mut crawl_log = None;
    let mut seeds_file = None;
    let walk = walkdir::WalkDir::new(root).sort_by_file_name().follow_links(false);
    for entry in walk {
        let entry = entry.map_err(|e| SourceError::Io {
            path: e.path().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf()),
            source: e.into_io_error().unwrap_or_else(|| std::io::Error::other("directory loop")),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let path = entry.path().to_path_buf();
        if let Some(kind) = archive_kind(&path) {
            archives.push(Archive { path, kind });
            continue;
        }
        let relative =
            path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        // The job's own logs/ folder becomes the package's logs/ (logs/crawl.log, not
        // logs/logs/crawl.log); files elsewhere keep their path below logs/.
        let relative = match relative.strip_prefix("logs/") {
            Some(rest) if !root.join(rest).exists() => rest.to_string(),
            _ => relative,
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name == "crawl.log" && crawl_log.is_none() {
            crawl_log = Some(path.clone());
        }
        if name == "seeds.txt" && seeds_file.is_none() {
            seeds_file = Some(path.clone());
        }
        aux.push(AuxFile { path, relative });
    }
    let has = |n: &str| aux.iter().any(|a| a.relative.rsplit('/').next() == Some(n));
    let shape = if has("crawler-beans.cxml") {
        Shape::Heritrix3
    } else if has("order.xml") || archives.iter().any(|a| a.kind == ArchiveKind::Arc) {
        Shape::Heritrix1
    } else {
        return Err(SourceError::Empty(format!(
            "{}: neither a Heritrix job (order.xml, crawler-beans.cxml) nor a folder of ARC/WARC files",
            root.display()
        )));
    };
    if archives.is_empty() {
        return Err(SourceError::Empty(format!(
            "{}: the job holds no ARC or WARC file",
            root.display()
        )));
    }
    let seeds = match &seeds_file {
        Some(p) => std::fs::read(p)
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let mut found = vec![format!(
        "{} job directory {}: {} ARC, {} WARC, {} other file(s)",
        if shape == Shape::Heritrix3 { "Heritrix 3.x" } else { "Heritrix 1.x" },
        root.display(),
        archives.iter().filter(|a| a.kind == ArchiveKind::Arc).count(),
        archives.iter().filter(|a| a.kind == ArchiveKind::Warc).count(),
        aux.len()
    )];
    let expected: &[&str] = match shape {
        Shape::Heritrix3 => &[
            "crawler-beans.cxml",
            "crawl.log",
            "progress-statistics.log",
            "runtime-errors.log",
            "uri-errors.log",
            "seeds.txt",
        ],
        _ => &[
            "order.xml",
            "crawl.log",
            "progress-statistics.log",
            "local-errors.log",
            "runtime-errors.log",
            "uri-errors.log",
            "seeds.txt",
        ],
    };
    let mut missing = Vec::new();
    for n in expected {
        if has(n) {
            found.push((*n).to_string());
        } else {
            missing.push((*n).to_string());
        }
    }
    let reports = aux.iter().filter(|a| a.relative.ends_with("-report.txt")).count();
    if reports > 0 {
        found.push(format!("{reports} report(s)"));
    }
    Ok(Source {
        shape,
        root: Some(root.to_path_buf()),
        archives,
        aux,
        crawl_log,
        seeds,
        found,
        missing,
    })
}
