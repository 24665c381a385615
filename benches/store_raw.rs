//! The floor for `webaip store put`: the same client (object_store, SHA-256 upload checksums,
//! 8 MiB parts, two parts in flight per file, eight files in flight) writing the same bytes to
//! the same bucket, with nothing else: no audit, no look-before-write, no verification, no
//! state. bench/run-store.sh runs it beside `webaip store put`.
//!
//! Usage: store_raw PACKAGE_DIR KEY_PREFIX (S3_ENDPOINTS, S3_BUCKET and the AWS_ credentials
//! from the environment, as scripts/garage-cluster.sh prints them).

mod garage;

use std::io::Read;
use std::time::Instant;

use futures::StreamExt;
use object_store::aws::Checksum;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStoreExt, PutPayload, WriteMultipart};

const PART: usize = 8 << 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (dir, prefix) = garage::two_arguments("store_raw PACKAGE_DIR KEY_PREFIX");
    let prefix = prefix.as_str();
    let s3 = garage::bucket_client()?.with_checksum_algorithm(Checksum::SHA256).build()?;
    let files: Vec<(String, std::path::PathBuf, u64)> = walkdir::WalkDir::new(dir.as_str())
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir.as_str()).unwrap().to_string_lossy().into_owned();
            let size = e.metadata().map(|m| m.len()).unwrap_or(0);
            (rel, e.path().to_path_buf(), size)
        })
        .collect();
    let bytes: u64 = files.iter().map(|f| f.2).sum();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let start = Instant::now();
    rt.block_on(async {
        let s3 = &s3;
        let results: Vec<Result<(), object_store::Error>> = futures::stream::iter(files.iter())
            .map(|(rel, path, size)| async move {
                let key = ObjectPath::from(format!("{prefix}{rel}"));
                let mut file = std::fs::File::open(path).expect("package file");
                if *size <= PART as u64 {
                    let mut buf = Vec::with_capacity(*size as usize);
                    file.read_to_end(&mut buf).expect("read");
                    s3.put(&key, PutPayload::from(buf)).await?;
                    return Ok(());
                }
                let mut w =
                    WriteMultipart::new_with_chunk_size(s3.put_multipart(&key).await?, PART);
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = file.read(&mut buf).expect("read");
                    if n == 0 {
                        break;
                    }
                    w.wait_for_capacity(2).await?;
                    w.write(&buf[..n]);
                }
                w.finish().await?;
                Ok(())
            })
            .buffer_unordered(8)
            .collect()
            .await;
        for r in results {
            r.expect("raw put");
        }
    });
    let secs = start.elapsed().as_secs_f64();
    println!(
        "raw object_store put: {} files, {:.1} MB in {:.2} s: {:.1} MB/s, {:.0} files/s",
        files.len(),
        bytes as f64 / 1e6,
        secs,
        bytes as f64 / 1e6 / secs,
        files.len() as f64 / secs
    );
    println!("RAW_MS={}", (secs * 1000.0) as u64);
    Ok(())
}
