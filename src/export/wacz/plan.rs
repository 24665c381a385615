//! What a package puts in its WACZ, read from its METS: the content containers (with the
//! SHA-512 and SHA-256 the METS states of each), what is left out and why, and the webpages a curator
//! described (the record each `WEBPAGE` div points at).

use std::collections::{HashMap, HashSet};
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::WaczError;
use crate::layout;
use crate::mets::listing::{ListedFile, Nested, read_listing};
use crate::mets::reader::{Event, MetsReader, NS_METS};
use crate::profile::Profile;

/// A container that goes into `archive/`.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    /// The package holding it (the one exported, or one holding originals of its revisits).
    pub root: PathBuf,
    /// Its path in that package (`content/NAME.warc.gz`).
    pub rel: String,
    /// Its file.
    pub path: PathBuf,
    /// Its name in `archive/` (and the index's `filename`).
    pub name: String,
    /// The SHA-512 the METS states of it, lower-case hex, when it states one.
    pub sha512: Option<String>,
    /// The SHA-256 the METS states of it (a second PREMIS fixity), lower-case hex.
    pub sha256: Option<String>,
}

/// A file of the package the WACZ does not hold, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LeftOut {
    /// Its path in the package.
    pub file: String,
    /// Why it is not in the WACZ.
    pub why: String,
}

/// A webpage a curator described: the record its `WEBPAGE` div points at, and its label.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Described {
    /// The container's path in the package.
    pub container: String,
    /// The record's offset in it (its gzip member's).
    pub offset: u64,
    /// The div's `LABEL` (the title the curator gave it).
    pub label: String,
}

/// What the METS says goes into the WACZ.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The package's OBJID.
    pub objid: String,
    pub containers: Vec<Container>,
    pub left_out: Vec<LeftOut>,
    pub described: Vec<Described>,
    /// Containers of other packages added for the originals of its revisits (`PACKAGE/NAME`).
    pub originals: Vec<String>,
}

/// Reads the METS of the package at `root`.
pub(crate) fn plan(root: &Path) -> Result<Plan, WaczError> {
    let mets = root.join(layout::METS);
    let listing = read_listing(open_mets(&mets)?, Nested::Skip)
        .map_err(|source| WaczError::Mets { path: mets.clone(), source })?;
    let Some(r) = listing.root.filter(|r| r.is_mets) else {
        return Err(WaczError::NotPackage { path: root.to_path_buf(), why: "not a METS document" });
    };
    let profile = r.profile.as_deref().and_then(Profile::by_uri);
    let content = profile.unwrap_or_else(Profile::default_profile).file_groups.content;
    let mut containers: Vec<Container> = Vec::new();
    let mut left_out = Vec::new();
    let mut names = HashSet::new();
    for f in &listing.files {
        let Some(href) = f.href.as_deref() else { continue };
        let rel = layout::confined_name(href).map_err(|source| WaczError::Name {
            mets: mets.clone(),
            name: href.to_string(),
            source,
        })?;
        if !f.groups.contains(&content) || !f.is_container() {
            left_out.push(LeftOut { why: why_left_out(f, &rel), file: rel });
            continue;
        }
        if containers.iter().any(|c| c.rel == rel) {
            continue;
        }
        let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
        if !names.insert(name.clone()) {
            return Err(WaczError::SameName { name });
        }
        let (sha512, sha256) = (f.stated_sha512(), f.stated_sha256());
        // Refused here, before any thread reads it: a link, a FIFO or a device (a FIFO would
        // block the reader that opened it).
        layout::open_in(root, &rel)
            .map_err(|source| WaczError::Confined { path: root.join(&rel), source })?;
        let (root, path) = (root.to_path_buf(), root.join(&rel));
        containers.push(Container { root, path, rel, name, sha512, sha256 });
    }
    if containers.is_empty() {
        let why = "its METS lists no content container";
        return Err(WaczError::NotPackage { path: root.to_path_buf(), why });
    }
    let objid = r.objid.unwrap_or_default();
    let described = described_pages(&mets)?;
    Ok(Plan { objid, containers, left_out, described, originals: Vec::new() })
}

/// Adds to `plan` (of the package at `root`) the containers of the `with` packages holding
/// the originals of its revisits, found as `audit --with` finds them (record id, payload
/// digest checked): a WACZ replays a revisit only with its original. An error names the
/// revisits whose original neither the package nor `with` holds.
pub(crate) fn add_originals(
    plan: &mut Plan,
    root: &Path,
    with: &[PathBuf],
) -> Result<(), WaczError> {
    let refs = crate::audit::references::check_references(root, with, false)?;
    if let Some(first) = refs.unresolved.first() {
        let refers = &first.refers_to;
        let to = refers.record_id.as_deref().or(refers.target_uri.as_deref()).unwrap_or("-");
        let container = refers.container.as_deref().map(|c| format!(" in {c}")).unwrap_or_default();
        return Err(WaczError::OriginalsMissing {
            count: refs.unresolved.len(),
            first: format!(
                "{} at offset {}, a revisit of {} referring to {to}{container}: {}",
                first.file,
                first.offset,
                first.target_uri.as_deref().unwrap_or("-"),
                first.problem
            ),
        });
    }
    // Each package holding originals is planned once, however many of its containers hold some.
    let mut planned: HashMap<PathBuf, Vec<Container>> = HashMap::new();
    for held in refs.holding {
        let (pkg, rel) = (held.package, held.name);
        if !planned.contains_key(&pkg) {
            planned.insert(pkg.clone(), self::plan(&pkg)?.containers);
        }
        let Some(others) = planned.get_mut(&pkg) else { continue };
        let shown = format!("{}/{rel}", pkg.display());
        let found = others.iter().position(|c| c.rel == rel).map(|i| others.swap_remove(i));
        let Some(c) = found else {
            return Err(WaczError::OriginalsMissing {
                count: 1,
                first: format!(
                    "{shown} holds originals but is no content container of its package"
                ),
            });
        };
        if plan.containers.iter().any(|x| x.name == c.name) {
            return Err(WaczError::SameName { name: c.name });
        }
        plan.originals.push(shown);
        plan.containers.push(c);
    }
    Ok(())
}

fn open_mets(mets: &Path) -> Result<MetsReader<BufReader<std::fs::File>>, WaczError> {
    let file = layout::open_regular(mets)
        .map_err(|source| WaczError::Confined { path: mets.to_path_buf(), source })?;
    // Strict: a METS with a DOCTYPE, an entity reference or a NUL is not read further.
    Ok(MetsReader::strict(BufReader::with_capacity(64 * 1024, file)))
}

/// Why a file of the package stays out of its WACZ.
fn why_left_out(f: &ListedFile, rel: &str) -> String {
    let is = |dir: &str| rel.starts_with(&format!("{dir}/"));
    if is(layout::VIRAL_DIR) {
        "viral: a container of infected payloads is never exported".into()
    } else if is(layout::ORIGINAL_DIR) {
        "original: the payloads as harvested of captures whose links were rewritten; the WACZ \
         replays the content containers"
            .into()
    } else if f.is_container() {
        format!("a container of the {} group, not the content group", f.group)
    } else {
        "not a web archive container (logs, configuration, reports stay in the package)".into()
    }
}

/// The webpages the logical structure describes: each `WEBPAGE` div's label and the record
/// (container, offset) whose payload its `fptr` names. Two passes over the METS: the
/// structMap follows the fileSec, and only the payloads the divs name are kept.
fn described_pages(mets: &Path) -> Result<Vec<Described>, WaczError> {
    let divs = page_divs(mets)?;
    if divs.is_empty() {
        return Ok(Vec::new());
    }
    let wanted: HashSet<&str> = divs.iter().map(|d| d.file_id.as_str()).collect();
    let found = payload_places(mets, &wanted)?;
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for PageDiv { file_id, label } in divs {
        if let Some((container, offset)) = found.get(&file_id) {
            let d = Described { container: container.clone(), offset: *offset, label };
            if seen.insert(d.clone()) {
                out.push(d);
            }
        }
    }
    Ok(out)
}

/// A `WEBPAGE` div's label and the `<file>` its fptr names.
struct PageDiv {
    file_id: String,
    label: String,
}

/// The first pass: the `WEBPAGE` divs and their fptrs.
fn page_divs(mets: &Path) -> Result<Vec<PageDiv>, WaczError> {
    let err = |source| WaczError::Mets { path: mets.to_path_buf(), source };
    let mut divs = Vec::new();
    let mut reader = open_mets(mets)?;
    let mut in_page: Option<String> = None;
    while let Some(event) = reader.next().map_err(err)? {
        let (Event::Start(e, _) | Event::Empty(e, _)) = &event else { continue };
        if e.is(NS_METS, "div") {
            let page = e.attr("TYPE") == Some("WEBPAGE");
            in_page = page.then(|| e.attr("LABEL").unwrap_or_default().to_string());
        } else if e.is(NS_METS, "fptr")
            && let (Some(label), Some(id)) = (&in_page, e.attr("FILEID"))
        {
            divs.push(PageDiv { file_id: id.to_string(), label: label.clone() });
        }
    }
    Ok(divs)
}

/// A `<file>` open during the second pass.
struct OpenFile {
    begin: Option<u64>,
    /// Its FLocat, as the container list names it.
    href: Option<String>,
}

/// The second pass: where each wanted `<file>` is, as (container, its record's BEGIN).
fn payload_places(
    mets: &Path,
    wanted: &HashSet<&str>,
) -> Result<HashMap<String, (String, u64)>, WaczError> {
    let err = |source| WaczError::Mets { path: mets.to_path_buf(), source };
    let mut found = HashMap::new();
    let mut reader = open_mets(mets)?;
    // Open <file>s, outermost first.
    let mut open: Vec<OpenFile> = Vec::new();
    while let Some(event) = reader.next().map_err(err)? {
        match &event {
            Event::Start(e, _) | Event::Empty(e, _) if e.is(NS_METS, "file") => {
                let id = e.attr("ID").unwrap_or_default();
                if wanted.contains(id)
                    && let [
                        OpenFile { href: Some(container), .. },
                        ..,
                        OpenFile { begin: Some(begin), .. },
                    ] = open.as_slice()
                {
                    found.insert(id.to_string(), (container.clone(), *begin));
                }
                if matches!(event, Event::Start(..)) {
                    let begin = e.attr("BEGIN").and_then(|b| b.parse().ok());
                    open.push(OpenFile { begin, href: None });
                }
            }
            Event::Start(e, _) | Event::Empty(e, _) if e.is(NS_METS, "FLocat") => {
                // As the container list names it (`./content/x` is `content/x`).
                let href = e.href().and_then(|h| layout::confined_name(h).ok());
                if let Some(last) = open.last_mut() {
                    last.href = href;
                }
            }
            Event::End { ns, local, .. } if ns.as_str() == NS_METS && local.as_str() == "file" => {
                open.pop();
            }
            _ => {}
        }
    }
    Ok(found)
}
