//! WACZ 1.1.1 (Webrecorder; PRONOM fmt/1840): a package as one ZIP that ReplayWeb.page opens
//! in a browser and pywb imports, and the deep check of a WACZ ([`check`]).
//!
//! `export_wacz` writes, every member stored (not recompressed):
//! - `archive/NAME.warc.gz`: each content container of the package, byte for byte (checked
//!   as it is copied against the SHA-256 its METS states, the digest `datapackage.json` needs
//!   anyway, else against its SHA-512); viral containers never, and every file left out is
//!   reported with why; and the containers of the `--with` packages that hold the originals
//!   of its revisits (found as `audit --with` finds them): a revisit whose original the WACZ
//!   would not hold is refused, named, and no WACZ is left;
//! - `indexes/`: the containers' CDXJ lines, as `webaip index` writes them (SURT key,
//!   `filename` the member's name in `archive/`), compressed (`index.cdx.gz` and
//!   `index.idx`) or as one `index.cdxj` ([`WaczIndex`]);
//! - `pages/pages.jsonl`: the webpages the METS describes first, then every HTML page;
//! - `metadata/METS.xml`: the package's METS, listed in the datapackage with the package's OBJID as its
//!   source;
//! - `datapackage.json` (each member's SHA-256 and size) and `datapackage-digest.json`.
//!
//! The containers are copied (hashed with SHA-256, and SHA-512 only for a package whose METS
//! states no SHA-256) while the walkers make the index and the pages from the bytes the copy
//! reads (`walkers.rs`: two on a container of two stretches or more, each walking alternate
//! stretches, a stretch walked ahead kept only when the walk before it ends on its start):
//! each container is read from disk once, and each gzip member inflated once, for its index
//! line, its page and title when it is an HTML page, and whether it is a revisit. Without
//! `--with`, the revisits' originals are looked for (another read of the containers) only
//! when that pass met a revisit; memory is one copy buffer, the bytes handed on to the
//! walkers (the copy at most two stretches and a MiB or two ahead of them), the windows they
//! read them through, plus the index's sort budget, whatever the package's or its records'
//! sizes. The
//! ZIP is written under a temporary name beside the output and renamed once complete: a failed
//! or killed export leaves no `.wacz`, and the next export into that folder removes what a
//! killed one left (`.wacz-XXXXXX`). The WACZ gets the mode any new file gets (the umask's).

pub mod check;
mod index;
pub(crate) mod pages;
mod pass;
pub(crate) mod plan;
mod walkers;
pub(crate) mod zipout;

use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use index::WaczIndex;
pub use pages::PageTally;
pub use plan::LeftOut;
pub use zipout::Resource;

use crate::index::warc::IndexError;

/// Where the package's METS goes in the WACZ: in a folder, as every member (py-wacz's check
/// takes a member's folder and name as its path).
pub const METS_MEMBER: &str = "metadata/METS.xml";

/// The WACZ version written.
pub const WACZ_VERSION: &str = "1.1.1";

/// The temporaries of an export, beside its output: the ZIP being written and its index and
/// pages.
const WACZ_TEMP: crate::temporaries::TempName =
    crate::temporaries::TempName { prefix: ".wacz-", suffix: "", dirs: false };

/// How to export.
#[derive(Debug, Clone)]
pub struct WaczOptions {
    /// Check each container while copying it against the SHA-256 its METS states (else the
    /// SHA-512).
    pub verify: bool,
    /// The index's form.
    pub index: WaczIndex,
    /// Packages holding originals of the package's revisits: the containers that hold them
    /// go into the WACZ too.
    pub with: Vec<PathBuf>,
}

impl Default for WaczOptions {
    fn default() -> Self {
        WaczOptions { verify: true, index: WaczIndex::default(), with: Vec::new() }
    }
}

/// What an export wrote.
#[derive(Debug, serde::Serialize)]
pub struct WaczReport {
    /// The WACZ written.
    pub wacz: PathBuf,
    /// The package's OBJID.
    pub objid: String,
    /// Every member, as `datapackage.json` lists it.
    pub resources: Vec<Resource>,
    /// Lines of the index.
    pub index_lines: u64,
    /// What `pages/pages.jsonl` lists.
    pub pages: PageTally,
    /// Files of the package not in the WACZ, and why.
    pub left_out: Vec<LeftOut>,
    /// Containers of other packages added for the originals of its revisits (`PACKAGE/NAME`).
    pub originals: Vec<String>,
    /// Containers checked against their METS (0 without `verify`).
    pub verified: u64,
    /// Of those, the containers checked against the SHA-256 the METS states (in the read
    /// that hashes them for `datapackage.json`); the others against its SHA-512.
    pub verified_sha256: u64,
    /// Size of the WACZ.
    pub bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Why a package could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum WaczError {
    /// Not a package webaip can export.
    #[error("{}: not a package to export: {why}", path.display())]
    NotPackage {
        /// The folder given.
        path: PathBuf,
        /// Why not.
        why: &'static str,
    },
    /// Its METS could not be read.
    #[error("{}: {source}", path.display())]
    Mets {
        /// The METS.
        path: PathBuf,
        /// Where and why it could not be read.
        source: crate::mets::reader::MetsError,
    },
    /// A name from the METS leads outside the package.
    #[error("{}: file name {name:?}: {source}", mets.display())]
    Name {
        /// The METS.
        mets: PathBuf,
        /// The name it gives.
        name: String,
        /// What is wrong with it.
        source: crate::layout::NameError,
    },
    /// A file of the package is no regular file inside it.
    #[error("{}: {source}", path.display())]
    Confined {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        source: crate::layout::ConfineError,
    },
    /// Two content containers would have the same name in `archive/`.
    #[error("two content containers are named {name:?}: a WACZ's archive/ holds one")]
    SameName {
        /// The name.
        name: String,
    },
    /// A container is not what the METS says.
    #[error(
        "{file}: {algorithm} {found}, the METS states {stated}: the package is damaged (audit it); nothing exported"
    )]
    Changed {
        /// The container's path in the package.
        file: String,
        /// The digest compared (`SHA-256`, `SHA-512`).
        algorithm: &'static str,
        /// What the METS states.
        stated: String,
        /// What its bytes give.
        found: String,
    },
    /// A member's source could not be read.
    #[error("{member}: {}", crate::layout::describe_io(source))]
    Read {
        /// The member being written.
        member: String,
        /// The cause.
        source: io::Error,
    },
    /// The output could not be written.
    #[error("{}: {}", path.display(), crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The ZIP writer failed.
    #[error("{}: {source}", path.display())]
    Zip {
        /// The WACZ being written.
        path: PathBuf,
        /// The cause.
        source: zip::result::ZipError,
    },
    /// The index could not be made.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The pages could not be listed.
    #[error(transparent)]
    Pages(#[from] crate::pages::list::ListError),
    /// Revisits whose original the WACZ would not hold: they could not be replayed.
    #[error(
        "{count} revisit(s) of the package have no original in it nor in the packages given \
         with --with (the first: {first}); a WACZ without their originals cannot replay them: \
         give the packages holding them with --with PACKAGE"
    )]
    OriginalsMissing {
        /// How many.
        count: usize,
        /// The first, where it is and what it refers to.
        first: String,
    },
    /// The revisits' originals could not be looked for.
    #[error(transparent)]
    References(#[from] crate::audit::AuditError),
    /// Not a package at all (a PDF, a WARC, a harvest): what it is instead.
    #[error(transparent)]
    NotAPackage(#[from] crate::sources::recognise::NotAPackage),
    /// The output is inside the package (or the package inside the output).
    #[error(transparent)]
    Nested(#[from] crate::layout::NestingError),
    /// A fault of webaip's own.
    #[error("internal error: {0} failed")]
    Internal(&'static str),
}

/// Exports the package at `package` as the WACZ `out`; `progress` is told the container bytes
/// as they are copied.
pub fn export_wacz(
    package: &Path,
    out: &Path,
    opts: &WaczOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<WaczReport, WaczError> {
    let started = Instant::now();
    let mut plan = planned(package, out, opts)?;
    let dir = output_dir(out)?;
    // Temporaries of runs that died (killed, power lost) go first; a live run's are locked.
    crate::temporaries::remove_dead(&dir, WACZ_TEMP);
    let temp = || crate::temporaries::locked_file_in(&dir, WACZ_TEMP).map_err(io_at(&dir));
    let part = crate::temporaries::locked_output_in(&dir, WACZ_TEMP).map_err(io_at(&dir))?;
    let now = chrono::Utc::now();
    let file = part.reopen().map_err(io_at(part.path()))?;
    let mut zip = zipout::WaczZip::new(file, out, now);
    let read = copy_and_read(&mut zip, package, &plan, opts, &temp, progress)?;
    let (mut resources, verified, side) = (read.resources, read.verified, read.side);
    if opts.with.is_empty() && side.revisits != Some(0) {
        // A revisit whose original is not in the package fails the export (the temporary
        // ZIP goes with `part`).
        plan::add_originals(&mut plan, package, &[])?;
    }
    let mut members = side.index.members;
    members.push(("pages/pages.jsonl".into(), side.pages));
    add_temporaries(&mut zip, &mut members, part.path(), &mut resources)?;
    add_descriptors(&mut zip, package, &plan.objid, &mut resources, now)?;
    let file = zip.finish()?;
    file.sync_all().map_err(io_at(out))?;
    let bytes = file.metadata().map_or(0, |m| m.len());
    part.persist(out).map_err(|e| WaczError::Io { path: out.to_path_buf(), source: e.error })?;
    Ok(WaczReport {
        wacz: out.to_path_buf(),
        objid: plan.objid,
        resources,
        index_lines: side.index.lines,
        pages: side.tally,
        left_out: plan.left_out,
        originals: plan.originals,
        verified: verified.sha256 + verified.sha512,
        verified_sha256: verified.sha256,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// What goes into the WACZ of `package`: refused when it is no package or `out` is inside it;
/// with `--with`, the containers holding the originals of its revisits (without, the pass
/// over the containers says whether any revisit needs looking for).
fn planned(package: &Path, out: &Path, opts: &WaczOptions) -> Result<plan::Plan, WaczError> {
    crate::sources::recognise::package_at(package, crate::sources::recognise::Takes::Folder)?;
    crate::layout::refuse_nesting(package, out)?;
    let mut plan = plan::plan(package)?;
    if !opts.with.is_empty() {
        plan::add_originals(&mut plan, package, &opts.with)?;
    }
    Ok(plan)
}

/// The containers copied into the WACZ, and what the second thread read of them.
struct CopiedAndRead {
    resources: Vec<Resource>,
    verified: Verified,
    side: SideMembers,
}

/// Copies the containers into `zip` while a second thread reads them for the index and the
/// pages (in temporary files `temp` makes).
fn copy_and_read(
    zip: &mut zipout::WaczZip,
    package: &Path,
    plan: &plan::Plan,
    opts: &WaczOptions,
    temp: &(dyn Fn() -> Result<tempfile::NamedTempFile, WaczError> + Sync),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<CopiedAndRead, WaczError> {
    let (fed, taken) = std::sync::mpsc::channel();
    let (side, copied) = std::thread::scope(|s| {
        let side = s.spawn(|| side_members(package, plan, opts.index, temp, taken));
        let copied = copy_containers(zip, plan, opts, progress, fed);
        (side.join(), copied)
    });
    let (resources, verified) = copied?;
    let side =
        side.map_err(|_| WaczError::Internal("the thread reading the index and pages"))??;
    Ok(CopiedAndRead { resources, verified, side })
}

/// Adds the temporary files `members` (written beside the WACZ being written at `part`) to
/// `zip`.
fn add_temporaries(
    zip: &mut zipout::WaczZip,
    members: &mut [(String, tempfile::NamedTempFile)],
    part: &Path,
    resources: &mut Vec<Resource>,
) -> Result<(), WaczError> {
    for (name, file) in members {
        let f = file.as_file_mut();
        f.rewind().map_err(io_at(part))?;
        let n = f.metadata().map_or(0, |m| m.len());
        resources.push(zip.add(name, f, (n, false), &|_| {})?.resource);
    }
    Ok(())
}

/// An I/O failure on `path`.
fn io_at(path: &Path) -> impl Fn(io::Error) -> WaczError + use<> {
    let path = path.to_path_buf();
    move |source| WaczError::Io { path: path.clone(), source }
}

/// The folder the WACZ goes into, made if absent (never inside the package: `export_wacz`
/// refuses that first).
fn output_dir(out: &Path) -> Result<PathBuf, WaczError> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io_at(&dir))?;
    Ok(dir)
}

/// The package's METS, then `datapackage.json` describing every member, then its digest.
fn add_descriptors(
    zip: &mut zipout::WaczZip,
    package: &Path,
    objid: &str,
    resources: &mut Vec<Resource>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), WaczError> {
    let mets_path = package.join(crate::layout::METS);
    let mut mets = crate::layout::open_regular(&mets_path)
        .map_err(|source| WaczError::Confined { path: mets_path.clone(), source })?;
    let n = mets.metadata().map_or(0, |m| m.len());
    let mets_resource = zip.add(METS_MEMBER, &mut mets, (n, false), &|_| {})?.resource;
    let datapackage = datapackage_json(resources, &mets_resource, objid, now);
    resources.push(mets_resource);
    let len = datapackage.len() as u64;
    let dp = zip.add("datapackage.json", &mut datapackage.as_slice(), (len, false), &|_| {})?;
    let digest = serde_json::json!({ "path": "datapackage.json", "hash": dp.resource.hash });
    let digest = serde_json::to_vec_pretty(&digest).unwrap_or_default();
    let len = digest.len() as u64;
    zip.add("datapackage-digest.json", &mut digest.as_slice(), (len, false), &|_| {})?;
    Ok(())
}

/// Containers checked while copied, by the digest of the METS they were checked against.
#[derive(Default)]
struct Verified {
    sha256: u64,
    sha512: u64,
}

/// Copies the content containers into `archive/`, each checked (with `verify`) against the
/// SHA-256 the METS states, in the read that hashes it for `datapackage.json`, else against
/// the SHA-512 it states; their resources, and how many were checked.
fn copy_containers(
    zip: &mut zipout::WaczZip,
    plan: &plan::Plan,
    opts: &WaczOptions,
    progress: &(dyn Fn(u64) + Sync),
    fed: std::sync::mpsc::Sender<pass::Fed>,
) -> Result<(Vec<Resource>, Verified), WaczError> {
    let mut resources = Vec::new();
    let mut verified = Verified::default();
    for c in &plan.containers {
        let f = crate::layout::open_in(&c.root, &c.rel)
            .map_err(|source| WaczError::Confined { path: c.path.clone(), source })?;
        let len = f.metadata().map_or(0, |m| m.len());
        let mut tee = Tee::new(f, &c.path, len, &fed);
        let sha256 = c.sha256.as_deref().filter(|_| opts.verify);
        let sha512 = opts.verify && sha256.is_none() && c.sha512.is_some();
        let w = zip.add(&format!("archive/{}", c.name), &mut tee, (len, sha512), progress)?;
        // The container's bytes are all handed on.
        drop(tee);
        let changed = |algorithm, stated: &str, found: &str| WaczError::Changed {
            file: c.rel.clone(),
            algorithm,
            stated: stated.to_string(),
            found: found.to_string(),
        };
        if let Some(stated) = sha256 {
            let found = w.resource.hash.trim_start_matches("sha256:");
            if stated != found {
                return Err(changed("SHA-256", stated, found));
            }
            verified.sha256 += 1;
        } else if let (Some(stated), Some(found)) = (&c.sha512, &w.sha512) {
            if stated != found {
                return Err(changed("SHA-512", stated, found));
            }
            verified.sha512 += 1;
        }
        resources.push(w.resource);
    }
    Ok((resources, verified))
}

/// A container's file read for the copy, each piece read handed on to the walkers making
/// its index and pages too (so they never read the file themselves); the copy waits while it
/// is far enough ahead of them ([`crate::index::feed`]).
struct Tee<'a> {
    file: std::fs::File,
    path: &'a Path,
    /// `None` once the walkers are gone (they are done with the container, or failed: their
    /// error is then the export's) or read the containers otherwise (not gzip).
    shared: Option<std::sync::Arc<crate::index::feed::Shared>>,
}

impl<'a> Tee<'a> {
    /// The copy of `file` (`len` bytes at `path`), handed on through `fed`.
    fn new(
        file: std::fs::File,
        path: &'a Path,
        len: u64,
        fed: &std::sync::mpsc::Sender<pass::Fed>,
    ) -> Tee<'a> {
        let shared = walkers::Limits::IN_USE.shared();
        let sent = fed.send(pass::Fed { len, shared: std::sync::Arc::clone(&shared) });
        Tee { file, path, shared: sent.ok().map(|()| shared) }
    }
}

impl io::Read for Tee<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(out)?;
        crate::index::members::tally::note(self.path, n as u64);
        if let Some(shared) = self.shared.as_ref().filter(|_| n > 0)
            && !shared.push(&out[..n])
        {
            self.shared = None;
        }
        Ok(n)
    }
}

impl Drop for Tee<'_> {
    fn drop(&mut self) {
        // Whole or not, no more bytes come: the walkers get what was handed on.
        if let Some(shared) = &self.shared {
            shared.close();
        }
    }
}

/// What the second thread makes: the index members, the pages file and what it holds, and
/// the revisits it met (`None`: not counted, as when the containers were read in two passes).
struct SideMembers {
    index: index::IndexMembers,
    pages: tempfile::NamedTempFile,
    tally: PageTally,
    revisits: Option<u64>,
    /// How each container was walked (none: read in two passes).
    #[cfg_attr(not(test), allow(dead_code, reason = "read by the tests"))]
    walked: Vec<walkers::Walked>,
}

/// Makes the index and the pages of the containers (their bytes as `fed` hands them on), in
/// temporary files made by `temp`.
fn side_members(
    package: &Path,
    plan: &plan::Plan,
    kind: WaczIndex,
    temp: &(dyn Fn() -> Result<tempfile::NamedTempFile, WaczError> + Sync),
    fed: std::sync::mpsc::Receiver<pass::Fed>,
) -> Result<SideMembers, WaczError> {
    let pass::Read { sorters, listing, revisits, walked } = match pass::one_pass(plan, fed)? {
        Some(read) => read,
        None => pass::two_passes(package, plan)?,
    };
    let index = index::write_index(sorters, kind, temp)?;
    let pages = temp()?;
    let mut out = BufWriter::new(pages.as_file());
    let io_err = |source| WaczError::Io { path: pages.path().to_path_buf(), source };
    let tally = pages::write_pages(&listing, &plan.described, &mut out).map_err(io_err)?;
    out.flush().map_err(io_err)?;
    drop(out);
    Ok(SideMembers { index, pages, tally, revisits, walked })
}

/// `datapackage.json`: every member but itself and its digest; the METS with the package's
/// OBJID as its source.
fn datapackage_json(
    resources: &[Resource],
    mets: &Resource,
    objid: &str,
    created: chrono::DateTime<chrono::Utc>,
) -> Vec<u8> {
    let mut list: Vec<serde_json::Value> =
        resources.iter().map(|r| serde_json::to_value(r).unwrap_or_default()).collect();
    let mut m = serde_json::to_value(mets).unwrap_or_default();
    m["mediatype"] = "application/xml".into();
    m["description"] =
        "METS document of the preservation package this WACZ was exported from".into();
    m["sources"] = serde_json::json!([{ "title": "the package's METS OBJID", "path": objid }]);
    list.push(m);
    let dp = serde_json::json!({
        "profile": "data-package",
        "resources": list,
        "wacz_version": WACZ_VERSION,
        "software": format!("webaip {}", env!("CARGO_PKG_VERSION")),
        "created": created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "description": format!("Access copy of the preservation package {objid}"),
    });
    serde_json::to_vec_pretty(&dp).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::pass::tests::{cdxj_indexer_lines, noise_page, page, plan_of, record};
    use super::*;
    use crate::formats::warc::writer::WarcWriter;
    use crate::index::members::{Walker, tally};

    /// A false gzip header, as a payload may hold anywhere.
    const FALSE_HEADER: &[u8] = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff";

    /// A container of small pages around one record whose payload inflates to more than
    /// 64 MiB (noise, a false gzip header at 4 MiB in it), stored, not deflated: the
    /// container and where the false header is.
    fn large_container(dir: &Path) -> (PathBuf, u64) {
        let mut large = noise_page(66 << 20);
        large.splice(4 << 20..(4 << 20) + FALSE_HEADER.len(), FALSE_HEADER.iter().copied());
        let mut w = WarcWriter::new(Vec::new(), 0);
        for n in 0..40 {
            record(&mut w, n, &if n == 20 { large.clone() } else { page(n) });
        }
        let bytes = w.finish().unwrap();
        let path = dir.join("large.warc.gz");
        std::fs::write(&path, &bytes).unwrap();
        let at = memchr::memmem::find(&bytes, FALSE_HEADER).unwrap() as u64;
        (path, at)
    }

    /// The export's one pass over a container holding a record of more than 64 MiB, inflated:
    /// the container is read from its file once, exactly its length (the copy's reads; the
    /// index's reader takes the bytes the copy read), copied byte for byte and checked against
    /// its SHA-256, and its index lines are cdxj-indexer's and its pages `webaip pages`' (the
    /// large page with its title). Read twice, or once more by the index's reader, the count
    /// would be twice the length or more.
    #[test]
    fn a_container_with_a_record_over_64_mib_is_read_once_and_exported_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = large_container(dir.path());
        let bytes = std::fs::read(&path).unwrap();
        let mut plan = plan_of(&path);
        let sha256 = crate::formats::digest::hex(&<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        plan.containers[0].sha256 = Some(sha256.clone());
        let out = dir.path().join("out.wacz");
        let mut zip =
            zipout::WaczZip::new(std::fs::File::create(&out).unwrap(), &out, chrono::Utc::now());
        let opts = WaczOptions { index: WaczIndex::Cdxj, ..WaczOptions::default() };
        let temp = || Ok(tempfile::NamedTempFile::new_in(dir.path()).unwrap());
        let read = copy_and_read(&mut zip, dir.path(), &plan, &opts, &temp, &|_| ()).unwrap();
        assert_eq!(tally::read(&path), bytes.len() as u64, "read once, by the copy");
        assert_eq!(read.verified.sha256, 1);
        assert_eq!(read.resources[0].hash, format!("sha256:{sha256}"));
        drop(zip.finish().unwrap());
        let mut wacz = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        let mut copied = Vec::new();
        wacz.by_name("archive/large.warc.gz").unwrap().read_to_end(&mut copied).unwrap();
        assert!(copied == bytes, "the container copied byte for byte");
        let side = read.side;
        assert_eq!(side.revisits, Some(0));
        let lines = std::fs::read_to_string(side.index.members[0].1.path()).unwrap();
        let lines: Vec<String> = lines.lines().map(str::to_string).collect();
        assert_eq!(lines.len(), 40);
        assert_eq!(lines, cdxj_indexer_lines(&path), "cdxj-indexer's lines");
        let listing = crate::pages::list::list_pages(&path, &Default::default()).unwrap();
        assert_eq!(side.tally.pages, listing.entries.iter().count() as u64);
        let pages = std::fs::read_to_string(side.pages.path()).unwrap();
        assert!(pages.contains(r#""title":"A large page""#), "{pages}");
    }

    /// Exports `plan`'s one container (its SHA-256 stated) into a WACZ in `dir`: what the
    /// copy and the walkers made, and the container as the WACZ holds it.
    fn export_one(dir: &Path, plan: &mut plan::Plan) -> (CopiedAndRead, Vec<u8>) {
        let bytes = std::fs::read(&plan.containers[0].path).unwrap();
        let sha256 = crate::formats::digest::hex(&<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        plan.containers[0].sha256 = Some(sha256);
        let out = dir.join("out.wacz");
        let mut zip =
            zipout::WaczZip::new(std::fs::File::create(&out).unwrap(), &out, chrono::Utc::now());
        let opts = WaczOptions { index: WaczIndex::Cdxj, ..WaczOptions::default() };
        let temp = || Ok(tempfile::NamedTempFile::new_in(dir).unwrap());
        let read = copy_and_read(&mut zip, dir, plan, &opts, &temp, &|_| ()).unwrap();
        drop(zip.finish().unwrap());
        let mut wacz = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        let mut copied = Vec::new();
        let name = format!("archive/{}", plan.containers[0].name);
        wacz.by_name(&name).unwrap().read_to_end(&mut copied).unwrap();
        (read, copied)
    }

    /// A container of many members, larger than two stretches, is walked by two walkers
    /// (stretches walked ahead are kept) from the one read the copy makes: the file is read
    /// exactly its length (read twice, or once more by a walker, the count would be twice it
    /// or more), copied byte for byte, and its index lines are cdxj-indexer's and its pages
    /// `webaip pages`'.
    #[test]
    fn a_container_walked_by_two_walkers_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::new(Vec::new(), 6);
        for n in 0..400 {
            let mut body = noise_page(30_000 + n);
            body.splice(7..7, format!("Page {n} ").bytes());
            record(&mut w, n, &body);
        }
        let bytes = w.finish().unwrap();
        assert!(bytes.len() as u64 > 2 * walkers::STRETCH, "{}", bytes.len());
        let path = dir.path().join("many.warc.gz");
        std::fs::write(&path, &bytes).unwrap();
        let mut plan = plan_of(&path);
        let (read, copied) = export_one(dir.path(), &mut plan);
        assert_eq!(tally::read(&path), bytes.len() as u64, "read once, by the copy");
        assert!(copied == bytes, "the container copied byte for byte");
        assert_eq!(read.verified.sha256, 1);
        let side = read.side;
        assert!(side.walked[0].kept >= 1, "{:?}", side.walked);
        assert_eq!(side.walked[0].redone, 0, "{:?}", side.walked);
        assert_eq!(side.revisits, Some(8));
        let lines = std::fs::read_to_string(side.index.members[0].1.path()).unwrap();
        let lines: Vec<String> = lines.lines().map(str::to_string).collect();
        assert_eq!(lines, cdxj_indexer_lines(&path), "cdxj-indexer's lines");
        let listing = crate::pages::list::list_pages(&path, &Default::default()).unwrap();
        assert_eq!(side.tally.pages, listing.entries.iter().count() as u64);
        assert_eq!(side.tally.pages, 392);
        let pages = std::fs::read_to_string(side.pages.path()).unwrap();
        assert!(pages.contains(r#""title":"Page 398 A large page""#), "{pages}");
    }

    /// A boundary guessed past a false gzip header in a payload reads a bounded stretch of the
    /// file (8 MiB looked through and one read ahead), not up to 64 MiB past it as inflating
    /// the false member whole, with ever more input, did.
    #[test]
    fn a_false_gzip_header_costs_a_bounded_read() {
        let dir = tempfile::tempdir().unwrap();
        let (path, at) = large_container(dir.path());
        let mut walker = Walker::open(&path, "large.warc.gz", Default::default()).unwrap();
        let before = tally::read(&path);
        let guess = walker.guess_boundary(at - 16).unwrap();
        let read = tally::read(&path) - before;
        assert_eq!(guess, None, "no member starts within 8 MiB of the false header");
        assert!(read <= 17 << 20, "{read} bytes read");
    }
}
