//! How an index file is put in place: complete, synced, then renamed (a failed run leaves no
//! file that looks complete).

use std::fs;
use std::path::Path;

use super::warc::IndexError;

/// Syncs a complete temporary file and renames it to `path`, readable as any file made here
/// (a temporary file is private until then).
pub(crate) fn publish(tmp: tempfile::NamedTempFile, path: &Path) -> Result<(), IndexError> {
    use std::os::unix::fs::PermissionsExt;
    let io_err = |e| IndexError::Io { path: path.display().to_string(), source: e };
    tmp.as_file().set_permissions(fs::Permissions::from_mode(0o644)).map_err(io_err)?;
    tmp.as_file().sync_all().map_err(io_err)?;
    tmp.persist(path).map_err(|e| io_err(e.error))?;
    Ok(())
}

/// The temporaries of `get -o`: `.webaip-get-XXXXXX` beside the output.
const GET_TEMP: crate::temporaries::TempName =
    crate::temporaries::TempName { prefix: ".webaip-get-", suffix: "", dirs: false };

/// A temporary in `dir` for a record's bytes that become an output once complete (see
/// [`super::get::read_record`]): those a killed run left are removed first, and it has the
/// mode any new file gets (0666 less the umask).
pub fn get_temporary(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    crate::temporaries::remove_dead(dir, GET_TEMP);
    crate::temporaries::locked_output_in(dir, GET_TEMP)
}
