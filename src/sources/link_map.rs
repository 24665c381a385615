//! The link map of a mirror: each file's save path and its original URL, which the rewrite
//! stage (`stages::rewrite`) uses to make links between mirror files absolute again. The
//! source that knows its files builds it ([`super::capture::CaptureSource::link_map`]).

use std::collections::HashMap;

/// Save path (relative to the instance, decoded) -> original URL.
///
/// Every pair is stored once in one buffer, found through a 64-bit hash of the save path:
/// a map of two `String`s an entry took about 180 bytes a mirror file (15 MB at 100,000),
/// this about 100. The index is exact: a hash already taken by another path is followed by
/// the hash of (path, 1), (path, 2) ..., and every probe compares the stored path; the hash
/// keys are random per run, so a mirror cannot be named to make the probes long.
#[derive(Debug, Default, Clone)]
pub struct LinkMap {
    /// Each entry's save path, then its URL.
    text: String,
    /// Per entry: where its save path starts in `text`, its length, its URL's length.
    entries: Vec<(usize, u32, u32)>,
    /// Entries by the hash of their save path (and probe number).
    index: HashMap<u64, u32>,
    keys: std::hash::RandomState,
}

impl LinkMap {
    /// Adds a mirror file (a save path given twice keeps the last URL).
    pub fn insert(&mut self, save_path: &str, url: &str) {
        let (Ok(path_len), Ok(url_len), Ok(n)) = (
            u32::try_from(save_path.len()),
            u32::try_from(url.len()),
            u32::try_from(self.entries.len()),
        ) else {
            // Not reachable: the readers bound names and URLs far below 4 GiB.
            return;
        };
        let entry = (self.text.len(), path_len, url_len);
        self.text.push_str(save_path);
        self.text.push_str(url);
        match self.find(save_path) {
            Ok(i) => {
                if let Some(e) = self.entries.get_mut(i as usize) {
                    *e = entry;
                }
            }
            Err(key) => {
                self.entries.push(entry);
                self.index.insert(key, n);
            }
        }
    }

    /// The original URL of a save path.
    pub fn get(&self, save_path: &str) -> Option<&str> {
        let i = self.find(save_path).ok()?;
        self.entries.get(i as usize).map(|&e| self.url_of(e))
    }

    fn path_of(&self, (start, path_len, _): (usize, u32, u32)) -> &str {
        self.text.get(start..start.saturating_add(path_len as usize)).unwrap_or("")
    }

    fn url_of(&self, (start, path_len, url_len): (usize, u32, u32)) -> &str {
        let from = start.saturating_add(path_len as usize);
        self.text.get(from..from.saturating_add(url_len as usize)).unwrap_or("")
    }

    /// The entry of `save_path`, or the first free key of its probe sequence.
    fn find(&self, save_path: &str) -> Result<u32, u64> {
        use std::hash::BuildHasher;
        let mut probe = 0u32;
        loop {
            let key = self.keys.hash_one((save_path, probe));
            match self.index.get(&key) {
                None => return Err(key),
                Some(&i) => {
                    if self.entries.get(i as usize).is_some_and(|&e| self.path_of(e) == save_path) {
                        return Ok(i);
                    }
                    probe = probe.wrapping_add(1);
                }
            }
        }
    }
}
