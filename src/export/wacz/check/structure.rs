//! The ZIP's structure: members named safely and once, inside the file, overlapping neither
//! each other nor the central directory, and no bytes outside a member (a prefix, a local
//! entry the central directory does not list).
//!
//! A member overlapping one before it is named and never read: hundreds of entries sharing
//! one large stream would otherwise be inflated once each.

use super::zipdir::{Entry, ZipDir, shown};

use super::*;

/// Local file header signature.
const LOCAL: &[u8; 4] = b"PK\x03\x04";
/// Optional signature of a data descriptor.
const DESCRIPTOR: &[u8; 4] = b"PK\x07\x08";

/// What a member read from the directory keeps until overlaps and names are checked, beside
/// it in [`Candidates::more`] (the members themselves go straight into the check's list).
struct Pending {
    /// Its central directory entry's offset.
    central_at: u64,
    /// How its local header differs from that entry.
    differs: Option<Box<str>>,
}

/// The readable members as the directory lists them, before overlaps and names are checked.
#[derive(Default)]
pub(super) struct Candidates {
    more: Vec<Pending>,
}

/// A byte range of the file that a kept member takes (local header to data end, its data
/// descriptor included).
struct Span {
    start: u64,
    end: u64,
    name: String,
}

impl Check {
    /// Notes the member entry `e` describes (the central directory starting at `dir_start`),
    /// if it can be read: in the members, for [`Check::structure`] to sift.
    pub(super) fn entry(&mut self, e: Entry, dir_start: u64, out: &mut Candidates) {
        if let Some((member, pending)) = self.candidate(e, dir_start) {
            self.members.push(member);
            out.more.push(pending);
        }
    }

    /// Keeps the members that are safe to read: named safely, inside the file, not
    /// overlapping; each one that breaks a rule is a finding, and so are bytes that belong
    /// to no member. The list is sifted in place (a directory may list many thousands).
    pub(super) fn structure(&mut self, dir: ZipDir, candidates: Candidates) {
        let mut members = std::mem::take(&mut self.members);
        let overlapping = self.overlaps(&members);
        let mut keep = Vec::with_capacity(members.len());
        for (i, (m, p)) in members.iter().zip(candidates.more).enumerate() {
            if overlapping.contains(&i) {
                keep.push(false);
                continue;
            }
            if let Some(why) = p.differs {
                self.error(RULE_ZIP, &m.name, why.into());
            }
            if let Some(&first) = self.by_name.get(&m.name) {
                let msg = format!(
                    "member name appears again (central directory entry at byte {}; \
                     the first member of this name has its local header at byte {}): readers \
                     keep only one of them, which one differs between readers",
                    p.central_at, members[first].header_start
                );
                self.error(RULE_ZIP, &m.name, msg);
                keep.push(false);
                continue;
            }
            self.by_name.insert(m.name.clone(), i);
            keep.push(true);
        }
        let mut kept = keep.iter();
        members.retain(|_| kept.next() == Some(&true));
        // Places in the sifted list.
        for (i, m) in members.iter().enumerate() {
            self.by_name.insert(m.name.clone(), i);
        }
        self.members = members;
        self.prefix(dir.shift);
        self.gaps(dir.shift, dir.dir_start);
    }

    /// The member entry `e` describes, if it can be read, with how its local header differs
    /// (said once it is known not to overlap another: then the header is another's); each
    /// reason it cannot be read is a finding.
    fn candidate(&mut self, e: Entry, dir_start: u64) -> Option<(Member, Pending)> {
        if !safe_name(&e.name) {
            self.error(RULE_ZIP, &e.name, "member name leads outside the WACZ's root".into());
            return None;
        }
        let unreadable = match e.data_start {
            None => {
                Some(format!("the local header at byte {} lies outside the file", e.header_start))
            }
            Some(start) if start.checked_add(e.compressed).is_none_or(|end| end > dir_start) => {
                Some(format!(
                    "member data ({} bytes at {start}) lies outside the members' part of the \
                     file (its first {dir_start} bytes, of {})",
                    e.compressed, self.len
                ))
            }
            Some(_) if e.method == 0 && e.size != e.compressed => {
                Some(format!("stored member of {} bytes declares {} bytes", e.compressed, e.size))
            }
            Some(_) => None,
        };
        if let Some(why) = unreadable {
            if let Some(differs) = e.local_differs {
                self.error(RULE_ZIP, &e.name, differs.into());
            }
            self.error(RULE_ZIP, &e.name, why);
            return None;
        }
        let member = Member {
            name: e.name.into(),
            stored: e.method == 0,
            deflated: e.method == 8,
            header_start: e.header_start,
            data_start: e.data_start?,
            compressed: e.compressed,
            size: e.size,
            crc: e.crc,
            descriptor: e.descriptor,
        };
        Some((member, Pending { central_at: e.central_at, differs: e.local_differs }))
    }

    /// The candidates (by their place in `candidates`) that overlap one starting before
    /// them (or at the same byte, listed before them): each is a finding, and is not read.
    fn overlaps(&mut self, candidates: &[Member]) -> BTreeSet<usize> {
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_by_key(|&i| (candidates[i].header_start, i));
        let mut out = BTreeSet::new();
        let mut reach: Option<(u64, usize)> = None;
        for i in order {
            let m = &candidates[i];
            match reach {
                Some((end, by)) if m.header_start < end => {
                    let o = &candidates[by];
                    let msg = format!(
                        "member overlaps `{}` (bytes {}..{}): not read",
                        shown(o.name.as_bytes()),
                        o.header_start,
                        o.data_start + o.compressed
                    );
                    self.error(RULE_ZIP, &m.name, msg);
                    out.insert(i);
                }
                _ => reach = Some((m.data_start + m.compressed, i)),
            }
        }
        out
    }

    /// A prefix the ZIP's offsets do not count: read past, as Python's zipfile does, but an
    /// error, since a reader that takes the offsets as the specification has them finds no
    /// member where they point.
    fn prefix(&mut self, shift: u64) {
        if shift > 0 {
            let msg = format!(
                "the file starts with {shift} bytes that the ZIP's offsets do not count: \
                 every offset was read {shift} bytes further on (as Python's zipfile reads \
                 it); a reader that takes them as written finds no member there"
            );
            self.error(RULE_ZIP, "", msg);
        }
    }

    /// Bytes between the ZIP's start, the members and the central directory that belong to
    /// no member: a local header there is an entry the central directory does not list (a
    /// reader that streams the file sees a member one that seeks does not), an error; other
    /// bytes a warning (a streaming reader stops at them).
    fn gaps(&mut self, zip_start: u64, dir_start: u64) {
        let mut spans: Vec<Span> = self
            .members
            .iter()
            .map(|m| Span { start: m.header_start, end: self.member_end(m), name: m.name.clone() })
            .collect();
        spans.sort_by_key(|s| s.start);
        let mut at = zip_start;
        let mut after: Option<String> = None;
        for s in
            spans.iter().chain([&Span { start: dir_start, end: dir_start, name: String::new() }])
        {
            if s.start > at {
                self.gap(at, s.start, after.as_deref());
            }
            at = at.max(s.end);
            after = Some(s.name.clone());
        }
    }

    /// Where member `m`'s bytes end: after its data, and its data descriptor if it has one.
    fn member_end(&self, m: &Member) -> u64 {
        let end = m.data_start + m.compressed;
        if !m.descriptor {
            return end;
        }
        let mut sig = [0u8; 4];
        let signed = self.file.read_exact_at(&mut sig, end).is_ok() && &sig == DESCRIPTOR;
        let zip64 = m.compressed >= 0xFFFF_FFFF || m.size >= 0xFFFF_FFFF;
        let len = if zip64 { 20 } else { 12 } + if signed { 4 } else { 0 };
        (end + len).min(self.len)
    }

    /// One gap `from..to`, after member `after` (`None`: before the first).
    fn gap(&mut self, from: u64, to: u64, after: Option<&str>) {
        let mut head = [0u8; 30];
        let n = ((to - from) as usize).min(head.len());
        let read = self.file.read_exact_at(&mut head[..n], from).is_ok();
        let place = match after {
            Some(name) => format!("after member `{}`", shown(name.as_bytes())),
            None => "before the first member".to_string(),
        };
        if read && n >= 4 && &head[..4] == LOCAL {
            let name = self.local_name(from, &head[..n]);
            let msg = format!(
                "a local header at byte {from} ({place}), of a member named `{name}`, is in \
                 no central directory entry: a reader that streams the file sees a member \
                 that one that seeks does not"
            );
            self.error(RULE_ZIP, "", msg);
        } else {
            let msg = format!("{} bytes at byte {from} ({place}) belong to no member", to - from);
            self.find(Severity::Warning, RULE_ZIP, "", msg);
        }
    }

    /// The name of the local header at `at` (its first bytes `head`), as a message shows it.
    fn local_name(&self, at: u64, head: &[u8]) -> String {
        if head.len() < 30 {
            return "?".into();
        }
        let len =
            (u16::from_le_bytes([head[26], head[27]]) as usize).min(crate::layout::SHOWN_NAME);
        let mut name = vec![0u8; len];
        match self.file.read_exact_at(&mut name, at + 30) {
            Ok(()) => shown(&name),
            Err(_) => "?".into(),
        }
    }
}
