//! Array indices as the apiserver reads them from a pointer token.
//!
//! RFC 6902 allows only `0` or digits without a leading zero, and `-` (past
//! the end) for `add`. The apiserver parses indices with Go's `strconv.Atoi`
//! and supports negative indices counting from the end, so `01`, `+1` and
//! `-1` are all indices there; a preview must accept them too.

use super::error::Failure;

/// Parses a token like Go's `strconv.Atoi`: an optional sign, then one or more ASCII digits, within `i64`.
pub(crate) fn parse_go_int(token: &str) -> Option<i64> {
    let (negative, digits) = match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: i64 = 0;
    for b in digits.bytes() {
        let digit = i64::from(b - b'0');
        value = value.checked_mul(10)?;
        value = if negative { value.checked_sub(digit)? } else { value.checked_add(digit)? };
    }
    Some(value)
}

/// The element a token names in an array of `len` (for get, replace, remove, and traversal).
pub(crate) fn existing(token: &str, len: usize) -> Result<usize, Failure> {
    let index = parse_go_int(token).ok_or_else(|| Failure::NotAnIndex(token.to_string()))?;
    resolve(index, len, len)
}

/// Where a token inserts into an array of `len` (for add): `-` appends, and `len` itself is allowed.
pub(crate) fn insertion(token: &str, len: usize) -> Result<usize, Failure> {
    if token == "-" {
        return Ok(len);
    }
    let index = parse_go_int(token).ok_or_else(|| Failure::NotAnIndex(token.to_string()))?;
    resolve(index, len + 1, len)
}

/// Resolves `index` in a range of `size` slots (negative counts from the end); `len` is for the message.
fn resolve(index: i64, size: usize, len: usize) -> Result<usize, Failure> {
    let out_of_range = || Failure::IndexOutOfRange { index, len };
    let size_i = i64::try_from(size).map_err(|_| out_of_range())?;
    let resolved = if index < 0 { index + size_i } else { index };
    if resolved < 0 || resolved >= size_i {
        return Err(out_of_range());
    }
    usize::try_from(resolved).map_err(|_| out_of_range())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_atoi_accepts_signs_and_leading_zeros() {
        assert_eq!(parse_go_int("01"), Some(1));
        assert_eq!(parse_go_int("+7"), Some(7));
        assert_eq!(parse_go_int("-0"), Some(0));
        assert_eq!(parse_go_int("-9223372036854775808"), Some(i64::MIN));
        for bad in ["", "-", "+", "1a", " 1", "1.0", "9223372036854775808", "0x1", "1_0"] {
            assert_eq!(parse_go_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn negative_indices_count_from_the_end() {
        assert_eq!(existing("-1", 3), Ok(2));
        assert_eq!(existing("-3", 3), Ok(0));
        assert!(existing("-4", 3).is_err());
        assert!(existing("3", 3).is_err());
        assert!(existing("-", 3).is_err());
        assert!(existing("0", 0).is_err());
    }

    #[test]
    fn insertion_allows_the_end() {
        assert_eq!(insertion("-", 2), Ok(2));
        assert_eq!(insertion("2", 2), Ok(2));
        assert_eq!(insertion("-1", 2), Ok(2));
        assert_eq!(insertion("-3", 2), Ok(0));
        assert!(insertion("-4", 2).is_err());
        assert!(insertion("3", 2).is_err());
        assert_eq!(insertion("i64", 0), Err(Failure::NotAnIndex("i64".into())));
        assert!(insertion("-9223372036854775808", 2).is_err());
    }
}
