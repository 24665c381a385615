//! DROID's priorities: when a format that has priority over another matches, the other is
//! dropped from the result. Only direct relations count, as in DROID; formats that no
//! matching format beats all stay, however many they are.

use std::collections::{HashMap, HashSet};

use super::parse::FileFormat;

/// For each format (by index), the formats (by index) it wins over.
#[derive(Debug, Default)]
pub(crate) struct Priorities {
    beats: Vec<Vec<usize>>,
}

impl Priorities {
    /// Resolves the formats' `HasPriorityOverFileFormatID` to indices (unknown ones ignored:
    /// a format the file does not define can never match).
    pub(crate) fn new(formats: &[FileFormat]) -> Self {
        let by_id: HashMap<u32, usize> =
            formats.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
        let beats = formats
            .iter()
            .map(|f| f.priority_over.iter().filter_map(|id| by_id.get(id).copied()).collect())
            .collect();
        Priorities { beats }
    }

    /// The matched formats (indices, any order, no duplicates) less those another matched
    /// format beats, in ascending index order.
    pub(crate) fn apply(&self, matched: &[usize]) -> Vec<usize> {
        let beaten: HashSet<usize> = matched
            .iter()
            .flat_map(|m| self.beats.get(*m).into_iter().flatten().copied())
            .collect();
        let mut out: Vec<usize> = matched.iter().copied().filter(|m| !beaten.contains(m)).collect();
        out.sort_unstable();
        out
    }
}
