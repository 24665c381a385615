//! ARC files read as captures against the migration of the same files, as warcio reads it.

/// ARC files as captures (`sources::arc_captures`): every capture of every corpus ARC is the
/// record its migration writes: the same URL and date, in the same order, and the payload bytes
/// warcio reads from the migrated WARC (SHA-512); a response's HTTP header bytes
/// plus its payload are exactly the record's block. The file header and remainders are quirks.
#[test]
fn arc_captures_are_the_records_the_migration_writes_as_warcio_reads_them() {
    use super::ArcCaptures;
    use crate::capture::CaptureKind;
    use crate::migrate::{InputKind, MigrateOptions, migrate_file, output_name};
    use crate::test_support::{corpus, sample, warcio};
    use sha2::{Digest, Sha512};
    use std::io::Read;

    let mut arcs: Vec<_> =
        std::fs::read_dir(corpus().join("arc")).unwrap().map(|e| e.unwrap().path()).collect();
    arcs.sort();
    arcs.extend(std::fs::read_dir(sample("heritrix-job/arcs")).unwrap().map(|e| e.unwrap().path()));
    let mut checked = 0;
    for arc in arcs {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join(output_name(&arc));
        let mut records = Vec::new();
        let ids = crate::ids::Ids::seeded("test");
        let options = MigrateOptions::default();
        let report =
            migrate_file(&arc, &output, &options, &ids, &|_| {}, &mut |r| records.push(r.clone()));
        if !report.ok() {
            continue; // refused by the migration too (the corpus holds a few on purpose)
        }
        let o = warcio(&output);
        assert_eq!(o.error, None, "{}", arc.display());
        // The records migrated from captures, with warcio's view of each.
        let expected: Vec<_> = records
            .iter()
            .zip(&o.records)
            .filter(|(r, _)| {
                matches!(r.warc_type.as_str(), "response" | "resource")
                    && !matches!(r.input_kind, Some(InputKind::Remainder | InputKind::Filedesc))
            })
            .collect();
        let name = arc.file_name().unwrap().to_string_lossy().into_owned();
        let mut source = ArcCaptures::open(&arc, name.clone(), None).unwrap();
        let captures: Vec<_> =
            source.by_ref().collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{name}: {e}"));
        // The version block is no capture: said, with its offset.
        if records.iter().any(|r| r.input_kind == Some(InputKind::Filedesc)) {
            use crate::sources::capture::CaptureSource;
            assert!(
                source.quirks().iter().any(|q| q.kind == "not-a-capture" && q.offset == Some(0)),
                "{name}: {:?}",
                source.quirks()
            );
        }
        assert_eq!(captures.len(), expected.len(), "{name}: captures vs migrated records");
        for (c, (ours, theirs)) in captures.iter().zip(&expected) {
            let at = format!("{name}: {}", c.uri);
            // The migration's own URI (warcio percent-encodes a space when it reads one).
            assert_eq!(Some(&c.uri), ours.target_uri.as_ref(), "{at}: URL");
            assert_eq!(c.date.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true), ours.date);
            let mut payload = Vec::new();
            c.payload.open().unwrap().read_to_end(&mut payload).unwrap();
            assert_eq!(payload.len() as u64, theirs.payload_len, "{at}: payload length");
            let sha = Sha512::digest(&payload);
            let sha: String = sha.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(sha, theirs.payload_sha512, "{at}: payload bytes");
            let header = c.http_header.as_deref().unwrap_or_default().len() as u64;
            assert_eq!(c.kind == CaptureKind::Response, theirs.rec_type == "response", "{at}");
            assert_eq!(
                header + payload.len() as u64,
                ours.written.digests.block_len,
                "{at}: header bytes and payload are the block"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} captures checked");
}
