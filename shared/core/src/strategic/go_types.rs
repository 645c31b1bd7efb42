//! How Go sees a decoded JSON value: its dynamic type.
//!
//! Upstream tells values apart by `reflect.TypeOf`, where `1` (`int64`) and `1.0`
//! (`float64`) differ, and compares list elements and merge keys by their `%v` text
//! ([`crate::go_format::fmt::v`]). Reproducing both is what makes orderings and type
//! errors match the apiserver.

use serde_json::Value;

/// The dynamic Go type a value has after `k8s.io/apimachinery/pkg/util/json.Unmarshal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GoType {
    /// `nil`.
    Nil,
    /// `bool`.
    Bool,
    /// `int64`: a number written without fraction or exponent that fits.
    Int,
    /// `float64`: every other number.
    Float,
    /// `string`.
    String,
    /// `[]interface {}`.
    Slice,
    /// `map[string]interface {}`.
    Map,
}

impl GoType {
    /// The type of a value.
    pub(crate) fn of(value: &Value) -> GoType {
        match value {
            Value::Null => GoType::Nil,
            Value::Bool(_) => GoType::Bool,
            Value::Number(n) if n.is_i64() => GoType::Int,
            Value::Number(_) => GoType::Float,
            Value::String(_) => GoType::String,
            Value::Array(_) => GoType::Slice,
            Value::Object(_) => GoType::Map,
        }
    }

    /// The Go spelling of the type, as `reflect.Type.String()` writes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            GoType::Nil => "%!s(<nil>)",
            GoType::Bool => "bool",
            GoType::Int => "int64",
            GoType::Float => "float64",
            GoType::String => "string",
            GoType::Slice => "[]interface {}",
            GoType::Map => "map[string]interface {}",
        }
    }
}

/// The Go type name of a value (for `ErrBadArgType`).
pub(crate) fn type_name(value: &Value) -> &'static str {
    GoType::of(value).name()
}

/// The capacity of a `[]interface{}` of `len` elements as Go's JSON decoder
/// builds it (`append` one element at a time from `make([]any, 0)`), on 64-bit.
///
/// Upstream appends to the live list when merging a set of primitives, and
/// whether that append writes into the live list's spare capacity (and so
/// changes what upstream later reads as the live order) depends on it.
pub(crate) fn decoded_capacity(len: usize) -> usize {
    const ELEM: usize = 16; // an interface value: type word and data word
    let mut cap = 0usize;
    for n in 1..=len {
        if n <= cap {
            continue;
        }
        // runtime.nextslicecap
        let mut grown = cap;
        if n > cap * 2 {
            grown = n;
        } else if cap < 256 {
            grown = cap * 2;
        } else {
            while grown < n {
                grown += (grown + 3 * 256) >> 2;
            }
        }
        cap = round_up_allocation(grown.saturating_mul(ELEM)) / ELEM;
    }
    cap
}

/// `runtime.roundupsize` for an object with pointers: the size class the
/// allocation lands in (small objects over 512 bytes carry an 8-byte header),
/// or whole 8 KiB pages for large objects.
fn round_up_allocation(size: usize) -> usize {
    const CLASSES: [usize; 68] = [
        0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416,
        448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456,
        4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432,
        19072, 20480, 21760, 24576, 27264, 28672, 32768,
    ];
    const HEADER: usize = 8;
    const PAGE: usize = 8192;
    if size <= 32768 - HEADER {
        let request = if size > 512 { size + HEADER } else { size };
        let class = CLASSES.iter().copied().find(|&c| c >= request).unwrap_or(32768);
        return class - (request - size);
    }
    size.div_ceil(PAGE).saturating_mul(PAGE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decoded_capacity_follows_go_append_growth() {
        // Capacities measured with sigs.k8s.io/json on Go 1.26 (amd64) for 0..=1200 elements.
        let steps = [0, 1, 2, 4, 8, 16, 32, 71, 143, 303, 591, 1023, 1535];
        for len in 0..=1200 {
            let expected = steps.iter().copied().find(|&c| c >= len).unwrap_or(usize::MAX);
            assert_eq!(decoded_capacity(len), expected, "len {len}");
        }
    }

    #[test]
    fn tells_int_from_float() {
        assert_eq!(GoType::of(&json!(1)), GoType::Int);
        assert_eq!(GoType::of(&json!(1.0)), GoType::Float);
        assert_eq!(type_name(&json!([])), "[]interface {}");
    }
}
