//! When a manager last wrote: relative (`5m`), absolute (RFC 3339) or not shown.

use jiff::Timestamp;

/// How times are shown (`--time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TimeStyle {
    /// How long ago, as kubectl's AGE column (`45s`, `5m`, `3h12m`, `2d`).
    #[default]
    Relative,
    /// The RFC 3339 time the apiserver recorded.
    Absolute,
    /// No time at all (stable output for diffs and tests).
    None,
}

/// A managedFields `time` in the chosen style; empty when there is none (or `--time none`).
pub fn show(time: Option<&str>, style: TimeStyle, now: Timestamp) -> String {
    let Some(time) = time else { return String::new() };
    match style {
        TimeStyle::None => String::new(),
        TimeStyle::Absolute => time.to_string(),
        TimeStyle::Relative => match time.parse::<Timestamp>() {
            Ok(then) => human(now.as_second() - then.as_second()),
            Err(_) => time.to_string(),
        },
    }
}

/// kubectl's `HumanDuration`: two units while they matter, one after.
pub fn human(seconds: i64) -> String {
    let s = seconds.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    match s {
        _ if s < 120 => format!("{s}s"),
        _ if m < 10 => format!("{m}m{}s", s % 60).replace("m0s", "m"),
        _ if h < 3 => format!("{m}m"),
        _ if h < 8 => format!("{h}h{}m", m % 60).replace("h0m", "h"),
        _ if h < 48 => format!("{h}h"),
        _ if h < 24 * 8 => format!("{d}d{}h", h % 24).replace("d0h", "d"),
        _ if d < 365 * 2 => format!("{d}d"),
        _ if d < 365 * 8 => format!("{}y{}d", d / 365, d % 365).replace("y0d", "y"),
        _ => format!("{}y", d / 365),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_like_kubectl() {
        for (secs, text) in [
            (5, "5s"),
            (119, "119s"),
            (150, "2m30s"),
            (600, "10m"),
            (3 * 3600 + 600, "3h10m"),
            (30 * 3600, "30h"),
            (3 * 86400 + 3600, "3d1h"),
            (40 * 86400, "40d"),
            (800 * 86400, "2y70d"),
        ] {
            assert_eq!(human(secs), text, "{secs}");
        }
        let now: Timestamp = "2024-05-01T10:05:00Z".parse().unwrap();
        assert_eq!(show(Some("2024-05-01T10:00:00Z"), TimeStyle::Relative, now), "5m");
        assert_eq!(show(Some("2024-05-01T10:00:00Z"), TimeStyle::Absolute, now), "2024-05-01T10:00:00Z");
        assert_eq!(show(Some("2024-05-01T10:00:00Z"), TimeStyle::None, now), "");
        assert_eq!(show(None, TimeStyle::Relative, now), "");
    }
}
