//! ApplySets (KEP-3659) as `kubectl apply --prune --applyset` reads them: which objects an
//! apply of a set prunes.
//!
//! kubectl (`k8s.io/kubectl/pkg/cmd/apply/applyset.go`, `applyset_pruner.go`) names a set
//! by a parent object (a Secret by default, a ConfigMap, or a custom type), whose label
//! `applyset.kubernetes.io/id` is [`id`] of the parent's name, namespace, kind and group;
//! every member carries `applyset.kubernetes.io/part-of: ID`. The parent's annotations
//! say which group-kinds (`contains-group-kinds`) and which namespaces besides its own
//! (`additional-namespaces`) hold members; a prune lists each group-kind in each
//! namespace by the member label and deletes every object the apply did not apply.
//! [`read_parent`] reads a live parent as kubectl's `fetchParent` does, refusing the same
//! parents; the listing is the glue's. No library computes the ID: SHA-256 is here,
//! tested with the standard's vectors and with an ID kubectl wrote.

use std::collections::BTreeSet;

use base64::Engine;
use serde_json::Value;

/// The label every member carries, whose value is the set's [`id`].
pub const PART_OF_LABEL: &str = "applyset.kubernetes.io/part-of";
/// The parent's label holding the set's [`id`].
pub const ID_LABEL: &str = "applyset.kubernetes.io/id";
/// The parent's annotation naming the tool that manages the set (`kubectl/v1.32.4`).
pub const TOOLING_ANNOTATION: &str = "applyset.kubernetes.io/tooling";
/// The parent's annotation listing the members' group-kinds (`Deployment.apps,Secret`).
pub const GROUP_KINDS_ANNOTATION: &str = "applyset.kubernetes.io/contains-group-kinds";
/// The parent's annotation listing the namespaces besides its own that hold members.
pub const ADDITIONAL_NAMESPACES_ANNOTATION: &str = "applyset.kubernetes.io/additional-namespaces";
/// The label a CustomResourceDefinition carries when kubectl may use its kind as a parent.
pub const PARENT_TYPE_LABEL: &str = "applyset.kubernetes.io/is-parent-type";

/// The parent object naming a set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentRef {
    /// API group (`""` for Secrets and ConfigMaps).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace, `None` for a cluster-scoped parent.
    pub namespace: Option<String>,
}

/// A group-kind as the parent's annotation lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GroupKind {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
}

/// What a live parent says about its members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    /// The set's ID, the members' label value.
    pub id: String,
    /// The members' group-kinds, sorted.
    pub group_kinds: Vec<GroupKind>,
    /// The namespaces holding namespaced members: the parent's and the additional ones.
    pub namespaces: BTreeSet<String>,
}

/// Why kubectl refuses a parent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplySetError {
    /// No tooling annotation.
    #[error("it already exists and is missing the annotation {TOOLING_ANNOTATION}")]
    NoTooling,
    /// Another tool manages it.
    #[error("it already exists and is managed by tooling \"{0}\" instead of \"kubectl\"")]
    OtherTooling(String),
    /// No ID label.
    #[error("it exists and does not have the label {ID_LABEL}")]
    NoId,
    /// The ID label is not the parent's.
    #[error("it exists and has an incorrect value for the label {ID_LABEL} (got: {got}, want: {want})")]
    WrongId {
        /// The label's value.
        got: String,
        /// The parent's ID.
        want: String,
    },
    /// No group-kinds annotation (kubectl does not discover the members' types).
    #[error("kubectl requires the annotation {GROUP_KINDS_ANNOTATION} on every ApplySet parent")]
    NoGroupKinds,
}

/// The set's ID: `applyset-` + unpadded URL-safe base64 of SHA-256 of
/// `NAME.NAMESPACE.KIND.GROUP` + `-v1` (kubectl's `ApplySet.ID`).
pub fn id(parent: &ParentRef) -> String {
    let text = [parent.name.as_str(), parent.namespace.as_deref().unwrap_or(""), &parent.kind, &parent.group].join(".");
    let hash = sha256(text.as_bytes());
    format!("applyset-{}-v1", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(hash))
}

/// Reads the live `parent` of `reference` as kubectl's `fetchParent` does.
pub fn read_parent(reference: &ParentRef, parent: &Value) -> Result<Parent, ApplySetError> {
    let text = |map: &str, key: &str| parent.pointer(&format!("/metadata/{map}")).and_then(|m| m.get(key))?.as_str();
    let tooling = text("annotations", TOOLING_ANNOTATION).ok_or(ApplySetError::NoTooling)?;
    // The tool's name is the value without its last `/VERSION` part.
    let tool = tooling.rsplit_once('/').map_or(tooling, |(name, _)| name);
    if tool != "kubectl" {
        return Err(ApplySetError::OtherTooling(tool.to_string()));
    }
    let want = id(reference);
    let got = text("labels", ID_LABEL).ok_or(ApplySetError::NoId)?;
    if got != want {
        return Err(ApplySetError::WrongId { got: got.to_string(), want });
    }
    let kinds = text("annotations", GROUP_KINDS_ANNOTATION).ok_or(ApplySetError::NoGroupKinds)?;
    let mut group_kinds: Vec<GroupKind> = kinds.split(',').filter(|s| !s.is_empty()).map(group_kind).collect();
    group_kinds.sort();
    group_kinds.dedup();
    let mut namespaces: BTreeSet<String> = text("annotations", ADDITIONAL_NAMESPACES_ANNOTATION)
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if let Some(namespace) = &reference.namespace {
        namespaces.insert(namespace.clone());
    }
    Ok(Parent { id: want, group_kinds, namespaces })
}

/// `Kind.group` as apimachinery's `ParseGroupKind` reads it: the kind before the first dot.
fn group_kind(text: &str) -> GroupKind {
    match text.split_once('.') {
        Some((kind, group)) => GroupKind { group: group.to_string(), kind: kind.to_string() },
        None => GroupKind { group: String::new(), kind: text.to_string() },
    }
}

/// `object` as kubectl applies it into the set: with the member label.
pub fn with_member_label(mut object: Value, id: &str) -> Value {
    if let Some(map) = object.as_object_mut() {
        let metadata = map.entry("metadata").or_insert_with(|| Value::Object(Default::default()));
        if let Some(metadata) = metadata.as_object_mut() {
            let labels = metadata.entry("labels").or_insert_with(|| Value::Object(Default::default()));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert(PART_OF_LABEL.to_string(), Value::String(id.to_string()));
            }
        }
    }
    object
}

/// SHA-256 (FIPS 180-4).
fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] =
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in message.chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (state, value) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *state = state.wrapping_add(value);
        }
    }
    let mut out = [0u8; 32];
    for (i, word) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha256_gives_the_standards_digests() {
        assert_eq!(hex(&sha256(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex(&sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        // Two blocks of padding: 64 bytes of input.
        assert_eq!(hex(&sha256(&[b'a'; 64])), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
    }

    fn secret_parent() -> ParentRef {
        ParentRef { group: String::new(), kind: "Secret".into(), name: "set1".into(), namespace: Some("shop".into()) }
    }

    #[test]
    fn a_parent_kubectl_wrote_is_read_with_its_kinds_and_namespaces() {
        let reference = secret_parent();
        let parent = json!({"metadata": {"name": "set1", "namespace": "shop",
            "labels": {"applyset.kubernetes.io/id": id(&reference)},
            "annotations": {"applyset.kubernetes.io/tooling": "kubectl/v1.32.4",
                "applyset.kubernetes.io/contains-group-kinds": "Deployment.apps,ConfigMap",
                "applyset.kubernetes.io/additional-namespaces": "other"}}});
        assert_eq!(
            read_parent(&reference, &parent),
            Ok(Parent {
                id: id(&reference),
                group_kinds: vec![
                    GroupKind { group: String::new(), kind: "ConfigMap".into() },
                    GroupKind { group: "apps".into(), kind: "Deployment".into() },
                ],
                namespaces: ["other", "shop"].map(String::from).into_iter().collect(),
            })
        );
        // Python's hashlib and base64.urlsafe_b64encode of "set1.shop.Secret." (padding dropped).
        assert_eq!(id(&reference), "applyset-0F1IuN66bxBVFOw_9qF3iWNdp1Kn01WMg6APSXWB5fA-v1");
        // The label kubectl v1.32.4 wrote on --applyset=web-set -n fw-n-as.
        let written = ParentRef { name: "web-set".into(), namespace: Some("fw-n-as".into()), ..secret_parent() };
        assert_eq!(id(&written), "applyset-fCr578SwqkSlUMejMeW1-06cwYeVESx89_r4cjuJUHY-v1");
    }

    #[test]
    fn parents_kubectl_refuses_are_refused_with_its_reasons() {
        let reference = secret_parent();
        let with =
            |labels: Value, annotations: Value| json!({"metadata": {"labels": labels, "annotations": annotations}});
        let tooling = json!({"applyset.kubernetes.io/tooling": "kubectl/v1.32.4"});
        assert_eq!(read_parent(&reference, &with(json!({}), json!({}))), Err(ApplySetError::NoTooling));
        assert_eq!(
            read_parent(&reference, &with(json!({}), json!({"applyset.kubernetes.io/tooling": "helm/v3"}))),
            Err(ApplySetError::OtherTooling("helm".into()))
        );
        assert_eq!(read_parent(&reference, &with(json!({}), tooling.clone())), Err(ApplySetError::NoId));
        assert_eq!(
            read_parent(&reference, &with(json!({"applyset.kubernetes.io/id": "applyset-x-v1"}), tooling.clone())),
            Err(ApplySetError::WrongId { got: "applyset-x-v1".into(), want: id(&reference) })
        );
        assert_eq!(
            read_parent(&reference, &with(json!({"applyset.kubernetes.io/id": id(&reference)}), tooling)),
            Err(ApplySetError::NoGroupKinds)
        );
    }

    #[test]
    fn members_carry_the_part_of_label() {
        let object = with_member_label(json!({"kind": "ConfigMap", "metadata": {"name": "a"}}), "applyset-x-v1");
        assert_eq!(object["metadata"]["labels"], json!({"applyset.kubernetes.io/part-of": "applyset-x-v1"}));
    }
}
