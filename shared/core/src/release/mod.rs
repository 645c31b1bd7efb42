//! What a release tool keeps of the objects it applied, and what its next apply deletes:
//! a Helm release as Helm stores it ([`helm`]), an ApplySet's parent as kubectl reads it
//! ([`applyset`]), and the prune of a set that no longer has an object ([`prune`]).

pub mod applyset;
pub mod helm;
pub mod prune;
