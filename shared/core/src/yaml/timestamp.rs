//! Which texts go-yaml v2 takes for a timestamp (`parseTimestamp`): Go's
//! `time.Parse` with four layouts.
//!
//! Why it matters: kubectl keeps an unquoted date as its text, but `!!timestamp`
//! on a text that is no date is an error, and the writer must quote anything a
//! YAML 1.1 reader could take for a date.

/// Whether go-yaml v2 parses `s` as a timestamp: one of the layouts
/// `2006-1-2T15:4:5.999999999Z07:00` (also with `t`), `2006-1-2 15:4:5.999999999`
/// or `2006-1-2`, with Go's field widths and range checks.
pub(super) fn is_timestamp(s: &str) -> bool {
    // go-yaml's quick check: four digits, then '-'.
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut p = Cursor { b, i: 0 };
    let Some(date) = p.date() else { return false };
    if p.done() {
        return date.valid();
    }
    match p.next() {
        Some(b'T' | b't') => p.time().is_some() && p.zone() && p.done() && date.valid(),
        Some(b' ') => p.time().is_some() && p.done() && date.valid(),
        _ => false,
    }
}

struct Date {
    year: u32,
    month: u32,
    day: u32,
}

impl Date {
    fn valid(&self) -> bool {
        let leap = self.year.is_multiple_of(4) && (!self.year.is_multiple_of(100) || self.year.is_multiple_of(400));
        let days = match self.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return false,
        };
        (1..=days).contains(&self.day)
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn done(&self) -> bool {
        self.i == self.b.len()
    }

    fn next(&mut self) -> Option<u8> {
        let c = *self.b.get(self.i)?;
        self.i += 1;
        Some(c)
    }

    fn literal(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    fn digit(&self, at: usize) -> Option<u32> {
        self.b.get(at).filter(|c| c.is_ascii_digit()).map(|c| u32::from(c - b'0'))
    }

    /// Go's `getnum(value, false)`: one digit, or two.
    fn one_or_two(&mut self) -> Option<u32> {
        let first = self.digit(self.i)?;
        self.i += 1;
        match self.digit(self.i) {
            Some(second) => {
                self.i += 1;
                Some(first * 10 + second)
            }
            None => Some(first),
        }
    }

    /// Go's `getnum(value, true)`: exactly two digits.
    fn two(&mut self) -> Option<u32> {
        let value = self.digit(self.i)? * 10 + self.digit(self.i + 1)?;
        self.i += 2;
        Some(value)
    }

    /// `2006-1-2`: the month is checked here (Go's range check), the day later.
    fn date(&mut self) -> Option<Date> {
        let year = (0..4)
            .map(|k| self.digit(self.i + k))
            .sum::<Option<u32>>()
            .map(|_| self.b[self.i..self.i + 4].iter().fold(0, |n, c| n * 10 + u32::from(c - b'0')))?;
        self.i += 4;
        self.literal(b'-')?;
        let month = self.one_or_two().filter(|m| (1..=12).contains(m))?;
        self.literal(b'-')?;
        let day = self.one_or_two()?;
        Some(Date { year, month, day })
    }

    /// `15:4:5.999999999`: hour, minute, second, optional fraction.
    fn time(&mut self) -> Option<()> {
        self.one_or_two().filter(|h| *h < 24)?;
        self.literal(b':')?;
        self.one_or_two().filter(|m| *m < 60)?;
        self.literal(b':')?;
        self.one_or_two().filter(|s| *s < 60)?;
        // A fraction: '.' or ',' and at least one digit; all its digits are taken.
        if matches!(self.b.get(self.i), Some(b'.' | b',')) && self.digit(self.i + 1).is_some() {
            self.i += 1;
            while self.digit(self.i).is_some() {
                self.i += 1;
            }
        }
        Some(())
    }

    /// `Z07:00`: `Z`, or a sign and `hh:mm` (hours up to 24, minutes up to 60).
    fn zone(&mut self) -> bool {
        match self.next() {
            Some(b'Z') => true,
            Some(b'+' | b'-') => (|| {
                let hours = self.two()?;
                self.literal(b':')?;
                let minutes = self.two()?;
                (hours <= 24 && minutes <= 60).then_some(())
            })()
            .is_some(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_timestamp;

    #[test]
    fn go_layouts() {
        for yes in [
            "2001-12-14",
            "2001-1-2",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14T21:59:43Z",
            "2001-12-14 21:59:43.10",
            "2000-02-29",
            "2001-12-14T1:2:3,5+24:00",
        ] {
            assert!(is_timestamp(yes), "{yes}");
        }
        for no in [
            "2001-12-14 21:59:43.10 -5",
            "2001-13-14",
            "2001-02-29",
            "2001-12-14T21:59:43",
            "2001-12-14 ",
            "20011-12-14",
            "2001-12-144",
            "2001-12-14T24:00:00Z",
            "2001-12-14T21:59:43+5:00",
        ] {
            assert!(!is_timestamp(no), "{no}");
        }
    }
}
