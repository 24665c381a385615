//! What `validate` keeps of one input checked, whichever checker (METS, E-ARK, WACZ) ran.

/// One input checked: its report as JSON and as text, and whether it is valid.
pub(super) struct Checked {
    pub valid: bool,
    /// Valid with every check run: a verdict `--quiet` may leave unsaid (a METS whose schema
    /// check was skipped is valid, not plainly so).
    pub plain: bool,
    pub json: serde_json::Value,
    /// The whole text report, lines ending in newlines.
    pub text: String,
    /// Its last line: the verdict, said on stderr under `--quiet` when not plainly valid.
    pub verdict: String,
}
