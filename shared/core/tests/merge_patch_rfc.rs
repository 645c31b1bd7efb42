//! JSON Merge Patch end to end: the RFC 7396 Appendix A examples, and three-way patches as
//! `kubectl apply` creates them for custom resources.
//!
//! The three-way cases follow the scenarios of upstream's jsonmergepatch tests (add, delete,
//! change, type changes, conflicts with live edits), written anew: each gives original (last
//! applied), modified (wanted), current (live), the patch upstream creates, and the object the
//! apiserver makes of current with that patch.

use fieldwise_core::merge_patch::{self, MergePatchError, Precondition};
use serde_json::{json, Value};

/// RFC 7396 Appendix A: target, patch, result.
fn rfc7396_examples() -> Vec<(Value, Value, Value)> {
    vec![
        (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
        (json!({"a": "b"}), json!({"b": "c"}), json!({"a": "b", "b": "c"})),
        (json!({"a": "b"}), json!({"a": null}), json!({})),
        (json!({"a": "b", "b": "c"}), json!({"a": null}), json!({"b": "c"})),
        (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
        (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
        (json!({"a": {"b": "c"}}), json!({"a": {"b": "d", "c": null}}), json!({"a": {"b": "d"}})),
        (json!({"a": [{"b": "c"}]}), json!({"a": [1]}), json!({"a": [1]})),
        (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
        (json!({"a": "b"}), json!(["c"]), json!(["c"])),
        (json!({"a": "foo"}), json!(null), json!(null)),
        (json!({"a": "foo"}), json!("bar"), json!("bar")),
        (json!({"e": null}), json!({"a": 1}), json!({"e": null, "a": 1})),
        (json!([1, 2]), json!({"a": "b", "c": null}), json!({"a": "b"})),
        (json!({}), json!({"a": {"bb": {"ccc": null}}}), json!({"a": {"bb": {}}})),
    ]
}

#[test]
fn rfc7396_appendix_a() {
    for (target, patch, result) in rfc7396_examples() {
        assert_eq!(merge_patch::apply(&target, &patch), result, "target {target}, patch {patch}");
    }
}

#[test]
fn rfc7396_appendix_a_as_the_apiserver_answers() {
    // The apiserver agrees with the RFC except for a null or scalar patch, which it refuses (400).
    for (target, patch, result) in rfc7396_examples() {
        let answer = merge_patch::try_apply(&target, &patch);
        if patch.is_null() || !(patch.is_object() || patch.is_array()) {
            assert!(matches!(answer, Err(MergePatchError::BadJsonPatch(_))), "patch {patch}: {answer:?}");
        } else {
            assert_eq!(answer, Ok(result), "target {target}, patch {patch}");
        }
    }
}

#[test]
fn two_way_patches_reproduce_the_rfc_results() {
    // For object results without nulls, the created patch takes the target to the result.
    for (target, _, result) in rfc7396_examples() {
        if !target.is_object() || !result.is_object() || result.to_string().contains("null") {
            continue;
        }
        let patch = merge_patch::create_two_way(&target, &result).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(merge_patch::apply(&target, &patch), result, "target {target}, patch {patch}");
    }
}

struct ThreeWay {
    what: &'static str,
    original: Value,
    modified: Value,
    current: Value,
    patch: Value,
    result: Value,
}

fn three_way_cases() -> Vec<ThreeWay> {
    vec![
        ThreeWay {
            what: "first apply: no last-applied configuration",
            original: Value::Null,
            modified: json!({"spec": {"size": 2, "tier": "gold"}}),
            current: json!({"spec": {"size": 2}, "status": {"ready": true}}),
            patch: json!({"spec": {"tier": "gold"}}),
            result: json!({"spec": {"size": 2, "tier": "gold"}, "status": {"ready": true}}),
        },
        ThreeWay {
            what: "nothing changed",
            original: json!({"spec": {"size": 2}}),
            modified: json!({"spec": {"size": 2}}),
            current: json!({"spec": {"size": 2}, "status": {}}),
            patch: json!({}),
            result: json!({"spec": {"size": 2}, "status": {}}),
        },
        ThreeWay {
            what: "a field dropped from the configuration is deleted, live-only fields stay",
            original: json!({"spec": {"size": 2, "tier": "gold"}}),
            modified: json!({"spec": {"size": 2}}),
            current: json!({"spec": {"size": 2, "tier": "gold", "zone": "b"}}),
            patch: json!({"spec": {"tier": null}}),
            result: json!({"spec": {"size": 2, "zone": "b"}}),
        },
        ThreeWay {
            what: "a live edit of a configured field is overwritten",
            original: json!({"spec": {"size": 2}}),
            modified: json!({"spec": {"size": 2}}),
            current: json!({"spec": {"size": 5}}),
            patch: json!({"spec": {"size": 2}}),
            result: json!({"spec": {"size": 2}}),
        },
        ThreeWay {
            what: "deleted in configuration and edited live: still deleted",
            original: json!({"labels": {"a": "1", "b": "1"}}),
            modified: json!({"labels": {"a": "1"}}),
            current: json!({"labels": {"a": "1", "b": "edited"}}),
            patch: json!({"labels": {"b": null}}),
            result: json!({"labels": {"a": "1"}}),
        },
        ThreeWay {
            what: "every configured field removed",
            original: json!({"x": 1, "y": 1}),
            modified: json!({}),
            current: json!({"x": 1, "y": 2, "z": 3}),
            patch: json!({"x": null, "y": null}),
            result: json!({"z": 3}),
        },
        ThreeWay {
            what: "lists are replaced whole",
            original: json!({"ports": [80, 443]}),
            modified: json!({"ports": [443, 8443]}),
            current: json!({"ports": [80, 443, 9000]}),
            patch: json!({"ports": [443, 8443]}),
            result: json!({"ports": [443, 8443]}),
        },
        ThreeWay {
            what: "scalar becomes an object",
            original: json!({"limit": 1}),
            modified: json!({"limit": {"cpu": "1"}}),
            current: json!({"limit": 1, "other": true}),
            patch: json!({"limit": {"cpu": "1"}}),
            result: json!({"limit": {"cpu": "1"}, "other": true}),
        },
        ThreeWay {
            what: "object becomes a list",
            original: json!({"hosts": {"a": 1}}),
            modified: json!({"hosts": ["a"]}),
            current: json!({"hosts": {"a": 1, "b": 2}}),
            patch: json!({"hosts": ["a"]}),
            result: json!({"hosts": ["a"]}),
        },
        ThreeWay {
            what: "1 and 1.0 are the same number to upstream",
            original: json!({"ratio": 1}),
            modified: json!({"ratio": 1.0}),
            current: json!({"ratio": 1}),
            patch: json!({}),
            result: json!({"ratio": 1}),
        },
        ThreeWay {
            what: "an explicitly empty object is set where there was none",
            original: json!({}),
            modified: json!({"selector": {}}),
            current: json!({}),
            patch: json!({"selector": {}}),
            result: json!({"selector": {}}),
        },
        ThreeWay {
            what: "an empty object does not empty a live one (upstream quirk: the change filters away)",
            original: json!({}),
            modified: json!({"selector": {}}),
            current: json!({"selector": {"app": "x"}}),
            patch: json!({}),
            result: json!({"selector": {"app": "x"}}),
        },
        ThreeWay {
            what: "nulls inside objects in lists are stripped from the patch",
            original: json!({}),
            modified: json!({"items": [{"name": "a", "value": null}]}),
            current: json!({}),
            patch: json!({"items": [{"name": "a"}]}),
            result: json!({"items": [{"name": "a"}]}),
        },
    ]
}

#[test]
fn three_way_patches() {
    for case in three_way_cases() {
        let patch = merge_patch::create_three_way(&case.original, &case.modified, &case.current)
            .unwrap_or_else(|e| panic!("{}: {e}", case.what));
        assert_eq!(patch, case.patch, "{}: patch", case.what);
        assert_eq!(merge_patch::try_apply(&case.current, &patch), Ok(case.result), "{}: result", case.what);
    }
}

#[test]
fn three_way_preconditions_of_kubectl_apply() {
    let preconditions = Precondition::kubectl_apply();
    let live = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});

    let renamed = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}});
    let err = merge_patch::create_three_way_with(&live, &renamed, &live, &preconditions);
    match err {
        Err(MergePatchError::PreconditionFailed { precondition, patch }) => {
            assert_eq!(precondition, Precondition::MetadataKeyUnchanged("name".into()));
            assert_eq!(*patch, json!({"metadata": {"name": "w2"}}));
        }
        other => panic!("expected a failed precondition, got {other:?}"),
    }

    let relabelled =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "labels": {"a": "b"}}});
    let patch = merge_patch::create_three_way_with(&live, &relabelled, &live, &preconditions);
    assert_eq!(patch, Ok(json!({"metadata": {"labels": {"a": "b"}}})));

    let rekinded = json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"}});
    let err = merge_patch::create_three_way_with(&live, &rekinded, &live, &preconditions);
    assert!(
        matches!(err, Err(MergePatchError::PreconditionFailed { precondition: Precondition::KeyUnchanged(k), .. }) if k == "apiVersion")
    );
}

#[test]
fn three_way_refuses_documents_that_are_not_objects() {
    let err = merge_patch::create_three_way(&json!({}), &json!([1]), &json!({}));
    assert!(matches!(err, Err(MergePatchError::MismatchedTypes(_))), "{err:?}");
    let err = merge_patch::create_three_way(&json!({}), &json!("x"), &json!({}));
    assert!(matches!(err, Err(MergePatchError::BadJsonDoc(_))), "{err:?}");
}
