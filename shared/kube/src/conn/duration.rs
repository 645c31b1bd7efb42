//! Durations as kubectl's flags take them: Go's `time.ParseDuration` (`1m30s`, `1.5h`,
//! `500ms`, `250us`), exactly and with Go's limit. Every duration a plugin reads from a
//! flag or the environment (`--request-timeout`, `--max-age`, `FIELDWISE_BACKUP_MAX_AGE`)
//! goes through [`parse`], so none can overflow what a [`Duration`] or an [`std::time::Instant`]
//! holds.
//!
//! Why not a float: `18446744073709551615s` times one second does not fit a `Duration`
//! (`Duration::from_secs_f64` panics), and `5000000000000000h` fits a `Duration` but not
//! an `Instant` a deadline is computed from. Go counts nanoseconds in an `int64` and refuses
//! anything longer (`time: invalid duration`), about 292 years; so does this, in integers.

use std::time::Duration;

/// The longest duration Go (and so kubectl) takes: `i64::MAX` nanoseconds, 2562047h47m16.854775807s.
pub const MAX: Duration = Duration::new(9_223_372_036, 854_775_807);

/// Which units a duration may be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Go's: `h`, `m`, `s`, `ms`, `us` (`µs`), `ns`.
    Go,
    /// Go's and `d` (24 hours), for ages of backups.
    GoAndDays,
}

/// Why a duration was refused, in Go's words (`time: invalid duration "x"`), with the
/// length limit said when that is what was passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationError(pub String);

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

const NANOS_PER_SECOND: u128 = 1_000_000_000;

fn unit_nanos(unit: &str, units: Units) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => NANOS_PER_SECOND,
        "m" => 60 * NANOS_PER_SECOND,
        "h" => 3_600 * NANOS_PER_SECOND,
        "d" if units == Units::GoAndDays => 86_400 * NANOS_PER_SECOND,
        _ => return None,
    })
}

/// Parses `text` as Go's `time.ParseDuration` does (with `units`): a sequence of decimal
/// numbers, each with an optional fraction and a unit; `0` alone needs no unit. A sign is
/// refused (a negative duration means nothing to these flags), and so is anything longer
/// than [`MAX`].
///
/// ```
/// use fieldwise_kube::conn::duration::{parse, Units};
/// use std::time::Duration;
/// assert_eq!(parse("1m30s", Units::Go).unwrap(), Duration::from_secs(90));
/// assert_eq!(parse("1.5h", Units::Go).unwrap(), Duration::from_secs(5400));
/// assert!(parse("5000000000000000h", Units::Go).is_err());
/// ```
pub fn parse(text: &str, units: Units) -> Result<Duration, DurationError> {
    let invalid = || DurationError(format!("time: invalid duration {text:?}"));
    let too_long = || {
        DurationError(format!("time: invalid duration {text:?}: longer than Go's limit of 2562047h47m16.854775807s"))
    };
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    if text.starts_with(['-', '+']) {
        return Err(DurationError(format!("time: invalid duration {text:?}: a duration cannot be signed")));
    }
    if text.is_empty() {
        return Err(invalid());
    }
    let max = MAX.as_nanos();
    let mut total: u128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let whole_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let whole = &rest[..whole_end];
        rest = &rest[whole_end..];
        let fraction = match rest.strip_prefix('.') {
            Some(after) => {
                let end = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
                rest = &after[end..];
                &after[..end]
            }
            None => "",
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        if unit.is_empty() {
            return Err(DurationError(format!("time: missing unit in duration {text:?}")));
        }
        let nanos = unit_nanos(unit, units)
            .ok_or_else(|| DurationError(format!("time: unknown unit {unit:?} in duration {text:?}")))?;
        // The whole part: digit by digit, refused as soon as it passes the limit.
        let mut value: u128 = 0;
        for digit in whole.bytes() {
            value = value * 10 + u128::from(digit - b'0');
            if value * nanos > max {
                return Err(too_long());
            }
        }
        value *= nanos;
        // The fraction: Go keeps the digits that fit and drops the rest.
        let mut scale: u128 = 1;
        let mut numerator: u128 = 0;
        for digit in fraction.bytes().take(18) {
            numerator = numerator * 10 + u128::from(digit - b'0');
            scale *= 10;
        }
        value += numerator * nanos / scale;
        total += value;
        if total > max {
            return Err(too_long());
        }
    }
    let seconds = u64::try_from(total / NANOS_PER_SECOND).map_err(|_| too_long())?;
    let nanos = u32::try_from(total % NANOS_PER_SECOND).map_err(|_| too_long())?;
    Ok(Duration::new(seconds, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn go_forms_exactly() {
        let go = |text: &str| parse(text, Units::Go);
        assert_eq!(go("0"), Ok(Duration::ZERO));
        assert_eq!(go("0s"), Ok(Duration::ZERO));
        assert_eq!(go("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(go("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(go(".5s"), Ok(Duration::from_millis(500)));
        assert_eq!(go("1.s"), Ok(Duration::from_secs(1)));
        assert_eq!(go("2m300ms"), Ok(Duration::from_millis(120_300)));
        assert_eq!(go("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(go("250µs"), Ok(Duration::from_micros(250)));
        assert_eq!(go("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(go("2562047h47m16.854775807s"), Ok(MAX), "Go's longest duration");
        assert_eq!(go("0.000000000999999s"), Ok(Duration::ZERO), "below a nanosecond, as Go truncates");
        assert_eq!(parse("30d", Units::GoAndDays), Ok(Duration::from_secs(30 * 86_400)));
    }

    #[test]
    fn refusals_in_gos_words() {
        let go = |text: &str| parse(text, Units::Go).unwrap_err().to_string();
        assert_eq!(go(""), "time: invalid duration \"\"");
        assert_eq!(go("x"), "time: invalid duration \"x\"");
        assert_eq!(go("."), "time: invalid duration \".\"");
        assert_eq!(go("5"), "time: missing unit in duration \"5\"");
        assert_eq!(go("1m3"), "time: missing unit in duration \"1m3\"");
        assert_eq!(go("5d"), "time: unknown unit \"d\" in duration \"5d\"");
        assert_eq!(go("1.2.3s"), "time: missing unit in duration \"1.2.3s\"", "as Go reads it");
        assert!(go("-5s").contains("cannot be signed"));
        for long in ["18446744073709551615s", "5000000000000000h", "2562047h47m16.854775808s", "2562048h", "106752d"] {
            let err = parse(long, Units::GoAndDays).unwrap_err().to_string();
            assert!(err.contains("longer than Go's limit"), "{long}: {err}");
        }
    }

    proptest! {
        /// No text makes the parser panic, and whatever it accepts fits Go's limit, so adding
        /// it to an `Instant` (a deadline) cannot overflow either.
        #[test]
        fn never_panics_and_never_exceeds_the_limit(text in "\\PC{0,40}", digits in "[0-9]{1,40}", unit in "(ns|us|ms|s|m|h|d|x)") {
            for candidate in [text.clone(), format!("{digits}{unit}"), format!("{digits}.{digits}{unit}{digits}{unit}")] {
                for units in [Units::Go, Units::GoAndDays] {
                    if let Ok(duration) = parse(&candidate, units) {
                        prop_assert!(duration <= MAX);
                        prop_assert!(std::time::Instant::now().checked_add(duration).is_some());
                    }
                }
            }
        }
    }
}
