//! A migrated ARC record whose payload is stored already (`stages::dedup`), written as a
//! revisit: the same record with `WARC-Type: revisit`, the fields deduplication adds to any
//! revisit, and as block its HTTP header alone. Its ARC fields stay, and its rebuild field
//! states the payload's length (`payload=N`): the ARC comes back with the payload of the record
//! it refers to, checked against its `WARC-Payload-Digest` (`docs/arc-rebuild.md`).

use std::io::{self, Read};

use crate::formats::arc_rebuild::{FIELD_ARC_REBUILD, RebuildField};
use crate::formats::arc_to_warc::{MappedRecord, RecordBlock};
use crate::formats::warc::writer::RecordSpec;
use crate::stages::dedup::{Revisit, revisit_fields};

/// The revisit's fields: the record's, its type and payload digest those of a revisit, the
/// references added, and `payload=N` in its rebuild field (when it has one).
pub(super) fn revisit_spec(m: &MappedRecord, revisit: &Revisit) -> io::Result<RecordSpec> {
    let mut spec = m.mapped.spec.clone();
    spec.warc_type = "revisit".into();
    // Stated by the revisit's fields: the stored payload's, not the (empty) one of its block.
    spec.payload_digest = false;
    for (name, value) in spec.extra.iter_mut() {
        if name == FIELD_ARC_REBUILD {
            let mut field: RebuildField = value
                .parse()
                .map_err(|e| io::Error::other(format!("{FIELD_ARC_REBUILD} {value:?}: {e}")))?;
            field.payload = Some(m.payload_len());
            *value = field.to_string();
        }
    }
    spec.extra.extend(revisit_fields(revisit));
    Ok(spec)
}

/// The revisit's block: the record's HTTP header, as harvested.
pub(super) fn http_header(m: &MappedRecord) -> io::Result<Vec<u8>> {
    let len = m.mapped.payload_offset;
    match &m.block {
        RecordBlock::Inline(b) => Ok(b[..(len as usize).min(b.len())].to_vec()),
        RecordBlock::Shared(range) => {
            let mut head = Vec::with_capacity(len as usize);
            range.reader().take(len).read_to_end(&mut head)?;
            Ok(head)
        }
    }
}
