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

/// The OBJIDs the METS says the package requires.
pub(crate) fn mets_dependencies<R: BufRead>(
    mut reader: MetsReader<R>,
) -> Result<BTreeSet<String>, MetsError> {
    let premis = |ns: &str| ns == NS_PREMIS3 || ns == NS_PREMIS2;
    let mut out = BTreeSet::new();
    let mut current: Option<Relationship> = None;
    // The PREMIS element whose text is being read.
    let mut field: Option<String> = None;
    while let Some(event) = reader.next()? {
        match event {
            Event::Start(e, _) if premis(&e.ns) => {
                if e.local == "relationship" {
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
                    && r.kind.trim() == "dependency"
                    && r.subtype.trim() == "requires"
                    && r.id_type.trim() == "OBJID"
                    && !r.id_value.trim().is_empty()
                {
                    out.insert(r.id_value.trim().to_string());
                }
            }
            _ => {}
        }
    }
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
}
