//! SURT keys (placeholder until the canonicalisation lands: lower-cased URL).

/// The SURT key of `url`.
pub fn surt(url: &str) -> String {
    url.to_ascii_lowercase()
}
