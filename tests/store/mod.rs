//! `webaip store` against a real 3-node Garage cluster (started by scripts/garage-cluster.sh)
//! and a file system replica: put, write-once, check, repair, get, node outages, state rebuild.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::repo;

/// The cluster's client settings; the cluster is started (or found running) first.
fn garage() -> HashMap<String, String> {
    let o = Command::new("bash")
        .arg(repo().join("scripts/garage-cluster.sh"))
        .arg("start")
        .output()
        .expect("garage-cluster.sh runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

fn cluster(action: &str, node: &str) {
    let o = Command::new("bash")
        .arg(repo().join("scripts/garage-cluster.sh"))
        .args([action, node])
        .output()
        .unwrap();
    assert!(o.status.success(), "{action} {node}: {}", String::from_utf8_lossy(&o.stderr));
}

/// A configuration with a file system replica `disk` and, given the cluster, `garage`.
fn config(dir: &Path, garage: Option<&HashMap<String, String>>) -> PathBuf {
    let mut text = format!(
        "state = \"state.sqlite\"\n\n[[replica]]\nname = \"disk\"\ntype = \"fs\"\nroot = \"{}\"\n",
        dir.join("disk").display()
    );
    if let Some(g) = garage {
        let endpoints: Vec<String> =
            g["S3_ENDPOINTS"].split(',').map(|e| format!("\"{e}\"")).collect();
        text.push_str(&format!(
            "\n[[replica]]\nname = \"garage\"\ntype = \"s3\"\nendpoints = [{}]\nbucket = \"{}\"\nregion = \"garage\"\n",
            endpoints.join(", "),
            g["S3_BUCKET"]
        ));
    }
    let path = dir.join("store.toml");
    fs::write(&path, text).unwrap();
    path
}

fn webaip(env: &HashMap<String, String>, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webaip"))
        .args(args)
        .envs(env.iter().filter(|(k, _)| k.starts_with("AWS_")))
        .env_remove("WEBAIP_STORE_CONFIG")
        .output()
        .expect("webaip runs")
}

/// Runs `webaip store --config C --json ARGS`; returns the exit status and the JSON.
fn store(env: &HashMap<String, String>, config: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["store", "--config", config.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    let o = webaip(env, &all);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        serde_json::json!({ "stdout": String::from_utf8_lossy(&o.stdout),
                            "stderr": String::from_utf8_lossy(&o.stderr) })
    });
    (o.status.code().unwrap(), v)
}

/// A package of the Heritrix sample (or another source) in `out`.
fn package(out: &Path, extra: &[&str], source: &str) {
    let mut args = vec!["package", "--quiet", "--no-virus-check", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let src = repo().join(source);
    args.push(src.to_str().unwrap());
    let o = webaip(&HashMap::new(), &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn objid(pkg: &Path) -> String {
    let mets = fs::read_to_string(pkg.join("METS.xml")).unwrap();
    let v = &mets[mets.find("OBJID=\"").unwrap() + 7..];
    v[..v.find('"').unwrap()].to_string()
}

fn statuses(report: &serde_json::Value) -> Vec<String> {
    report["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap().into())
        .collect()
}

/// Overwrites an object in the bucket with other bytes, as a faulty disk or a careless
/// operator would (a plain PUT, not through webaip).
fn overwrite_object(g: &HashMap<String, String>, key: &str, bytes: &[u8]) {
    use object_store::ObjectStoreExt;
    let endpoint = g["S3_ENDPOINTS"].split(',').next().unwrap().to_string();
    let s3 = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_region("garage")
        .with_bucket_name(&g["S3_BUCKET"])
        .with_access_key_id(&g["AWS_ACCESS_KEY_ID"])
        .with_secret_access_key(&g["AWS_SECRET_ACCESS_KEY"])
        .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(s3.put(&object_store::path::Path::from(key), bytes.to_vec().into())).unwrap();
}

fn accepted_at(state: &Path, identifier: &str) -> Option<String> {
    let db = rusqlite::Connection::open(state).unwrap();
    db.query_row("SELECT accepted_at FROM package WHERE identifier = ?1", [identifier], |r| {
        r.get::<_, Option<String>>(0)
    })
    .unwrap()
}

/// One test for everything that touches the cluster, in order: stopping nodes must not race
/// other tests' uploads.
#[test]
fn garage_and_disk_replicas_put_check_repair_and_live_through_a_node_outage() {
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), Some(&g));
    let pkg = tmp.path().join("pkg");
    package(&pkg, &[], "samples/heritrix-job");
    let id = objid(&pkg);

    // Put: every copy written and verified on both replicas.
    let (code, r) = store(&g, &cfg, &["put", pkg.to_str().unwrap()]);
    let r = &r[0];
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["accepted"], true);
    let files = r["files"].as_u64().unwrap();
    assert_eq!(statuses(r), vec!["uploaded"; 2 * files as usize]);
    assert!(accepted_at(&tmp.path().join("state.sqlite"), &id).is_some());
    // The Kulturarw3-style layout: partition, package, the package's own files.
    let dir = webaip::store::config::package_dir(&id);
    assert!(tmp.path().join("disk").join(&dir).join("METS.xml").is_file());
    // The same package again: nothing written.
    let (code, again) = store(&g, &cfg, &["put", pkg.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(statuses(&again[0]), vec!["present"; 2 * files as usize]);
    let (code, c) = store(&g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c}");

    // Damage: a file gone from the disk replica, another object overwritten in the bucket.
    let warc = fs::read_dir(pkg.join("content")).unwrap().next().unwrap().unwrap().file_name();
    let warc_rel = format!("content/{}", warc.to_string_lossy());
    fs::remove_file(tmp.path().join("disk").join(&dir).join(&warc_rel)).unwrap();
    overwrite_object(&g, &format!("{dir}/METS.xml"), b"<not the METS/>");
    let (code, c) = store(&g, &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "{c}");
    let rep = |name: &str| {
        c["replicas"].as_array().unwrap().iter().find(|r| r["replica"] == name).unwrap().clone()
    };
    assert_eq!(rep("disk")["missing"], serde_json::json!([format!("{dir}/{warc_rel}")]));
    let corrupt = rep("garage")["corrupt"].as_array().unwrap().clone();
    assert_eq!(corrupt.len(), 1, "{c}");
    assert!(corrupt[0].as_str().unwrap().starts_with(&format!("{dir}/METS.xml")), "{c}");
    assert!(rep("disk")["corrupt"].as_array().unwrap().is_empty());

    // Repair restores both from the healthy side, and touches nothing else.
    let (code, rp) = store(&g, &cfg, &["repair", "--deep"]);
    assert_eq!(code, 0, "{rp}");
    let mut actions: Vec<(String, String, String)> = rp["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["replica"].as_str().unwrap().into(),
                a["file"].as_str().unwrap().into(),
                a["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    actions.sort();
    assert_eq!(
        actions,
        vec![
            ("disk".into(), warc_rel.clone(), "restored".into()),
            ("garage".into(), "METS.xml".into(), "replaced".into()),
        ]
    );
    let (code, c) = store(&g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c}");

    // Get: the package back, verified, byte-identical.
    let back = tmp.path().join("back");
    let (code, got) = store(&g, &cfg, &["get", &id, "--to", back.to_str().unwrap()]);
    assert_eq!(code, 0, "{got}");
    for e in walkdir::WalkDir::new(&pkg)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
    {
        let rel = e.path().strip_prefix(&pkg).unwrap();
        assert_eq!(
            fs::read(e.path()).unwrap(),
            fs::read(back.join(rel)).unwrap(),
            "{}",
            rel.display()
        );
    }

    // One node of three down: a put still succeeds (failing over to a live endpoint).
    let pkg2 = tmp.path().join("pkg2");
    package(&pkg2, &[], "samples/pandas/40123/20040517-1412");
    cluster("stop", "0");
    let (code, r2) = store(&g, &cfg, &["put", pkg2.to_str().unwrap()]);
    assert_eq!(code, 0, "{r2}");
    assert_eq!(r2[0]["accepted"], true);

    // Two down: the put fails, says which replica, and is not recorded as accepted.
    let pkg3 = tmp.path().join("pkg3");
    package(&pkg3, &[], "samples/heritrix-job");
    cluster("stop", "1");
    let (code, r3) = store(&g, &cfg, &["put", pkg3.to_str().unwrap()]);
    let restart = garage();
    assert_eq!(restart["S3_BUCKET"], g["S3_BUCKET"]);
    assert_eq!(code, 1, "{r3}");
    assert_eq!(r3[0]["accepted"], false);
    assert_eq!(r3[0]["failed_replicas"], serde_json::json!(["garage"]));
    assert!(accepted_at(&tmp.path().join("state.sqlite"), &objid(&pkg3)).is_none());
    // With the cluster back, the same put completes the store.
    let (code, r3) = store(&g, &cfg, &["put", pkg3.to_str().unwrap()]);
    assert_eq!(code, 0, "{r3}");
    assert!(accepted_at(&tmp.path().join("state.sqlite"), &objid(&pkg3)).is_some());

    // Same file name in two packages, both lost on the disk: each restored into its package.
    let dir2 = webaip::store::config::package_dir(&objid(&pkg2));
    fs::remove_file(tmp.path().join("disk").join(&dir).join("METS.xml")).unwrap();
    fs::remove_file(tmp.path().join("disk").join(&dir2).join("METS.xml")).unwrap();
    let (code, rp) = store(&g, &cfg, &["repair"]);
    assert_eq!(code, 0, "{rp}");
    let mut fixed: Vec<(String, String)> = rp["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["package"].as_str().unwrap().into(), a["status"].as_str().unwrap().into()))
        .collect();
    fixed.sort();
    let mut want = vec![(id.clone(), "restored".to_string()), (objid(&pkg2), "restored".into())];
    want.sort();
    assert_eq!(fixed, want);
    assert_eq!(
        fs::read(tmp.path().join("disk").join(&dir2).join("METS.xml")).unwrap(),
        fs::read(pkg2.join("METS.xml")).unwrap()
    );
    let (code, c) = store(&g, &cfg, &["check", "--deep"]);
    assert_eq!((code, &c["clean"]), (0, &serde_json::json!(true)), "{c}");
}

/// Write-once on a file system replica: another package under an identifier already stored is
/// refused, by the state database and, without it, by the copies themselves; the state is
/// rebuilt from the replica.
#[test]
fn write_once_refusals_and_state_rebuilt_from_the_replicas() {
    let env = HashMap::new();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), None);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    package(&a, &["--deterministic"], "samples/heritrix-job");
    let meta = repo().join("samples/heritrix-job.metadata.toml");
    package(&b, &["--deterministic", "--metadata", meta.to_str().unwrap()], "samples/heritrix-job");
    let id = objid(&a);
    assert_eq!(id, objid(&b), "same identifier");
    assert_ne!(fs::read(a.join("METS.xml")).unwrap(), fs::read(b.join("METS.xml")).unwrap());
    let stored_mets =
        tmp.path().join("disk").join(webaip::store::config::package_dir(&id)).join("METS.xml");

    let (code, r) = store(&env, &cfg, &["put", a.to_str().unwrap()]);
    assert_eq!(code, 0, "{r}");
    let o = webaip(&env, &["store", "--config", cfg.to_str().unwrap(), "put", b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already stored"), "{o:?}");
    assert_eq!(fs::read(&stored_mets).unwrap(), fs::read(a.join("METS.xml")).unwrap());

    // Without the state database, the replica's claim refuses b before anything is written.
    fs::remove_file(tmp.path().join("state.sqlite")).unwrap();
    let put_b =
        || webaip(&env, &["store", "--config", cfg.to_str().unwrap(), "put", b.to_str().unwrap()]);
    let o = put_b();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is taken") && err.contains("claimed by another package"), "{err}");
    assert_eq!(fs::read(&stored_mets).unwrap(), fs::read(a.join("METS.xml")).unwrap());
    // A package stored before claims existed (no claim): its manifest refuses b, and b leaves
    // no claim behind.
    let claim = stored_mets.with_file_name(".webaip-claim");
    let held = fs::read(&claim).unwrap();
    fs::remove_file(&claim).unwrap();
    fs::remove_file(tmp.path().join("state.sqlite")).unwrap();
    let o = put_b();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("another package's manifest"), "{o:?}");
    assert!(!claim.exists());
    assert_eq!(fs::read(&stored_mets).unwrap(), fs::read(a.join("METS.xml")).unwrap());
    fs::write(&claim, held).unwrap();

    // The state comes back from the replica: the stored package, checked clean.
    fs::remove_file(tmp.path().join("state.sqlite")).unwrap();
    let (code, found) = store(&env, &cfg, &["rebuild-state"]);
    assert_eq!(code, 0);
    assert_eq!(found["packages"], serde_json::json!([id]), "{found}");
    let (code, c) = store(&env, &cfg, &["check", "--deep"]);
    assert_eq!(code, 0, "{c}");
    assert_eq!(c["replicas"][0]["verified"], c["replicas"][0]["expected"]);
    // A damaged package is refused before anything is written.
    let damaged = tmp.path().join("damaged");
    package(&damaged, &[], "samples/heritrix-job");
    fs::write(damaged.join("logs/stray.txt"), b"x").unwrap();
    let o = webaip(
        &env,
        &["store", "--config", cfg.to_str().unwrap(), "put", damaged.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("damaged"), "{o:?}");
    let stored = tmp.path().join("disk").join(webaip::store::config::package_dir(&objid(&damaged)));
    assert!(!stored.exists());
}
