//! Waiting between attempts: exponential with full jitter (client-go's
//! `wait.Backoff` with jitter), bounded by a deadline rather than a fixed number
//! of attempts, because every retry is re-planned and re-checked and so is safe;
//! the jitter keeps many writers of one object from retrying in lockstep.
//!
//! A watch's reconnects ([`crate::api::watch`]) use the same schedule with a longer
//! first wait and cap ([`Backoff::with_steps`]): an apiserver that is down is asked
//! again every few seconds, not every 2 s by every watch of every client at once.

use std::time::{Duration, Instant};

/// First wait, before jitter (a write's).
const BASE: Duration = Duration::from_millis(25);
/// No single wait of a write is longer than this.
const CAP: Duration = Duration::from_secs(2);

/// The retry schedule of one write.
#[derive(Debug)]
pub struct Backoff {
    started: Instant,
    deadline: Instant,
    step: u32,
    seed: u64,
    base: Duration,
    cap: Duration,
}

impl Backoff {
    /// A write's schedule (25 ms doubling up to 2 s) that gives up `budget` from now.
    pub fn new(budget: Duration) -> Self {
        Self::with_steps(BASE, CAP, budget)
    }

    /// A schedule whose waits start under `base` and double up to `cap` (each a random
    /// fraction of that ceiling: full jitter), giving up `budget` from now.
    pub fn with_steps(base: Duration, cap: Duration, budget: Duration) -> Self {
        let now = Instant::now();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let seed = (u64::from(nanos) << 16) ^ u64::from(std::process::id()) ^ 0x9e37_79b9_7f4a_7c15;
        // Budgets come from flags, which keep to Go's limit; a longer one is a year, not a panic.
        let deadline = now.checked_add(budget).unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600));
        Backoff { started: now, deadline, step: 0, seed: seed | 1, base, cap }
    }

    /// How long since the first attempt.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The next wait, or `None` when it would end past the deadline.
    pub fn next_wait(&mut self) -> Option<Duration> {
        let ceiling = self.base.saturating_mul(1 << self.step.min(16)).min(self.cap);
        self.step += 1;
        let wait = ceiling.mul_f64(self.random_fraction());
        Instant::now().checked_add(wait).is_some_and(|end| end < self.deadline).then_some(wait)
    }

    /// Whether there is still time for another attempt.
    pub fn has_time(&self) -> bool {
        Instant::now() < self.deadline
    }

    /// xorshift64*: enough to spread writers apart, no dependency needed.
    fn random_fraction(&mut self) -> f64 {
        self.seed ^= self.seed >> 12;
        self.seed ^= self.seed << 25;
        self.seed ^= self.seed >> 27;
        let value = self.seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (value >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_within_the_cap_and_stop_at_the_deadline() {
        let mut backoff = Backoff::new(Duration::from_secs(3600));
        let waits: Vec<Duration> = (0..20).map(|_| backoff.next_wait().unwrap()).collect();
        assert!(waits.iter().all(|w| *w <= CAP));
        assert!(waits[..3].iter().all(|w| *w <= BASE * 4), "{waits:?}");
        assert!(waits.iter().any(|w| *w > BASE * 4), "waits grow: {waits:?}");
        let mut spent = Backoff::new(Duration::ZERO);
        assert!(!spent.has_time());
        assert_eq!(spent.next_wait(), None);
    }

    #[test]
    fn other_steps_keep_to_their_own_cap() {
        let (base, cap) = (Duration::from_millis(500), Duration::from_secs(8));
        let mut backoff = Backoff::with_steps(base, cap, Duration::MAX);
        let waits: Vec<Duration> = (0..30).map(|_| backoff.next_wait().unwrap()).collect();
        assert!(waits[0] <= base, "{waits:?}");
        assert!(waits.iter().all(|w| *w <= cap), "{waits:?}");
        assert!(waits.iter().any(|w| *w > CAP), "past a write's cap: {waits:?}");
    }

    #[test]
    fn a_budget_past_what_an_instant_holds_is_no_panic() {
        let mut endless = Backoff::new(Duration::MAX);
        assert!(endless.has_time() && endless.next_wait().is_some());
    }
}
