//! What a stored package depends on: the OBJIDs its METS names by PREMIS relationships of type
//! `dependency` / subtype `requires` (written by deduplication, `package::archives`). Read
//! while the METS streams past (one relationship's texts held at a time), at `put` and by
//! `rebuild-state`; the state database keeps them, so `check` and `remove` read no METS.

use std::collections::BTreeSet;
use std::io::BufRead;

use crate::mets::reader::{Event, MetsError, MetsReader, NS_PREMIS2, NS_PREMIS3};

/// The texts of one `premis:relationship` being read.
#[derive(Default)]
struct Relationship {
    kind: String,
    subtype: String,
    id_type: String,
    id_value: String,
}

impl Relationship {
    /// The OBJID of a `dependency` / `requires` relationship.
    fn required_objid(&self) -> Option<&str> {
        let id = self.id_value.trim();
        let requires = self.kind.trim() == "dependency" && self.subtype.trim() == "requires";
        (requires && self.id_type.trim() == "OBJID" && !id.is_empty()).then_some(id)
    }

    /// A `derivation` / `migration` relationship: the object was migrated (from an ARC file).
    fn is_migration(&self) -> bool {
        self.kind.trim() == "derivation" && self.subtype.trim() == "migration"
    }
}

/// The OBJIDs the METS says the package requires.
pub(crate) fn mets_dependencies<R: BufRead>(
    reader: MetsReader<R>,
) -> Result<BTreeSet<String>, MetsError> {
    dependencies_of(reader, |_| true)
}

/// The OBJIDs required by the PREMIS objects migrated from ARC files (those with a
/// `derivation` / `migration` relationship): the packages their revisits take payloads from,
/// which the ARCs need to come back. Another container's revisits do not concern them.
pub(crate) fn mets_arc_dependencies<R: BufRead>(
    reader: MetsReader<R>,
) -> Result<BTreeSet<String>, MetsError> {
    dependencies_of(reader, |rels| rels.iter().any(Relationship::is_migration))
}

/// Whether the METS shows that the package's containers hold revisits whose originals may be
/// in other packages (which only their records say): it records a PREMIS `deduplication`
/// event, or states a `requires` relationship (what deduplication against another package
/// writes).
pub(crate) fn mets_shows_deduplication<R: BufRead>(
    mut reader: MetsReader<R>,
) -> Result<bool, MetsError> {
    let premis = |ns: &str| ns == NS_PREMIS3 || ns == NS_PREMIS2;
    let mut looked_at: Option<&'static str> = None;
    while let Some(event) = reader.next()? {
        match event {
            Event::Start(e, _) if premis(&e.ns) => {
                looked_at = match e.local.as_str() {
                    "eventType" => Some("deduplication"),
                    "relationshipSubType" => Some("requires"),
                    _ => None,
                }
            }
            Event::Text(t, _) if looked_at.is_some_and(|word| t.trim() == word) => return Ok(true),
            Event::End { .. } => looked_at = None,
            _ => {}
        }
    }
    Ok(false)
}

/// The largest migration log read for the packages its ARCs require (real ones are a few KB).
const MAX_MIGRATION_LOG: u64 = 16 << 20;

/// Whether a migration log of the package at `dir` (`logs/webaip/*.migration.json`, written
/// apart from the METS) names packages the ARCs it migrated require (`rebuild` /
/// `requires_packages`). A log that cannot be read or parsed names none.
pub(crate) fn logs_require_packages(dir: &std::path::Path) -> bool {
    #[derive(serde::Deserialize)]
    struct Log {
        rebuild: Option<Rebuild>,
    }
    #[derive(serde::Deserialize)]
    struct Rebuild {
        #[serde(default)]
        requires_packages: Vec<String>,
    }
    let Ok(entries) = std::fs::read_dir(dir.join("logs/webaip")) else { return false };
    let logs = entries.filter_map(|e| e.ok()?.file_name().into_string().ok());
    logs.filter(|name| name.ends_with(".migration.json")).any(|name| {
        let rel = format!("logs/webaip/{name}");
        let Ok(file) = crate::layout::open_in(dir, &rel) else { return false };
        let bounded = std::io::Read::take(std::io::BufReader::new(file), MAX_MIGRATION_LOG);
        serde_json::from_reader::<_, Log>(bounded)
            .is_ok_and(|log| log.rebuild.is_some_and(|r| !r.requires_packages.is_empty()))
    })
}

/// The OBJIDs the ARCs of the package whose METS is at `mets` require
/// ([`mets_arc_dependencies`]) that are not `given` (by `--with`, `--store` or as inputs):
/// the one answer to "which packages must still be given" for `unmigrate` and the audit.
pub(crate) fn missing_arc_dependencies(
    mets: &std::path::Path,
    given: &[String],
) -> Result<Vec<String>, DependenciesUnread> {
    let file = crate::layout::open_regular(mets)?;
    let reader = MetsReader::strict(std::io::BufReader::new(file));
    let required = mets_arc_dependencies(reader)?;
    Ok(required.into_iter().filter(|r| !given.contains(r)).collect())
}

/// Why the packages a METS requires could not be read from it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DependenciesUnread {
    /// The METS could not be opened as a regular file.
    #[error("{0}")]
    Open(#[from] crate::layout::ConfineError),
    /// The METS could not be read to its end.
    #[error("{0}")]
    Mets(#[from] MetsError),
}

/// The OBJIDs required by the PREMIS objects whose relationships `keep` accepts (one
/// object's relationships held at a time; a relationship outside any object is judged alone).
fn dependencies_of<R: BufRead>(
    mut reader: MetsReader<R>,
    keep: impl Fn(&[Relationship]) -> bool,
) -> Result<BTreeSet<String>, MetsError> {
    let premis = |ns: &str| ns == NS_PREMIS3 || ns == NS_PREMIS2;
    let mut read = Dependencies {
        keep,
        in_object: false,
        rels: Vec::new(),
        current: None,
        field: None,
        out: BTreeSet::new(),
    };
    while let Some(event) = reader.next()? {
        match event {
            Event::Start(e, _) if premis(&e.ns) => read.start(e.local),
            Event::Text(t, _) => read.text(&t),
            Event::End { ns, local, .. } if premis(&ns) => read.end(&local),
            _ => {}
        }
    }
    read.flush();
    Ok(read.out)
}

/// The dependencies found so far in a METS being read, and where the reading is.
struct Dependencies<K> {
    /// Which objects' relationships count.
    keep: K,
    /// Inside a `premis:object`.
    in_object: bool,
    /// The relationships of the object being read.
    rels: Vec<Relationship>,
    /// The relationship being read.
    current: Option<Relationship>,
    /// The PREMIS element whose text is being read.
    field: Option<String>,
    out: BTreeSet<String>,
}

impl<K: Fn(&[Relationship]) -> bool> Dependencies<K> {
    /// The object's relationships judged: the OBJIDs it requires kept when `keep` accepts them.
    fn flush(&mut self) {
        if (self.keep)(&self.rels) {
            let required = self.rels.iter().filter_map(Relationship::required_objid);
            self.out.extend(required.map(str::to_string));
        }
        self.rels.clear();
    }

    /// A PREMIS element starts.
    fn start(&mut self, local: String) {
        if local == "object" {
            self.flush();
            self.in_object = true;
        } else if local == "relationship" {
            self.current = Some(Relationship::default());
        } else if self.current.is_some() {
            self.field = Some(local);
        }
    }

    /// Text, kept when it is that of a relationship's field.
    fn text(&mut self, t: &str) {
        let (Some(r), Some(f)) = (self.current.as_mut(), self.field.as_deref()) else { return };
        let slot = match f {
            "relationshipType" => &mut r.kind,
            "relationshipSubType" => &mut r.subtype,
            "relatedObjectIdentifierType" => &mut r.id_type,
            "relatedObjectIdentifierValue" => &mut r.id_value,
            _ => return,
        };
        slot.push_str(t);
    }

    /// A PREMIS element ends: a relationship is kept for its object (judged alone outside
    /// one), an object's relationships judged.
    fn end(&mut self, local: &str) {
        self.field = None;
        if local == "relationship"
            && let Some(r) = self.current.take()
        {
            self.rels.push(r);
            if !self.in_object {
                self.flush();
            }
        } else if local == "object" {
            self.flush();
            self.in_object = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dependency_requires_by_objid_is_a_dependency() {
        let doc = r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:premis="http://www.loc.gov/premis/v3" OBJID="b">
<premis:object><premis:relationship><premis:relationshipType>dependency</premis:relationshipType>
<premis:relationshipSubType>requires</premis:relationshipSubType><premis:relatedObjectIdentifier>
<premis:relatedObjectIdentifierType>OBJID</premis:relatedObjectIdentifierType>
<premis:relatedObjectIdentifierValue>urn:uuid:a</premis:relatedObjectIdentifierValue>
</premis:relatedObjectIdentifier></premis:relationship>
<premis:relationship><premis:relationshipType>structural</premis:relationshipType>
<premis:relationshipSubType>requires</premis:relationshipSubType><premis:relatedObjectIdentifier>
<premis:relatedObjectIdentifierType>OBJID</premis:relatedObjectIdentifierType>
<premis:relatedObjectIdentifierValue>urn:uuid:x</premis:relatedObjectIdentifierValue>
</premis:relatedObjectIdentifier></premis:relationship>
<premis:relationship><premis:relationshipType>dependency</premis:relationshipType>
<premis:relationshipSubType>requires</premis:relationshipSubType><premis:relatedObjectIdentifier>
<premis:relatedObjectIdentifierType>UUID</premis:relatedObjectIdentifierType>
<premis:relatedObjectIdentifierValue>urn:uuid:y</premis:relatedObjectIdentifierValue>
</premis:relatedObjectIdentifier></premis:relationship></premis:object></mets:mets>"#;
        let got = mets_dependencies(MetsReader::strict(doc.as_bytes())).unwrap();
        assert_eq!(got.into_iter().collect::<Vec<_>>(), ["urn:uuid:a"]);
    }

    /// Only the objects migrated from ARC files count for the ARCs: a copied WARC's
    /// dependency does not.
    #[test]
    fn arc_dependencies_are_those_of_migrated_objects() {
        let rel = |kind: &str, sub: &str, ty: &str, v: &str| {
            format!(
                "<premis:relationship><premis:relationshipType>{kind}</premis:relationshipType><premis:relationshipSubType>{sub}</premis:relationshipSubType><premis:relatedObjectIdentifier><premis:relatedObjectIdentifierType>{ty}</premis:relatedObjectIdentifierType><premis:relatedObjectIdentifierValue>{v}</premis:relatedObjectIdentifierValue></premis:relatedObjectIdentifier></premis:relationship>"
            )
        };
        let doc = format!(
            r#"<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:premis="http://www.loc.gov/premis/v3" OBJID="b"><premis:object>{}{}</premis:object><premis:object>{}</premis:object><premis:object>{}{}</premis:object></mets:mets>"#,
            rel("derivation", "migration", "local", "c1.arc.gz"),
            rel("dependency", "requires", "OBJID", "urn:uuid:arc"),
            rel("dependency", "requires", "OBJID", "urn:uuid:warc"),
            rel("dependency", "requires", "OBJID", "urn:uuid:arc2"),
            rel("derivation", "migration", "local", "c2.arc"),
        );
        let got = mets_arc_dependencies(MetsReader::strict(doc.as_bytes())).unwrap();
        assert_eq!(got.into_iter().collect::<Vec<_>>(), ["urn:uuid:arc", "urn:uuid:arc2"]);
        let all = mets_dependencies(MetsReader::strict(doc.as_bytes())).unwrap();
        assert_eq!(all.len(), 3);
    }
}
