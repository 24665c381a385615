//! Stores a package on two file-system replicas (OCFL storage roots): verifies its files'
//! fixity and its METS, writes every file to both, and verifies every copy; then checks the
//! store.
//!
//!     cargo run --example store -- REPLICAS_FOLDER PACKAGE
//!
//! A real store is configured in TOML (`StoreConfig::load`), with S3 replicas as well.

use std::path::Path;

use webaip::{PutOptions, ReplicaConfig, ReplicaKind, Store, StoreConfig, store_package};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [folder, package] = &args[..] else {
        return Err("usage: store REPLICAS_FOLDER PACKAGE".into());
    };
    let folder = Path::new(folder);
    let replica = |name: &str| ReplicaConfig {
        name: name.into(),
        layout: None, // OCFL for a new store
        kind: ReplicaKind::Fs { root: folder.join(name), work: None },
    };
    let config = StoreConfig {
        state: folder.join("store-state.sqlite"),
        transfers: 2,
        replicas: vec![replica("disk-a"), replica("disk-b")],
        user: Default::default(),
    };
    let put = store_package(&config, Path::new(package), &PutOptions::default())?;
    println!("stored {} accepted {} ({} files)", put.package, put.accepted, put.files);
    // The store itself, for checks, repairs and fetches. A new store's replicas are OCFL
    // storage roots: the check reads every object's inventories and hashes its content.
    let check = Store::open(&config)?.check_objects(None, true)?;
    println!("check clean {} ({} objects)", check.clean, check.objects);
    Ok(())
}
