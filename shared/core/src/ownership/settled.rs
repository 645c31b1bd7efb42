//! What the server makes of a field an apply prunes: the rule `owners plan` and the
//! preview of `owners transfer` both read a server dry run's result with.
//!
//! An apply prunes the fields its manager owned and no longer sets; the apiserver then
//! defaults the object again, so a pruned field it defaults (`dnsPolicy`, a port's
//! `protocol`, Secret `data` rebuilt from `stringData`) comes back. The dry run's result is
//! the object as it will be: a pruned field present there with the value it has live did
//! not change ([`Settled::Defaulted`]); present with another value, the server reset it
//! ([`Settled::Reset`]); absent, it is gone ([`Settled::Removed`]). Only the server knows its
//! defaults (and its admission's), so there is no local table of them to guess with.

use serde_json::Value;

use crate::fieldpath::{value_at, values_equal, Path};

/// What became of one pruned field in the server's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Absent from the result: the field leaves the object.
    Removed,
    /// Present with the value it has live: set again by the server, no change.
    Defaulted,
    /// Present with another value: set again by the server, to a default that differs.
    Reset,
}

impl Settled {
    /// Sorts the pruned field at `path` by its value in `live` and in `server` (the dry
    /// run's result). A null counts as absent, as the apiserver drops it.
    pub fn of(path: &Path, live: &Value, server: &Value) -> Settled {
        match (present(server, path), present(live, path)) {
            (None, _) => Settled::Removed,
            (Some(now), Some(before)) if values_equal(now, before) => Settled::Defaulted,
            (Some(_), _) => Settled::Reset,
        }
    }

    /// Whether the field keeps its value: nothing changes for it.
    pub fn unchanged(self) -> bool {
        self == Settled::Defaulted
    }
}

/// The value at `path`, a null counting as none.
fn present<'a>(object: &'a Value, path: &Path) -> Option<&'a Value> {
    value_at(object, path.elements()).filter(|v| !v.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pruned_field_the_server_sets_again_to_its_value_is_defaulted_otherwise_removed() {
        let live = json!({"spec": {"dnsPolicy": "ClusterFirst", "replicas": 3, "paused": true,
            "ports": [{"port": 80, "protocol": "TCP"}]}});
        let server = json!({"spec": {"dnsPolicy": "ClusterFirst", "replicas": 1, "paused": null,
            "ports": [{"port": 80, "protocol": "TCP"}]}});
        let settled = |path: Path| Settled::of(&path, &live, &server);
        assert_eq!(settled(Path::fields(["spec", "dnsPolicy"])), Settled::Defaulted);
        assert_eq!(settled(Path::fields(["spec", "ports"])), Settled::Defaulted);
        assert_eq!(settled(Path::fields(["spec", "replicas"])), Settled::Reset);
        assert_eq!(settled(Path::fields(["spec", "paused"])), Settled::Removed);
        assert_eq!(settled(Path::fields(["spec", "gone"])), Settled::Removed);
        assert!(Settled::Defaulted.unchanged() && !Settled::Reset.unchanged() && !Settled::Removed.unchanged());
    }
}
