//! How Go writes values, defined once: the JSON of its encoders and the text of its `fmt`
//! and `strconv`. The semantics this crate reproduces are upstream's Go code, and where a
//! value becomes text (an annotation kubectl stores, a FieldsV1 key, a server's message,
//! a YAML map key) the bytes must be the ones Go writes, or a comparison with what the
//! server holds fails.

pub(crate) mod fmt;
pub(crate) mod json;
