//! A change as a user approves it: what it does to an object, field by field ([`effect`]),
//! and where it puts the entries of keyed lists ([`placement`]).

pub mod effect;
pub mod placement;
