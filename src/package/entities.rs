//! Placing the described webpages and associated objects (P1.3, P2.3) on captures, once the
//! containers are written and before the METS is: each entity on one capture of its URL, its
//! title read from the page's own `<title>` in the container when the curator gave none. The
//! METS writer only writes what is decided here (`MetsBuilder::place_entities`).

use std::path::Path;

use crate::mets::writer::{EntityCandidate, MetsBuilder, PlacedEntity};
use crate::model::{EntitiesError, PageProblem, TitleSource};
use crate::model::{EntityOrigin, GroupUse, PageKind, UrlCapture};
use crate::pages::{DescribedEntity, EntitiesReport};

/// Places every described entity on one capture of its URL (P2.3): among the content
/// containers' captures (the quarantined ones only when there is no other), the one closest to
/// the entity's `captured`, else the only one, else, for seeds, the latest. A curator's entity
/// that matches no capture, or several without `captured`, is an error; all of them are
/// reported together. Titles that are not given are read from the pages' own HTML `<title>`
/// in the containers under `root`.
pub fn resolve_entities(
    mets: &mut MetsBuilder,
    root: &Path,
) -> Result<EntitiesReport, EntitiesError> {
    let mut report = EntitiesReport::default();
    let mut problems = Vec::new();
    let mut placed: Vec<PlacedEntity> = Vec::new();
    for e in mets.entities() {
        let key = crate::formats::url::url_key(&e.url);
        let found = captures_of(mets, &key);
        let dates: Vec<&str> = found
            .iter()
            .map(|c| c.record.capture.as_ref().map_or("", |c| c.date.as_str()))
            .collect();
        let seed = e.origin == EntityOrigin::Seed;
        let pick = match crate::pages::choose_capture(&dates, e.captured, seed) {
            Some(i) => &found[i],
            None if found.is_empty() && seed => {
                report.seeds_not_harvested.push(e.url.clone());
                continue;
            }
            None if found.is_empty() => {
                problems.push(PageProblem::NotHarvested { url: e.url.clone() });
                continue;
            }
            None => {
                let dates = dates.iter().map(|d| d.to_string()).collect();
                problems.push(PageProblem::Ambiguous { url: e.url.clone(), dates });
                continue;
            }
        };
        let r = pick.record;
        let capture = r.capture.clone().unwrap_or(UrlCapture {
            uri: e.url.clone(),
            date: String::new(),
            date_inferred: false,
        });
        let mime = r.content.as_ref().map(|x| x.mime.clone());
        let (title, title_source) = match &e.title {
            Some(t) => (Some(t.clone()), TitleSource::Curator),
            None if mime.as_deref().is_some_and(crate::pages::is_html) => title_of(root, pick)?,
            None => (None, TitleSource::None),
        };
        if pick.group == GroupUse::ViralFiles {
            report.viral.push(capture.uri.clone());
        }
        report.described.push(DescribedEntity {
            kind: e.kind,
            origin: e.origin,
            url: capture.uri.clone(),
            captured: capture.date.clone(),
            captured_inferred: capture.date_inferred,
            captures: found.len(),
            title: title.clone(),
            title_source,
            container: pick.container_path.to_string(),
            file_id: pick.file_id.clone(),
        });
        placed.push(PlacedEntity {
            entity: e.clone(),
            at: pick.at,
            uri: capture.uri,
            date: capture.date,
            date_inferred: capture.date_inferred,
            mime,
            title,
            title_source,
            host_title: None,
        });
    }
    if !problems.is_empty() {
        return Err(EntitiesError::Unresolved(problems));
    }
    lend_host_titles(&mut placed);
    report.records_listed = mets.place_entities(placed)?;
    Ok(report)
}

/// The distinct captures of URL key `key`: those of the content containers, else those of the
/// quarantined ones. The same capture twice (one date, one payload) is one capture.
fn captures_of<'a>(mets: &'a MetsBuilder, key: &str) -> Vec<EntityCandidate<'a>> {
    let mut found: Vec<EntityCandidate<'a>> = Vec::new();
    for group in [GroupUse::DigitalManifestation, GroupUse::ViralFiles] {
        for cand in mets.entity_candidates().filter(|c| c.group == group && c.key == key) {
            let same = |o: &EntityCandidate<'_>| {
                o.record.capture.as_ref().map(|x| &x.date)
                    == cand.record.capture.as_ref().map(|x| &x.date)
                    && o.record.content.as_ref().map(|x| &x.sha512)
                        == cand.record.content.as_ref().map(|x| &x.sha512)
            };
            if !found.iter().any(same) {
                found.push(cand);
            }
        }
        if !found.is_empty() {
            break;
        }
    }
    found
}

/// The `<title>` of the page a capture holds, read from its container under `root`.
fn title_of(
    root: &Path,
    c: &EntityCandidate<'_>,
) -> Result<(Option<String>, TitleSource), EntitiesError> {
    let path = root.join(c.container_path);
    let head = crate::pages::read_capture_head(&path, c.record, crate::pages::TITLE_WINDOW)
        .map_err(|source| EntitiesError::Io { path: c.container_path.to_string(), source })?;
    Ok(match crate::pages::html_title(&head.payload, head.content_type.as_deref()) {
        Some(t) => (Some(t), TitleSource::Html),
        None => (None, TitleSource::None),
    })
}

/// An associated object's host, when the package describes it too, lends its title.
fn lend_host_titles(placed: &mut [PlacedEntity]) {
    for i in 0..placed.len() {
        if let Some(host) = &placed[i].entity.part_of {
            let key = crate::formats::url::url_key(host);
            placed[i].host_title = placed
                .iter()
                .find(|o| {
                    o.entity.kind == PageKind::Webpage
                        && crate::formats::url::url_key(&o.uri) == key
                })
                .and_then(|o| o.title.clone());
        }
    }
}
