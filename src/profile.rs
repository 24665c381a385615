//! Package profiles: the values docs/profile.md fixes, loaded from `profiles/*.toml`.
//!
//! The two profiles of the repository are built into the binary, so `--profile NAME` works
//! anywhere; `--profile path/to/file.toml` loads another.

use std::path::Path;

use serde::Deserialize;

use crate::model::SerializationMode;

/// The built-in profiles: name and TOML text.
pub(crate) const BUILTIN: &[(&str, &str)] = &[
    ("bl-webarchive", include_str!("../profiles/bl-webarchive.toml")),
    ("bl-legacy", include_str!("../profiles/bl-legacy.toml")),
];

/// The default profile's name.
pub const DEFAULT_PROFILE: &str = "bl-webarchive";

/// A package profile.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Profile {
    /// Short name.
    pub name: String,
    /// The METS `PROFILE` attribute value.
    pub uri: String,
    /// What it is.
    pub description: String,
    /// Wrapper schema (file name in the schema directory) for XSD validation.
    pub schema_bundle: String,
    /// PREMIS version of its packages (`3.0`, `2.2`).
    pub premis_version: String,
    /// Checksum algorithm name as written in `CHECKSUMTYPE`.
    pub checksum_algorithm: String,
    /// Default serialization mode.
    pub serialization: SerializationMode,
    /// Allowed METS root `TYPE` values (empty: not checked).
    pub package_types: Vec<String>,
    /// File-group names.
    pub file_groups: FileGroups,
    /// Div types of the logical structure (empty: not used by this profile).
    pub structure: Structure,
    /// Fixed MODS values.
    pub mods: ModsValues,
    /// Event types.
    pub events: Events,
    /// Relationship type and subtypes.
    pub relationships: Relationships,
    /// Virus-check outcomes.
    pub virus_outcomes: VirusOutcomes,
    /// Which structural rules apply.
    pub rules: Rules,
}

/// Structural rules that differ between profiles.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Rules {
    /// Containers carry `<transformFile TRANSFORMALGORITHM="WARC">` (P4.3).
    pub container_transform_file: bool,
    /// Every container has a virus-check event (P5.5).
    pub virus_check_per_container: bool,
    /// Rights are recorded in webaip's extension schema (P3.3).
    pub rights_extension: bool,
    /// The root has an `OBJID` (P1.2).
    pub require_objid: bool,
    /// MODS and DC descriptions are present (P3.1, P3.2).
    pub require_descriptive: bool,
    /// Every file is inside the package: an FLocat that is a URL breaks P4.2. Profiles of
    /// packages whose files were kept elsewhere (the BL's earlier SIPs) set this to false.
    #[serde(default = "yes")]
    pub local_files: bool,
    /// A `structMap TYPE="physical"` lists every file of the package (P2.5).
    #[serde(default)]
    pub physical_map: bool,
    /// The package carries `manifest-sha512.txt` (P7 layout); audit checks it, else says so.
    #[serde(default = "yes")]
    pub manifest: bool,
}

fn yes() -> bool {
    true
}

/// File-group `USE` names (P4.1).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct FileGroups {
    /// Rendering content.
    pub content: String,
    /// Pre-transformation originals.
    pub original: String,
    /// Infected bytestreams.
    pub viral: String,
    /// Logs and configuration.
    pub logs: String,
}

impl FileGroups {
    /// The group name for a use.
    pub(crate) fn name(&self, u: crate::model::GroupUse) -> &str {
        use crate::model::GroupUse::*;
        match u {
            DigitalManifestation => &self.content,
            Original => &self.original,
            ViralFiles => &self.viral,
            Logfile => &self.logs,
        }
    }

    /// Every group name.
    pub(crate) fn all(&self) -> [&str; 4] {
        [&self.content, &self.original, &self.viral, &self.logs]
    }
}

/// Div `TYPE` values (P2.1).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Structure {
    /// The website div.
    pub website: String,
    /// Web page divs.
    pub webpage: String,
    /// Associated object divs.
    pub associated_object: String,
}

/// MODS values the profile fixes (P3.1).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ModsValues {
    /// `typeOfResource`.
    pub type_of_resource: String,
    /// `physicalDescription/digitalOrigin`.
    pub digital_origin: String,
    /// `genre`.
    pub genre: String,
}

/// One event type.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct EventType {
    /// The term written to `eventType`.
    pub term: String,
    /// Its URI (empty when the vocabulary has none).
    pub uri: String,
    /// Allowed outcomes.
    pub outcomes: Vec<String>,
    /// A word to keep in the event detail (transformation).
    #[serde(default)]
    pub detail_word: Option<String>,
}

/// Event types of the profile (P5.9).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Events {
    /// Virus check (P5.5).
    pub virus_check: EventType,
    /// ARC to WARC migration (P5.6).
    pub migration: EventType,
    /// Link rewriting (P5.7).
    pub transformation: EventType,
}

impl Events {
    /// The event type with this term, if the profile has one.
    pub(crate) fn by_term(&self, term: &str) -> Option<&EventType> {
        [&self.virus_check, &self.migration, &self.transformation]
            .into_iter()
            .find(|e| e.term == term)
    }
}

/// Relationship type and subtypes.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Relationships {
    /// `derivation`.
    #[serde(rename = "type")]
    pub relationship_type: String,
    /// Subtype for migration.
    pub migration: String,
    /// Subtype for transformation.
    pub transformation: String,
    /// Subtype for a cleaned copy.
    pub cleaned: String,
}

/// Virus-check outcome values (P5.5).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct VirusOutcomes {
    /// Nothing found.
    pub clean: String,
    /// Found and cleaned.
    pub cleaned: String,
    /// Found, kept in quarantine.
    pub forced: String,
    /// Could not be scanned.
    pub not_scanned: String,
}

/// A profile that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Neither a built-in name nor a readable file.
    #[error("unknown profile {0:?} (built in: bl-webarchive, bl-legacy; or give a .toml path)")]
    Unknown(String),
    /// The file could not be read.
    #[error("{path}: {}", crate::layout::describe_io(source))]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The TOML is not a profile.
    #[error("{path}: not a valid profile: {source}")]
    Invalid {
        /// The file or built-in name.
        path: String,
        /// What the TOML parser said (syntax, an unknown or missing field).
        #[source]
        source: Box<toml::de::Error>,
    },
}

impl Profile {
    /// Loads a built-in profile by name, or a profile file by path.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text, name_or_path);
        }
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") || path.exists() {
            let text = std::fs::read_to_string(path)
                .map_err(|source| ProfileError::Io { path: name_or_path.into(), source })?;
            return Profile::parse(&text, name_or_path);
        }
        Err(ProfileError::Unknown(name_or_path.into()))
    }

    /// The default profile (`bl-webarchive`).
    pub fn default_profile() -> Profile {
        // The built-in text is checked by a unit test; this cannot fail at run time.
        Profile::parse(BUILTIN[0].1, DEFAULT_PROFILE)
            .unwrap_or_else(|e| panic!("built-in profile: {e}"))
    }

    /// The built-in profile whose URI is `uri`.
    pub(crate) fn by_uri(uri: &str) -> Option<Profile> {
        BUILTIN.iter().filter_map(|(n, t)| Profile::parse(t, n).ok()).find(|p| p.uri == uri)
    }

    /// The built-in profile written in PREMIS `major` (`'2'`, `'3'`): the default profile
    /// when it is, else the first other. A document that names no profile is checked under the
    /// one its PREMIS sections fit.
    pub(crate) fn by_premis_major(major: char) -> Option<Profile> {
        BUILTIN
            .iter()
            .filter_map(|(n, t)| Profile::parse(t, n).ok())
            .find(|p| p.premis_major() == Some(major))
    }

    /// The major version of the PREMIS this profile's packages are written in.
    pub(crate) fn premis_major(&self) -> Option<char> {
        self.premis_version.chars().next()
    }

    fn parse(text: &str, path: &str) -> Result<Profile, ProfileError> {
        toml::from_str(text)
            .map_err(|e| ProfileError::Invalid { path: path.into(), source: Box::new(e) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toml_that_is_no_profile_is_refused_with_the_parser_s_words() {
        let err = Profile::parse("name = [", "bad.toml").unwrap_err();
        let ProfileError::Invalid { path, source } = &err else { panic!("{err:?}") };
        assert_eq!(path, "bad.toml");
        assert!(err.to_string().starts_with("bad.toml: not a valid profile: "), "{err}");
        assert!(err.to_string().ends_with(&source.to_string()), "{err}");
    }

    #[test]
    fn built_in_profiles_load() {
        let p = Profile::default_profile();
        assert_eq!(p.file_groups.logs, "Logfile");
        assert_eq!(
            p.events.virus_check.uri,
            "http://id.loc.gov/vocabulary/preservation/eventType/vir"
        );
        assert_eq!(p.serialization, SerializationMode::Minimal);
        let legacy = Profile::load("bl-legacy").unwrap();
        assert_eq!(legacy.file_groups.logs, "Logfiles");
        assert_eq!(Profile::by_uri(&p.uri).unwrap().name, "bl-webarchive");
        assert!(matches!(Profile::load("nope"), Err(ProfileError::Unknown(_))));
        assert_eq!(Profile::by_premis_major('2').unwrap().name, "bl-legacy");
        assert_eq!(Profile::by_premis_major('3').unwrap().name, DEFAULT_PROFILE);
        assert!(Profile::by_premis_major('1').is_none());
    }
}
