//! What `validate` keeps of one input checked, whichever checker (METS, E-ARK, WACZ) ran.

/// One input checked: its report as JSON and as text, and whether it is valid.
pub(super) struct Checked {
    pub valid: bool,
    pub json: serde_json::Value,
    /// The whole text report, lines ending in newlines.
    pub text: String,
    /// Its last line: the verdict, said on stderr under `--quiet` when not valid.
    pub verdict: String,
}
