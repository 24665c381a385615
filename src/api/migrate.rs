//! [`migrate_arcs`]: ARC files in, WARC files and one report out.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use crate::ids::Ids;
use crate::migrate::{MigrateOptions, migrate_file, plan_outputs};

pub use crate::migrate::report::MigrationReport;

/// How [`migrate_arcs`] migrates: each file's options, and the identifiers' seed.
#[derive(Debug, Clone, Default)]
pub struct MigrateArcsOptions {
    /// The options every file is migrated with (level, `force`, capture date, ...).
    pub file: MigrateOptions,
    /// Fixed clock and seeded record identifiers: identical input gives identical output.
    pub deterministic: bool,
}

/// Why [`migrate_arcs`] migrated nothing.
#[derive(Debug, thiserror::Error)]
pub enum MigrateArcsError {
    /// An input is not a regular file that can be read.
    #[error("{}: not a readable file", .0.display())]
    NotAFile(PathBuf),
    /// The output folder cannot be created.
    #[error("cannot create {}: {}", path.display(), crate::layout::describe_io(source))]
    OutDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Migrates ARC files (`.arc`, `.arc.gz`; versions 1 and 2) to WARC 1.1 files in `out_dir`
/// (created if missing; one WARC per input, named after it), each read back to prove every
/// payload byte was conserved. Files are migrated in parallel on the current rayon pool (call
/// it inside `pool.install` to bound its threads); `progress` receives the input bytes read as
/// they are read.
///
/// A file that fails is in the report ([`MigrationReport::ok`] is false and its entry says
/// why) and leaves no output; the others go on. Errors are only what stops the whole run
/// before it starts: an input that is no file, an output folder that cannot be made.
pub fn migrate_arcs(
    inputs: &[PathBuf],
    out_dir: &Path,
    options: &MigrateArcsOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<MigrationReport, MigrateArcsError> {
    let started = Instant::now();
    if let Some(bad) = inputs.iter().find(|p| !p.is_file()) {
        return Err(MigrateArcsError::NotAFile(bad.clone()));
    }
    std::fs::create_dir_all(out_dir)
        .map_err(|source| MigrateArcsError::OutDir { path: out_dir.to_path_buf(), source })?;
    let outputs = plan_outputs(inputs, out_dir);
    let ids = if options.deterministic { Ids::seeded("webaip-migrate") } else { Ids::random() };
    let files = inputs
        .par_iter()
        .zip(outputs.par_iter())
        .map(|(input, output)| {
            let name =
                input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let file_ids = ids.derive(&name);
            migrate_file(input, output, &options.file, &file_ids, progress, &mut |_| {})
        })
        .collect::<Vec<_>>();
    Ok(MigrationReport::new(files, started.elapsed().as_secs_f64()))
}
