//! `webaip export wacz|eark`: a package in a form other systems read.

use clap::{Args, Subcommand};

/// Arguments of `webaip export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    kind: ExportKind,
}

#[derive(Debug, Subcommand)]
enum ExportKind {
    /// A WACZ access copy: the package's containers, index, pages and METS in one ZIP that
    /// ReplayWeb.page opens in a browser.
    Wacz(super::export_wacz::WaczArgs),
    /// An E-ARK 2.2 information package (SIP or AIP): the containers as a representation, the
    /// package's METS, MODS, DC and PREMIS as its metadata.
    Eark(super::export_eark::EarkArgs),
}

/// Runs the command; returns the exit status.
pub fn run(args: ExportArgs) -> anyhow::Result<i32> {
    match args.kind {
        ExportKind::Wacz(a) => super::export_wacz::run(a),
        ExportKind::Eark(a) => super::export_eark::run(a),
    }
}
