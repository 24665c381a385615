//! `--shard K/N`: a stable share of a manifest, so N jobs (a Slurm array, a Kubernetes
//! indexed job) can each take theirs. An item belongs to shard `K` when the first eight bytes
//! of the SHA-256 of its key, as a big-endian number, are `K` modulo `N`: the same share
//! whatever the order of the manifest or the machine, and the N shards partition it exactly.

/// One share of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This share, from 0.
    pub index: u64,
    /// How many shares.
    pub count: u64,
}

/// A shard that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    /// Not `K/N` with `0 <= K < N`.
    #[error("shard {0:?}: give K/N with 0 <= K < N (e.g. 0/4)")]
    Bad(String),
    /// An environment variable that should be a number is not.
    #[error("{name}={value:?}: not a number")]
    NotANumber {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// `JOB_COMPLETION_INDEX` is set, but no count says of how many.
    #[error("JOB_COMPLETION_INDEX is set: give the number of shards with --shard-count")]
    NoCount,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Parses `K/N`.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::Bad(text.to_string());
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The shard a job array says this process is, through `var` (the environment):
    /// `SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN` (0 when unset) of
    /// `SLURM_ARRAY_TASK_COUNT`, else `JOB_COMPLETION_INDEX` of `count`; none when neither is
    /// set. A `count` given overrides Slurm's.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
        count: Option<u64>,
    ) -> Result<Option<Shard>, ShardError> {
        let number = |name: &'static str| -> Result<Option<u64>, ShardError> {
            match var(name) {
                None => Ok(None),
                Some(value) => value
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| ShardError::NotANumber { name, value }),
            }
        };
        let (index, count) = match number("SLURM_ARRAY_TASK_ID")? {
            Some(id) => {
                let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
                let n = match count {
                    Some(n) => n,
                    None => number("SLURM_ARRAY_TASK_COUNT")?.ok_or(ShardError::NoCount)?,
                };
                (id.saturating_sub(min), n)
            }
            None => match number("JOB_COMPLETION_INDEX")? {
                Some(i) => (i, count.ok_or(ShardError::NoCount)?),
                None => return Ok(None),
            },
        };
        Shard::parse(&format!("{index}/{count}")).map(Some)
    }

    /// Whether the item of this key is in this share.
    pub fn contains(&self, key: &str) -> bool {
        let hash = super::manifest::key_hash(key);
        let mut first = [0u8; 8];
        first.copy_from_slice(&hash[..8]);
        u64::from_be_bytes(first) % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_come_from_the_job_array() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "1", "a/2", "0/0"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let env = |pairs: &'static [(&str, &str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert_eq!(Shard::from_env(slurm, None), Ok(Some(Shard { index: 2, count: 3 })));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "5")]);
        assert_eq!(Shard::from_env(k8s, None), Err(ShardError::NoCount));
        assert_eq!(Shard::from_env(k8s, Some(8)), Ok(Some(Shard { index: 5, count: 8 })));
        assert_eq!(Shard::from_env(env(&[]), Some(8)), Ok(None));
    }

    #[test]
    fn the_shards_of_a_key_set_partition_it() {
        let keys: Vec<String> = (0..500).map(|i| format!("job/{i}")).collect();
        for n in 1..6 {
            let mut owners = vec![0; keys.len()];
            for k in 0..n {
                let s = Shard { index: k, count: n };
                for (i, key) in keys.iter().enumerate() {
                    owners[i] += u32::from(s.contains(key));
                }
            }
            assert!(owners.iter().all(|&o| o == 1), "{n} shards");
        }
    }
}
