//! Curator metadata (P3.4): a TOML file mapped to MODS, Dublin Core and the rights record.
//!
//! Every field is optional; what is missing is taken from the source (seeds, crawl dates) where
//! possible, and listed so the report can say what the package lacks. A documented example is
//! `samples/heritrix-job/metadata.toml`.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;

use crate::model::{
    Access, DC_ELEMENTS, Description, EntityOrigin, Organisation, PageEntity, PageKind, Rights,
};

/// The curator's metadata file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CuratorMetadata {
    /// Title of the website.
    pub title: Option<String>,
    /// What the website is.
    pub description: Option<String>,
    /// Subject terms.
    #[serde(default)]
    pub subjects: Vec<String>,
    /// Person or body responsible for the website's content.
    pub creator: Option<String>,
    /// Publisher of the website.
    pub publisher: Option<String>,
    /// Target URLs.
    #[serde(default)]
    pub urls: Vec<String>,
    /// Languages (ISO 639-2/B codes).
    #[serde(default)]
    pub languages: Vec<String>,
    /// The organisation making the package.
    pub organisation: Option<Organisation>,
    /// Rights.
    pub rights: Option<RightsInput>,
    /// Broad Dublin Core elements that stay only in DC (P3.2): source, relation, coverage, ...
    #[serde(default)]
    pub dc: BTreeMap<String, String>,
    /// Webpages and associated objects to describe (`[[page]]` tables, P1.3).
    #[serde(default, rename = "page")]
    pub pages: Vec<PageInput>,
}

/// One `[[page]]` table: a webpage or associated object the curator describes.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PageInput {
    /// The URL as harvested.
    pub url: String,
    /// When several captures of the URL exist: the one closest to this time is described
    /// (same forms as `--capture-date`).
    pub captured: Option<String>,
    /// `webpage` (the default) or `associated-object`.
    pub kind: Option<String>,
    /// Title; when missing, the page's own HTML `<title>` (the METS says so).
    pub title: Option<String>,
    /// Free-text description.
    pub description: Option<String>,
    /// Subject terms.
    #[serde(default)]
    pub subjects: Vec<String>,
    /// Person or body responsible for its content.
    pub creator: Option<String>,
    /// Its date, W3CDTF: `2024`, `2024-03` or `2024-03-15`.
    pub date: Option<String>,
    /// Language (ISO 639-2/B code).
    pub language: Option<String>,
    /// For an associated object: the URL of the page it belongs to.
    pub part_of: Option<String>,
}

/// The rights part of the metadata file.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RightsInput {
    /// `open`, `restricted` or `embargoed`.
    pub access: String,
    /// First day of public access, for `embargoed`.
    pub embargo_until: Option<NaiveDate>,
    /// The rights statement.
    pub statement: String,
}

/// A metadata file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct MetadataError {
    /// The file.
    pub path: String,
    /// What is wrong.
    #[source]
    pub problem: MetadataProblem,
}

/// Largest metadata file read: a curator's TOML is a few KiB; a larger one (`/dev/zero`
/// given by mistake, or on purpose) is refused before it fills memory.
pub const MAX_METADATA_BYTES: u64 = 16 << 20;

/// What is wrong with a metadata file.
#[derive(Debug, thiserror::Error)]
pub enum MetadataProblem {
    /// It cannot be read: absent, a FIFO or device, larger than `MAX_METADATA_BYTES`.
    #[error("{}", .0.reason())]
    Unreadable(crate::layout::ConfineError),
    /// It is not UTF-8 text.
    #[error("not UTF-8 text (at byte {offset})")]
    NotUtf8 {
        /// Offset of the first byte that is not.
        offset: u64,
    },
    /// It is not TOML of this form.
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    /// A `[dc]` key is not a Dublin Core element.
    #[error("[dc] {0:?} is not a Dublin Core element ({elements})", elements = DC_ELEMENTS.join(", "))]
    NotDublinCore(String),
    /// A `[[page]]` table is refused.
    #[error("{0}")]
    Page(#[from] PageError),
    /// An embargo without its end.
    #[error("rights.access = \"embargoed\" needs rights.embargo_until")]
    EmbargoWithoutEnd,
    /// An access value outside the vocabulary.
    #[error("rights.access = {0:?}; expected open, restricted or embargoed")]
    Access(String),
}

/// A `[[page]]` table that is refused: its number (from 1), its URL as written, and why.
#[derive(Debug, thiserror::Error)]
#[error("[[page]] {number} ({url}): {problem}")]
pub struct PageError {
    /// The table's number, from 1.
    pub number: usize,
    /// Its `url` as written.
    pub url: String,
    /// What is wrong.
    #[source]
    pub problem: PageProblem,
}

/// What is wrong with a `[[page]]` table.
#[derive(Debug, thiserror::Error)]
pub enum PageProblem {
    /// The URL does not parse.
    #[error("url: {0}")]
    Url(#[source] url::ParseError),
    /// The URL has no host.
    #[error("url: not an absolute URL with a host")]
    NoHost,
    /// A kind outside the vocabulary.
    #[error("kind = {0:?}; expected \"webpage\" or \"associated-object\"")]
    Kind(String),
    /// An associated object without `part_of`.
    #[error("an associated object names the page it belongs to: part_of = URL")]
    NoPartOf,
    /// A web page with `part_of`.
    #[error("part_of is for associated objects (kind = \"associated-object\")")]
    PartOfWebpage,
    /// A `part_of` that is not a URL.
    #[error("part_of = {0:?} is not a URL")]
    PartOfNotUrl(String),
    /// A capture date that does not parse.
    #[error("captured: {0}")]
    Captured(#[source] BadCaptureDate),
    /// A date that is not W3CDTF.
    #[error("date = {0:?}; expected 2024, 2024-03 or 2024-03-15")]
    Date(String),
    /// A title or language that is empty.
    #[error("{0} is empty")]
    Empty(&'static str),
    /// Another table describes the same capture.
    #[error("describes the same capture as [[page]] {0} (give each a different `captured`)")]
    SameCapture(usize),
}

impl CuratorMetadata {
    /// Reads and checks a metadata file.
    pub fn load(path: &Path) -> Result<CuratorMetadata, MetadataError> {
        let err =
            |problem: MetadataProblem| MetadataError { path: path.display().to_string(), problem };
        let bytes = crate::layout::read_user_bounded(path, MAX_METADATA_BYTES)
            .map_err(|e| err(MetadataProblem::Unreadable(e)))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            err(MetadataProblem::NotUtf8 { offset: e.utf8_error().valid_up_to() as u64 })
        })?;
        let m: CuratorMetadata = toml::from_str(&text).map_err(|e| err(e.into()))?;
        for k in m.dc.keys() {
            if !DC_ELEMENTS.contains(&k.as_str()) {
                return Err(err(MetadataProblem::NotDublinCore(k.clone())));
            }
        }
        m.page_entities().map_err(|e| err(e.into()))?;
        if let Some(r) = &m.rights {
            match (r.access.as_str(), r.embargo_until) {
                ("open" | "restricted", _) => {}
                ("embargoed", Some(_)) => {}
                ("embargoed", None) => {
                    return Err(err(MetadataProblem::EmbargoWithoutEnd));
                }
                (a, _) => {
                    return Err(err(MetadataProblem::Access(a.into())));
                }
            }
        }
        Ok(m)
    }

    /// The `[[page]]` tables as entities, checked: a kind from the vocabulary, a part_of for
    /// (only) associated objects, dates that parse, no URL described twice for one capture.
    pub(crate) fn page_entities(&self) -> Result<Vec<PageEntity>, PageError> {
        let mut out: Vec<PageEntity> = Vec::new();
        for (i, p) in self.pages.iter().enumerate() {
            let at = |problem| PageError { number: i + 1, url: p.url.clone(), problem };
            let parsed = url::Url::parse(p.url.trim()).map_err(|e| at(PageProblem::Url(e)))?;
            if !parsed.has_host() && parsed.scheme() != "dns" {
                return Err(at(PageProblem::NoHost));
            }
            let kind = match p.kind.as_deref().unwrap_or("webpage") {
                "webpage" => PageKind::Webpage,
                "associated-object" => PageKind::AssociatedObject,
                k => return Err(at(PageProblem::Kind(k.into()))),
            };
            match (kind, &p.part_of) {
                (PageKind::AssociatedObject, None) => return Err(at(PageProblem::NoPartOf)),
                (PageKind::Webpage, Some(_)) => return Err(at(PageProblem::PartOfWebpage)),
                (_, Some(u)) if url::Url::parse(u.trim()).is_err() => {
                    return Err(at(PageProblem::PartOfNotUrl(u.clone())));
                }
                _ => {}
            }
            let captured = match &p.captured {
                Some(c) => Some(parse_capture_date(c).map_err(|e| at(PageProblem::Captured(e)))?),
                None => None,
            };
            if let Some(d) = &p.date
                && !crate::formats::dates::is_w3cdtf_date(d)
            {
                return Err(at(PageProblem::Date(d.clone())));
            }
            for (what, v) in [("title", &p.title), ("language", &p.language)] {
                if v.as_deref().is_some_and(|v| v.trim().is_empty()) {
                    return Err(at(PageProblem::Empty(what)));
                }
            }
            let e = PageEntity {
                kind,
                url: p.url.trim().to_string(),
                captured,
                title: p.title.clone(),
                description: p.description.clone(),
                subjects: p.subjects.clone(),
                creator: p.creator.clone(),
                date: p.date.clone(),
                language: p.language.clone(),
                part_of: p.part_of.as_ref().map(|u| u.trim().to_string()),
                origin: EntityOrigin::Curator,
            };
            let key = crate::formats::url::url_key(&e.url);
            if let Some(j) = out.iter().position(|o| {
                crate::formats::url::url_key(&o.url) == key && o.captured == e.captured
            }) {
                return Err(at(PageProblem::SameCapture(j + 1)));
            }
            out.push(e);
        }
        Ok(out)
    }

    /// The description, rights and organisation of a package, from this file and what the
    /// source holds. The second value lists what had to be guessed or is missing.
    pub(crate) fn resolve(
        &self,
        (seeds, seeds_from): (&[String], &str),
        capture: (Option<DateTime<Utc>>, Option<DateTime<Utc>>),
    ) -> (Description, Rights, Organisation, Vec<String>) {
        let mut notes = Vec::new();
        let urls = if self.urls.is_empty() {
            if seeds.is_empty() {
                notes.push(format!("no target URL (no metadata urls, none in {seeds_from})"));
            } else {
                notes.push(format!("target URLs taken from {seeds_from}"));
            }
            seeds.to_vec()
        } else {
            self.urls.clone()
        };
        let title = match &self.title {
            Some(t) => t.clone(),
            None => match urls.first() {
                Some(u) => {
                    notes.push(
                        "no title in the metadata; a title was made from the target URL".into(),
                    );
                    format!("Website harvest of {u}")
                }
                None => {
                    let t = "Untitled website harvest";
                    notes.push(format!("no title in the metadata and no target URL: titled {t:?}"));
                    t.into()
                }
            },
        };
        if capture.0.is_none() {
            notes.push("no capture dates found in the source".into());
        }
        let description = Description {
            title,
            description: self.description.clone(),
            subjects: self.subjects.clone(),
            creator: self.creator.clone(),
            publisher: self.publisher.clone(),
            urls,
            languages: self.languages.clone(),
            capture_start: capture.0,
            capture_end: capture.1,
            dc_only: self.dc.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        };
        let rights = match &self.rights {
            Some(r) => Rights {
                access: match (r.access.as_str(), r.embargo_until) {
                    ("open", _) => Access::Open,
                    ("embargoed", Some(d)) => Access::Embargoed(d),
                    _ => Access::Restricted,
                },
                statement: r.statement.clone(),
            },
            None => {
                notes.push("no rights in the metadata: access recorded as restricted until a curator decides".into());
                Rights {
                    access: Access::Restricted,
                    statement: "No rights statement was supplied; access is restricted until one is recorded.".into(),
                }
            }
        };
        let organisation = match &self.organisation {
            Some(o) => o.clone(),
            None => {
                notes.push("no organisation in the metadata".into());
                Organisation { name: "Unknown organisation".into(), code: "unknown".into() }
            }
        };
        (description, rights, organisation, notes)
    }
}

/// A capture date given by the operator that is none of the forms accepted (the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a date: give RFC 3339 (2006-05-03T10:15:00Z), 2006-05-03[T10:15:00] (UTC) or 14 digits (20060503101500, UTC)"
)]
pub struct BadCaptureDate(pub String);

/// Parses an operator-given capture date (`--capture-date`): RFC 3339
/// (`2006-05-03T10:15:00Z`) or 14 digits (`20060503101500`, UTC, as in ARC headers).
pub fn parse_capture_date(s: &str) -> Result<DateTime<Utc>, BadCaptureDate> {
    let t = s.trim();
    if t.len() == 14
        && t.bytes().all(|b| b.is_ascii_digit())
        && let Some(d) = crate::formats::dates::parse_arc_date(t)
    {
        return Ok(d);
    }
    if let Ok(d) = crate::formats::dates::parse_rfc3339(t) {
        return Ok(d);
    }
    // Without a zone: UTC, as the 14 digits are.
    for f in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"] {
        if let Ok(d) = chrono::NaiveDateTime::parse_from_str(t, f) {
            return Ok(d.and_utc());
        }
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
        && let Some(d) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(d.and_utc());
    }
    Err(BadCaptureDate(s.into()))
}

#[cfg(test)]
mod capture_date_tests {
    use super::parse_capture_date;

    #[test]
    fn rfc3339_and_14_digits() {
        let a = parse_capture_date("20060503101500").unwrap();
        let b = parse_capture_date("2006-05-03T12:15:00+02:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_rfc3339(), "2006-05-03T10:15:00+00:00");
        assert_eq!(
            parse_capture_date("2006-05-03").unwrap().to_rfc3339(),
            "2006-05-03T00:00:00+00:00"
        );
        assert_eq!(parse_capture_date("yesterday"), Err(super::BadCaptureDate("yesterday".into())));
        assert!(parse_capture_date("20061303101500").is_err());
    }
}

#[cfg(test)]
mod page_tests {
    use super::*;

    fn pages(toml_text: &str) -> Result<Vec<PageEntity>, String> {
        let m: CuratorMetadata = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        m.page_entities().map_err(|e| e.to_string())
    }

    /// A caller learns which table is refused, and why, from the error's fields.
    #[test]
    fn a_page_refusal_names_its_table_and_reason() {
        let text = r#"[[page]]
url = "http://a.org/"
[[page]]
url = "http://b.org/"
kind = "image"
"#;
        let m: CuratorMetadata = toml::from_str(text).unwrap();
        let e = m.page_entities().unwrap_err();
        assert_eq!((e.number, e.url.as_str()), (2, "http://b.org/"));
        assert!(matches!(e.problem, PageProblem::Kind(ref k) if k == "image"), "{e:?}");
    }

    #[test]
    fn page_tables_are_checked() {
        let ok = pages(
            "[[page]]\nurl = \"http://a.org/x\"\ncaptured = \"2024-03-15\"\ndate = \"2024-03\"\n\
             [[page]]\nurl = \"http://a.org/i.png\"\nkind = \"associated-object\"\npart_of = \"http://a.org/x\"\n",
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].kind, PageKind::Webpage);
        assert_eq!(ok[0].captured.unwrap().to_rfc3339(), "2024-03-15T00:00:00+00:00");
        assert_eq!(ok[1].part_of.as_deref(), Some("http://a.org/x"));
        let err = |t: &str, want: &str| {
            let e = pages(t).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        };
        err("[[page]]\nurl = \"x\"\n", "url");
        err("[[page]]\nurl = \"http://a.org/\"\nkind = \"image\"\n", "kind = \"image\"");
        err("[[page]]\nurl = \"http://a.org/\"\nkind = \"associated-object\"\n", "part_of");
        err("[[page]]\nurl = \"http://a.org/\"\npart_of = \"http://a.org/\"\n", "part_of is for");
        err("[[page]]\nurl = \"http://a.org/\"\ndate = \"March 2024\"\n", "date");
        err("[[page]]\nurl = \"http://a.org/\"\ncaptured = \"yesterday\"\n", "captured");
        err("[[page]]\nurl = \"http://a.org/\"\ntitle = \" \"\n", "title is empty");
        err("[[page]]\nurl = \"http://a.org/\"\ncolour = \"red\"\n", "colour");
        // The same capture twice (the URL as harvested and with its host in capitals).
        err("[[page]]\nurl = \"http://a.org/\"\n[[page]]\nurl = \"HTTP://A.ORG\"\n", "[[page]] 1");
    }
}
