//! The type upstream deduces for an object whose kind publishes no schema.

use std::sync::OnceLock;

use super::{Schema, TypeDef, TypeId};

/// The type upstream deduces for an object whose kind has no schema: any value, maps merged
/// key by key, lists atomic (structured-merge-diff's `DeducedParseableType`). Server-side apply
/// predictions use it rather than refuse such kinds.
pub fn deduced() -> (&'static Schema, TypeId) {
    static DEDUCED: OnceLock<(Schema, TypeId)> = OnceLock::new();
    let (schema, root) = DEDUCED.get_or_init(|| {
        let mut schema = Schema::new();
        let root = schema.add(None, TypeDef::Untyped);
        (schema, root)
    });
    (schema, *root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deduced_type_is_untyped_and_made_once() {
        let (schema, root) = deduced();
        assert_eq!(schema.get(root), &TypeDef::Untyped);
        assert!(std::ptr::eq(schema, deduced().0));
    }
}
