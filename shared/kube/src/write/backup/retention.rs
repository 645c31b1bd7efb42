//! How many backups of one object are kept, and for how long.

use std::time::Duration;

use crate::conn::duration::{self, Units};
use crate::error::{Error, Result};
use crate::write::backup::atomic::remove_record;
use crate::write::backup::record::Backup;

/// How many backups of one object are kept, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// At most this many backups per object (the newest); 0 keeps any number.
    pub keep: usize,
    /// Backups older than this are removed; `None` keeps them forever.
    pub max_age: Option<Duration>,
}

impl Default for Retention {
    /// 20 backups per object, 30 days.
    fn default() -> Self {
        Retention { keep: 20, max_age: Some(Duration::from_secs(30 * 24 * 3600)) }
    }
}

impl Retention {
    /// The default policy, changed by `FIELDWISE_BACKUP_KEEP` (a count, 0 for no limit)
    /// and `FIELDWISE_BACKUP_MAX_AGE` (`30d`, `12h`, `90m`; 0 for no limit).
    pub fn from_env() -> Result<Self> {
        let mut policy = Retention::default();
        if let Ok(text) = std::env::var("FIELDWISE_BACKUP_KEEP") {
            policy.keep = parse_keep(&text, "FIELDWISE_BACKUP_KEEP")?;
        }
        if let Ok(text) = std::env::var("FIELDWISE_BACKUP_MAX_AGE") {
            policy.max_age = parse_age(&text, "FIELDWISE_BACKUP_MAX_AGE")?;
        }
        Ok(policy)
    }
}

/// Parses a backup count (`FIELDWISE_BACKUP_KEEP`, `--keep`).
pub fn parse_keep(text: &str, source: &str) -> Result<usize> {
    text.trim()
        .parse()
        .map_err(|_| Error::usage(format!("invalid {source} {text:?}: use a whole number (0 keeps any number)")))
}

/// Parses a backup age (`FIELDWISE_BACKUP_MAX_AGE`, `--max-age`): a Go duration with `d`
/// (days) allowed too, e.g. `30d`, `12h`, `90m` ([`crate::conn::duration`]); `0` means no limit.
pub fn parse_age(text: &str, source: &str) -> Result<Option<Duration>> {
    let text = text.trim();
    let age = duration::parse(text, Units::GoAndDays).map_err(|why| {
        Error::usage(format!(
            "invalid {source} {text:?}: {why} (use a number with a unit (d, h, m, s), e.g. 30d; 0 keeps backups forever)"
        ))
    })?;
    Ok((!age.is_zero()).then_some(age))
}

/// What a prune removed and kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Files removed.
    pub removed: usize,
    /// Files kept.
    pub kept: usize,
}

/// Prunes one object's backups, given oldest first.
pub(super) fn prune_sorted(backups: &[Backup], policy: Retention) -> Result<PruneReport> {
    let now = jiff::Timestamp::now();
    let mut report = PruneReport::default();
    let count = backups.len();
    for (index, backup) in backups.iter().enumerate() {
        let newer = count - index - 1;
        let too_many = policy.keep > 0 && newer >= policy.keep;
        let too_old = policy.max_age.is_some_and(|max| age(&backup.record.time, now).is_some_and(|a| a > max));
        if too_many || too_old {
            // Gone already: another process pruned the same object at the same time.
            if remove_record(&backup.file)? {
                report.removed += 1;
            }
        } else {
            report.kept += 1;
        }
    }
    Ok(report)
}

fn age(time: &str, now: jiff::Timestamp) -> Option<Duration> {
    let then: jiff::Timestamp = time.parse().ok()?;
    let seconds = now.as_second() - then.as_second();
    Some(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_too_long_for_a_duration_are_refused_not_wrapped() {
        // 213503982334601d times 86,400 s overflows a u64: it used to wrap (or panic in debug).
        for long in ["213503982334601d", "18446744073709551615s", "106752d"] {
            let err = parse_age(long, "--max-age").unwrap_err().to_string();
            assert!(err.starts_with(&format!("invalid --max-age {long:?}: time: invalid duration")), "{err}");
            assert!(err.contains("longer than Go's limit"), "{err}");
        }
        assert_eq!(parse_age("1d12h", "--max-age").unwrap(), Some(Duration::from_secs(36 * 3600)));
        assert_eq!(parse_age("106751d", "--max-age").unwrap(), Some(Duration::from_secs(106_751 * 86_400)));
    }
}
