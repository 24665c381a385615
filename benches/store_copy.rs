//! The floor for `webaip store migrate` of a bucket replica: every key below one prefix copied
//! by the server to another (S3 CopyObject through object_store, eight at once), with nothing
//! else; then, timed apart, every copy read back and hashed with SHA-512 (what a migration
//! that verifies must add). bench/run-store-migrate-garage.sh runs it beside `store migrate`.
//!
//! Usage: store_copy FROM_PREFIX TO_PREFIX (S3_ENDPOINTS, S3_BUCKET and the AWS_ credentials
//! from the environment, as scripts/garage-cluster.sh prints them). Prints COPY_MS= and
//! READ_MS=.

mod garage;

use std::time::Instant;

use futures::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use sha2::{Digest, Sha512};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (from, to) = garage::two_arguments("store_copy FROM_PREFIX TO_PREFIX");
    let s3 = garage::bucket_client()?.build()?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (from, to) = (from.trim_end_matches('/'), to.trim_end_matches('/'));
    let keys: Vec<(ObjectPath, u64)> = rt
        .block_on(async {
            let listed = s3.list(Some(&ObjectPath::from(from)));
            listed.map(|m| m.map(|m| (m.location, m.size))).collect::<Vec<_>>().await
        })
        .into_iter()
        .collect::<Result<_, _>>()?;
    let bytes: u64 = keys.iter().map(|k| k.1).sum();
    let target = |k: &ObjectPath| {
        let rel = &k.as_ref()[from.len() + 1..];
        ObjectPath::from(format!("{to}/{rel}"))
    };
    let start = Instant::now();
    rt.block_on(async {
        let s3 = &s3;
        let copies = futures::stream::iter(keys.iter())
            .map(|(k, _)| async move { s3.copy(k, &target(k)).await })
            .buffer_unordered(8)
            .collect::<Vec<_>>()
            .await;
        copies.into_iter().collect::<Result<Vec<()>, _>>()
    })?;
    let copy_ms = start.elapsed().as_millis();
    let start = Instant::now();
    rt.block_on(async {
        let s3 = &s3;
        let reads = futures::stream::iter(keys.iter())
            .map(|(k, _)| async move {
                let mut stream = s3.get(&target(k)).await?.into_stream();
                let mut h = Sha512::new();
                while let Some(chunk) = stream.next().await {
                    h.update(&chunk?);
                }
                Ok::<_, object_store::Error>(h.finalize())
            })
            .buffer_unordered(8)
            .collect::<Vec<_>>()
            .await;
        reads.into_iter().collect::<Result<Vec<_>, _>>()
    })?;
    let read_ms = start.elapsed().as_millis();
    println!(
        "server-side copy: {} keys, {:.1} MB in {copy_ms} ms; read back and SHA-512: {read_ms} ms",
        keys.len(),
        bytes as f64 / 1e6
    );
    println!("COPY_MS={copy_ms}");
    println!("READ_MS={read_ms}");
    Ok(())
}
