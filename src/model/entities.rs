//! What describing the curator's entities (webpages and associated objects) says beyond the
//! entities themselves: where a title came from, and why entities could not be placed. The
//! METS writer and the pages that describe the entities both use these.

use std::io;

/// Where a described entity's title came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TitleSource {
    /// The curator's `[[page]]` table.
    Curator,
    /// The page's own HTML `<title>` (read by webaip; the MODS record says so).
    Html,
    /// Neither: the div is labelled with the URL and the MODS record has no title.
    None,
}

/// A `[[page]]` table that cannot be described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageProblem {
    /// No capture of the URL is in the package.
    NotHarvested {
        /// The URL asked for.
        url: String,
    },
    /// Several captures match and no `captured` chooses one.
    Ambiguous {
        /// The URL asked for.
        url: String,
        /// The captures' dates.
        dates: Vec<String>,
    },
}

impl std::fmt::Display for PageProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageProblem::NotHarvested { url } => {
                write!(f, "[[page]] {url}: no capture of this URL is in the harvest")
            }
            PageProblem::Ambiguous { url, dates } => write!(
                f,
                "[[page]] {url}: {} captures ({}); add captured = \"DATE\" to choose one",
                dates.len(),
                dates.join(", ")
            ),
        }
    }
}

/// Why the entities could not be described: every problem, not only the first.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EntitiesError {
    /// Entities that match no capture, or several.
    #[error("{} described page(s) cannot be placed:\n  {}", .0.len(), .0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n  "))]
    Unresolved(Vec<PageProblem>),
    /// A container could not be read back.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The container.
        path: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unplaced_page_is_listed_on_its_own_line() {
        let e = EntitiesError::Unresolved(vec![
            PageProblem::NotHarvested { url: "http://a.example/".into() },
            PageProblem::Ambiguous {
                url: "http://b.example/".into(),
                dates: vec!["2020-01-01T00:00:00Z".into(), "2021-01-01T00:00:00Z".into()],
            },
        ]);
        assert_eq!(
            e.to_string(),
            "2 described page(s) cannot be placed:\n  [[page]] http://a.example/: no capture of this URL is in the harvest\n  [[page]] http://b.example/: 2 captures (2020-01-01T00:00:00Z, 2021-01-01T00:00:00Z); add captured = \"DATE\" to choose one"
        );
    }
}
