//! Which fields of the built-in types are Go pointers.
//!
//! Strategic merge patch reads its metadata from the Go structs, not from
//! OpenAPI, and one Go detail changes its answers: a list patched onto a field
//! whose Go type is a pointer (`*LabelSelector`, `*bool`, `*IntOrString`) is
//! taken as a plain value, while a list onto a non-pointer field
//! (`PodTemplateSpec`, `string`) is an error. OpenAPI does not record
//! pointers, so `go_pointers.txt` (written by `go_pointers.go` from the Go
//! types) lists them per struct, by OpenAPI name.

use std::collections::HashMap;
use std::sync::OnceLock;

const DATA: &str = include_str!("go_pointers.txt");

static TABLE: OnceLock<HashMap<&'static str, Vec<&'static str>>> = OnceLock::new();

fn table() -> &'static HashMap<&'static str, Vec<&'static str>> {
    TABLE.get_or_init(|| {
        DATA.lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                Some((words.next()?, words.collect()))
            })
            .collect()
    })
}

/// Whether field `field` (its JSON name) of the struct named `type_name` (its
/// OpenAPI name, e.g. `io.k8s.api.apps.v1.DeploymentSpec`) is a Go pointer to
/// something other than a slice. Unknown structs have no pointer fields.
pub fn is_go_pointer(type_name: &str, field: &str) -> bool {
    table().get(type_name).is_some_and(|fields| fields.contains(&field))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_pointer_fields_of_workloads() {
        assert!(is_go_pointer("io.k8s.api.apps.v1.DeploymentSpec", "selector"));
        assert!(is_go_pointer("io.k8s.api.core.v1.Probe", "httpGet"));
        assert!(is_go_pointer("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference", "blockOwnerDeletion"));
        assert!(!is_go_pointer("io.k8s.api.apps.v1.DeploymentSpec", "template"));
        assert!(!is_go_pointer("io.k8s.api.core.v1.Container", "image"));
        assert!(!is_go_pointer("example.com.Unknown", "selector"));
    }
}
