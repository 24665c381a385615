//! P5.1 and P5.5-P5.7, across objects, events, relationships and file groups, once the
//! document is read: a file's attributes agree with its PREMIS object, containers have their
//! virus check, migrated containers carry their migration event and relationship, transformed
//! and cleaned bytestreams point at originals kept in the right group, and viral bytestreams
//! are only in the viral group.

use super::RULE_DESCRIBED_FIXITY;
use super::crossrefs::{
    self, CrossrefError, Crossrefs, ForcedQuery, MigrationTerms, RelationTerms,
};
use super::rules::RuleContext;
use crate::formats::digest::FixityAlgorithm;

pub(super) fn check(cx: &mut RuleContext, x: &Crossrefs) -> Result<(), CrossrefError> {
    let p = cx.profile.clone();
    x.described(|d| check_described(cx, d))?;
    let term = &p.events.virus_check.term;
    x.containers_unchecked(term, |id, at| {
        cx.profile_rule("P5.5", "file", at, format!("container {id} has no {term:?} event"))
    })?;
    let rels = &p.relationships;
    let migration = MigrationTerms {
        relationship_type: &rels.relationship_type,
        subtype: &rels.migration,
        event: &p.events.migration.term,
    };
    x.described_objects(&migration, |o| check_migrated(cx, &migration, o))?;
    let terms = RelationTerms {
        relationship_type: &rels.relationship_type,
        transformation_event: &p.events.transformation.term,
    };
    x.relations(&terms, |r| check_related(cx, r))?;
    // P5.5: what a virus was found in and not cleaned stays out of the other groups.
    let forced = ForcedQuery {
        event: term,
        outcome: &p.virus_outcomes.forced,
        viral_group: &p.file_groups.viral,
    };
    x.forced_outside(&forced, |f| {
        let (id, group, outcome, viral) =
            (&f.file_id, &f.group, forced.outcome, forced.viral_group);
        let what =
            format!("{id} is {outcome:?} ({}) but is in group {group:?}, not {viral:?}", f.detail);
        cx.profile_rule("P5.5", "file", f.at, what)
    })
}

/// P5.6: a migrated container has both the event and the relationship.
fn check_migrated(cx: &mut RuleContext, terms: &MigrationTerms, o: crossrefs::DescribedObject) {
    if o.depth != 0 {
        return;
    }
    let (event, id) = (terms.event, &o.file_id);
    let what = match (&o.migrated_from, o.migration_event) {
        (Some(from), false) => format!(
            "container {id} is derived by migration from {from:?}, but no {event:?} event links it"
        ),
        (None, true) => format!(
            "container {id} has a {event:?} event but no {}/{} relationship to its source",
            terms.relationship_type, terms.subtype
        ),
        _ => return,
    };
    cx.profile_rule("P5.6", "file", o.at, what);
}

/// P5.1: a `<file>`'s CHECKSUM, CHECKSUMTYPE and SIZE agree with the PREMIS object its
/// ADMID token names.
fn check_described(cx: &mut RuleContext, d: crossrefs::Described) {
    let token = &d.token;
    if let (Some(sum), false) = (&d.checksum, d.digest.is_empty()) {
        let digest = &d.digest;
        // Digests by two algorithms say nothing of each other: only the types disagree.
        let same_algorithm = match (&d.checksumtype, d.algorithm.is_empty()) {
            (Some(ct), false) => {
                let named = FixityAlgorithm::from_name;
                ct.eq_ignore_ascii_case(&d.algorithm)
                    || named(ct).is_some_and(|a| named(&d.algorithm) == Some(a))
            }
            _ => true,
        };
        if same_algorithm && !sum.eq_ignore_ascii_case(digest) {
            let what = format!("CHECKSUM {sum} differs from the PREMIS fixity {digest} of {token}");
            cx.error(RULE_DESCRIBED_FIXITY, "file", d.at, what);
        }
        if let Some(ct) = &d.checksumtype
            && !d.algorithm.is_empty()
            && !same_algorithm
        {
            let what = format!("CHECKSUMTYPE {ct} but PREMIS fixity uses {}", d.algorithm);
            cx.error(RULE_DESCRIBED_FIXITY, "file", d.at, what);
        }
    }
    if let (Some(s), Some(os)) = (&d.size, &d.object_size)
        && s.trim() != os.trim()
    {
        let what = format!("SIZE {s} differs from the PREMIS size {os} of {token}");
        cx.error(RULE_DESCRIBED_FIXITY, "file", d.at, what);
    }
}

/// P5.6, P5.7 and P5.5 on one relationship of a described object: a container migrated
/// from a described source; a transformed bytestream with its event and its original in
/// the original group; a cleaned copy's original in the viral group.
fn check_related(cx: &mut RuleContext, r: crossrefs::Related) {
    let p = &cx.profile;
    let (rels, groups) = (&p.relationships, &p.file_groups);
    let (file_id, target) = (&r.file_id, &r.target);
    let mut found = Vec::new();
    if r.subtype == rels.migration && r.depth == 0 && !r.target_described {
        found.push((
            "P5.6",
            format!("container {file_id} is migrated from {target:?}, which is not described"),
        ));
    }
    if r.subtype == rels.transformation {
        found.extend(transformed(cx, &r).into_iter().map(|m| ("P5.7", m)));
    }
    if r.subtype == rels.cleaned && r.target_file.as_ref().is_none_or(|(g, _)| *g != groups.viral) {
        found.push(("P5.5", format!(
            "bytestream {file_id} is cleaned from {target:?}, which is not a file of group {:?}",
            groups.viral
        )));
    }
    for (rule, message) in found {
        cx.profile_rule(rule, "file", r.at, message);
    }
}

/// P5.7: a transformed bytestream has its transformation event, and its original is a file
/// of the original group.
fn transformed(cx: &RuleContext, r: &crossrefs::Related) -> Vec<String> {
    let p = &cx.profile;
    let original = &p.file_groups.original;
    let (file_id, target) = (&r.file_id, &r.target);
    let mut found = Vec::new();
    if !r.transformation_event {
        let term = &p.events.transformation.term;
        found.push(format!(
            "bytestream {file_id} is transformed from {target:?}, but no {term:?} event links it"
        ));
    }
    match &r.target_file {
        Some((g, _)) if g == original => {}
        Some((g, id)) => found.push(format!(
            "the original of bytestream {file_id} ({id}) is in group {g:?}, not {original:?}"
        )),
        None => found.push(format!(
            "the original {target:?} of bytestream {file_id} is not in the file section"
        )),
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::checker::tests::{findings_of, package, rules_of};

    #[test]
    fn a_valid_document_has_no_coherence_finding() {
        let found = findings_of(&package(""));
        assert!(rules_of(&found, &["P5.1", "P5.5", "P5.6", "P5.7"]).is_empty(), "{found:?}");
    }

    #[test]
    fn a_file_disagreeing_with_its_premis_object_breaks_p5_1() {
        let doc =
            package("").replace(r#"SIZE="10" CHECKSUM="SUM""#, r#"SIZE="11" CHECKSUM="OTHER""#);
        let found = findings_of(&doc);
        let messages: Vec<_> =
            rules_of(&found, &["P5.1"]).iter().map(|f| f.message.clone()).collect();
        assert_eq!(
            messages,
            [
                "CHECKSUM OTHER differs from the PREMIS fixity SUM of amd-1",
                "SIZE 11 differs from the PREMIS size 10 of amd-1"
            ]
        );
        assert!(found.iter().filter(|f| f.rule == "P5.1").all(|f| f.is_inconsistency()));
    }

    #[test]
    fn digests_by_two_algorithms_disagree_only_in_type() {
        let doc = package("").replace(
            "<premis:messageDigestAlgorithm>SHA-512<",
            "<premis:messageDigestAlgorithm>MD5<",
        );
        let found = findings_of(&doc);
        let p51 = rules_of(&found, &["P5.1"]);
        assert_eq!(p51.len(), 1, "{found:?}");
        assert_eq!(p51[0].message, "CHECKSUMTYPE SHA-512 but PREMIS fixity uses MD5");
    }

    #[test]
    fn a_container_without_its_virus_check_event_breaks_p5_5() {
        let doc =
            package("").replace("<premis:eventType>virus check<", "<premis:eventType>ingestion<");
        let found = findings_of(&doc);
        let p55 = rules_of(&found, &["P5.5"]);
        assert_eq!(p55.len(), 1, "{found:?}");
        assert_eq!(
            p55[0].message,
            "container file-1 has no \"virus check\" event (profile bl-webarchive)"
        );
    }

    #[test]
    fn a_migrated_container_without_its_event_breaks_p5_6() {
        let relation = "<premis:relationship><premis:relationshipType>derivation</premis:relationshipType><premis:relationshipSubType>migration</premis:relationshipSubType><premis:relatedObjectIdentifier><premis:relatedObjectIdentifierValue>arc-1</premis:relatedObjectIdentifierValue></premis:relatedObjectIdentifier></premis:relationship>";
        let doc = package("").replace(
            "</premis:objectCharacteristics>",
            &format!("</premis:objectCharacteristics>{relation}"),
        );
        let found = findings_of(&doc);
        let messages: Vec<_> =
            rules_of(&found, &["P5.6"]).iter().map(|f| f.message.clone()).collect();
        assert_eq!(
            messages,
            [
                "container file-1 is derived by migration from \"arc-1\", but no \"migration\" event links it (profile bl-webarchive)",
                "container file-1 is migrated from \"arc-1\", which is not described (profile bl-webarchive)",
            ]
        );
    }
}
