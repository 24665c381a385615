//! Integration tests: the library and the CLI on real and hand-made input, checked against
//! independent readers (warcio, zlib).

mod util;

mod arc_property;
mod arc_tolerance;
mod audit;
mod batch;
mod captures;
mod captures_hostile;
mod cli_contract_access;
#[path = "cli_contract/keeping.rs"]
mod cli_contract_keeping;
mod cli_contract_packaging;
mod cli_docs;
mod cli_migrate;
mod dedup;
mod entities;
mod export_eark;
mod export_wacz;
mod facade;
mod fuzz;
mod get;
mod golden;
mod guard_rails;
mod identify;
mod identify_cmd;
mod index;
mod ingest;
mod kulturarw3;
mod leftovers;
mod messages;
mod mets_package;
mod metsrw;
mod migrate_corpus;
mod mirror;
mod mirror_hostile;
mod package;
mod package_hostile;
mod package_statements;
mod pages_list;
mod pandas;
mod pronom;
mod readme;
mod report;
mod rewrite_bytes;
mod scan;
mod store;
mod structure;
mod unmigrate;
mod validate;
mod validate_entities;
mod wacz_check;
mod warc_reader;
