//! Identifiers and clocks, injectable so that a deterministic run is a mode, not a test hack.
//!
//! Normal runs use random (version 4) UUIDs and the system clock. With a seed, identifiers are
//! derived from the seed and a counter, and the clock is fixed, so two runs over the same input
//! give byte-identical output.

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The fixed time of deterministic runs: the WARC 1.1 standard's publication year, a date no
/// real conversion happens on, so a deterministic output can never be mistaken for a real one.
pub(crate) const DETERMINISTIC_TIME: &str = "2017-08-01T00:00:00Z";

/// Makes identifiers and tells the time.
#[derive(Debug)]
pub struct Ids {
    seed: Option<String>,
    counter: AtomicU64,
}

impl Ids {
    /// Random identifiers and the system clock.
    pub fn random() -> Self {
        Ids { seed: None, counter: AtomicU64::new(0) }
    }

    /// Identifiers derived from `seed`, and a fixed clock.
    pub fn seeded(seed: impl Into<String>) -> Self {
        Ids { seed: Some(seed.into()), counter: AtomicU64::new(0) }
    }

    /// A second source for a sub-task (one input file), independent of the order in which
    /// sub-tasks run: seeded sources derive from `seed/name`.
    pub fn derive(&self, name: &str) -> Self {
        match &self.seed {
            Some(s) => Ids::seeded(format!("{s}/{name}")),
            None => Ids::random(),
        }
    }

    /// A new UUID.
    pub(crate) fn uuid(&self) -> Uuid {
        match &self.seed {
            None => Uuid::new_v4(),
            Some(seed) => {
                let n = self.counter.fetch_add(1, Ordering::Relaxed);
                let mut h = Sha256::new();
                h.update(seed.as_bytes());
                h.update(n.to_be_bytes());
                let bytes: [u8; 32] = h.finalize().into();
                let mut b = [0u8; 16];
                b.copy_from_slice(&bytes[..16]);
                uuid::Builder::from_random_bytes(b).into_uuid()
            }
        }
    }

    /// A new WARC record identifier, `<urn:uuid:...>`.
    pub(crate) fn warc_record_id(&self) -> String {
        format!("<urn:uuid:{}>", self.uuid())
    }

    /// The current time (fixed in deterministic mode).
    pub(crate) fn now(&self) -> DateTime<Utc> {
        match &self.seed {
            None => Utc::now(),
            Some(_) => crate::formats::dates::parse_rfc3339(DETERMINISTIC_TIME).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_ids_repeat_and_differ_per_seed() {
        let a = Ids::seeded("x");
        let b = Ids::seeded("x");
        assert_eq!(a.uuid(), b.uuid());
        assert_ne!(a.uuid(), Ids::seeded("y").uuid());
        assert_eq!(a.uuid().get_version_num(), 4);
        assert_eq!(a.now().to_rfc3339(), "2017-08-01T00:00:00+00:00");
    }
}
