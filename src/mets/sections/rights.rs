//! webaip's own rights record (`urn:webaip:xmlns:rights:1`, as `descriptive::write_rights`
//! writes it). PREMIS rights statements are in [`super::premis`].

use yaserde::{YaDeserialize, YaSerialize};

/// `wr:rights`: the access condition and the rights statement of a package.
#[derive(Debug, Clone, Default, PartialEq, YaSerialize, YaDeserialize)]
#[yaserde(rename = "rights", prefix = "wr", namespaces = { "wr" = "urn:webaip:xmlns:rights:1" })]
pub struct WebaipRights {
    /// `open`, `restricted` or `embargoed`.
    #[yaserde(rename = "access", prefix = "wr")]
    pub access: Option<String>,
    /// The end of an embargo (`YYYY-MM-DD`).
    #[yaserde(rename = "embargoUntil", prefix = "wr")]
    pub embargo_until: Option<String>,
    /// The statement.
    #[yaserde(rename = "statement", prefix = "wr")]
    pub statement: Option<String>,
}
