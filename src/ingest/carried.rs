//! What the AIP carries over from the submission, checked with the typed reading of both
//! documents' package-level sections (`mets::sections`, yaserde): every MODS and Dublin Core
//! record, the rights record, every PREMIS agent, event and object, every metsHdr agent of
//! the submission is in the AIP, equal field by field. The AIP's METS is the submission's
//! with edits, so a difference is a fault of the edits: the AIP is not moved into place.

use std::path::Path;

use serde::Serialize;

use super::IngestError;
use crate::mets::sections::{PackageSections, SectionsError, Versioned, read_package_sections};

/// What was found in both, counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CarriedOver {
    /// MODS and Dublin Core records.
    pub descriptive: u64,
    /// The rights record (webaip's) and PREMIS rights statements.
    pub rights: u64,
    /// PREMIS agents, events and objects of the package-level sections.
    pub premis_agents: u64,
    /// PREMIS events.
    pub premis_events: u64,
    /// PREMIS objects.
    pub premis_objects: u64,
    /// What the typed reading does not model in the submission (kept in the AIP as bytes,
    /// not compared).
    pub not_modelled: Vec<String>,
}

/// Compares the submission's sections with the AIP's. The inner error when the submission's
/// sections cannot be read typed (it goes to the report): the AIP still holds them, byte for
/// byte, unchecked.
pub(super) fn check(
    ssip: &Path,
    aip: &Path,
) -> Result<Result<CarriedOver, SectionsError>, IngestError> {
    let before = match read_package_sections(ssip) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let after = read_package_sections(aip).map_err(|e| missing(aip, format!("unreadable: {e}")))?;
    let mut c = CarriedOver { not_modelled: before.not_modelled.clone(), ..Default::default() };
    c.descriptive = all_in(aip, "MODS record", &before.mods(), &after.mods())?
        + all_in(aip, "Dublin Core record", &before.dublin_core(), &after.dublin_core())?;
    let rights = |s: &PackageSections| s.webaip_rights().cloned().into_iter().collect::<Vec<_>>();
    c.rights = all_in(aip, "rights record", &rights(&before), &rights(&after))?
        + versioned(
            aip,
            "PREMIS rights statement",
            &before.premis_rights_statements(),
            &after.premis_rights_statements(),
        )?;
    c.premis_agents =
        versioned(aip, "PREMIS agent", &before.premis_agents(), &after.premis_agents())?;
    c.premis_events =
        versioned(aip, "PREMIS event", &before.premis_events(), &after.premis_events())?;
    c.premis_objects =
        versioned(aip, "PREMIS object", &before.premis_objects(), &after.premis_objects())?;
    let agents =
        |s: &PackageSections| s.header.as_ref().map(|h| h.value.agents.clone()).unwrap_or_default();
    all_in(aip, "metsHdr agent", &agents(&before), &agents(&after))?;
    Ok(Ok(c))
}

fn missing(aip: &Path, what: String) -> IngestError {
    IngestError::NotCarriedOver { path: aip.to_path_buf(), what }
}

/// Every one of `before` is among `after`; their number.
fn all_in<T: PartialEq + std::fmt::Debug>(
    aip: &Path,
    what: &str,
    before: &[T],
    after: &[T],
) -> Result<u64, IngestError> {
    match before.iter().find(|b| !after.contains(b)) {
        Some(b) => Err(missing(aip, format!("the submission's {what} {b:?}"))),
        None => Ok(before.len() as u64),
    }
}

fn versioned<'a, T: PartialEq + std::fmt::Debug>(
    aip: &Path,
    what: &str,
    before: &[Versioned<'a, T>],
    after: &[Versioned<'a, T>],
) -> Result<u64, IngestError> {
    let found =
        |b: &Versioned<'a, T>| after.iter().any(|a| a.version == b.version && a.value == b.value);
    match before.iter().find(|b| !found(b)) {
        Some(b) => Err(missing(aip, format!("the submission's {what} {:?}", b.value))),
        None => Ok(before.len() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/xsd/examples/webarchive-sip-example.xml");
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn the_same_sections_are_carried_over_and_a_changed_event_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let (ssip, aip) = (tmp.path().join("ssip.xml"), tmp.path().join("aip.xml"));
        let text = example();
        std::fs::write(&ssip, &text).unwrap();
        std::fs::write(&aip, &text).unwrap();
        let c = check(&ssip, &aip).unwrap().unwrap();
        assert!(c.descriptive >= 1 && c.premis_events >= 1, "{c:?}");
        let outcome = text.find("<premis:eventOutcome>").unwrap() + "<premis:eventOutcome>".len();
        let changed = format!("{}X{}", &text[..outcome], &text[outcome..]);
        std::fs::write(&aip, changed).unwrap();
        let e = check(&ssip, &aip).unwrap_err();
        assert!(e.to_string().contains("lacks the submission's PREMIS event"), "{e}");
    }
}
