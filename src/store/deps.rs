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

/// The OBJIDs required by the PREMIS objects whose relationships `keep` accepts (one
/// object's relationships held at a time; a relationship outside any object is judged alone).
fn dependencies_of<R: BufRead>(
    mut reader: MetsReader<R>,
    keep: impl Fn(&[Relationship]) -> bool,
) -> Result<BTreeSet<String>, MetsError> {
    let premis = |ns: &str| ns == NS_PREMIS3 || ns == NS_PREMIS2;
    let mut out = BTreeSet::new();
    let flush = |rels: &mut Vec<Relationship>, out: &mut BTreeSet<String>| {
        if keep(rels) {
            out.extend(rels.iter().filter_map(|r| r.required_objid().map(str::to_string)));
        }
        rels.clear();
    };
    let mut in_object = false;
    let mut rels: Vec<Relationship> = Vec::new();
    let mut current: Option<Relationship> = None;
    // The PREMIS element whose text is being read.
    let mut field: Option<String> = None;
    while let Some(event) = reader.next()? {
        match event {
            Event::Start(e, _) if premis(&e.ns) => {
                if e.local == "object" {
                    flush(&mut rels, &mut out);
                    in_object = true;
                } else if e.local == "relationship" {
                    current = Some(Relationship::default());
                } else if current.is_some() {
                    field = Some(e.local);
                }
            }
            Event::Text(t, _) => {
                if let (Some(r), Some(f)) = (current.as_mut(), field.as_deref()) {
                    let slot = match f {
                        "relationshipType" => &mut r.kind,
                        "relationshipSubType" => &mut r.subtype,
                        "relatedObjectIdentifierType" => &mut r.id_type,
                        "relatedObjectIdentifierValue" => &mut r.id_value,
                        _ => continue,
                    };
                    slot.push_str(&t);
                }
            }
            Event::End { ns, local, .. } if premis(&ns) => {
                field = None;
                if local == "relationship"
                    && let Some(r) = current.take()
                {
                    rels.push(r);
                    if !in_object {
                        flush(&mut rels, &mut out);
                    }
                } else if local == "object" {
                    flush(&mut rels, &mut out);
                    in_object = false;
                }
            }
            _ => {}
        }
    }
    flush(&mut rels, &mut out);
    Ok(out)
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
