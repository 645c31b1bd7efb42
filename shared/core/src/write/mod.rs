//! The decisions of the write path, pure: the precondition a planned change is sent with
//! ([`guard`]), what to do after a write lost a race ([`replan`]), and how a pre-image is
//! put back ([`restore`]). The glue's write path sends; these decide.

pub mod guard;
pub mod replan;
pub mod restore;
