//! Facts read off one object as it is: a field by its path ([`field`], for the hot paths),
//! the ownerReferences tree below it ([`owner_tree`]), and whether it is ready
//! ([`readiness`]).

pub(crate) mod field;
pub mod owner_tree;
pub mod readiness;
