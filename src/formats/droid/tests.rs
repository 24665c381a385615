//! Each syntax element on hand-written signatures, priorities, windows and broken files.

use std::io::Cursor;

use super::syntax::SyntaxError;
use super::*;

/// A signature file of one format per (id, sequences) entry: each sequence is (Reference
/// attribute, SubSequence XML); `priorities` are (winner, loser) format IDs.
fn file(sigs: &[(u32, &[(&str, &str)])], priorities: &[(u32, u32)]) -> String {
    let mut x = String::from(
        "<?xml version=\"1.0\"?><FFSignatureFile Version=\"7\" DateCreated=\"2026-01-01\" \
         xmlns=\"http://www.nationalarchives.gov.uk/pronom/SignatureFile\">\
         <InternalSignatureCollection>",
    );
    for (id, seqs) in sigs {
        x += &format!("<InternalSignature ID=\"{id}\" Specificity=\"Specific\">");
        for (reference, subs) in *seqs {
            let r = if reference.is_empty() {
                String::new()
            } else {
                format!(" Reference=\"{reference}\"")
            };
            x += &format!("<ByteSequence{r}>{subs}</ByteSequence>");
        }
        x += "</InternalSignature>";
    }
    x += "</InternalSignatureCollection><FileFormatCollection>";
    for (id, _) in sigs {
        x += &format!(
            "<FileFormat ID=\"{id}\" Name=\"F{id}\" PUID=\"test/{id}\" MIMEType=\"a/b, c/d\">\
             <InternalSignatureID>{id}</InternalSignatureID><Extension>f{id}</Extension>"
        );
        for (w, l) in priorities.iter().filter(|(w, _)| w == id) {
            let _ = w;
            x += &format!("<HasPriorityOverFileFormatID>{l}</HasPriorityOverFileFormatID>");
        }
        x += "</FileFormat>";
    }
    x + "</FileFormatCollection></FFSignatureFile>"
}

/// A subsequence at position 1 with offsets `min`/`max` (`None`: attribute absent).
fn sub(seq: &str, min: usize, max: Option<usize>) -> String {
    // XML-escaped as the signature file has it (`[!&amp;01]`).
    let seq = seq.replace('&', "&amp;");
    let max = max.map(|m| format!(" SubSeqMaxOffset=\"{m}\"")).unwrap_or_default();
    format!(
        "<SubSequence Position=\"1\" SubSeqMinOffset=\"{min}\"{max}><Sequence>{seq}</Sequence></SubSequence>"
    )
}

/// The PUIDs one BOF sequence (the anchor written in DROID syntax, at offset 0) finds in
/// `bytes`.
fn bof(seq: &str, bytes: &[u8]) -> bool {
    let s = sub(seq, 0, None);
    let sigs =
        Signatures::from_xml(file(&[(1, &[("BOFoffset", &s)])], &[]).as_bytes()).expect("compiles");
    !sigs.identify_bytes(bytes).is_empty()
}

fn puids(found: Vec<&FileFormat>) -> Vec<&str> {
    found.into_iter().map(|f| f.puid.as_str()).collect()
}

#[test]
fn hex_bytes_match_only_themselves_at_their_offset() {
    assert!(bof("4D5A", b"MZ\x90\x00"));
    assert!(!bof("4D5A", b"ZM"));
    assert!(!bof("4D5A", b" MZ"));
    assert!(!bof("4D5A", b"M"), "a payload shorter than the sequence does not match");
    assert!(bof("4d5a", b"MZ"), "lower-case hex is hex");
}

#[test]
fn any_byte_range_and_negations() {
    assert!(bof("47??38", b"G\x00\x38"));
    assert!(bof("47??38", b"G\xff\x38"));
    assert!(!bof("47??38", b"G\xff\x39"));
    assert!(bof("[30:39]41", b"5A") && bof("[30:39]41", b"0A") && bof("[30:39]41", b"9A"));
    assert!(!bof("[30:39]41", b"/A") && !bof("[30:39]41", b":A"));
    assert!(bof("[!00]41", b"\x01A") && !bof("[!00]41", b"\x00A"));
    assert!(bof("[!30:39]", b"A") && !bof("[!30:39]", b"7"));
    assert!(bof("[!0102]", b"\x01\x03") && !bof("[!0102]", b"\x01\x02"), "multi-byte negation");
    assert!(bof("[0000:1000]", b"\x0f\xff") && bof("[0000:1000]", b"\x10\x00"));
    assert!(!bof("[0000:1000]", b"\x10\x01"), "multi-byte ranges compare as numbers");
    assert!(bof("[&81]", b"\x83") && !bof("[&81]", b"\x80"), "all bits of the mask");
    assert!(bof("[~81]", b"\x80") && !bof("[~81]", b"\x02"), "any bit of the mask");
    assert!(bof("[!&01]00", b"\x02\x00") && !bof("[!&01]00", b"\x03\x00"));
    assert!(bof("'GIF'", b"GIF89a"), "quoted ASCII");
}

#[test]
fn alternatives_of_different_lengths() {
    for ok in [&b"ABX"[..], b"CDEX", b"FX"] {
        assert!(bof("(4142|434445|46)58", ok), "{ok:?}");
    }
    assert!(!bof("(4142|434445|46)58", b"ABCX"));
    assert!(bof("(41|4142)43", b"ABC"), "the second alternative when the first leads nowhere");
}

#[test]
fn gaps_fixed_ranged_open_and_unbounded() {
    assert!(bof("41{2}42", b"A..B") && !bof("41{2}42", b"A.B") && !bof("41{2}42", b"A...B"));
    assert!(bof("41{1-3}42", b"A.B") && bof("41{1-3}42", b"A...B"));
    assert!(!bof("41{1-3}42", b"AB") && !bof("41{1-3}42", b"A....B"));
    assert!(bof("41{2-*}42", b"A..........B") && !bof("41{2-*}42", b"A.B"));
    assert!(bof("41*42", b"AB") && bof("41*42", b"A whole lot of bytes, then B"));
    assert!(!bof("41*42", b"A and never the other"));
    assert!(bof("41*4243", b"A B BC"), "an unbounded gap tries later occurrences too");
}

#[test]
fn syntax_errors_are_typed() {
    assert_eq!(syntax::parse("4D5").err(), Some(SyntaxError::OddHex(2)));
    assert_eq!(syntax::parse("[30:39").err(), Some(SyntaxError::Unclosed('[')));
    assert_eq!(syntax::parse("(41|42").err(), Some(SyntaxError::Unclosed('(')));
    assert!(matches!(syntax::parse("41{3-1}42"), Err(SyntaxError::BadGap(_))));
    assert!(matches!(syntax::parse("41G2"), Err(SyntaxError::Unexpected('G', _))));
    assert_eq!(syntax::parse("  ").err(), Some(SyntaxError::Empty));
    let bad = sub("4D5", 0, None);
    let err =
        Signatures::from_xml(file(&[(9, &[("BOFoffset", &bad)])], &[]).as_bytes()).unwrap_err();
    assert!(matches!(err, DroidError::Syntax { signature: 9, .. }), "{err}");
}

#[test]
fn bof_offsets_fixed_and_ranged() {
    let fixed = sub("4142", 2, None);
    let ranged = sub("4142", 2, Some(4));
    let s = Signatures::from_xml(
        file(&[(1, &[("BOFoffset", &fixed)]), (2, &[("BOFoffset", &ranged)])], &[]).as_bytes(),
    )
    .unwrap();
    assert_eq!(puids(s.identify_bytes(b"..AB")), ["test/1", "test/2"]);
    assert_eq!(puids(s.identify_bytes(b"....AB")), ["test/2"]);
    assert!(s.identify_bytes(b".....AB").is_empty());
    assert!(s.identify_bytes(b"AB").is_empty());
}

#[test]
fn eof_offsets_count_back_from_the_last_byte() {
    let at_end = sub("2525454F46", 0, Some(3));
    let s = Signatures::from_xml(file(&[(1, &[("EOFoffset", &at_end)])], &[]).as_bytes()).unwrap();
    assert_eq!(puids(s.identify_bytes(b"body %%EOF")), ["test/1"]);
    assert_eq!(puids(s.identify_bytes(b"body %%EOF\r\n")), ["test/1"]);
    assert!(s.identify_bytes(b"body %%EOF\r\n\r\n").is_empty(), "4 bytes after it: too far");
    assert!(s.identify_bytes(b"%%EO").is_empty());
}

#[test]
fn variable_sequences_match_anywhere() {
    let anywhere = sub("3C68746D6C", 0, None);
    let s = Signatures::from_xml(file(&[(1, &[("", &anywhere)])], &[]).as_bytes()).unwrap();
    assert_eq!(puids(s.identify_bytes(b"<html>")), ["test/1"]);
    assert_eq!(puids(s.identify_bytes(b"<!DOCTYPE html>\n<html>")), ["test/1"]);
    assert!(s.identify_bytes(b"<htm").is_empty());
}

#[test]
fn fragments_and_later_subsequences() {
    // "MZ" 2..=4 bytes before "PE\0\0", then 2 bytes after it "01" or "02", then, anywhere
    // after, "END".
    let subs = "<SubSequence Position=\"1\" SubSeqMinOffset=\"0\" SubSeqMaxOffset=\"0\">\
        <Sequence>50450000</Sequence>\
        <LeftFragment Position=\"1\" MinOffset=\"2\" MaxOffset=\"4\">4D5A</LeftFragment>\
        <RightFragment Position=\"1\" MinOffset=\"2\" MaxOffset=\"2\">01</RightFragment>\
        <RightFragment Position=\"1\" MinOffset=\"2\" MaxOffset=\"2\">02</RightFragment>\
        </SubSequence><SubSequence Position=\"2\" SubSeqMinOffset=\"0\">\
        <Sequence>454E44</Sequence></SubSequence>";
    let s = Signatures::from_xml(file(&[(1, &[("BOFoffset", subs)])], &[]).as_bytes()).unwrap();
    assert_eq!(puids(s.identify_bytes(b"MZ..PE\0\0..\x01 ... END")), ["test/1"]);
    assert_eq!(puids(s.identify_bytes(b"MZ....PE\0\0..\x02END")), ["test/1"]);
    assert!(s.identify_bytes(b"MZ.PE\0\0..\x01END").is_empty(), "left gap too short");
    assert!(s.identify_bytes(b".MZ..PE\0\0..\x01END").is_empty(), "not at offset 0");
    assert!(s.identify_bytes(b"MZ..PE\0\0..\x03END").is_empty(), "no right alternative");
    assert!(s.identify_bytes(b"MZ..PE\0\0..\x01").is_empty(), "second subsequence missing");
}

#[test]
fn every_sequence_of_a_signature_must_match() {
    let start = sub("25504446", 0, None);
    let end = sub("2525454F46", 0, Some(2));
    let s = Signatures::from_xml(
        file(&[(1, &[("BOFoffset", &start), ("EOFoffset", &end)])], &[]).as_bytes(),
    )
    .unwrap();
    assert_eq!(puids(s.identify_bytes(b"%PDF-1.4 ... %%EOF\n")), ["test/1"]);
    assert!(s.identify_bytes(b"%PDF-1.4 ... cut short").is_empty());
}

#[test]
fn priorities_drop_the_beaten_and_keep_every_survivor() {
    let generic = sub("3C3F786D6C", 0, None);
    let specific = sub("3C3F786D6C2076", 0, None);
    let other = sub("3C3F", 0, None);
    let xml = file(
        &[
            (1, &[("BOFoffset", &generic)]),
            (2, &[("BOFoffset", &specific)]),
            (3, &[("BOFoffset", &other)]),
        ],
        &[(2, 1)],
    );
    let s = Signatures::from_xml(xml.as_bytes()).unwrap();
    assert_eq!(puids(s.identify_bytes(b"<?xml version")), ["test/2", "test/3"]);
    assert_eq!(puids(s.identify_bytes(b"<?xml?>")), ["test/1", "test/3"]);
    assert!(s.identify_bytes(b"nothing").is_empty());
    let f = &s.formats()[0];
    assert_eq!(
        (f.name.as_str(), f.mime_types.clone(), f.extensions.clone()),
        ("F1", vec!["a/b".into(), "c/d".into()], vec!["f1".into()])
    );
}

#[test]
fn streams_and_seekable_sources_see_the_same_ends_as_memory() {
    let start = sub("424F46", 0, None);
    let end = sub("454F46", 0, Some(0));
    let s = Signatures::from_xml(
        file(&[(1, &[("BOFoffset", &start), ("EOFoffset", &end)])], &[]).as_bytes(),
    )
    .unwrap();
    let (bof, eof) = s.windows();
    for len in [10, bof, bof + eof, bof + eof + 1, 3 * (bof + eof) + 17] {
        let mut payload = vec![b'.'; len];
        payload[..3].copy_from_slice(b"BOF");
        payload[len - 3..].copy_from_slice(b"EOF");
        assert_eq!(puids(s.identify_bytes(&payload)), ["test/1"], "{len}");
        assert_eq!(
            puids(s.identify_reader(payload.as_slice()).unwrap()),
            ["test/1"],
            "stream {len}"
        );
        assert_eq!(
            puids(s.identify_seekable(Cursor::new(&payload)).unwrap()),
            ["test/1"],
            "seek {len}"
        );
        payload[len - 1] = b'G';
        assert!(s.identify_reader(payload.as_slice()).unwrap().is_empty(), "stream {len}");
        assert!(s.identify_seekable(Cursor::new(&payload)).unwrap().is_empty(), "seek {len}");
    }
}

#[test]
fn broken_signature_files_are_typed_errors() {
    let good = file(&[(1, &[("BOFoffset", &sub("41", 0, None))])], &[]);
    let cut = &good.as_bytes()[..good.len() - 40];
    assert!(matches!(
        Signatures::from_xml(cut),
        Err(DroidError::Truncated | DroidError::Xml { .. })
    ));
    assert!(matches!(Signatures::from_xml(b"<a></b>"), Err(DroidError::Xml { .. })));
    assert!(matches!(
        Signatures::from_xml(b"<FFSignatureFile Version=\"1\"></FFSignatureFile>"),
        Err(DroidError::Empty)
    ));
    let bad_id = good.replace("ID=\"1\"", "ID=\"one\"");
    assert!(matches!(Signatures::from_xml(bad_id.as_bytes()), Err(DroidError::Invalid { .. })));
    assert!(matches!(Signatures::from_gzip(b"not gzip at all"), Err(DroidError::Gzip(_))));
    let half = &SHIPPED[..SHIPPED.len() / 2];
    assert!(matches!(Signatures::from_gzip(half), Err(DroidError::Gzip(_))), "a cut gzip stream");
}

#[test]
fn the_shipped_file_compiles_with_every_format_and_signature() {
    let s = Signatures::shipped().expect("the shipped signature file compiles");
    let mut xml = Vec::new();
    flate2::read::GzDecoder::new(SHIPPED).read_to_end(&mut xml).unwrap();
    let count = |tag: &[u8]| memchr::memmem::find_iter(&xml, tag).count();
    assert_eq!(s.version(), 122);
    assert_eq!(s.formats().len(), count(b"<FileFormat "));
    assert_eq!(s.signature_count(), count(b"<InternalSignature "));
    let links: usize = s.formats().iter().map(|f| f.signature_ids.len()).sum();
    assert_eq!(links, count(b"<InternalSignatureID>"));
    let priorities: usize = s.formats().iter().map(|f| f.priority_over.len()).sum();
    assert_eq!(priorities, count(b"<HasPriorityOverFileFormatID>"));
    assert_eq!(s.signatures_of("fmt/4").len(), 1, "GIF 89a");
}

#[test]
fn the_shipped_file_identifies_common_web_formats() {
    let s = Signatures::shipped().unwrap();
    let gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
    assert_eq!(puids(s.identify_bytes(gif)), ["fmt/4"]);
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x00IEND\xaeB`\x82";
    assert_eq!(puids(s.identify_bytes(png)), ["fmt/11"]);
    let pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n";
    assert_eq!(puids(s.identify_bytes(pdf)), ["fmt/18"]);
    assert!(s.identify_bytes(b"just some words").is_empty());
}

/// An MP4 of `len` bytes: an `ftyp` box, an `mdat` box of filler, and the `moov` box at the
/// end, as many encoders write it.
fn mp4_with_moov_at_end(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&24u32.to_be_bytes());
    v.extend_from_slice(b"ftypisom\0\0\x02\0isommp41");
    let moov_len = 108usize;
    let mdat_len = len - v.len() - moov_len;
    v.extend_from_slice(&u32::try_from(mdat_len).unwrap().to_be_bytes());
    v.extend_from_slice(b"mdat");
    // Filler that never spells a box name: bytes 0x80..=0xFF.
    v.extend((0..mdat_len - 8).map(|i| 0x80 | (i % 127) as u8));
    v.extend_from_slice(&u32::try_from(moov_len).unwrap().to_be_bytes());
    v.extend_from_slice(b"moov");
    v.extend_from_slice(&100u32.to_be_bytes());
    v.extend_from_slice(b"mvhd");
    v.resize(len, 0);
    v
}

#[test]
fn an_mp4_with_moov_at_the_end_of_3_mb_is_fmt_199_in_memory_streamed_and_to_siegfried() {
    let s = Signatures::shipped().unwrap();
    let mp4 = mp4_with_moov_at_end(3 << 20);
    assert!(mp4.len() > s.windows().0 + s.windows().1, "longer than both windows");
    let in_memory = s.examine_bytes(&mp4);
    assert_eq!(puids(in_memory.formats), ["fmt/199"]);
    assert_eq!(in_memory.incomplete, None);
    let streamed = s.examine_reader(mp4.as_slice()).unwrap();
    assert_eq!(puids(streamed.formats), ["fmt/199"], "streamed");
    assert_eq!(streamed.incomplete, None);
    assert_eq!(puids(s.identify_seekable(Cursor::new(&mp4)).unwrap()), ["fmt/199"], "seek");
    // The oracle, on the same bytes, without a name to go by.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("payload");
    std::fs::write(&path, &mp4).unwrap();
    let script = "import json, pygfried, sys\n\
                  r = pygfried.identify(sys.argv[1], detailed=True)\n\
                  print(json.dumps([(m['id'], m['basis']) for m in r['files'][0]['matches']]))";
    let out = std::process::Command::new(crate::test_support::oracle_python())
        .args(["-c", script])
        .arg(&path)
        .output()
        .expect("python runs");
    assert!(out.status.success(), "pygfried: {}", String::from_utf8_lossy(&out.stderr));
    let sf: Vec<(String, String)> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sf.len(), 1, "{sf:?}");
    assert_eq!(sf[0].0, "fmt/199", "{sf:?}");
    assert!(sf[0].1.contains("byte match"), "{sf:?}");
}

/// A signature file of one format: `BOF` at offset 0, then `MOOV` anywhere after it.
fn bof_then_anywhere() -> Signatures {
    let subs = "<SubSequence Position=\"1\" SubSeqMinOffset=\"0\"><Sequence>424F46</Sequence>\
        </SubSequence><SubSequence Position=\"2\" SubSeqMinOffset=\"0\">\
        <Sequence>4D4F4F56</Sequence></SubSequence>";
    Signatures::from_xml(file(&[(1, &[("BOFoffset", subs)])], &[]).as_bytes()).unwrap()
}

#[test]
fn a_variable_part_in_the_middle_of_a_stream_is_found_and_its_absence_is_no_match() {
    let s = bof_then_anywhere();
    let (bof, eof) = s.windows();
    let len = 4 * (bof + eof);
    let mut payload = vec![b'.'; len];
    payload[..3].copy_from_slice(b"BOF");
    payload[len / 2..len / 2 + 4].copy_from_slice(b"MOOV");
    assert!(s.needs_whole_payload(&payload[..bof], None), "pending after the first window");
    // The windows alone (what was searched before) miss it, and say that they stopped early.
    let windows = window::from_stream(payload.as_slice(), bof, eof, |_| false).unwrap();
    let alone = s.examine_windows(&windows);
    assert!(alone.formats.is_empty());
    let why = alone.incomplete.expect("an unresolved signature is stated");
    assert!(why.contains("test/1") && why.contains("only the first"), "{why}");
    for found in [s.examine_bytes(&payload), s.examine_reader(payload.as_slice()).unwrap()] {
        assert_eq!(puids(found.formats), ["test/1"]);
        assert_eq!(found.incomplete, None);
    }
    // No MOOV anywhere: no match, and a decided one (the whole was searched).
    payload[len / 2..len / 2 + 4].copy_from_slice(b"....");
    for found in [s.examine_bytes(&payload), s.examine_reader(payload.as_slice()).unwrap()] {
        assert!(found.formats.is_empty());
        assert_eq!(found.incomplete, None);
    }
    // MOOV before BOF's end cannot count, and a wrong start is not pending at all.
    payload[..4].copy_from_slice(b"MOOV");
    assert!(!s.needs_whole_payload(&payload[..bof], None), "refuted by the first bytes");
    assert!(s.examine_reader(payload.as_slice()).unwrap().formats.is_empty());
}

/// Bytes from the start that count the literal searches made in them.
struct Counted<'a> {
    hay: Fwd<'a>,
    finds: std::cell::Cell<u32>,
}

impl<'a> Counted<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Counted { hay: Fwd(bytes), finds: std::cell::Cell::new(0) }
    }
}

impl Hay for Counted<'_> {
    fn len(&self) -> usize {
        self.hay.len()
    }
    fn at(&self, i: usize) -> u8 {
        self.hay.at(i)
    }
    fn has(&self, pos: usize, bytes: &[u8]) -> bool {
        self.hay.has(pos, bytes)
    }
    fn find(&self, lit: &syntax::Lit, from: usize, last: usize) -> Option<usize> {
        self.finds.set(self.finds.get() + 1);
        self.hay.find(lit, from, last)
    }
    fn find_any(&self, bytes: &[u8], from: usize, last: usize) -> Option<usize> {
        self.hay.find_any(bytes, from, last)
    }
}

#[test]
fn a_sequence_whose_fixed_start_is_absent_is_refuted_without_a_search_of_the_payload() {
    let s = bof_then_anywhere();
    let seq = &s.signatures[0].sequences[0];
    let mut payload = vec![b'.'; 1 << 20];
    payload[..3].copy_from_slice(b"XYZ");
    let wrong_start = Counted::new(&payload);
    assert_eq!(run(seq, &wrong_start, true), Verdict::Refuted);
    assert_eq!(wrong_start.finds.get(), 0, "MOOV was looked for in a payload not starting BOF");
    // Its start there, MOOV is looked for, and decides.
    payload[..3].copy_from_slice(b"BOF");
    let no_moov = Counted::new(&payload);
    assert_eq!(run(seq, &no_moov, true), Verdict::Refuted);
    assert!(no_moov.finds.get() > 0);
    payload[1000..1004].copy_from_slice(b"MOOV");
    assert_eq!(run(seq, &Counted::new(&payload), true), Verdict::Matched);
    // Fewer bytes than the start: more may come, as before.
    assert_eq!(run(seq, &Counted::new(b"BO"), false), Verdict::Open(Stop::MoreBytes));
}

#[test]
fn an_end_anchored_sequence_with_a_variable_part_reaches_back_past_the_tail_window() {
    // `END` in the last byte, and `MID` anywhere before it.
    let subs = "<SubSequence Position=\"1\" SubSeqMinOffset=\"0\"><Sequence>454E44</Sequence>\
        </SubSequence><SubSequence Position=\"2\" SubSeqMinOffset=\"0\">\
        <Sequence>4D4944</Sequence></SubSequence>";
    let s = Signatures::from_xml(file(&[(1, &[("EOFoffset", subs)])], &[]).as_bytes()).unwrap();
    let (bof, eof) = s.windows();
    let len = 3 * (bof + eof);
    let mut payload = vec![b'.'; len];
    payload[len - 3..].copy_from_slice(b"END");
    payload[bof + 10..bof + 13].copy_from_slice(b"MID");
    assert_eq!(puids(s.identify_bytes(&payload)), ["test/1"]);
    assert_eq!(puids(s.identify_reader(payload.as_slice()).unwrap()), ["test/1"], "stream");
    payload[bof + 10..bof + 13].copy_from_slice(b"...");
    assert!(s.identify_bytes(&payload).is_empty());
    let streamed = s.examine_reader(payload.as_slice()).unwrap();
    assert!(streamed.formats.is_empty() && streamed.incomplete.is_none());
}

#[test]
fn a_stream_over_64_mib_is_spooled_to_a_file_and_searched_across_page_seams() {
    use std::io::Read as _;
    let s = bof_then_anywhere();
    let filler = |n: usize| std::io::repeat(b'.').take(n as u64);
    // MOOV straddles a page seam of the spooled file, 40 MiB in; 80 MiB in all.
    let at = 40 * window::PAGE - 2;
    let stream = |moov: &'static [u8]| {
        std::io::Cursor::new(&b"BOF"[..])
            .chain(filler(at - 3))
            .chain(moov)
            .chain(filler(80 * window::PAGE - at - 4))
    };
    const { assert!(80 * window::PAGE > 64 << 20 && 80 * window::PAGE > 4 * window::SPOOL_IN_MEMORY) };
    let found = s.examine_reader(stream(b"MOOV")).unwrap();
    assert_eq!(puids(found.formats), ["test/1"]);
    assert_eq!(found.incomplete, None);
    let found = s.examine_reader(stream(b"MOOF")).unwrap();
    assert!(found.formats.is_empty());
    assert_eq!(found.incomplete, None, "searched to the end: decided");
}

#[test]
fn the_search_scope_states_the_bounds() {
    let kib = |n: usize| format!("{} KiB", n >> 10);
    let mib = |n: usize| format!("{} MiB", n >> 20);
    for stated in [
        kib(MIN_WINDOW),
        mib(MAX_WINDOW),
        mib(window::SPOOL_IN_MEMORY),
        format!("{} GiB", window::WHOLE_SEARCH_LIMIT >> 30),
        matcher::STEP_BUDGET.to_string(),
    ] {
        assert!(SEARCH_SCOPE.contains(&stated), "{stated} in {SEARCH_SCOPE}");
    }
}

#[test]
fn a_search_over_the_step_budget_is_unresolved_not_a_non_match() {
    // Every pair of B's is tried before the missing C is given up: a thousand B's take about
    // half a million steps.
    let s = Signatures::from_xml(file(&[(1, &[("", &sub("42*42*43", 0, None))])], &[]).as_bytes())
        .unwrap();
    let found = s.examine_bytes(&[b'B'; 1000]);
    assert!(found.formats.is_empty());
    let why = found.incomplete.expect("the budget ran out");
    assert!(why.contains("test/1") && why.contains("200000 matching steps"), "{why}");
    let mut fits = vec![b'B'; 1000];
    fits.push(b'C');
    assert_eq!(puids(s.examine_bytes(&fits).formats), ["test/1"]);
    assert_eq!(s.examine_bytes(b"nothing here").incomplete, None);
}

#[test]
fn a_signature_with_no_anchored_part_does_not_make_a_stream_kept_whole() {
    // DXF's signatures are `SECTION` anywhere and `EOF` at the end: nothing at the start says
    // a payload is one, so the first window of text does not ask for the whole payload.
    let s = Signatures::shipped().unwrap();
    let (bof, _) = s.windows();
    let text = vec![b'x'; bof];
    assert!(!s.needs_whole_payload(&text, None));
    // An MP4's start (`ftyp` at offset 4) does: its `moov` may be anywhere after it.
    let mut mp4 = vec![0u8; bof];
    mp4[..12].copy_from_slice(b"\x00\x00\x00\x18ftypmp42");
    assert!(s.needs_whole_payload(&mp4, None));
}
