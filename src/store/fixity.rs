//! `store check` at scale, for both layouts: which objects a run checks (all, the oldest
//! checked, a sample), the run kept in the state database batch by batch (a killed or
//! stopped run goes on where it stopped with `--resume`), the bytes read held to a budget
//! per hour and the run to a time window, and what a sample can say (the hypergeometric
//! probability that it finds damage of a given share).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::replica::Replica;
use super::state::lock::{self, Held, Hold, StateLock};
use super::state::{
    NewRun, ObjectOutcome, Pick, PlannedObject, RunCounts, RunRecord, SeenSummary, Universe,
};
use super::{Store, StoreError, StoreRefusal};

/// Objects checked per batch: each batch is committed to the state database in one
/// transaction, the most a kill loses.
const BATCH: usize = 256;

/// The shares of damaged objects a sample's report gives its chance of finding.
const DAMAGE_SHARES: [f64; 3] = [0.001, 0.01, 0.05];

/// How many objects a sample takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SampleSize {
    /// This many (all when the store holds fewer).
    Objects(u64),
    /// This share of the objects (0 < share <= 1), rounded up.
    Share(f64),
}

impl SampleSize {
    /// Reads `500` (objects), `0.05` or `5%` (a share).
    pub fn parse(text: &str) -> Result<SampleSize, SampleSizeError> {
        let bad = || SampleSizeError(text.to_string());
        let t = text.trim();
        let share = |v: f64| (v > 0.0 && v <= 1.0).then_some(SampleSize::Share(v)).ok_or_else(bad);
        if let Some(p) = t.strip_suffix('%') {
            return share(p.trim().parse::<f64>().map_err(|_| bad())? / 100.0);
        }
        if t.contains('.') {
            return share(t.parse().map_err(|_| bad())?);
        }
        match t.parse::<u64>() {
            Ok(n) if n > 0 => Ok(SampleSize::Objects(n)),
            _ => Err(bad()),
        }
    }
}

/// A sample size that is not one.
#[derive(Debug, thiserror::Error)]
#[error("{0:?}: not a sample size (a number of objects, or a share: 0.05 or 5%)")]
pub struct SampleSizeError(String);

/// Which objects a check run looks at.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Selection {
    /// Every object.
    #[default]
    All,
    /// The N objects checked longest ago on the replicas checked (never checked first).
    Oldest(u64),
    /// Objects taken at random, without replacement.
    Sample(SampleSize),
}

impl Selection {
    fn words(self) -> String {
        match self {
            Selection::All => "all".into(),
            Selection::Oldest(n) => format!("oldest:{n}"),
            Selection::Sample(SampleSize::Objects(n)) => format!("sample:{n}"),
            Selection::Sample(SampleSize::Share(s)) => format!("sample:{}%", s * 100.0),
        }
    }

    fn kind(words: &str) -> SelectionKind {
        match words.split(':').next() {
            Some("oldest") => SelectionKind::Oldest,
            Some("sample") => SelectionKind::Sample,
            _ => SelectionKind::All,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SelectionKind {
    All,
    Oldest,
    Sample,
}

/// How a check run is scheduled: what it selects, whether it resumes the last unfinished
/// run, and how it is spread over time.
#[derive(Debug, Clone, Default)]
pub struct CheckSchedule {
    /// The objects checked (a resumed run keeps its own).
    pub selection: Selection,
    /// Go on with the last run that did not finish (killed, or stopped by its window).
    pub resume: bool,
    /// The most bytes read per hour (deep checks hash the copies they read).
    pub budget: Option<u64>,
    /// Stop cleanly (resumably) at this time.
    pub until: Option<chrono::DateTime<chrono::Utc>>,
}

/// What a check run's report says of it as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every object of the store checked, nothing found.
    Clean,
    /// Something found (whatever the run covered).
    ProblemsFound,
    /// A random sample checked, nothing found in it: not a check of the whole store.
    Sampled,
    /// The objects checked longest ago checked, nothing found in them: not the whole store.
    Partial,
    /// Stopped before every object it planned (its window closed): nothing found so far;
    /// `--resume` goes on.
    Stopped,
}

/// A sample's chance of finding damage of one share.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Detection {
    /// The share of objects asked about (0.01: 1 %).
    pub share: f64,
    /// That many objects of the store (rounded up, at least one).
    pub damaged: u64,
    /// The share they really are (`damaged` / objects): more than `share` in a small store.
    #[serde(default)]
    pub damaged_share: f64,
    /// The probability that a sample of this size holds at least one of them
    /// (hypergeometric: drawn without replacement).
    pub probability: f64,
}

/// What a sample can say.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SampleOdds {
    /// Objects in the store.
    pub population: u64,
    /// Objects sampled.
    pub sample: u64,
    /// For a few shares of damage, the chance the sample holds some (one entry per number
    /// of damaged objects: in a small store several shares round to the same number).
    pub detection: Vec<Detection>,
    /// Whether the sampled copies were hashed (`--deep`). Without, a sampled object's copies
    /// are listed and their sizes compared: the sample finds missing or resized copies only.
    #[serde(default)]
    pub bytes_hashed: bool,
}

/// A check run as the report gives it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckRun {
    /// The run's number in the state database (`--resume` goes on with the latest that did
    /// not finish).
    pub id: i64,
    /// When it started (UTC).
    pub started: String,
    /// Sessions so far (1: not resumed); the report covers every session of the run.
    pub sessions: u32,
    /// Which objects: `all`, `oldest:N`, `sample:N` or `sample:P%`.
    pub selection: String,
    /// Objects in the store (on the replicas checked).
    pub objects: u64,
    /// Objects the run set out to check.
    pub planned: u64,
    /// Of them, checked (every session).
    pub checked: u64,
    /// Bytes read to hash copies (every session).
    pub bytes_read: u64,
    /// True when every planned object was checked.
    pub finished: bool,
    /// Why the run stopped before that (resumable), if it did.
    pub stopped: Option<String>,
    /// The run's verdict.
    pub verdict: Verdict,
    /// For a sample, what it can say.
    pub sample: Option<SampleOdds>,
    /// How recently every object of the store was seen, once this session ended.
    pub seen: SeenSummary,
}

/// A check's report with its run.
#[derive(Debug, Clone, Serialize)]
pub struct CheckedRun<R> {
    /// What the run found (every session of it).
    #[serde(flatten)]
    pub report: R,
    /// The run.
    pub run: CheckRun,
}

/// P(a sample of `n` of `population` objects holds at least one of `damaged`), drawn without
/// replacement: 1 - C(N-D, n) / C(N, n), as a product (in logarithms, so it does not
/// overflow).
pub fn detection_probability(population: u64, damaged: u64, n: u64) -> f64 {
    if damaged == 0 || n == 0 {
        return 0.0;
    }
    if n + damaged > population {
        return 1.0;
    }
    let mut log_miss = 0.0f64;
    for i in 0..n {
        log_miss += ((population - damaged - i) as f64).ln() - ((population - i) as f64).ln();
    }
    1.0 - log_miss.exp()
}

fn sample_odds(population: u64, sample: u64, bytes_hashed: bool) -> SampleOdds {
    let mut detection: Vec<Detection> = Vec::new();
    for &share in &DAMAGE_SHARES {
        let damaged = ((share * population as f64).ceil() as u64).max(1);
        if detection.last().is_some_and(|d| d.damaged == damaged) {
            continue;
        }
        let probability = detection_probability(population, damaged, sample);
        let damaged_share = damaged as f64 / population.max(1) as f64;
        detection.push(Detection { share, damaged, damaged_share, probability });
    }
    SampleOdds { population, sample, detection, bytes_hashed }
}

/// The bytes a run may read, and until when it may run: each read waits its turn under the
/// budget; a wait that would end past the window stops the run instead.
pub(crate) struct Pace {
    per_hour: Option<u64>,
    start: Instant,
    deadline: Option<Instant>,
    admitted: Mutex<u64>,
    stopped: Mutex<Option<String>>,
}

impl Pace {
    pub(crate) fn new(s: &CheckSchedule) -> Self {
        let deadline = s.until.map(|u| {
            let left = (u - chrono::Utc::now()).to_std().unwrap_or(Duration::ZERO);
            Instant::now() + left
        });
        Pace {
            per_hour: s.budget.filter(|b| *b > 0),
            start: Instant::now(),
            deadline,
            admitted: Mutex::new(0),
            stopped: Mutex::new(None),
        }
    }

    fn stop(&self, why: &str) {
        let mut s = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        s.get_or_insert_with(|| why.into());
    }

    /// Why the run is to stop, once it is.
    pub(crate) fn stopped(&self) -> Option<String> {
        self.stopped.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// True, when the window has closed (and the run is marked stopped).
    pub(crate) fn expired(&self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop("its time window closed");
        }
        self.stopped().is_some()
    }

    /// Waits until `bytes` more may be read: the bytes admitted before are paid for at the
    /// budget's rate (the first read is not held). False, reading nothing, when the wait would
    /// end past the window or the run is stopped.
    pub(crate) fn admit(&self, bytes: u64) -> bool {
        if self.expired() {
            return false;
        }
        let Some(per_hour) = self.per_hour else { return true };
        let at = {
            let mut admitted = self.admitted.lock().unwrap_or_else(|p| p.into_inner());
            let paid = Duration::from_secs_f64(*admitted as f64 * 3600.0 / per_hour as f64);
            *admitted += bytes;
            self.start + paid
        };
        if self.deadline.is_some_and(|d| at > d) {
            self.stop("its time window closed before the budget allowed the next read");
            return false;
        }
        if let Some(wait) = at.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        true
    }
}

/// Checks one batch of a run's planned objects (`None`: the pace stopped it part-way).
pub(crate) type BatchCheck<'a> =
    dyn FnMut(&[PlannedObject]) -> Result<Option<Batch>, StoreError> + 'a;

/// What one batch of a run found: each object's outcome per replica, the layout's findings
/// (JSON, folded into the report at the end), the bytes read.
pub(crate) struct Batch {
    pub outcomes: Vec<ObjectOutcome>,
    pub found: String,
    pub bytes: u64,
}

/// One session of a check run.
pub(crate) struct Session {
    pub run: RunRecord,
    /// The replicas checked, by name.
    pub scope: Vec<String>,
    pub pace: Pace,
    /// The store's check lock, held for the whole session.
    pub _lock: Held,
}

/// How a new run is planned.
pub(crate) struct Plan<'a> {
    pub layout: &'a str,
    pub only: Option<&'a str>,
    pub deep: bool,
    pub notes: Option<&'a str>,
}

impl Store {
    /// Starts a run (or, `schedule.resume`, takes up the last unfinished one of `plan.layout`).
    pub(crate) fn open_session(
        &self,
        plan: &Plan,
        schedule: &CheckSchedule,
        universe: &mut dyn FnMut() -> Result<Universe<'static>, StoreError>,
    ) -> Result<Session, StoreError> {
        let pace = Pace::new(schedule);
        let _lock = self.check_lock()?;
        if schedule.resume {
            let found = self.state().unfinished_run(plan.layout)?;
            let Some(run) = found else { return Err(StoreRefusal::NothingToResume.into()) };
            self.state().resume_run(run.id)?;
            let run = RunRecord { sessions: run.sessions + 1, ..run };
            let scope = self.scope_names(run.replica.as_deref())?;
            return Ok(Session { run, scope, pace, _lock });
        }
        if let Some(name) = plan.only {
            self.replica(name)?;
        }
        let scope = self.scope_names(plan.only)?;
        let pick = match schedule.selection {
            Selection::All => Pick::All,
            Selection::Oldest(n) => Pick::Oldest(n),
            Selection::Sample(SampleSize::Objects(n)) => Pick::Random(n),
            Selection::Sample(SampleSize::Share(s)) => Pick::RandomShare(s),
        };
        let selection = schedule.selection.words();
        let new = NewRun {
            layout: plan.layout,
            replica: plan.only,
            scope: &scope,
            deep: plan.deep,
            selection: &selection,
            notes: plan.notes,
        };
        let id = self.state().begin_run(&new, universe()?, pick)?;
        let run = self.state().unfinished_run(plan.layout)?.filter(|r| r.id == id);
        let run = run.ok_or(StoreRefusal::NothingToResume)?;
        Ok(Session { run, scope, pace, _lock })
    }

    fn scope_names(&self, only: Option<&str>) -> Result<Vec<String>, StoreError> {
        if let Some(name) = only {
            self.replica(name)?;
        }
        let names = self.replicas.iter().map(|r| r.name()).filter(|n| only.is_none_or(|o| o == *n));
        Ok(names.map(str::to_string).collect())
    }

    /// The store's check lock (beside the state database), taken without waiting: a new run
    /// replaces an unfinished one's plan, so two at once would erase each other's work and one
    /// could end with nothing checked and call it clean. A killed run's lock goes with its
    /// process.
    fn check_lock(&self) -> Result<Held, StoreError> {
        lock::take(&self.state_path, StateLock::Check, Hold::Exclusive)
    }

    /// The replicas of a run's scope, in the configuration's order.
    pub(crate) fn replicas_in(&self, scope: &[String]) -> Vec<&dyn Replica> {
        let mut out: Vec<&dyn Replica> = self.replicas.iter().map(|r| r.as_ref()).collect();
        out.retain(|r| scope.iter().any(|n| n == r.name()));
        out
    }

    /// Checks the run's planned objects batch by batch, each committed in one transaction,
    /// until none is left or the pace stops it. `check` checks a batch (`None`: the pace
    /// stopped it part-way; nothing of it is kept).
    pub(crate) fn sweep(&self, s: &Session, check: &mut BatchCheck<'_>) -> Result<(), StoreError> {
        let size = if crate::hooks::fail_at("check-batch-of-one") { 1 } else { BATCH };
        let mut after = 0;
        while !s.pace.expired() {
            let batch = self.state().next_batch(s.run.id, after, size)?;
            let Some(last) = batch.last() else { break };
            after = last.seq;
            let Some(b) = check(&batch)? else { break };
            self.state().record_batch(s.run.id, &batch, &b.outcomes, &b.found, b.bytes)?;
            if crate::hooks::fail_at("check-after-batch") {
                // As a kill would: the batch is committed, the run not finished.
                std::process::abort();
            }
        }
        Ok(())
    }

    /// Ends the session: the run's record and verdict (`problems`: the run found something;
    /// `judged`: it could judge every object it checked, else it is at best PARTIAL),
    /// recorded as finished (its plan dropped) or stopped.
    /// Whether the session's run, as far as it went, checked every object of its universe
    /// (selection all, nothing left of its plan): what was not seen in it is then not there.
    pub(crate) fn covers_everything(&self, s: &Session) -> Result<bool, StoreError> {
        let counts: RunCounts = self.state().run_counts(s.run.id)?;
        let all = Selection::kind(&s.run.selection) == SelectionKind::All;
        Ok(all && counts.checked >= counts.planned && counts.planned == counts.universe)
    }

    pub(crate) fn end_session(
        &self,
        s: &Session,
        problems: bool,
        judged: bool,
    ) -> Result<CheckRun, StoreError> {
        let counts: RunCounts = self.state().run_counts(s.run.id)?;
        let seen = self.state().seen_summary(s.run.id, &s.scope)?;
        let finished = counts.checked >= counts.planned;
        let kind = Selection::kind(&s.run.selection);
        let verdict = match (problems, finished, kind) {
            (true, _, _) => Verdict::ProblemsFound,
            (false, false, _) => Verdict::Stopped,
            (false, true, SelectionKind::All) if judged && counts.planned == counts.universe => {
                Verdict::Clean
            }
            (false, true, SelectionKind::Sample) => Verdict::Sampled,
            (false, true, _) => Verdict::Partial,
        };
        let run = CheckRun {
            id: s.run.id,
            started: s.run.started_at.clone(),
            sessions: s.run.sessions,
            selection: s.run.selection.clone(),
            objects: counts.universe,
            planned: counts.planned,
            checked: counts.checked,
            bytes_read: counts.bytes,
            finished,
            stopped: if finished { None } else { s.pace.stopped() },
            verdict,
            sample: (kind == SelectionKind::Sample)
                .then(|| sample_odds(counts.universe, counts.planned, s.run.deep)),
            seen,
        };
        let summary = serde_json::to_string(&run).unwrap_or_default();
        self.state().end_run(s.run.id, finished, &summary)?;
        Ok(run)
    }
}

/// Folds what each batch of run `s` found into `into`.
pub(crate) fn fold_parts<T: for<'de> Deserialize<'de>>(
    store: &Store,
    s: &Session,
    into: &mut dyn FnMut(T),
) -> Result<(), StoreError> {
    store.state().each_part(s.run.id, &mut |json| {
        let part: T = serde_json::from_str(json)
            .map_err(|e| StoreError::RunRecord { run: s.run.id, why: e.to_string() })?;
        into(part);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_sizes_read_as_counts_or_shares() {
        assert_eq!(SampleSize::parse("500").unwrap(), SampleSize::Objects(500));
        assert_eq!(SampleSize::parse("5%").unwrap(), SampleSize::Share(0.05));
        assert_eq!(SampleSize::parse("0.25").unwrap(), SampleSize::Share(0.25));
        for bad in ["0", "-3", "150%", "1.5", "x", ""] {
            assert!(SampleSize::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn detection_is_certain_when_the_sample_cannot_miss_and_nil_without_damage() {
        assert_eq!(detection_probability(100, 1, 100), 1.0);
        assert_eq!(detection_probability(100, 10, 91), 1.0);
        assert_eq!(detection_probability(100, 0, 50), 0.0);
        // One damaged among 100, a sample of 50: exactly one half.
        assert!((detection_probability(100, 1, 50) - 0.5).abs() < 1e-12);
    }
}
