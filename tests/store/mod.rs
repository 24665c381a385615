//! `webaip store` against a real 3-node Garage cluster (started by scripts/garage-cluster.sh)
//! and a file system replica: put, write-once, check, repair, get, node outages, state rebuild.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{Package, copy_tree, package, repo, sample, webaip_command, webaip_under};

mod dependencies;
mod export;
mod fixity;
mod hostile_config;
mod ocfl;
mod ocfl_adopt;
#[cfg(feature = "s3")]
mod ocfl_bucket;
mod ocfl_ingest;
mod ocfl_kill;
mod ocfl_migrate;
#[cfg(feature = "s3")]
mod ocfl_migrate_bucket;
mod ocfl_rebuild;
mod ocfl_remove;
mod ocfl_rocfl;
mod ocfl_root;

/// The cluster's client settings; the cluster is started (or found running) first.
pub(crate) fn garage() -> HashMap<String, String> {
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

#[cfg(feature = "s3")]
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
        "state = \"state.sqlite\"\n\n[[replica]]\nname = \"disk\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
        dir.join("disk").display()
    );
    if let Some(g) = garage {
        let endpoints: Vec<String> =
            g["S3_ENDPOINTS"].split(',').map(|e| format!("\"{e}\"")).collect();
        text.push_str(&format!(
            "\n[[replica]]\nname = \"garage\"\ntype = \"s3\"\nlayout = \"webaip\"\nendpoints = [{}]\nbucket = \"{}\"\nregion = \"garage\"\n",
            endpoints.join(", "),
            g["S3_BUCKET"]
        ));
    }
    let path = dir.join("store.toml");
    fs::write(&path, text).unwrap();
    path
}

/// Runs the CLI with the replicas' credentials of `env` (its `AWS_` variables).
fn webaip(env: &HashMap<String, String>, args: &[&str]) -> Output {
    webaip_command()
        .args(args)
        .envs(env.iter().filter(|(k, _)| k.starts_with("AWS_")))
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

/// A plain S3 client of the test cluster's bucket (not webaip's).
#[cfg(feature = "s3")]
fn garage_client(g: &HashMap<String, String>) -> object_store::aws::AmazonS3 {
    let endpoint = g["S3_ENDPOINTS"].split(',').next().unwrap().to_string();
    object_store::aws::AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_region("garage")
        .with_bucket_name(&g["S3_BUCKET"])
        .with_access_key_id(&g["AWS_ACCESS_KEY_ID"])
        .with_secret_access_key(&g["AWS_SECRET_ACCESS_KEY"])
        .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
        .build()
        .unwrap()
}

/// Overwrites an object in the bucket with other bytes, as a faulty disk or a careless
/// operator would (a plain PUT, not through webaip).
#[cfg(feature = "s3")]
fn overwrite_object(g: &HashMap<String, String>, key: &str, bytes: &[u8]) {
    use object_store::ObjectStoreExt;
    let s3 = garage_client(g);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(s3.put(&object_store::path::Path::from(key), bytes.to_vec().into())).unwrap();
}

#[cfg(feature = "s3")]
fn accepted_at(state: &Path, identifier: &str) -> Option<String> {
    let db = rusqlite::Connection::open(state).unwrap();
    db.query_row("SELECT accepted_at FROM package WHERE identifier = ?1", [identifier], |r| {
        r.get::<_, Option<String>>(0)
    })
    .unwrap()
}

/// One test for everything that touches the cluster, in order: stopping nodes must not race
/// other tests' uploads.
#[cfg(feature = "s3")]
#[test]
fn garage_and_disk_replicas_put_check_repair_and_live_through_a_node_outage() {
    let _cluster = crate::util::garage_in_use();
    let g = garage();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), Some(&g));
    let pkg = tmp.path().join("pkg");
    package(Package::new().quiet(), &pkg, &[&repo().join("samples/heritrix-job")]).succeeded();
    let id = objid(&pkg);

    // Put: every copy written and verified on both replicas.
    let (code, r) = store(&g, &cfg, &["put", pkg.to_str().unwrap()]);
    let r = &r["packages"][0];
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["accepted"], true);
    let files = r["files"].as_u64().unwrap();
    assert_eq!(statuses(r), vec!["uploaded"; 2 * files as usize]);
    assert!(accepted_at(&tmp.path().join("state.sqlite"), &id).is_some());
    // The Kulturarw3-style layout: partition, package, the package's own files.
    let dir = crate::util::stored_dir(&id);
    assert!(tmp.path().join("disk").join(&dir).join("METS.xml").is_file());
    // The same package again: nothing written.
    let (code, again) = store(&g, &cfg, &["put", pkg.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(statuses(&again["packages"][0]), vec!["present"; 2 * files as usize]);
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
    let (code, got) = store(&g, &cfg, &["get", &id, "--out", back.to_str().unwrap()]);
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
    package(Package::new().quiet(), &pkg2, &[&repo().join("samples/pandas/40123/20040517-1412")])
        .succeeded();
    cluster("stop", "0");
    let (code, r2) = store(&g, &cfg, &["put", pkg2.to_str().unwrap()]);
    assert_eq!(code, 0, "{r2}");
    assert_eq!(r2["packages"][0]["accepted"], true);

    // Two down: the put fails, says which replica, and is not recorded as accepted.
    let pkg3 = tmp.path().join("pkg3");
    package(Package::new().quiet(), &pkg3, &[&repo().join("samples/heritrix-job")]).succeeded();
    cluster("stop", "1");
    let (code, r3) = store(&g, &cfg, &["put", pkg3.to_str().unwrap()]);
    let restart = garage();
    assert_eq!(restart["S3_BUCKET"], g["S3_BUCKET"]);
    assert_eq!(code, 1, "{r3}");
    assert_eq!(r3["packages"][0]["accepted"], false);
    assert_eq!(r3["packages"][0]["failed_replicas"], serde_json::json!(["garage"]));
    assert!(accepted_at(&tmp.path().join("state.sqlite"), &objid(&pkg3)).is_none());
    // With the cluster back, the same put completes the store.
    let (code, r3) = store(&g, &cfg, &["put", pkg3.to_str().unwrap()]);
    assert_eq!(code, 0, "{r3}");
    assert!(accepted_at(&tmp.path().join("state.sqlite"), &objid(&pkg3)).is_some());

    // Same file name in two packages, both lost on the disk: each restored into its package.
    let dir2 = crate::util::stored_dir(&objid(&pkg2));
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

    // Two puts at once of one OBJID with the cluster as a shared replica (a key prefix of
    // their own each round): here, after the outages, so no node stops under them.
    let pair = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(pair.path());
    concurrent_puts(pair.path(), &a, &b, Some(&g), 3);
}

/// Write-once on a file system replica: another package under an identifier already stored is
/// refused, by the state database and, without it, by the copies themselves; the state is
/// rebuilt from the replica.
/// A webaip built without the s3 feature refuses a configuration naming a bucket, saying
/// why, before it touches any replica.
#[cfg(not(feature = "s3"))]
#[test]
fn without_the_s3_feature_a_bucket_replica_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = HashMap::from([
        ("S3_ENDPOINTS".to_string(), "http://127.0.0.1:9".to_string()),
        ("S3_BUCKET".to_string(), "b".to_string()),
    ]);
    let cfg = config(tmp.path(), Some(&fake));
    let o = webaip(&fake, &["store", "--config", cfg.to_str().unwrap(), "check"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "replica garage is an S3 bucket, and this webaip was built without S3 support"
        ),
        "{err}"
    );
    assert!(!tmp.path().join("disk").exists(), "no replica was touched");
}

#[test]
fn write_once_refusals_and_state_rebuilt_from_the_replicas() {
    let env = HashMap::new();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), None);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    package(
        Package::new().quiet().args(&["--deterministic"]),
        &a,
        &[&repo().join("samples/heritrix-job")],
    )
    .succeeded();
    let meta = sample("heritrix-job.metadata.toml");
    package(
        Package::new().quiet().args(&["--deterministic", "--metadata", meta.to_str().unwrap()]),
        &b,
        &[&repo().join("samples/heritrix-job")],
    )
    .succeeded();
    let id = objid(&a);
    assert_eq!(id, objid(&b), "same identifier");
    assert_ne!(fs::read(a.join("METS.xml")).unwrap(), fs::read(b.join("METS.xml")).unwrap());
    let stored_mets = tmp.path().join("disk").join(crate::util::stored_dir(&id)).join("METS.xml");

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
    package(Package::new().quiet(), &damaged, &[&repo().join("samples/heritrix-job")]).succeeded();
    fs::write(damaged.join("logs/stray.txt"), b"x").unwrap();
    let o = webaip(
        &env,
        &["store", "--config", cfg.to_str().unwrap(), "put", damaged.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("damaged"), "{o:?}");
    let stored = tmp.path().join("disk").join(crate::util::stored_dir(&objid(&damaged)));
    assert!(!stored.exists());
}

// ---- issue 13: hostile packages, hostile replicas, leftovers, concurrent puts ----

/// A configuration with file system replicas (name, root) and optionally the cluster under a
/// key prefix of its own; `state` is the state database.
fn config_with(
    path: &Path,
    state: &Path,
    disks: &[(&str, &Path)],
    garage: Option<(&HashMap<String, String>, &str)>,
) -> PathBuf {
    let mut text = format!("state = \"{}\"\n", state.display());
    for (name, root) in disks {
        text.push_str(&format!(
            "\n[[replica]]\nname = \"{name}\"\ntype = \"fs\"\nlayout = \"webaip\"\nroot = \"{}\"\n",
            root.display()
        ));
    }
    if let Some((g, prefix)) = garage {
        let endpoints: Vec<String> =
            g["S3_ENDPOINTS"].split(',').map(|e| format!("\"{e}\"")).collect();
        text.push_str(&format!(
            "\n[[replica]]\nname = \"garage\"\ntype = \"s3\"\nlayout = \"webaip\"\nendpoints = [{}]\nbucket = \"{}\"\nregion = \"garage\"\nprefix = \"{prefix}\"\n",
            endpoints.join(", "),
            g["S3_BUCKET"]
        ));
    }
    fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// Every file below `dir` (relative names), links and FIFOs included.
fn tree(dir: &Path) -> Vec<String> {
    if !dir.exists() {
        return Vec::new();
    }
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn sha512_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    crate::util::hex(&sha2::Sha512::digest(bytes))
}

/// Runs `webaip ARGS` with a time limit (a FIFO must never make it hang).
fn webaip_limited(args: &[&str], cwd: &Path, strace_log: Option<&Path>) -> Output {
    let mut cmd = match strace_log {
        Some(log) => {
            let mut c = Command::new("strace");
            c.args(["-f", "-y", "-qq", "-e", "trace=file,desc", "-o"]).arg(log);
            webaip_under(c)
        }
        None => webaip_command(),
    };
    let child = cmd
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("webaip runs");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            panic!("webaip {args:?} did not finish in 60 s");
        }
    }
}

fn strace_available() -> bool {
    Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success())
}

/// Every path an strace log shows created, linked, renamed, removed or opened for writing by a
/// call that succeeded (dirfd-relative names resolved through `-y`).
fn written_paths(log: &Path, cwd: &Path) -> Vec<PathBuf> {
    const CALLS: &[&str] = &[
        "open",
        "openat",
        "openat2",
        "creat",
        "link",
        "linkat",
        "rename",
        "renameat",
        "renameat2",
        "mkdir",
        "mkdirat",
        "symlink",
        "symlinkat",
        "mknod",
        "mknodat",
        "unlink",
        "unlinkat",
        "rmdir",
        "truncate",
    ];
    let text = fs::read_to_string(log).unwrap();
    let mut pending: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let (pid, rest) = line.split_once(' ').unwrap_or(("", line));
        let rest = rest.trim_start();
        // -f splits calls of concurrent threads: "call(args <unfinished ...>" then
        // "<... call resumed> rest) = ret".
        let full = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid.to_string(), head.to_string());
            continue;
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let Some(head) = pending.remove(pid) else { continue };
            let tail = tail.split_once("resumed>").map(|(_, t)| t).unwrap_or(tail);
            format!("{head}{tail}")
        } else {
            rest.to_string()
        };
        let Some((call, args)) = full.split_once('(') else { continue };
        if !CALLS.contains(&call) {
            continue;
        }
        let Some((args, ret)) = args.rsplit_once(") = ") else { continue };
        if ret.trim_start().starts_with('-') || ret.trim_start().starts_with('?') {
            continue; // failed
        }
        if call.starts_with("open")
            && !(args.contains("O_WRONLY")
                || args.contains("O_RDWR")
                || args.contains("O_CREAT")
                || args.contains("O_TRUNC"))
        {
            continue; // read only
        }
        // Each quoted name, with the dirfd before it ("3</dir>, " or "AT_FDCWD, ").
        let mut rest = args;
        while let Some(q) = rest.find('"') {
            let before = &rest[..q];
            let after = &rest[q + 1..];
            let Some(end) = after.find('"') else { break };
            let name = &after[..end];
            let base = match before.trim_end().trim_end_matches(',').rsplit([',', '(']).next() {
                Some(b) if b.trim().contains('<') => {
                    let b = b.trim();
                    PathBuf::from(&b[b.find('<').unwrap() + 1..b.rfind('>').unwrap()])
                }
                _ => cwd.to_path_buf(),
            };
            let mut p = PathBuf::new();
            for c in base.join(name).components() {
                match c {
                    std::path::Component::ParentDir => {
                        p.pop();
                    }
                    std::path::Component::CurDir => {}
                    c => p.push(c),
                }
            }
            out.push(p);
            rest = &after[end + 1..];
        }
    }
    out
}

fn assert_written_only_below(log: &Path, cwd: &Path, allowed: &[PathBuf]) {
    let allowed: Vec<PathBuf> =
        allowed.iter().map(|a| fs::canonicalize(a).unwrap_or_else(|_| a.clone())).collect();
    let bad: Vec<PathBuf> = written_paths(log, cwd)
        .into_iter()
        .filter(|p| !allowed.iter().any(|a| p.starts_with(a)))
        .filter(|p| !p.starts_with("/dev/null") && !p.starts_with("/proc/self"))
        .collect();
    assert!(bad.is_empty(), "written outside {allowed:?}: {bad:?}");
}

/// The deterministic package of the Heritrix sample, built once per test run.
fn heritrix_package(tmp: &Path, name: &str) -> PathBuf {
    let p = tmp.join(name);
    package(
        Package::new().quiet().args(&["--deterministic"]),
        &p,
        &[&repo().join("samples/heritrix-job")],
    )
    .succeeded();
    p
}

/// A manifest line naming `../../../x.txt`, an absolute path, or a file the METS does not
/// list: `put` refuses before anything is written, and under strace nothing outside the
/// package, the replicas and the state database is created or opened for writing.
#[test]
fn put_refuses_manifest_lines_that_leave_the_package_or_name_unlisted_files() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let good = heritrix_package(t, "good");
    let (d1, d2) = (t.join("disk1"), t.join("disk2"));
    let state = t.join("state.sqlite");
    let cfg = config_with(&t.join("store.toml"), &state, &[("d1", &d1), ("d2", &d2)], None);
    fs::write(t.join("secret.txt"), b"outside").unwrap();
    let traced = strace_available();
    let sum = sha512_hex(b"x");
    for (case, line) in [
        ("parent", format!("{sum}  ../../../x.txt\n")),
        ("absolute", format!("{sum}  {}\n", t.join("secret.txt").display())),
        ("unlisted", format!("{sum}  logs/unlisted.txt\n")),
        ("malformed", "not a manifest line\n".to_string()),
    ] {
        // Deep enough that ../../../ from the package (or a replica's package directory)
        // lands in the test's directory.
        let pkg = t.join(case).join("a/b/pkg");
        copy_tree(&good, &pkg);
        fs::write(pkg.join("logs/unlisted.txt"), b"x").unwrap();
        let mut m = fs::read(pkg.join("manifest-sha512.txt")).unwrap();
        m.extend_from_slice(line.as_bytes());
        fs::write(pkg.join("manifest-sha512.txt"), m).unwrap();
        let log = t.join(format!("{case}.strace"));
        let o = webaip_limited(
            &["store", "--config", cfg.to_str().unwrap(), "put", pkg.to_str().unwrap()],
            t,
            traced.then_some(log.as_path()),
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{case}: {err}");
        let why = match case {
            "unlisted" => "is not a file the METS lists",
            "malformed" => "is not \"<sha512>  <path>\"",
            _ => "does not stay inside the package",
        };
        assert!(err.contains(why), "{case}: {err}");
        assert!(tree(&d1).is_empty() && tree(&d2).is_empty(), "{case}: {:?}", tree(&d1));
        assert!(!t.join(case).join("x.txt").exists() && !t.join("x.txt").exists());
        assert_eq!(fs::read(t.join("secret.txt")).unwrap(), b"outside");
        if traced {
            let mut allowed = vec![pkg.clone(), d1.clone(), d2.clone()];
            allowed.extend(
                ["", "-wal", "-shm", "-journal", ".migrate-lock"]
                    .map(|s| PathBuf::from(format!("{}{s}", state.display()))),
            );
            assert_written_only_below(&log, t, &allowed);
            // The log is read: the state database's creation is in it.
            assert!(written_paths(&log, t).iter().any(|p| p.starts_with(&state)), "{case}");
        }
    }
    // The same package without the hostile line is stored (the refusals were not the
    // replicas' fault), and its replicas then hold exactly its files.
    let o = webaip_limited(
        &["store", "--config", cfg.to_str().unwrap(), "put", good.to_str().unwrap()],
        t,
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Links and FIFOs in a package: refused, naming the path, without hanging on the FIFO or
/// reading through the link.
#[test]
fn put_refuses_links_and_fifos_in_a_package() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let good = heritrix_package(t, "good");
    let disk = t.join("disk");
    let cfg = config_with(&t.join("store.toml"), &t.join("state.sqlite"), &[("d", &disk)], None);
    let warc = fs::read_dir(good.join("content")).unwrap().next().unwrap().unwrap().file_name();
    let warc_rel = format!("content/{}", warc.to_string_lossy());

    // A listed file replaced by a link to an identical copy outside the package.
    let linked = t.join("linked");
    copy_tree(&good, &linked);
    fs::copy(linked.join(&warc_rel), t.join("outside.warc.gz")).unwrap();
    fs::remove_file(linked.join(&warc_rel)).unwrap();
    std::os::unix::fs::symlink(t.join("outside.warc.gz"), linked.join(&warc_rel)).unwrap();
    // A FIFO beside the files.
    let fifo = t.join("fifo");
    copy_tree(&good, &fifo);
    let pipe = fifo.join("logs/pipe");
    assert!(Command::new("mkfifo").arg(&pipe).status().unwrap().success());

    for (pkg, named, kind) in
        [(&linked, linked.join(&warc_rel), "a symbolic link"), (&fifo, pipe.clone(), "a FIFO")]
    {
        let o = webaip_limited(
            &["store", "--config", cfg.to_str().unwrap(), "put", pkg.to_str().unwrap()],
            t,
            None,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(&named.display().to_string()) && err.contains(kind), "{err}");
        assert!(tree(&disk).is_empty(), "{:?}", tree(&disk));
    }
}

/// A replica whose manifest was rewritten to name files outside the package: rebuild-state
/// refuses the package, and `get` (with the state recording a hostile name, or a hostile
/// manifest on the replica) writes nothing outside `--out`; a file already in `--out` is never
/// replaced.
#[test]
fn get_and_rebuild_state_stay_inside_with_a_hostile_replica() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = heritrix_package(t, "pkg");
    let id = objid(&pkg);
    let dir = crate::util::stored_dir(&id);
    let disk = t.join("disk");
    let state = t.join("state.sqlite");
    let cfg = config_with(&t.join("store.toml"), &state, &[("d", &disk)], None);
    let run = |args: &[&str], log: Option<&Path>| {
        let mut all = vec!["store", "--config", cfg.to_str().unwrap(), "--json"];
        all.extend_from_slice(args);
        webaip_limited(&all, t, log)
    };
    assert_eq!(run(&["put", pkg.to_str().unwrap()], None).status.code(), Some(0));

    // A file already in --out: refused, untouched, nothing else written.
    let to = t.join("to");
    fs::create_dir_all(&to).unwrap();
    fs::write(to.join("METS.xml"), b"mine").unwrap();
    let o = run(&["get", &id, "--out", to.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("never replaces"), "{o:?}");
    assert_eq!(fs::read(to.join("METS.xml")).unwrap(), b"mine");
    assert_eq!(tree(&to), vec!["METS.xml"]);
    fs::remove_file(to.join("METS.xml")).unwrap();

    // The state records a hostile name (a tampered database): get refuses before writing.
    let db = rusqlite::Connection::open(&state).unwrap();
    db.execute("UPDATE file SET path = '../../escape.txt' WHERE path = 'METS.xml'", []).unwrap();
    let traced = strace_available();
    let log = t.join("get.strace");
    let o = run(&["get", &id, "--out", to.to_str().unwrap()], traced.then_some(log.as_path()));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not stay inside"), "{o:?}");
    assert!(tree(&to).is_empty() && !t.join("escape.txt").exists());
    db.execute("UPDATE file SET path = 'METS.xml' WHERE path = '../../escape.txt'", []).unwrap();
    drop(db);

    // The replica's manifest rewritten to name files outside the package.
    let stored_manifest = disk.join(&dir).join("manifest-sha512.txt");
    let mut hostile = fs::read(&stored_manifest).unwrap();
    hostile.extend_from_slice(format!("{}  ../../../escape.txt\n", sha512_hex(b"x")).as_bytes());
    hostile.extend_from_slice(format!("{}  /tmp/escape-abs.txt\n", sha512_hex(b"x")).as_bytes());
    fs::remove_file(&stored_manifest).unwrap();
    fs::write(&stored_manifest, &hostile).unwrap();
    // get still fetches what the state recorded: the hostile manifest does not verify.
    let o = run(&["get", &id, "--out", to.to_str().unwrap()], traced.then_some(log.as_path()));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no replica holds a copy that verifies"));
    if traced {
        let allowed = ["", "-wal", "-shm", "-journal"]
            .map(|s| PathBuf::from(format!("{}{s}", state.display())));
        let mut allowed = allowed.to_vec();
        allowed.push(to.clone());
        assert_written_only_below(&log, t, &allowed);
    }
    assert!(!tree(&to).contains(&"manifest-sha512.txt".to_string()), "{:?}", tree(&to));
    assert!(!t.join("escape.txt").exists());
    // rebuild-state refuses the package instead of recording the hostile names.
    fs::remove_file(&state).unwrap();
    let o = run(&["rebuild-state"], None);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["packages"], serde_json::json!([]), "{r}");
    let refused = r["refused"][0].as_str().unwrap();
    assert!(
        refused.contains("../../../escape.txt") && refused.contains("does not stay inside"),
        "{r}"
    );
    let o = run(&["get", &id, "--out", t.join("to2").to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(!t.join("to2").exists() || tree(&t.join("to2")).is_empty());
    assert!(!Path::new("/tmp/escape-abs.txt").exists());
}

/// A link or a FIFO where a copy should be in a file system replica is a finding naming the
/// path (never followed); a repair replaces the entry itself.
#[test]
fn fs_replica_links_and_fifos_are_findings_and_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = heritrix_package(t, "pkg");
    let id = objid(&pkg);
    let dir = crate::util::stored_dir(&id);
    let (d1, d2) = (t.join("disk1"), t.join("disk2"));
    let cfg = config_with(
        &t.join("store.toml"),
        &t.join("state.sqlite"),
        &[("d1", &d1), ("d2", &d2)],
        None,
    );
    let env = HashMap::new();
    assert_eq!(store(&env, &cfg, &["put", pkg.to_str().unwrap()]).0, 0);
    // METS.xml on d1 becomes a link to a file outside with the same bytes.
    let mets = d1.join(&dir).join("METS.xml");
    fs::copy(&mets, t.join("outside-mets.xml")).unwrap();
    fs::remove_file(&mets).unwrap();
    std::os::unix::fs::symlink(t.join("outside-mets.xml"), &mets).unwrap();
    let (code, c) = store(&env, &cfg, &["check", "--deep"]);
    assert_eq!(code, 1, "{c}");
    let corrupt = c["replicas"][0]["corrupt"].as_array().unwrap();
    assert_eq!(corrupt.len(), 1, "{c}");
    let finding = corrupt[0].as_str().unwrap();
    assert!(
        finding.starts_with(&format!("{dir}/METS.xml")) && finding.contains("symbolic link"),
        "{c}"
    );
    let (code, rp) = store(&env, &cfg, &["repair"]);
    assert_eq!(code, 0, "{rp}");
    assert!(fs::symlink_metadata(&mets).unwrap().is_file());
    assert_eq!(fs::read(&mets).unwrap(), fs::read(pkg.join("METS.xml")).unwrap());
    assert!(fs::symlink_metadata(t.join("outside-mets.xml")).unwrap().is_file());
    let (code, c) = store(&env, &cfg, &["check", "--deep"]);
    assert_eq!(code, 0, "{c}");
}

/// Temporaries of a killed put are removed by the next put or check (reported once by check,
/// never as extra); a temporary whose writer is alive (it holds its lock) is left alone.
/// A claim left by a killed put lets the same package resume.
#[test]
fn leftover_temporaries_are_removed_and_a_killed_put_resumes() {
    use std::os::fd::AsRawFd;
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let pkg = heritrix_package(t, "pkg");
    let id = objid(&pkg);
    let dir = crate::util::stored_dir(&id);
    let disk = t.join("disk");
    let state = t.join("state.sqlite");
    let cfg = config_with(&t.join("store.toml"), &state, &[("d", &disk)], None);
    let env = HashMap::new();
    assert_eq!(store(&env, &cfg, &["put", pkg.to_str().unwrap()]).0, 0);
    let pdir = disk.join(&dir);

    // A killed put: its temporaries stay, some copies are missing, the state never heard.
    let dead = pdir.join("content/.webaip-upload-999-dead-0");
    fs::write(&dead, b"half a copy").unwrap();
    let live = pdir.join(".webaip-upload-999-live-0");
    let held = fs::File::create(&live).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    let (code, c) = store(&env, &cfg, &["check"]);
    assert_eq!(code, 0, "{c}");
    let rep = &c["replicas"][0];
    assert_eq!(rep["extra"], serde_json::json!([]), "{c}");
    let removed = rep["temporaries_removed"].as_array().unwrap();
    assert_eq!(removed.len(), 1, "{c}");
    assert!(
        removed[0]
            .as_str()
            .unwrap()
            .starts_with(&format!("{dir}/content/.webaip-upload-999-dead-0"))
    );
    assert!(!dead.exists() && live.exists());
    let (code, c) = store(&env, &cfg, &["check"]);
    assert_eq!(
        (code, &c["replicas"][0]["temporaries_removed"]),
        (0, &serde_json::json!([])),
        "{c}"
    );
    drop(held);

    // The next put removes leftovers itself and resumes where the killed one stopped.
    fs::write(&dead, b"half a copy").unwrap();
    fs::remove_file(pdir.join("METS.xml")).unwrap();
    fs::remove_file(&state).unwrap();
    let (code, r) = store(&env, &cfg, &["put", pkg.to_str().unwrap()]);
    assert_eq!(code, 0, "{r}");
    assert!(statuses(&r["packages"][0]).contains(&"uploaded".to_string()), "{r}");
    assert!(!dead.exists() && !live.exists());
    assert!(tree(&pdir).iter().all(|f| !f.contains(".webaip-upload-")), "{:?}", tree(&pdir));
    let (code, c) = store(&env, &cfg, &["check", "--deep"]);
    assert_eq!(code, 0, "{c}");
}

/// Two puts at once of different packages with the same OBJID, with separate state databases
/// and with one shared: exactly one is accepted, the other refused, and every replica holds
/// exactly the winner's files. `garage`: the cluster is one of the replicas (under a prefix
/// of its own each round) and, with `separate_disks`, the only replica both share.
fn concurrent_puts(
    t: &Path,
    a: &Path,
    b: &Path,
    garage: Option<&HashMap<String, String>>,
    rounds: usize,
) {
    let env = garage.cloned().unwrap_or_default();
    let mut variants = vec![("separate", false), ("shared", false)];
    if garage.is_some() {
        variants.push(("separate", true));
    }
    for round in 0..rounds {
        for (states, separate_disks) in &variants {
            let base = t.join(format!("race-{round}-{states}-{separate_disks}"));
            fs::create_dir_all(&base).unwrap();
            let prefix = format!("{}/", base.file_name().unwrap().to_string_lossy());
            let prefix = format!("test-{}-{prefix}", std::process::id());
            let cfgs: Vec<PathBuf> = (0..2)
                .map(|i| {
                    let state = if *states == "shared" {
                        base.join("state.sqlite")
                    } else {
                        base.join(format!("state{i}.sqlite"))
                    };
                    let disks = if *separate_disks {
                        vec![base.join(format!("disk{i}"))]
                    } else {
                        vec![base.join("disk1"), base.join("disk2")]
                    };
                    let named: Vec<(String, &Path)> = disks
                        .iter()
                        .enumerate()
                        .map(|(k, d)| (format!("d{k}"), d.as_path()))
                        .collect();
                    let named: Vec<(&str, &Path)> =
                        named.iter().map(|(n, d)| (n.as_str(), *d)).collect();
                    config_with(
                        &base.join(format!("store{i}.toml")),
                        &state,
                        &named,
                        garage.map(|g| (g, prefix.as_str())),
                    )
                })
                .collect();
            let children: Vec<std::process::Child> = [a, b]
                .iter()
                .zip(&cfgs)
                .map(|(p, c)| {
                    webaip_command()
                        .args([
                            "store",
                            "--config",
                            c.to_str().unwrap(),
                            "--json",
                            "put",
                            p.to_str().unwrap(),
                        ])
                        .envs(env.iter().filter(|(k, _)| k.starts_with("AWS_")))
                        .stdout(std::process::Stdio::piped())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .unwrap()
                })
                .collect();
            let outs: Vec<Output> =
                children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
            let codes: Vec<Option<i32>> = outs.iter().map(|o| o.status.code()).collect();
            let what = format!(
                "round {round}, {states} state, separate disks {separate_disks}: {codes:?} {:?} {:?}",
                String::from_utf8_lossy(&outs[0].stderr),
                String::from_utf8_lossy(&outs[1].stderr)
            );
            let mut sorted = codes.clone();
            sorted.sort();
            assert_eq!(sorted, vec![Some(0), Some(2)], "{what}");
            let winner = codes.iter().position(|c| *c == Some(0)).unwrap();
            let loser_err = String::from_utf8_lossy(&outs[1 - winner].stderr);
            assert!(
                loser_err.contains("is taken") || loser_err.contains("already stored"),
                "{what}"
            );
            // The winner's store checks clean and deep on every replica it has: every file of
            // the winner, verified, nothing extra.
            let (code, c) = store(&env, &cfgs[winner], &["check", "--deep"]);
            assert_eq!(code, 0, "{what}: {c}");
            // A disk of the loser's own holds nothing of it.
            if *separate_disks {
                let own = base.join(format!("disk{}", 1 - winner));
                let left: Vec<String> =
                    tree(&own).into_iter().filter(|f| !f.ends_with(".webaip-claim")).collect();
                assert!(left.is_empty(), "{what}: {left:?}");
                assert!(!tree(&own).iter().any(|f| f.ends_with(".webaip-claim")), "{what}");
            } else {
                let pkg = [a, b][winner];
                let dir = crate::util::stored_dir(&objid(pkg));
                for disk in ["disk1", "disk2"] {
                    let pdir = base.join(disk).join(&dir);
                    let mut want = tree(pkg);
                    want.push(".webaip-claim".into());
                    want.sort();
                    assert_eq!(tree(&pdir), want, "{what}");
                    for f in tree(pkg) {
                        assert_eq!(
                            fs::read(pdir.join(&f)).unwrap(),
                            fs::read(pkg.join(&f)).unwrap(),
                            "{what}: {f}"
                        );
                    }
                }
            }
        }
    }
}

/// Two packages with one OBJID (the Heritrix sample with and without its metadata file).
fn same_objid_pair(t: &Path) -> (PathBuf, PathBuf) {
    let (a, b) = (t.join("a"), t.join("b"));
    package(
        Package::new().quiet().args(&["--deterministic"]),
        &a,
        &[&repo().join("samples/heritrix-job")],
    )
    .succeeded();
    let meta = sample("heritrix-job.metadata.toml");
    package(
        Package::new().quiet().args(&["--deterministic", "--metadata", meta.to_str().unwrap()]),
        &b,
        &[&repo().join("samples/heritrix-job")],
    )
    .succeeded();
    assert_eq!(objid(&a), objid(&b));
    (a, b)
}

#[test]
fn concurrent_puts_of_one_identifier_on_file_system_replicas() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = same_objid_pair(tmp.path());
    concurrent_puts(tmp.path(), &a, &b, None, 5);
}
