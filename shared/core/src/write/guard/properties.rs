//! Properties of the field guard, checked with the JSON Patch engine the apiserver's
//! behaviour is modelled by, on generated Deployments and changes:
//! - exact: applied to the object it was planned against, the guard gives the result;
//! - safe: applied to an object somebody else changed in any way, it fails, or it makes
//!   exactly the approved change (same fields, same values before and after, entries
//!   where the preview put them) and keeps everything else as they left it;
//! - disjoint: when the other writer changed only other fields, it does not fail (but for
//!   both creating the same missing map, which a JSON Patch cannot merge into);
//! - overlapping: when the other writer changed a field the change touches, it fails.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::{guard, FieldGuard, Guard};
use crate::change::effect::Effect;
use crate::change::placement::Placements;
use crate::fieldpath::{value_at, PathElement};
use crate::json_patch;
use crate::plan::{PatchType, Planned};
use crate::schema::{builtin, Gvk, Schema, TypeId};
use crate::write::replan::Intent;

fn schema_and_type() -> (&'static Schema, Option<TypeId>) {
    let schema = builtin();
    (schema, schema.root(&Gvk::new("apps", "v1", "Deployment")))
}

const LABELS: [&str; 5] = ["a", "app.kubernetes.io/name", "b~c", "d", "e"];

/// One change a writer makes. Indices are taken modulo what is there; a change that
/// does not apply (an index into an empty list, a name already present) does nothing.
#[derive(Debug, Clone)]
enum Edit {
    Label { key: usize, value: Option<u8> },
    Annotation { key: u8, value: Option<u8> },
    Replicas(Option<u8>),
    Image { container: usize, tag: u8 },
    EnvInsert { container: usize, at: usize, name: u8, value: u8 },
    EnvRemove { container: usize, at: usize },
    EnvValue { container: usize, at: usize, value: u8 },
    PortInsert { container: usize, at: usize, port: u8, udp: bool },
    PortRemove { container: usize, at: usize },
    Args { container: usize, args: Vec<u8> },
    InitInsert { at: usize, name: u8 },
    InitRemove { at: usize },
    InitImage { at: usize, tag: u8 },
    FinalizerInsert { at: usize, name: u8 },
    FinalizerRemove { at: usize },
    SwapContainers,
}

fn base() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "d", "namespace": "ns", "resourceVersion": "7", "generation": 3,
                        "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1",
                                           "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
           "spec": {"replicas": 1, "template": {"spec": {"containers": [
               {"name": "c0", "image": "app:1"}, {"name": "c1", "image": "side:1"}]}}}})
}

fn containers(object: &mut Value) -> &mut Vec<Value> {
    object["spec"]["template"]["spec"]["containers"].as_array_mut().expect("containers")
}

/// The list at `object[field]`, created empty if missing.
fn list_at<'v>(object: &'v mut Value, field: &str) -> &'v mut Vec<Value> {
    if !object[field].is_array() {
        object[field] = json!([]);
    }
    object[field].as_array_mut().expect("just made a list")
}

fn insert_named(list: &mut Vec<Value>, at: usize, entry: Value, same: impl Fn(&Value) -> bool) {
    if !list.iter().any(same) {
        let at = at % (list.len() + 1);
        list.insert(at, entry);
    }
}

fn apply_edit(object: &mut Value, edit: &Edit) {
    match edit {
        Edit::Label { key, value } => {
            let key = LABELS[key % LABELS.len()];
            match value {
                Some(v) => object["metadata"]["labels"][key] = json!(format!("v{v}")),
                None => {
                    if let Some(map) = object.pointer_mut("/metadata/labels").and_then(Value::as_object_mut) {
                        map.shift_remove(key);
                    }
                }
            }
        }
        Edit::Annotation { key, value } => match value {
            Some(v) => object["metadata"]["annotations"][format!("note{}", key % 3)] = json!(format!("n{v}")),
            None => {
                object["metadata"].as_object_mut().expect("metadata").shift_remove("annotations");
            }
        },
        Edit::Replicas(Some(n)) => object["spec"]["replicas"] = json!(n),
        Edit::Replicas(None) => {
            object["spec"].as_object_mut().expect("spec").shift_remove("replicas");
        }
        Edit::Image { container, tag } => {
            let list = containers(object);
            let at = container % list.len();
            list[at]["image"] = json!(format!("app:{tag}"));
        }
        Edit::EnvInsert { container, at, name, value } => {
            let list = containers(object);
            let c = container % list.len();
            let name = format!("E{name}");
            let entry = json!({"name": name, "value": format!("{value}")});
            insert_named(list_at(&mut list[c], "env"), *at, entry, |e| e["name"] == name);
        }
        Edit::EnvRemove { container, at } | Edit::EnvValue { container, at, .. } => {
            let list = containers(object);
            let c = container % list.len();
            let Some(env) = list[c].get_mut("env").and_then(Value::as_array_mut).filter(|e| !e.is_empty()) else {
                return;
            };
            let at = at % env.len();
            match edit {
                Edit::EnvValue { value, .. } => env[at]["value"] = json!(format!("x{value}")),
                _ => {
                    env.remove(at);
                }
            }
        }
        Edit::PortInsert { container, at, port, udp } => {
            let list = containers(object);
            let c = container % list.len();
            let (port, protocol) = (80 + u64::from(port % 3), if *udp { "UDP" } else { "TCP" });
            let entry = json!({"containerPort": port, "protocol": protocol});
            let same = |e: &Value| e["containerPort"] == port && e["protocol"] == protocol;
            insert_named(list_at(&mut list[c], "ports"), *at, entry, same);
        }
        Edit::PortRemove { container, at } => {
            let list = containers(object);
            let c = container % list.len();
            if let Some(ports) = list[c].get_mut("ports").and_then(Value::as_array_mut).filter(|p| !p.is_empty()) {
                let at = at % ports.len();
                ports.remove(at);
            }
        }
        Edit::Args { container, args } => {
            let list = containers(object);
            let c = container % list.len();
            list[c]["args"] = json!(args.iter().map(|a| format!("--a{a}")).collect::<Vec<_>>());
        }
        Edit::InitInsert { at, name } => {
            let name = format!("i{name}");
            let entry = json!({"name": name, "image": "init:1"});
            insert_named(list_at(&mut object["spec"]["template"]["spec"], "initContainers"), *at, entry, |e| {
                e["name"] == name
            });
        }
        Edit::InitRemove { at } | Edit::InitImage { at, .. } => {
            let init = object.pointer_mut("/spec/template/spec/initContainers").and_then(Value::as_array_mut);
            let Some(init) = init.filter(|l| !l.is_empty()) else {
                return;
            };
            let at = at % init.len();
            match edit {
                Edit::InitImage { tag, .. } => init[at]["image"] = json!(format!("init:{tag}")),
                _ => {
                    init.remove(at);
                }
            }
        }
        Edit::FinalizerInsert { at, name } => {
            let name = json!(format!("example.com/f{name}"));
            insert_named(list_at(&mut object["metadata"], "finalizers"), *at, name.clone(), |f| *f == name);
        }
        Edit::FinalizerRemove { at } => {
            let finalizers = object.pointer_mut("/metadata/finalizers").and_then(Value::as_array_mut);
            if let Some(finalizers) = finalizers.filter(|f| !f.is_empty()) {
                let at = at % finalizers.len();
                finalizers.remove(at);
            }
        }
        Edit::SwapContainers => containers(object).swap(0, 1),
    }
}

fn edited(object: &Value, edits: &[Edit]) -> Value {
    let mut out = object.clone();
    for edit in edits {
        apply_edit(&mut out, edit);
    }
    out
}

/// Changes from the menu `ours` or `theirs`, chosen so that the two never touch the same
/// field or move a list the other relies on: ours has labels `a`..`b~c`, replicas, the first
/// container's image and env, the init containers and finalizers; theirs has labels `d`,
/// `e`, annotations, the first container's ports and args and anything in the second one.
fn disjoint_edit(ours: bool) -> BoxedStrategy<Edit> {
    let tag = 0u8..4;
    if ours {
        prop_oneof![
            (0usize..3, prop::option::of(0u8..3)).prop_map(|(key, value)| Edit::Label { key, value }),
            prop::option::of(0u8..4).prop_map(Edit::Replicas),
            tag.clone().prop_map(|tag| Edit::Image { container: 0, tag }),
            (0usize..4, 0u8..5, 0u8..3).prop_map(|(at, name, value)| Edit::EnvInsert { container: 0, at, name, value }),
            (0usize..4).prop_map(|at| Edit::EnvRemove { container: 0, at }),
            (0usize..4, 0u8..3).prop_map(|(at, value)| Edit::EnvValue { container: 0, at, value }),
            (0usize..4, 0u8..5).prop_map(|(at, name)| Edit::InitInsert { at, name }),
            (0usize..4).prop_map(|at| Edit::InitRemove { at }),
            (0usize..4, tag.clone()).prop_map(|(at, tag)| Edit::InitImage { at, tag }),
            (0usize..4, 0u8..4).prop_map(|(at, name)| Edit::FinalizerInsert { at, name }),
            (0usize..4).prop_map(|at| Edit::FinalizerRemove { at }),
        ]
        .boxed()
    } else {
        prop_oneof![
            (3usize..5, prop::option::of(0u8..3)).prop_map(|(key, value)| Edit::Label { key, value }),
            (0u8..3, prop::option::of(0u8..3)).prop_map(|(key, value)| Edit::Annotation { key, value }),
            tag.prop_map(|tag| Edit::Image { container: 1, tag }),
            (0usize..4, 0u8..5, 0u8..3).prop_map(|(at, name, value)| Edit::EnvInsert { container: 1, at, name, value }),
            (0usize..2, 0usize..4, 0u8..3, any::<bool>()).prop_map(|(container, at, port, udp)| Edit::PortInsert {
                container,
                at,
                port,
                udp
            }),
            (0usize..2, 0usize..4).prop_map(|(container, at)| Edit::PortRemove { container, at }),
            (0usize..2, prop::collection::vec(0u8..3, 0..3))
                .prop_map(|(container, args)| Edit::Args { container, args }),
        ]
        .boxed()
    }
}

/// Changes of lists only, where writers collide most: the init containers, the first
/// container's env and ports, the finalizers.
fn list_edit() -> BoxedStrategy<Edit> {
    prop_oneof![
        (0usize..4, 0u8..4).prop_map(|(at, name)| Edit::InitInsert { at, name }),
        (0usize..4).prop_map(|at| Edit::InitRemove { at }),
        (0usize..4, 0u8..3).prop_map(|(at, tag)| Edit::InitImage { at, tag }),
        (0usize..4, 0u8..4, 0u8..2).prop_map(|(at, name, value)| Edit::EnvInsert { container: 0, at, name, value }),
        (0usize..4).prop_map(|at| Edit::EnvRemove { container: 0, at }),
        (0usize..4, 0u8..2).prop_map(|(at, value)| Edit::EnvValue { container: 0, at, value }),
        (0usize..4, 0u8..3, any::<bool>()).prop_map(|(at, port, udp)| Edit::PortInsert { container: 0, at, port, udp }),
        (0usize..4).prop_map(|at| Edit::PortRemove { container: 0, at }),
        (0usize..4, 0u8..3).prop_map(|(at, name)| Edit::FinalizerInsert { at, name }),
        (0usize..4).prop_map(|at| Edit::FinalizerRemove { at }),
    ]
    .boxed()
}

/// Any change: both menus, and swapping the containers (a reorder).
fn any_edit() -> BoxedStrategy<Edit> {
    prop_oneof![4 => disjoint_edit(true), 4 => disjoint_edit(false), 1 => Just(Edit::SwapContainers)].boxed()
}

fn live() -> impl Strategy<Value = Value> {
    prop::collection::vec(any_edit(), 0..8).prop_map(|edits| edited(&base(), &edits))
}

fn planned(result: &Value) -> Planned {
    Planned { patch_type: PatchType::Strategic, patch: json!({}), result: result.clone(), findings: Vec::new() }
}

fn field_guard(live: &Value, result: &Value) -> Value {
    fields_of(live, result).patch
}

fn fields_of(live: &Value, result: &Value) -> FieldGuard {
    let (schema, ty) = schema_and_type();
    match guard(live, &planned(result), Intent::Values, schema, ty) {
        Guard::Fields(fields) => fields,
        Guard::WholeObject(reason) => panic!("no field guard: {reason}"),
    }
}

/// The object the guarded write of `result` (planned on `live`) leaves on `moved`, as the
/// write path ends it: `None` when the apiserver refuses the patch (a failed `test`), or when
/// the written object names an appended entry twice (the write path takes its copy out
/// again and stops, as after a failed `test`).
fn guarded_write(live: &Value, result: &Value, moved: &Value) -> Option<Value> {
    let fields = fields_of(live, result);
    let written = json_patch::apply(moved, &fields.patch).ok()?;
    super::taking_back(&fields.appended, &written).is_none().then_some(written)
}

fn effect(before: &Value, after: &Value) -> Effect {
    let (schema, ty) = schema_and_type();
    Effect::between(before, after, schema, ty)
}

/// Whether the guarded write on `theirs` made exactly the approved change and kept theirs.
fn exactly_ours_on_theirs(live: &Value, ours: &Value, theirs: &Value, written: &Value) -> Result<(), String> {
    let (schema, ty) = schema_and_type();
    let approved = effect(live, ours);
    if let Some(list) = repeated_entry(written).filter(|_| repeated_entry(theirs).is_none()) {
        return Err(format!("{list} holds an entry twice"));
    }
    let made = effect(theirs, written);
    if made != approved {
        return Err(format!("made:\n{made}approved:\n{approved}"));
    }
    Placements::between(live, ours, schema, ty).hold_in(written, schema).map_err(|m| m.to_string())?;
    // Their entries keep their order: the write reorders nothing it did not preview reordering.
    let theirs_order = Placements::between(theirs, written, schema, ty);
    for (list, placed) in theirs_order.iter() {
        let was_there = value_at(theirs, list.elements())
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|e| entry_is(e, &placed.entry)));
        if was_there && Placements::between(live, ours, schema, ty).iter().all(|(_, p)| p.entry != placed.entry) {
            return Err(format!("{list}: {} moved", placed.entry));
        }
    }
    Ok(())
}

/// How an entry of a generated list is named.
type EntryName = fn(&Value) -> Value;

fn by_name(entry: &Value) -> Value {
    entry["name"].clone()
}

fn by_port(entry: &Value) -> Value {
    json!([entry["containerPort"], entry["protocol"]])
}

fn by_value(entry: &Value) -> Value {
    entry.clone()
}

/// A keyed list of the generated objects that names an entry twice (the effect, as the
/// server's field sets, sees only the first of them).
fn repeated_entry(object: &Value) -> Option<String> {
    let twice = |list: Option<&Value>, name: EntryName| {
        let entries: Vec<Value> =
            list.and_then(Value::as_array).map(|l| l.iter().map(name).collect()).unwrap_or_default();
        entries.iter().enumerate().any(|(i, e)| entries[..i].contains(e))
    };
    let mut lists: Vec<(String, Option<&Value>, EntryName)> = vec![
        ("initContainers".into(), object.pointer("/spec/template/spec/initContainers"), by_name),
        ("containers".into(), object.pointer("/spec/template/spec/containers"), by_name),
        ("finalizers".into(), object.pointer("/metadata/finalizers"), by_value),
    ];
    let containers = object.pointer("/spec/template/spec/containers").and_then(Value::as_array);
    for (i, c) in containers.into_iter().flatten().enumerate() {
        lists.push((format!("containers/{i}/env"), c.get("env"), by_name));
        lists.push((format!("containers/{i}/ports"), c.get("ports"), by_port));
    }
    lists.into_iter().find(|(_, list, name)| twice(*list, *name)).map(|(what, _, _)| what)
}

fn entry_is(entry: &Value, pe: &PathElement) -> bool {
    match pe {
        PathElement::Key(key) => key.matches(entry),
        PathElement::Value(v) => entry == v,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// On the object it was planned against, the guard gives exactly the planned result.
    #[test]
    fn the_guard_gives_the_result_on_the_previewed_object(live in live(), ours in prop::collection::vec(any_edit(), 0..6)) {
        let result = edited(&live, &ours);
        let patch = field_guard(&live, &result);
        prop_assert_eq!(json_patch::apply(&live, &patch).map_err(|e| e.to_string()), Ok(result));
    }

    /// Whatever somebody else did meanwhile, the guarded write fails, or makes exactly the
    /// approved change and keeps theirs.
    #[test]
    fn a_guarded_write_fails_or_makes_exactly_the_approved_change(
        live in live(),
        ours in prop::collection::vec(any_edit(), 1..5),
        theirs in prop::collection::vec(any_edit(), 1..5),
    ) {
        let result = edited(&live, &ours);
        let moved = edited(&live, &theirs);
        if let Some(written) = guarded_write(&live, &result, &moved) {
            if let Err(why) = exactly_ours_on_theirs(&live, &result, &moved, &written) {
                prop_assert!(false, "{}\npatch: {}", why, field_guard(&live, &result));
            }
        }
    }

    /// The same, for writers that both change the same lists: entries added, removed and
    /// changed in the init containers, env, ports and finalizers.
    #[test]
    fn a_guarded_write_in_a_contended_list_fails_or_makes_exactly_the_approved_change(
        live_edits in prop::collection::vec(list_edit(), 2..8),
        ours in prop::collection::vec(list_edit(), 1..4),
        theirs in prop::collection::vec(list_edit(), 1..4),
    ) {
        let live = edited(&base(), &live_edits);
        let result = edited(&live, &ours);
        let moved = edited(&live, &theirs);
        if let Some(written) = guarded_write(&live, &result, &moved) {
            if let Err(why) = exactly_ours_on_theirs(&live, &result, &moved, &written) {
                prop_assert!(false, "{}\npatch: {}", why, field_guard(&live, &result));
            }
        }
    }

    /// When somebody else changed only other fields, the guarded write passes and keeps theirs.
    #[test]
    fn disjoint_writers_never_conflict(
        live in live(),
        ours in prop::collection::vec(disjoint_edit(true), 1..5),
        theirs in prop::collection::vec(disjoint_edit(false), 1..5),
    ) {
        let result = edited(&live, &ours);
        let moved = edited(&live, &theirs);
        // Both creating the missing labels map is the one overlap left: a JSON Patch cannot
        // add to a map "creating it if missing", so the second fails and re-plans once.
        let labels = |o: &Value| o.pointer("/metadata/labels").is_some();
        prop_assume!(labels(&live) || !labels(&result) || !labels(&moved));
        let patch = field_guard(&live, &result);
        let written = json_patch::apply(&moved, &patch);
        prop_assert!(written.is_ok(), "{:?}\npatch: {}", written.err(), patch);
        let written = written.unwrap_or_default();
        prop_assert_eq!(exactly_ours_on_theirs(&live, &result, &moved, &written), Ok(()));
        prop_assert!(effect(&live, &moved).holds_in(&written), "their change is kept");
        prop_assert_eq!(&written["metadata"]["managedFields"], &live["metadata"]["managedFields"]);
        prop_assert_eq!(&written["metadata"]["resourceVersion"], &live["metadata"]["resourceVersion"]);
    }

    /// When somebody else set a field the change touches to a third value, the guarded write fails.
    #[test]
    fn an_overlapping_writer_makes_the_guard_fail(
        live in live(),
        ours in prop::collection::vec(any_edit(), 1..5),
        pick in any::<prop::sample::Index>(),
    ) {
        let result = edited(&live, &ours);
        let approved = effect(&live, &result);
        prop_assume!(!approved.is_empty());
        let edit = &approved.edits()[pick.index(approved.edits().len())];
        let Some((leaf, parents)) = edit.path.elements().split_last() else { return Ok(()) };
        let PathElement::Field(name) = leaf else { return Ok(()) };
        // Their value: set where the field's parent is (also when ours adds the field).
        let mut moved = live.clone();
        let Some(parent) = value_at_mut(&mut moved, parents) else { return Ok(()) };
        let Some(map) = parent.as_object_mut() else { return Ok(()) };
        map.insert(name.clone(), json!("somebody-else"));
        let patch = field_guard(&live, &result);
        prop_assert!(json_patch::apply(&moved, &patch).is_err(), "{} overwritten\npatch: {}", edit.path, patch);
    }
}

fn value_at_mut<'v>(value: &'v mut Value, path: &[PathElement]) -> Option<&'v mut Value> {
    let mut here = value;
    for pe in path {
        here = match pe {
            PathElement::Field(name) => here.get_mut(name.as_str())?,
            other => here.as_array_mut()?.iter_mut().find(|e| entry_is(e, other))?,
        };
    }
    Some(here)
}
