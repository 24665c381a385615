//! Packages in the forms other systems read: a WACZ access copy ([`wacz`]) that opens in a
//! browser, and an E-ARK 2.2 information package ([`eark`]). Each export reads a package
//! through its METS and manifest and streams its containers; nothing of the package changes.

pub mod eark;
pub mod wacz;
