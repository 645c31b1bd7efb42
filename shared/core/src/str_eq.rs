//! String equality without a call to `memcmp` for the short strings that fill
//! Kubernetes objects (field names, merge keys such as env var and container names).
//!
//! `==` on `str` compares the lengths and then calls `memcmp`, whose call costs more
//! than the comparison itself for strings of a few bytes; the engines compare such
//! strings millions of times while matching list entries by merge key.

/// `a == b`.
#[inline]
pub(crate) fn equal(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        // Two overlapping 8-byte words cover the string: its head and its tail.
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// `N` bytes of `s` from `at`, as one integer's worth of bits.
#[inline]
fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
    s[at..at + N].try_into().expect("in bounds")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn compares_every_length() {
        for n in 0..40 {
            let a: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            assert!(equal(&a, &a.clone()), "{a}");
            for at in 0..n {
                let mut b = a.clone().into_bytes();
                b[at] = b'Z';
                let b = String::from_utf8(b).unwrap();
                assert!(!equal(&a, &b), "{a} vs {b}");
            }
            assert!(!equal(&a, &format!("{a}x")));
        }
    }

    proptest! {
        #[test]
        fn equals_str_eq(a in "[ab]{0,20}", b in "[ab]{0,20}") {
            prop_assert_eq!(equal(&a, &b), a == b);
        }
    }
}
