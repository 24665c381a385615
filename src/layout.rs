//! The package layout and the confinement of every name that comes from input.
//!
//! A package names its own files: manifest lines, METS `FLocat`s, store identifiers, and the
//! sources name theirs (HTTrack cache entries). Those names are input, so they are hostile until
//! proven otherwise: one function, `confined_name`, decides whether a relative name stays
//! inside its root (not absolute, no `..`, no NUL), and `open_in` / `create_in` open it
//! without following any symbolic link on the way (Linux `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS`; a component-by-component `lstat` walk where the kernel lacks it).
//! Where a file is expected only a regular file is accepted: symbolic links, FIFOs, sockets,
//! devices and directories are refused with an error naming the path (`open_regular`,
//! `regular_metadata`). Side files are read with a bound (`read_bounded`).
//!
//! The manifest format (`<sha512>  <path>`, one line a file, BagIt style) is read and written
//! here too (`ManifestReader`, `manifest_line`), so package, audit and store agree on it,
//! and so are the package's own names: [`METS`], [`MANIFEST`], the folders ([`CONTENT_DIR`],
//! [`ORIGINAL_DIR`], [`VIRAL_DIR`], [`LOGS_DIR`], [`WEBAIP_LOGS_DIR`]), container names
//! (`container_name`) and what counts as a WARC by its name (`is_warc_name`). The METS
//! document itself is read by `mets::reader`.

use std::fs::{File, Metadata};
use std::io::{self, BufRead, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use memchr::memchr;
use rustix::fs::{Mode, OFlags, ResolveFlags};

/// Name of the METS document at the top of a package.
pub const METS: &str = "METS.xml";
/// Name of the package manifest.
pub const MANIFEST: &str = "manifest-sha512.txt";
/// Folder of the content containers.
pub const CONTENT_DIR: &str = "content";
/// Folder of the containers that keep the originals of transformed records.
pub const ORIGINAL_DIR: &str = "original";
/// Folder of the containers that keep infected records.
pub const VIRAL_DIR: &str = "viral";
/// Folder of the harvest's own logs and side files.
pub const LOGS_DIR: &str = "logs";
/// Folder of webaip's own reports (migration reports, quirk lists), inside [`LOGS_DIR`].
pub const WEBAIP_LOGS_DIR: &str = "logs/webaip";

/// The name of a WARC container in the package: `<dir>/<stem>-<serial>.warc.gz` with a
/// five-digit serial (`content/crawl-00000.warc.gz`); the original and viral containers
/// put their kind in the stem (`original/crawl-original-00000.warc.gz`).
pub(crate) fn container_name(dir: &str, stem: &str, serial: u32) -> String {
    format!("{dir}/{stem}-{serial:05}.warc.gz")
}

/// The package name of a file in folder `dir`: `<dir>/<name>`.
pub(crate) fn in_dir(dir: &str, name: &str) -> String {
    format!("{dir}/{name}")
}

/// The viral twin of a content container, where its infected records go:
/// `content/X.warc.gz` -> `viral/X.viral.warc.gz` (an uncompressed `X.warc` gets an
/// uncompressed twin: it holds the original records as they were).
pub(crate) fn viral_twin(container: &str) -> String {
    let name = container.rsplit('/').next().unwrap_or("container.warc.gz");
    match name.strip_suffix(".warc.gz") {
        Some(stem) => in_dir(VIRAL_DIR, &format!("{stem}.viral.warc.gz")),
        None => {
            in_dir(VIRAL_DIR, &format!("{}.viral.warc", name.strip_suffix(".warc").unwrap_or(name)))
        }
    }
}

/// True for a name that says it is a WARC file (compressed or not).
pub(crate) fn is_warc_name(name: &str) -> bool {
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

/// Longest manifest line read (a SHA-512, two spaces and a path of at most `PATH_MAX`).
pub const MAX_MANIFEST_LINE: usize = 128 + 2 + 4096 + 2;

/// Why a name from input does not stay inside its root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty (or only `.` and `/`).
    #[error("is empty")]
    Empty,
    /// The name holds a NUL character.
    #[error("holds a NUL character")]
    Nul,
    /// The name starts at the file system root.
    #[error("is an absolute path")]
    Absolute,
    /// The name has a `..` segment.
    #[error("has a \"..\" segment")]
    ParentDir,
    /// The name is longer than the system accepts.
    #[error("is longer than {} bytes", MAX_NAME)]
    TooLong,
}

/// Longest relative name accepted (Linux `PATH_MAX`).
pub(crate) const MAX_NAME: usize = 4096;

/// A failure to reach a file by a name from input, as a sentence naming the path.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The name itself leaves the root.
    #[error("{name:?} {reason}: it does not stay inside {}", root.display())]
    Name {
        /// The name as given.
        name: String,
        /// Why it is refused.
        reason: NameError,
        /// The root it must stay in.
        root: PathBuf,
    },
    /// A symbolic link is on the way to the file, or is the file.
    #[error("{}: a symbolic link is on the way (links are not followed)", path.display())]
    Link {
        /// The path through the link.
        path: PathBuf,
    },
    /// Something other than a regular file is where a file is expected.
    #[error("{}: is {kind}, not a regular file", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What is there ("a FIFO", "a directory", ...).
        kind: &'static str,
    },
    /// A side file is larger than the bound it is read with.
    #[error("{}: larger than {limit} bytes, not read", path.display())]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The bound.
        limit: u64,
    },
    /// The file system refused (absent, no permission, ...).
    #[error("{}: {}", path.display(), describe_io(source))]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl ConfineError {
    /// True when the file (or a directory on the way) does not exist.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, ConfineError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    fn io(path: &Path, source: io::Error) -> Self {
        ConfineError::Io { path: path.to_path_buf(), source }
    }

    /// What is wrong, without the path (for a caller that names the path itself).
    pub fn reason(&self) -> String {
        match self {
            ConfineError::Name { .. } => self.to_string(),
            ConfineError::Link { .. } => {
                "a symbolic link is on the way (links are not followed)".into()
            }
            ConfineError::NotRegular { kind, .. } => format!("is {kind}, not a regular file"),
            ConfineError::TooLarge { limit, .. } => format!("larger than {limit} bytes, not read"),
            ConfineError::Io { source, .. } => describe_io(source),
        }
    }
}

/// The scheme of a URI reference (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`,
/// then `:`), or `None` for a relative reference. A METS `FLocat` with a scheme names a file
/// kept outside the package (`http:`, `file:`, `urn:`), never a path inside it; a link with
/// one is not rewritten.
pub fn uri_scheme(reference: &str) -> Option<&str> {
    let (scheme, _) = reference.split_once(':')?;
    let mut chars = scheme.chars();
    let first_is_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first_is_letter && rest_ok).then_some(scheme)
}

/// Checks a relative name from input and returns it normalised (`.` and empty segments
/// dropped, `/` separators). Refuses absolute names, `..` segments, NUL and over-long names.
pub(crate) fn confined_name(name: &str) -> Result<String, NameError> {
    if name.contains('\0') {
        return Err(NameError::Nul);
    }
    if name.len() > MAX_NAME {
        return Err(NameError::TooLong);
    }
    if name.starts_with('/') {
        return Err(NameError::Absolute);
    }
    let mut out = String::with_capacity(name.len());
    for segment in name.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(NameError::ParentDir),
            s => {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(s);
            }
        }
    }
    if out.is_empty() {
        return Err(NameError::Empty);
    }
    Ok(out)
}

/// The bytes of the regular files below `dir` (links not followed): a package's size as a
/// progress bar or a journal counts it.
pub fn bytes_below(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// What kind of file system object a metadata describes, as words for a message.
pub(crate) fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else {
        "not a regular file"
    }
}

fn kind_of_mode(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "a regular file",
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFBLK => "a block device",
        libc::S_IFCHR => "a character device",
        _ => "not a regular file",
    }
}

/// The metadata of a path the caller built (a walked entry, a fixed side-file name), without
/// following a link: an error unless it is a regular file.
pub(crate) fn regular_metadata(path: &Path) -> Result<Metadata, ConfineError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| ConfineError::io(path, e))?;
    if meta.file_type().is_symlink() {
        return Err(ConfineError::Link { path: path.to_path_buf() });
    }
    if !meta.is_file() {
        return Err(ConfineError::NotRegular { path: path.to_path_buf(), kind: kind_of(&meta) });
    }
    Ok(meta)
}

/// Opens a path the caller built for reading: the last component must not be a link, and what
/// is opened must be a regular file (a FIFO is opened without blocking, then refused).
pub(crate) fn open_regular(path: &Path) -> Result<File, ConfineError> {
    out_of_descriptors_by_test(path).map_err(|e| opened_error(path, e))?;
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| opened_error(path, e))?;
    finish_open(path, fd.into())
}

/// Opens `name` (a name from input) below `root` for reading, refusing names that leave the
/// root, links anywhere on the way, and anything but a regular file.
pub(crate) fn open_in(root: &Path, name: &str) -> Result<File, ConfineError> {
    let rel = checked(root, name)?;
    let path = root.join(&rel);
    out_of_descriptors_by_test(&path).map_err(|e| opened_error(&path, e))?;
    let flags =
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = match open_beneath(root, &rel, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) => return Err(opened_error(&path, e)),
    };
    finish_open(&path, fd)
}

/// The metadata of `name` below `root` (a regular file reached without links), or why not.
pub(crate) fn metadata_in(root: &Path, name: &str) -> Result<Metadata, ConfineError> {
    open_in(root, name)?.metadata().map_err(|e| ConfineError::io(&root.join(name), e))
}

/// Creates `name` below `root` for writing, with its missing directories, refusing names that
/// leave the root, links on the way, and an existing file (never replaced).
pub(crate) fn create_in(root: &Path, name: &str) -> Result<File, ConfineError> {
    let rel = checked(root, name)?;
    if let Some((dir, _)) = rel.rsplit_once('/') {
        create_dirs_in(root, dir)?;
    }
    let path = root.join(&rel);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let fd = open_beneath(root, &rel, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| opened_error(&path, e))?;
    Ok(fd)
}

/// Creates the directories of `dir` (a name from input) below `root`, refusing links and
/// non-directories on the way.
pub(crate) fn create_dirs_in(root: &Path, dir: &str) -> Result<PathBuf, ConfineError> {
    let rel = checked(root, dir)?;
    let mut path = root.to_path_buf();
    for segment in rel.split('/') {
        path.push(segment);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => return Err(ConfineError::Link { path }),
            Ok(m) if m.is_dir() => {}
            Ok(m) => return Err(ConfineError::NotRegular { kind: kind_of(&m), path }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match std::fs::create_dir(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let m =
                        std::fs::symlink_metadata(&path).map_err(|e| ConfineError::io(&path, e))?;
                    if !m.is_dir() {
                        return Err(ConfineError::NotRegular { kind: kind_of(&m), path });
                    }
                }
                Err(e) => return Err(ConfineError::io(&path, e)),
            },
            Err(e) => return Err(ConfineError::io(&path, e)),
        }
    }
    Ok(path)
}

/// Reads a side file the caller named (a fixed name such as `url.map`), at most `limit` bytes:
/// a larger file, a link or a non-regular file is refused.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ConfineError> {
    read_at_most(open_regular(path)?, path, limit)
}

/// Reads a file the user named (a link followed, as [`open_user_file`] does), at most `limit`
/// bytes: a larger file, a FIFO or a device (`/dev/zero`) is refused, never read to its end.
pub(crate) fn read_user_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ConfineError> {
    read_at_most(open_user_file(path)?, path, limit)
}

fn read_at_most(file: File, path: &Path, limit: u64) -> Result<Vec<u8>, ConfineError> {
    let mut buf = Vec::new();
    file.take(limit + 1).read_to_end(&mut buf).map_err(|e| ConfineError::io(path, e))?;
    if buf.len() as u64 > limit {
        return Err(ConfineError::TooLarge { path: path.to_path_buf(), limit });
    }
    Ok(buf)
}

fn checked(root: &Path, name: &str) -> Result<String, ConfineError> {
    confined_name(name).map_err(|reason| ConfineError::Name {
        name: name.to_string(),
        reason,
        root: root.to_path_buf(),
    })
}

fn opened_error(path: &Path, e: rustix::io::Errno) -> ConfineError {
    match e {
        // ELOOP: O_NOFOLLOW met a link as the last component, or RESOLVE_NO_SYMLINKS one on
        // the way; EXDEV: RESOLVE_BENEATH saw the walk leave the root.
        rustix::io::Errno::LOOP | rustix::io::Errno::XDEV => {
            ConfineError::Link { path: path.to_path_buf() }
        }
        e => ConfineError::io(path, e.into()),
    }
}

/// Checks what was opened (fstat, so no race with the name) and clears O_NONBLOCK.
fn finish_open(path: &Path, file: File) -> Result<File, ConfineError> {
    let stat = rustix::fs::fstat(file.as_fd()).map_err(|e| ConfineError::io(path, e.into()))?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(ConfineError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of_mode(stat.st_mode),
        });
    }
    rustix::fs::fcntl_setfl(file.as_fd(), OFlags::empty())
        .map_err(|e| ConfineError::io(path, e.into()))?;
    Ok(file)
}

/// `EMFILE` where a test run asks opening `path` to fail (`hooks::open_fails`): a real
/// descriptor limit cannot choose which file it stops.
fn out_of_descriptors_by_test(path: &Path) -> Result<(), rustix::io::Errno> {
    match crate::hooks::open_fails(path) {
        true => Err(rustix::io::Errno::MFILE),
        false => Ok(()),
    }
}

/// Opens `rel` (already confined) below `root` without following links: `openat2` with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or, where the kernel has no `openat2` (before 5.6,
/// or a seccomp filter refuses it), a walk that opens each directory with `O_NOFOLLOW`.
fn open_beneath(
    root: &Path,
    rel: &str,
    flags: OFlags,
    mode: Mode,
) -> Result<File, rustix::io::Errno> {
    let dir = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(&dir, rel, flags, mode, resolve) {
        Ok(fd) => Ok(fd.into()),
        Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
            let mut dir = dir;
            let mut segments = rel.split('/').peekable();
            while let Some(segment) = segments.next() {
                if segments.peek().is_none() {
                    return rustix::fs::openat(&dir, segment, flags, mode).map(File::from);
                }
                dir = rustix::fs::openat(
                    &dir,
                    segment,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| {
                    if e == rustix::io::Errno::NOTDIR { rustix::io::Errno::LOOP } else { e }
                })?;
            }
            Err(rustix::io::Errno::INVAL)
        }
        Err(e) => Err(e),
    }
}

/// Opens a file the user named on the command line: a link there is the user's choice and is
/// followed, but what is opened must be a regular file (a FIFO is not waited on).
pub(crate) fn open_user_file(path: &Path) -> Result<File, ConfineError> {
    out_of_descriptors_by_test(path).map_err(|e| ConfineError::io(path, e.into()))?;
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| ConfineError::io(path, e.into()))?;
    finish_open(path, fd.into())
}

/// Characters of a name read from input (a ZIP entry's, a member's) that a message carries
/// at most: a name can be 64 KiB, and a list of them would be megabytes.
pub const SHOWN_NAME: usize = 200;

/// `text` cut to `max` characters, saying how long it was: the one home for clipping what
/// input names before a message shows it.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()),
    }
}

/// `text` cut to at most `max` bytes on a character boundary, `marker` appended when cut:
/// the one home for bounding a text kept from input (clip is for messages).
pub(crate) fn cut_marked(mut text: String, max: usize, marker: &str) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str(marker);
    }
    text
}

/// An I/O error as words for a sentence ("it does not exist"), without the OS error number:
/// the one home for saying an `io::Error` to a user (the caller names the file).
pub fn describe_io(e: &io::Error) -> String {
    // A refusal carried in an io::Error names its path itself: the caller names it once.
    if let Some(refused) = e.get_ref().and_then(|i| i.downcast_ref::<ConfineError>()) {
        return refused.reason();
    }
    let own_words = e.raw_os_error().is_none() && e.get_ref().is_some();
    let words = match e.kind() {
        io::ErrorKind::NotFound => "it does not exist",
        io::ErrorKind::PermissionDenied => "permission denied",
        io::ErrorKind::IsADirectory => "it is a directory, not a file",
        io::ErrorKind::NotADirectory => "a part of the path is not a directory",
        // A custom error of these kinds says it in its own words, kept.
        _ if own_words => "",
        io::ErrorKind::AlreadyExists => "it already exists",
        io::ErrorKind::StorageFull => "no space left on device",
        io::ErrorKind::QuotaExceeded => "disk quota exceeded",
        io::ErrorKind::FileTooLarge => {
            "file too large (over the file system's or the process's limit)"
        }
        io::ErrorKind::ReadOnlyFilesystem => "read-only file system",
        io::ErrorKind::OutOfMemory => "out of memory",
        _ => "",
    };
    if !words.is_empty() {
        return words.into();
    }
    let text = e.to_string();
    match (e.raw_os_error(), text.find(" (os error")) {
        (Some(_), Some(i)) => text[..i].to_lowercase(),
        _ => text,
    }
}

/// Whether an I/O error is the environment's: the disk or a quota full, a file-size limit, a
/// read-only file system, memory exhausted, the process's or the system's limit of open files
/// reached. Reading damaged input never gives one: it says nothing of the input.
pub fn is_environment(e: &io::Error) -> bool {
    use io::ErrorKind as K;
    let open_files = matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE));
    open_files
        || matches!(
            e.kind(),
            K::StorageFull
                | K::QuotaExceeded
                | K::FileTooLarge
                | K::ReadOnlyFilesystem
                | K::OutOfMemory
        )
}

/// Whether a file that could not be read leaves its bytes unknown, not wrong: this machine
/// stopped the reading ([`is_environment`]), the medium holding the file reported an I/O
/// error (EIO: a bad sector, a lost network mount, a disk pulled out), or the reader may not
/// read it (EACCES, EPERM: permissions, an ACL, a security module). These are kept apart from
/// [`is_environment`] (a rerun on this machine may not help: the medium may need checking,
/// another copy, or another user), but like it, they say nothing of what the bytes are: an
/// audit says such a file is not checked (not read), never that it is damaged.
pub fn is_not_read(e: &io::Error) -> bool {
    is_environment(e) || matches!(e.raw_os_error(), Some(libc::EIO | libc::EACCES | libc::EPERM))
}

/// The first environment I/O error ([`is_environment`]) among an error and its causes (an
/// `io::Error` wrapping another error is looked into too).
pub fn environment_cause<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    io_cause(e, is_environment)
}

/// The first I/O error among an error and its causes after which the bytes are not known
/// ([`is_not_read`]).
pub fn not_read_cause<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    io_cause(e, is_not_read)
}

/// An error in words, with the cause that left the bytes unknown ([`not_read_cause`]) said
/// too when the error's own words do not say it ("record at offset 0: cannot read").
pub fn with_not_read_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let text = e.to_string();
    match not_read_cause(e).map(describe_io) {
        Some(words) if !text.contains(&words) => format!("{text}: {words}"),
        _ => text,
    }
}

/// The first I/O error that `which` accepts among an error and its causes (an `io::Error`
/// wrapping another error is looked into too).
fn io_cause<'a>(
    e: &'a (dyn std::error::Error + 'static),
    which: fn(&io::Error) -> bool,
) -> Option<&'a io::Error> {
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            if which(io) {
                return Some(io);
            }
            if let Some(found) = io.get_ref().and_then(|inner| io_cause(inner, which)) {
                return Some(found);
            }
        }
        next = err.source();
    }
    None
}

/// One line of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestLine {
    /// Byte offset of the line in the manifest.
    pub offset: u64,
    /// The checksum as written, lower-cased.
    pub sha512: String,
    /// The name as written.
    pub name: String,
    /// The name normalised, or why it does not stay inside the package.
    pub confined: Result<String, NameError>,
}

/// A manifest line that is not `<sha512>  <path>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MalformedLine {
    /// Byte offset of the line in the manifest.
    pub offset: u64,
    /// The start of the line, lossily decoded (at most 200 bytes).
    pub text: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// Reads a manifest line by line with a bound on the line length, so a hostile manifest (one
/// huge line, no line end) costs at most [`MAX_MANIFEST_LINE`] bytes of memory.
pub(crate) struct ManifestReader<R> {
    input: R,
    offset: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> ManifestReader<R> {
    /// Reads the manifest from `input`.
    pub(crate) fn new(input: R) -> Self {
        ManifestReader { input, offset: 0, buf: Vec::new() }
    }
}

impl<R: BufRead> Iterator for ManifestReader<R> {
    type Item = io::Result<Result<ManifestLine, MalformedLine>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            let here = self.offset;
            let mut too_long = false;
            // Read up to the line end, keeping at most MAX_MANIFEST_LINE bytes.
            loop {
                let chunk = match self.input.fill_buf() {
                    Ok(c) => c,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Some(Err(e)),
                };
                if chunk.is_empty() {
                    break;
                }
                let (take, done) = match memchr(b'\n', chunk) {
                    Some(i) => (i + 1, true),
                    None => (chunk.len(), false),
                };
                let room = MAX_MANIFEST_LINE.saturating_sub(self.buf.len());
                if take > room {
                    too_long = true;
                }
                self.buf.extend_from_slice(&chunk[..take.min(room)]);
                self.input.consume(take);
                self.offset += take as u64;
                if done {
                    break;
                }
            }
            if self.offset == here {
                return None;
            }
            let text = &self.buf[..];
            let text = text.strip_suffix(b"\n").unwrap_or(text);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.is_empty() && !too_long {
                continue;
            }
            let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
            let malformed =
                |reason| Some(Ok(Err(MalformedLine { offset: here, text: shown.clone(), reason })));
            if too_long {
                return malformed("is longer than a checksum and a path can be");
            }
            let Ok(text) = std::str::from_utf8(text) else {
                return malformed("is not UTF-8");
            };
            let Some((sum, name)) = text.split_once("  ") else {
                return malformed("is not \"<sha512>  <path>\"");
            };
            let name = name.strip_prefix('*').unwrap_or(name);
            if sum.len() != 128 || !sum.bytes().all(|b| b.is_ascii_hexdigit()) {
                return malformed("does not start with a SHA-512 in hexadecimal");
            }
            return Some(Ok(Ok(ManifestLine {
                offset: here,
                sha512: sum.to_ascii_lowercase(),
                name: name.to_string(),
                confined: confined_name(name),
            })));
        }
    }
}

/// One manifest line for a file: `<sha512>  <path>\n`.
pub(crate) fn manifest_line(sha512: &str, name: &str) -> String {
    format!("{sha512}  {name}\n")
}

/// Opens the directory `dir` (a name from input; `""` is the root itself) below `root`, without
/// following any link on the way, so that `linkat`/`renameat`/`unlinkat` relative to it stay
/// inside the root (the store publishes and removes its temporaries this way).
pub(crate) fn open_dir_in(root: &Path, dir: &str) -> Result<File, ConfineError> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    if dir.is_empty() {
        // The root itself is the caller's (configured, trusted): it may be a link.
        return rustix::fs::open(root, flags.difference(OFlags::NOFOLLOW), Mode::empty())
            .map(File::from)
            .map_err(|e| opened_error(root, e));
    }
    let rel = checked(root, dir)?;
    let path = root.join(&rel);
    open_beneath(root, &rel, flags, Mode::empty()).map_err(|e| opened_error(&path, e))
}

/// The WARC containers of the package at `pkg` (names such as `content/NAME.warc.gz`,
/// sorted): the WARC-named entries of `content/`, and every `content/` WARC its manifest
/// lists. Each must be a regular file reached without links: a link, FIFO, device or
/// directory of a WARC name is refused, not skipped, and so is a listed container that is
/// absent (nothing is opened, so nothing blocks).
pub(crate) fn package_containers(pkg: &Path) -> Result<Vec<String>, ConfineError> {
    let found = package_containers_found(pkg)?;
    match found.absent.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(found.names),
    }
}

/// The containers of [`package_containers`] that are there, and why each listed one that is
/// not cannot be had (absent): for a caller that goes on without them and says so.
pub(crate) struct FoundContainers {
    /// The names, sorted.
    pub names: Vec<String>,
    /// Each container the manifest lists that is not there (or not reachable), why.
    pub absent: Vec<ConfineError>,
}

/// [`package_containers`], the listed containers that cannot be had set apart.
pub(crate) fn package_containers_found(pkg: &Path) -> Result<FoundContainers, ConfineError> {
    let mut names = warc_entries(pkg, CONTENT_DIR)?;
    let mut absent = Vec::new();
    for listed in manifest_containers(pkg)? {
        if names.binary_search(&listed).is_err() {
            // Absent, or a name the listing did not see: why it is not there, by its path.
            match metadata_in(pkg, &listed) {
                Ok(_) => {
                    names.push(listed);
                    names.sort();
                }
                Err(e) => absent.push(e),
            }
        }
    }
    Ok(FoundContainers { names, absent })
}

/// The WARC containers of the package at `pkg` that hold infected payloads (`viral/NAME`,
/// sorted; none when it has no `viral/`), checked as [`package_containers`] checks those of
/// `content/`.
pub(crate) fn viral_containers(pkg: &Path) -> Result<Vec<String>, ConfineError> {
    match warc_entries(pkg, VIRAL_DIR) {
        Err(e) if e.is_not_found() => Ok(Vec::new()),
        found => found,
    }
}

/// The WARC-named entries of `pkg/DIR/` (sorted), each checked by its own type (`lstat`).
fn warc_entries(pkg: &Path, dir_name: &str) -> Result<Vec<String>, ConfineError> {
    let dir = open_dir_in(pkg, dir_name)?;
    let path = pkg.join(dir_name);
    let entries =
        rustix::fs::Dir::read_from(&dir).map_err(|e| ConfineError::io(&path, e.into()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ConfineError::io(&path, e.into()))?;
        let Ok(name) = entry.file_name().to_str() else { continue };
        if !is_warc_name(name) {
            continue;
        }
        let at = path.join(name);
        let stat = rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| ConfineError::io(&at, e.into()))?;
        match stat.st_mode & libc::S_IFMT {
            libc::S_IFREG => names.push(in_dir(dir_name, name)),
            libc::S_IFLNK => return Err(ConfineError::Link { path: at }),
            mode => return Err(ConfineError::NotRegular { path: at, kind: kind_of_mode(mode) }),
        }
    }
    names.sort();
    Ok(names)
}

/// The `content/` WARCs the package's manifest lists (none when it has no manifest).
fn manifest_containers(pkg: &Path) -> Result<Vec<String>, ConfineError> {
    let file = match open_in(pkg, MANIFEST) {
        Ok(f) => f,
        Err(e) if e.is_not_found() => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = Vec::new();
    for line in ManifestReader::new(io::BufReader::new(file)) {
        let line = line.map_err(|e| ConfineError::io(&pkg.join(MANIFEST), e))?;
        let Ok(Ok(name)) = line.map(|l| l.confined) else { continue };
        if name.starts_with(&format!("{CONTENT_DIR}/")) && is_warc_name(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Opens a directory and takes an exclusive `flock` on it without waiting: a run holds it
/// on its temporary directory for as long as it uses it, so a later run that can take it
/// knows the directory's maker died.
pub(crate) fn lock_dir(dir: &Path) -> io::Result<File> {
    use rustix::fs::FlockOperation;
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive)?;
    Ok(File::from(fd))
}

/// An output that would lie inside what it is made from, or hold it: a second run would read
/// its own output (a package of the first package), or the run would write into its input.
#[derive(Debug, thiserror::Error)]
pub enum NestingError {
    /// The output is the input, or inside the input folder.
    #[error("the output {} is inside the input {}: put the output beside the input, not in it",
        out.display(), input.display())]
    OutInsideInput {
        /// The output as given.
        out: PathBuf,
        /// The input as given.
        input: PathBuf,
    },
    /// The input folder is inside the output folder.
    #[error("the input {} is inside the output {}: put the output beside the input, not around it",
        input.display(), out.display())]
    InputInsideOut {
        /// The input as given.
        input: PathBuf,
        /// The output as given.
        out: PathBuf,
    },
    /// The output would land on a file SQLite or webaip keeps beside a database (its
    /// `-wal`, `-shm`, `-journal`, a lock), present or not.
    #[error("the output {} is beside the database {} and named as its own files are (SQLite's -wal, -shm, -journal, webaip's locks): a page there would replace one of them; write it elsewhere",
        out.display(), db.display())]
    OutBesideDatabase {
        /// The output as given.
        out: PathBuf,
        /// The database as given.
        db: PathBuf,
    },
    /// The output's place cannot be resolved.
    #[error("{}: {}", path.display(), describe_io(source))]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// Refuses an output `out` (which need not exist yet) inside the input `input`, or an input
/// folder inside `out`, comparing real paths: links resolved, the output by its nearest
/// existing ancestor. A file input is refused only as the output itself: a file beside its
/// outputs (`migrate crawl.arc --out .`) is not read twice. An input that cannot be reached
/// passes: the command says why it cannot read it.
///
/// For an output that is made whole or replaced (a package folder). An output folder that new
/// things are made in, beside what it holds (`ingest -o /archive`, `unmigrate -o .`), may hold
/// the input: use [`refuse_output_in_input`] for it.
pub fn refuse_nesting(input: &Path, out: &Path) -> Result<(), NestingError> {
    refuse_output_in_input(input, out)?;
    let Ok(real_input) = std::fs::canonicalize(input) else { return Ok(()) };
    let folder = std::fs::metadata(&real_input).is_ok_and(|m| m.is_dir());
    if folder && real_input.starts_with(real_path(out)?) {
        let (input, out) = (input.to_path_buf(), out.to_path_buf());
        return Err(NestingError::InputInsideOut { input, out });
    }
    Ok(())
}

/// Refuses an output `out` (a file or folder, which need not exist yet) that is the input
/// `input` or lies inside the input folder, comparing real paths as [`refuse_nesting`] does:
/// the run would write into what it reads (a second run would read its own output, or a
/// report would overwrite the ARC it describes).
pub fn refuse_output_in_input(input: &Path, out: &Path) -> Result<(), NestingError> {
    let Ok(real_input) = std::fs::canonicalize(input) else { return Ok(()) };
    let real_out = real_path(out)?;
    let folder = std::fs::metadata(&real_input).is_ok_and(|m| m.is_dir());
    if real_out == real_input || (folder && real_out.starts_with(&real_input)) {
        let (input, out) = (input.to_path_buf(), out.to_path_buf());
        return Err(NestingError::OutInsideInput { out, input });
    }
    Ok(())
}

/// Refuses an output `out` in the folder of the database `db` whose name begins with the
/// database's file name (`state.sqlite-wal`, `state.sqlite.migrate-lock`, the database
/// itself), whether or not such a file exists now: SQLite makes its files while a connection
/// is open and deletes them after, and a page renamed over one would destroy it (and the
/// records it holds) or be destroyed by the next opener. Folders compared by real path.
pub fn refuse_output_beside_database(db: &Path, out: &Path) -> Result<(), NestingError> {
    let named = |p: &Path| -> Result<Option<(PathBuf, std::ffi::OsString)>, NestingError> {
        let absolute = std::path::absolute(p)
            .map_err(|source| NestingError::Io { path: p.to_path_buf(), source })?;
        let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
            return Ok(None);
        };
        Ok(Some((real_path(parent)?, name.to_owned())))
    };
    let (Some((db_dir, db_name)), Some((out_dir, out_name))) = (named(db)?, named(out)?) else {
        return Ok(());
    };
    let beside =
        out_dir == db_dir && out_name.as_encoded_bytes().starts_with(db_name.as_encoded_bytes());
    if beside {
        return Err(NestingError::OutBesideDatabase { out: out.into(), db: db.into() });
    }
    Ok(())
}

/// The real path of `path`, which need not exist: its nearest existing ancestor resolved
/// (links followed), the rest appended with `.` and `..` taken lexically.
fn real_path(path: &Path) -> Result<PathBuf, NestingError> {
    let io = |source| NestingError::Io { path: path.to_path_buf(), source };
    let absolute = std::path::absolute(path).map_err(io)?;
    for base in absolute.ancestors() {
        let Ok(mut real) = std::fs::canonicalize(base) else { continue };
        for part in absolute.strip_prefix(base).unwrap_or(Path::new("")).components() {
            match part {
                std::path::Component::ParentDir => {
                    real.pop();
                }
                std::path::Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return Ok(real);
    }
    Ok(absolute)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn os_errors_are_said_in_words_without_their_number() {
        let raw = io::Error::from_raw_os_error;
        assert_eq!(describe_io(&raw(libc::ENOSPC)), "no space left on device");
        assert_eq!(describe_io(&raw(libc::EEXIST)), "it already exists");
        assert_eq!(describe_io(&raw(libc::EDQUOT)), "disk quota exceeded");
        assert_eq!(describe_io(&raw(libc::EINVAL)), "invalid argument");
        assert_eq!(describe_io(&raw(libc::EIO)), "input/output error");
        // An error's own words are kept.
        let own = io::Error::new(io::ErrorKind::AlreadyExists, "the AIP is there");
        assert_eq!(describe_io(&own), "the AIP is there");
    }

    #[test]
    fn an_environment_cause_is_found_below_other_errors() {
        #[derive(Debug, thiserror::Error)]
        #[error("writing: {0}")]
        struct Outer(#[source] io::Error);
        let full = Outer(io::Error::other(Outer(io::Error::from_raw_os_error(libc::ENOSPC))));
        let found = environment_cause(&full).map(io::Error::kind);
        assert_eq!(found, Some(io::ErrorKind::StorageFull));
        let damaged = Outer(io::Error::new(io::ErrorKind::InvalidData, "bad gzip"));
        assert!(environment_cause(&damaged).is_none());
        assert!(environment_cause(&Outer(io::Error::from_raw_os_error(libc::EIO))).is_none());
        let open_files = Outer(io::Error::from_raw_os_error(libc::EMFILE));
        assert!(environment_cause(&open_files).is_some());
        assert_eq!(describe_io(&io::Error::from_raw_os_error(libc::EMFILE)), "too many open files");
        // The medium's I/O error leaves the bytes unknown (not read), but is not this
        // machine's; bad bytes are neither.
        let medium = Outer(io::Error::other(Outer(io::Error::from_raw_os_error(libc::EIO))));
        assert_eq!(not_read_cause(&medium).and_then(io::Error::raw_os_error), Some(libc::EIO));
        assert!(not_read_cause(&open_files).is_some());
        assert!(not_read_cause(&damaged).is_none());
    }

    #[test]
    fn names_are_confined() {
        assert_eq!(confined_name("content/a.warc.gz"), Ok("content/a.warc.gz".into()));
        assert_eq!(confined_name("./content//a"), Ok("content/a".into()));
        assert_eq!(confined_name("../../../x.txt"), Err(NameError::ParentDir));
        assert_eq!(confined_name("content/../../x"), Err(NameError::ParentDir));
        assert_eq!(confined_name("/etc/shadow"), Err(NameError::Absolute));
        assert_eq!(confined_name("a\0b"), Err(NameError::Nul));
        assert_eq!(confined_name("./"), Err(NameError::Empty));
        assert_eq!(confined_name(""), Err(NameError::Empty));
        assert_eq!(confined_name(&"a".repeat(5000)), Err(NameError::TooLong));
        // A segment that merely starts with dots is an ordinary name.
        assert_eq!(confined_name("..a/b.."), Ok("..a/b..".into()));
    }

    #[test]
    fn links_fifos_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("pkg");
        std::fs::create_dir_all(root.join("content")).unwrap();
        std::fs::write(root.join("content/a"), b"x").unwrap();
        std::fs::write(dir.path().join("outside"), b"secret").unwrap();
        symlink(dir.path().join("outside"), root.join("content/link")).unwrap();
        symlink(dir.path(), root.join("up")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo").as_path(),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();

        let mut s = String::new();
        open_in(&root, "content/a").unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, "x");
        assert!(matches!(open_in(&root, "content/link"), Err(ConfineError::Link { .. })));
        assert!(matches!(open_in(&root, "up/outside"), Err(ConfineError::Link { .. })));
        assert!(matches!(open_in(&root, "../outside"), Err(ConfineError::Name { .. })));
        assert!(matches!(
            open_in(&root, "fifo"),
            Err(ConfineError::NotRegular { kind: "a FIFO", .. })
        ));
        assert!(matches!(open_in(&root, "content"), Err(ConfineError::NotRegular { .. })));
        assert!(open_in(&root, "nothing").unwrap_err().is_not_found());
        assert!(matches!(open_regular(&root.join("fifo")), Err(ConfineError::NotRegular { .. })));
        assert!(matches!(open_regular(&root.join("content/link")), Err(ConfineError::Link { .. })));
        assert!(matches!(regular_metadata(&root.join("up")), Err(ConfineError::Link { .. })));

        // Creating: never through a link, never over an existing file.
        create_in(&root, "new/dir/f").unwrap();
        assert!(root.join("new/dir/f").is_file());
        assert!(create_in(&root, "new/dir/f").is_err());
        assert!(matches!(create_in(&root, "up/evil"), Err(ConfineError::Link { .. })));
        assert!(!dir.path().join("evil").exists());
        // O_EXCL refuses an existing name, a link included (EEXIST), without following it.
        assert!(create_in(&root, "content/link").is_err());
        assert_eq!(std::fs::read(dir.path().join("outside")).unwrap(), b"secret");

        assert!(matches!(
            read_bounded(&root.join("content/a"), 0),
            Err(ConfineError::TooLarge { .. })
        ));
        assert_eq!(read_bounded(&root.join("content/a"), 1).unwrap(), b"x");
    }

    #[test]
    fn manifest_lines_are_bounded_and_checked() {
        let sum = "a".repeat(128);
        let text = format!(
            "{sum}  METS.xml\n\n{sum}  ../../../x.txt\r\nnot a line\n{}\n{sum}  /dev/zero",
            "b".repeat(10_000)
        );
        let lines: Vec<_> = ManifestReader::new(io::BufReader::with_capacity(16, text.as_bytes()))
            .map(|l| l.unwrap())
            .collect();
        assert_eq!(lines.len(), 5);
        let first = lines[0].as_ref().unwrap();
        assert_eq!((first.offset, first.confined.clone()), (0, Ok("METS.xml".into())));
        assert_eq!(lines[1].as_ref().unwrap().confined, Err(NameError::ParentDir));
        assert_eq!(lines[1].as_ref().unwrap().offset, 140);
        assert!(lines[2].is_err());
        assert_eq!(
            lines[3].as_ref().unwrap_err().reason,
            "is longer than a checksum and a path can be"
        );
        assert_eq!(lines[4].as_ref().unwrap().confined, Err(NameError::Absolute));
    }

    #[test]
    fn container_names_are_the_ones_packages_carry() {
        assert_eq!(container_name(CONTENT_DIR, "crawl", 0), "content/crawl-00000.warc.gz");
        assert_eq!(container_name(VIRAL_DIR, "crawl-viral", 12), "viral/crawl-viral-00012.warc.gz");
        for name in ["content/crawl-00000.warc.gz", "a.warc", "original/x-original-00000.warc.gz"] {
            assert!(is_warc_name(name), "{name}");
            assert_eq!(confined_name(name).as_deref(), Ok(name));
        }
        assert!(!is_warc_name("logs/crawl.log") && !is_warc_name("a.warc.gz.txt"));
        assert!(WEBAIP_LOGS_DIR.starts_with(&format!("{LOGS_DIR}/")));
    }

    /// An output inside its input folder, an input folder inside the output, or a file given
    /// as its own output are refused, through a link too and before the output exists; beside
    /// is accepted, as is a file input in its output folder.
    #[test]
    fn outputs_nested_with_their_input_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, file) = (tmp.path().join("src"), tmp.path().join("a.arc"));
        std::fs::create_dir(&src).unwrap();
        std::fs::write(&file, b"x").unwrap();
        symlink(&src, tmp.path().join("link")).unwrap();
        let inside = |r| matches!(r, Err(NestingError::OutInsideInput { .. }));
        assert!(inside(refuse_nesting(&src, &src.join("new/pkg"))));
        assert!(inside(refuse_nesting(&src, &tmp.path().join("link/pkg"))));
        assert!(inside(refuse_nesting(&src, &src)));
        assert!(inside(refuse_nesting(&file, &file)));
        let around = refuse_nesting(&src, tmp.path());
        assert!(matches!(around, Err(NestingError::InputInsideOut { .. })), "{around:?}");
        let e = refuse_nesting(&src, &tmp.path().join("link/../src/x")).unwrap_err().to_string();
        assert!(e.contains("src/x") && e.contains("is inside the input"), "{e}");
        assert!(refuse_nesting(&src, &tmp.path().join("pkg")).is_ok());
        assert!(refuse_nesting(&src, &tmp.path().join("src/../pkg")).is_ok());
        assert!(refuse_nesting(&file, tmp.path()).is_ok());
    }
}
