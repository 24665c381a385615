//! `webaip batch` as a Slurm job array: scripts/batch-array.sbatch submitted to a real
//! single-node Slurm (started by scripts/slurm-local.sh, and stopped again when this test
//! started it), two tasks packaging their shards of the samples and putting every package
//! into the replicated store, a 3-node Garage cluster (scripts/garage-cluster.sh).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::util::sha512_hex;

use super::{golden_mets, outcome, rows, sample_key, sample_lines_beside};
use crate::util::{WEBAIP, repo, webaip};

/// How long the array may take, queued and run, before the test gives up.
const ARRAY_TIMEOUT: Duration = Duration::from_secs(180);

/// The local Slurm; stopped when dropped if this test started it.
struct LocalSlurm {
    conf: String,
    started: bool,
}

fn slurm_local(action: &str) -> Output {
    Command::new("bash")
        .arg(repo().join("scripts/slurm-local.sh"))
        .arg(action)
        .output()
        .expect("bash runs scripts/slurm-local.sh")
}

impl LocalSlurm {
    /// The running cluster, or one started now (Slurm installed from Debian if missing); a
    /// machine that cannot have it fails the test, with the script's reason.
    fn start() -> LocalSlurm {
        let started = !slurm_local("status").status.success();
        let o = slurm_local(if started { "start" } else { "env" });
        assert!(
            o.status.success(),
            "the local Slurm did not start (scripts/slurm-local.sh start, as root; it installs \
             slurmctld, slurmd, slurm-client and munge with apt-get when they are missing):\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        let conf = stdout.lines().find_map(|l| l.strip_prefix("SLURM_CONF=")).map(str::to_string);
        LocalSlurm { conf: conf.expect("slurm-local.sh prints SLURM_CONF="), started }
    }

    /// A Slurm client command (sbatch, squeue, scontrol, scancel) for this cluster.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"))
    }
}

impl Drop for LocalSlurm {
    fn drop(&mut self) {
        if self.started {
            let o = slurm_local("stop");
            if !o.status.success() {
                eprintln!("slurm-local.sh stop: {}", String::from_utf8_lossy(&o.stderr));
            }
        }
    }
}

/// Every task's log, for a failure message.
fn task_logs(dir: &Path) -> String {
    let mut text = String::new();
    for k in 0..2 {
        let log = dir.join(format!("task-{k}.log"));
        let body = std::fs::read_to_string(&log).unwrap_or_else(|e| format!("({e})"));
        text.push_str(&format!("--- {}\n{body}\n", log.display()));
    }
    text
}

/// A store configuration in `dir` whose one replica is the Garage cluster `g`, under a key
/// prefix of this run's own (the bucket is shared with other tests and earlier runs).
fn garage_config(dir: &Path, g: &HashMap<String, String>) -> PathBuf {
    let endpoints: Vec<String> = g["S3_ENDPOINTS"].split(',').map(|e| format!("\"{e}\"")).collect();
    let run = dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let text = format!(
        "state = \"store-state.sqlite\"\n\n[[replica]]\nname = \"garage\"\ntype = \"s3\"\n\
         endpoints = [{}]\nbucket = \"{}\"\nregion = \"garage\"\nprefix = \"batch-slurm-{run}/\"\n",
        endpoints.join(", "),
        g["S3_BUCKET"]
    );
    let path = dir.join("store.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A two-task array over the samples, with STORE: each task packages its shard in the one
/// work folder with a journal of its own and puts each package into the Garage cluster;
/// together the journals hold each item once, all done and stored, `store check --deep` finds
/// every copy intact, and every package the store gives back is the golden one (the METS
/// SHA-512 of an uninterrupted `--deterministic` run).
#[cfg_attr(not(feature = "s3"), ignore = "needs a webaip built with the s3 feature")]
#[test]
fn a_slurm_array_of_two_tasks_packages_each_shard_once_into_the_store() {
    let slurm = LocalSlurm::start();
    let _cluster = crate::util::garage_in_use();
    let g = crate::store::garage();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    let config = garage_config(dir, &g);
    let mut manifest = String::from("source,metadata,options\n");
    let lines = sample_lines_beside(dir);
    for (line, _) in &lines {
        manifest.push_str(line);
        manifest.push('\n');
    }
    let csv = dir.join("manifest.csv");
    std::fs::write(&csv, manifest).unwrap();

    // The settings go in sbatch's environment (`--export=ALL` hands it to the tasks), so that
    // no path has to survive the commas of `--export=ALL,NAME=VALUE`.
    let mut sbatch = slurm.command("sbatch");
    sbatch.env("MANIFEST", &csv).env("OUT", &out).env("WEBAIP", WEBAIP).env("STORE", &config);
    sbatch.envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")));
    for name in ["WEBAIP_SCHEMAS", "WEBAIP_CLAMD", "WEBAIP_STORE_CONFIG"] {
        sbatch.env_remove(name);
    }
    let log_pattern = dir.join("task-%a.log");
    sbatch.args(["--parsable", "--array=0-1", "--cpus-per-task=1", "--export=ALL"]);
    sbatch.arg(format!("--output={}", log_pattern.display()));
    sbatch.arg(format!("--chdir={}", dir.display()));
    sbatch.arg(repo().join("scripts/batch-array.sbatch"));
    sbatch.args(["--no-virus-check", "--deterministic"]);
    let began = Instant::now();
    let o = sbatch.output().expect("sbatch runs");
    assert!(o.status.success(), "sbatch: {}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let job = stdout.trim().split(';').next().unwrap().to_string();
    assert!(job.parse::<u64>().is_ok(), "sbatch --parsable printed {stdout:?}");

    // Queued or running tasks are listed by squeue; finished ones no longer are.
    loop {
        let q = slurm.run("squeue", &["-h", "-j", &job, "-o", "%i %T %R"]);
        let listed = String::from_utf8_lossy(&q.stdout).trim().to_string();
        if listed.is_empty() {
            break;
        }
        if began.elapsed() > ARRAY_TIMEOUT {
            slurm.run("scancel", &[&job]);
            panic!(
                "the array {job} did not finish within {} s; squeue:\n{listed}\n{}",
                ARRAY_TIMEOUT.as_secs(),
                task_logs(dir)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let wall = began.elapsed();
    // Without accounting, scontrol still knows each finished task for a few minutes.
    let shown = slurm.run("scontrol", &["show", "job", &job]);
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    let states: Vec<&str> =
        shown.split_whitespace().filter(|w| w.starts_with("JobState=")).collect();
    let codes: Vec<&str> =
        shown.split_whitespace().filter(|w| w.starts_with("ExitCode=")).collect();
    assert_eq!(
        (states, codes),
        (vec!["JobState=COMPLETED"; 2], vec!["ExitCode=0:0"; 2]),
        "array {job}:\n{shown}\n{}",
        task_logs(dir)
    );

    // One journal per task, each with a share of its own: together every item exactly once
    // (which task gets which item is the keys' hash: nothing is assumed of it).
    let journals: Vec<_> =
        (0..2).map(|k| out.join(format!("batch-journal-{k}-of-2.sqlite"))).collect();
    let mut all = Vec::new();
    for j in &journals {
        assert!(j.is_file(), "{} missing\n{}", j.display(), task_logs(dir));
        all.extend(rows(j));
    }
    let mut keys: Vec<&str> = all.iter().map(|r| r.0.as_str()).collect();
    keys.sort();
    let mut want: Vec<String> = lines.iter().map(|(l, _)| sample_key(l)).collect();
    want.sort();
    assert_eq!(keys, want);
    let j: Vec<&str> = journals.iter().map(|p| p.to_str().unwrap()).collect();
    let status = outcome(&webaip(&["batch", "status", "--json", j[0], j[1]]), 0);
    assert_eq!(status["total"]["items"].as_u64(), Some(want.len() as u64), "{status}");
    assert_eq!(status["total"]["done"].as_u64(), Some(want.len() as u64), "{status}");
    assert_eq!(status["total"]["stored"].as_u64(), Some(want.len() as u64), "{status}");
    let per_journal: u64 =
        (0..2).map(|k| status["journals"][k]["items"].as_u64().unwrap_or(0)).sum();
    assert_eq!(per_journal, want.len() as u64, "{status}");

    // Every copy in the cluster verifies; the store holds the only copy of each package.
    let store = |args: &[&str]| {
        let mut c = crate::util::webaip_command();
        c.args(["store", "--config", config.to_str().unwrap(), "--json"]).args(args);
        c.envs(g.iter().filter(|(k, _)| k.starts_with("AWS_")));
        outcome(&c.output().unwrap(), 0)
    };
    let check = store(&["check", "--deep"]);
    assert_eq!(check["clean"].as_bool(), Some(true), "{check}");
    // Objects of OCFL storage roots (the default layout); packages in the webaip layout.
    let held = check.get("objects").or(check.get("packages")).and_then(|n| n.as_u64());
    assert_eq!(held, Some(want.len() as u64), "{check}");
    let left: Vec<_> = std::fs::read_dir(out.join(".batch-work")).unwrap().collect();
    assert!(left.is_empty(), "left in the work folder: {left:?}");
    // Every package is the golden one: in the journal, and as the store gives it back.
    for (line, golden) in &lines {
        let key = sample_key(line);
        let row = all.iter().find(|r| r.0 == key).unwrap();
        assert_eq!((row.1.as_str(), row.2.as_str()), ("done", golden_mets(golden).as_str()));
        let db = rusqlite::Connection::open(
            journals.iter().find(|j| rows(j).iter().any(|r| r.0 == key)).unwrap(),
        )
        .unwrap();
        let id: String = db
            .query_row("SELECT package_id FROM items WHERE key = ?1", [&key], |r| r.get(0))
            .unwrap();
        let back = dir.join("back").join(golden);
        store(&["get", &id, "--out", back.to_str().unwrap()]);
        let mets = std::fs::read(back.join("METS.xml")).unwrap();
        assert_eq!(sha512_hex(&mets), golden_mets(golden), "{key}");
    }
    eprintln!("slurm array of 2 tasks over {} samples: {:.1} s", want.len(), wall.as_secs_f64());
}
