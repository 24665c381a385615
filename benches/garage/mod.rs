//! What the Garage benchmarks' own clients share: their two positional arguments and the
//! bucket client built from the environment scripts/garage-cluster.sh prints.

use object_store::ClientOptions;
use object_store::aws::AmazonS3Builder;

/// The two positional arguments (`cargo bench` adds `--bench`), or the usage and exit 2.
pub fn two_arguments(usage: &str) -> (String, String) {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    match args.as_slice() {
        [first, second, ..] => (first.clone(), second.clone()),
        _ => {
            eprintln!("usage: {usage}");
            std::process::exit(2);
        }
    }
}

/// A client of the cluster's bucket: its first endpoint, bucket and keys from the environment
/// (S3_ENDPOINTS, S3_BUCKET, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), plain HTTP allowed.
pub fn bucket_client() -> Result<AmazonS3Builder, String> {
    let env = |k: &str| std::env::var(k).map_err(|_| format!("{k} is not set"));
    let endpoint = env("S3_ENDPOINTS")?.split(',').next().unwrap_or_default().to_string();
    Ok(AmazonS3Builder::new()
        .with_endpoint(&endpoint)
        .with_region("garage")
        .with_bucket_name(env("S3_BUCKET")?)
        .with_access_key_id(env("AWS_ACCESS_KEY_ID")?)
        .with_secret_access_key(env("AWS_SECRET_ACCESS_KEY")?)
        .with_client_options(ClientOptions::new().with_allow_http(true)))
}
