//! Fights between managers: one field set to different values by two or more managers,
//! back and forth, within a window (kubernetes#99003's autoscaler against an applier's
//! `replicas`, two GitOps tools applying one object, a webhook undoing a reconcile).
//!
//! Why this exists: each write alone looks legitimate; only the sequence of attributed
//! changes ([`super::blame`]) shows the loop. A *flip* is a change by another manager than
//! the field's previous change, to another value. A field with at least
//! [`FightRules::flips`] flips within [`FightRules::window_ms`] is a [`Fight`]; one manager
//! changing a field that often with nobody else is [`Finding::Churn`] (a controller that
//! rewrites, not a fight). Each object's field is reported once as a fight and once as churn.
//! Unattributed changes never count: a fight names who fights, or is not reported.
//!
//! The fix follows the managers' classes ([`ManagerKind`]): an autoscaler against an
//! applier's `replicas` hands the field over; another controller or a webhook rewriting
//! an applier's field is an ignore rule: when the applier is a GitOps tool
//! ([`GitOpsTool`]), the Argo CD `ignoreDifferences` entry or Flux drift-ignore rule that
//! `kubectl owners drift --emit` would write for it ([`emit::allow_field`]), else the
//! instruction in words.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::blame::Writer;
use super::classify::{GitOpsTool, ManagerKind};
use super::managers::Manager;
use super::policy::{emit, ObjectFacts};
use crate::yaml::to_yaml;

/// When a sequence of changes to one field is a fight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FightRules {
    /// How many flips make a fight (or how many changes by one manager make churn).
    pub flips: usize,
    /// How far back changes count, in milliseconds.
    pub window_ms: i64,
}

impl Default for FightRules {
    /// 3 flips within 10 minutes.
    fn default() -> Self {
        FightRules { flips: 3, window_ms: 10 * 60 * 1000 }
    }
}

/// The object whose field is watched: how the caller names it, and what an ignore rule
/// selects it by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoughtObject {
    /// How the caller names it (fights and churn are counted per name and field).
    pub display: String,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The kind.
    pub kind: String,
    /// The namespace (`""` when cluster-scoped).
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl FoughtObject {
    /// `object` (a Kubernetes object), named `display`.
    pub fn of(object: &Value, display: String) -> FoughtObject {
        let facts = ObjectFacts::of(object);
        FoughtObject {
            display,
            group: facts.group.into(),
            kind: facts.kind.into(),
            namespace: facts.namespace.into(),
            name: facts.name.into(),
        }
    }

    fn facts(&self) -> ObjectFacts<'_> {
        ObjectFacts { group: &self.group, kind: &self.kind, namespace: &self.namespace, name: &self.name, labels: None }
    }
}

/// A GitOps tool's rule to leave a field to the manager that rewrites it, as
/// `kubectl owners drift --emit` writes them.
#[derive(Debug, Clone, PartialEq)]
pub struct IgnoreRule {
    /// The tool.
    pub tool: GitOpsTool,
    /// The snippet: `{"ignoreDifferences": [...]}` (Argo CD) or `{"driftDetection": {...}}` (Flux).
    pub snippet: Value,
}

/// Managers setting one field back and forth.
#[derive(Debug, Clone, PartialEq)]
pub struct Fight {
    /// The object, as the caller named it.
    pub object: String,
    /// The field, in kubectl's notation.
    pub field: String,
    /// The managers, in the order they first wrote within the window.
    pub managers: Vec<Writer>,
    /// How many times the field went from one manager's value to another's.
    pub flips: usize,
    /// From the first to the last change counted, in milliseconds.
    pub period_ms: i64,
    /// The values they set, each once, in the order first set (`None`: removed).
    pub values: Vec<Option<Value>>,
    /// What to do about it, in words (with the ignore rule's snippet as YAML, when there is one).
    pub fix: String,
    /// The GitOps tool's ignore rule the fix is, when it is one.
    pub ignore: Option<IgnoreRule>,
}

/// One manager changing one field over and over, with nobody else.
#[derive(Debug, Clone, PartialEq)]
pub struct Churn {
    /// The object, as the caller named it.
    pub object: String,
    /// The field, in kubectl's notation.
    pub field: String,
    /// The one manager.
    pub manager: Writer,
    /// How many changes within the window.
    pub changes: usize,
    /// From the first to the last change counted, in milliseconds.
    pub period_ms: i64,
}

/// What a change completed.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// A fight.
    Fight(Fight),
    /// Churn.
    Churn(Churn),
}

/// One attributed change of a field.
#[derive(Debug, Clone)]
struct Write {
    at_ms: i64,
    writer: Writer,
    value: Option<Value>,
}

/// The attributed changes of every field within the window, and what was reported.
#[derive(Debug, Default)]
pub struct FightWatch {
    rules: FightRules,
    /// Per object and field, its changes within the window, oldest first.
    history: HashMap<(String, String), Vec<Write>>,
    fights: HashSet<(String, String)>,
    churns: HashSet<(String, String)>,
}

impl FightWatch {
    /// A watch that finds fights by `rules`.
    pub fn new(rules: FightRules) -> FightWatch {
        FightWatch { rules, ..FightWatch::default() }
    }

    /// Records that `writer` set `field` of `object` to `value` at `at_ms` (milliseconds,
    /// any epoch, never decreasing), and returns the fight or churn this change completes
    /// (each object's field is reported once as each).
    pub fn record(
        &mut self,
        object: &FoughtObject,
        field: &str,
        at_ms: i64,
        writer: &Writer,
        value: Option<Value>,
    ) -> Option<Finding> {
        let key = (object.display.clone(), field.to_string());
        let history = self.history.entry(key.clone()).or_default();
        history.retain(|w| at_ms - w.at_ms <= self.rules.window_ms);
        history.push(Write { at_ms, writer: writer.clone(), value });
        let flips = history.windows(2).filter(|p| p[0].writer != p[1].writer && p[0].value != p[1].value).count();
        let period_ms = at_ms - history[0].at_ms;
        let mut managers: Vec<Writer> = Vec::new();
        let mut values: Vec<Option<Value>> = Vec::new();
        for write in history.iter() {
            if !managers.contains(&write.writer) {
                managers.push(write.writer.clone());
            }
            if !values.contains(&write.value) {
                values.push(write.value.clone());
            }
        }
        if managers.len() >= 2 && flips >= self.rules.flips && self.fights.insert(key.clone()) {
            let (fix, ignore) = fix_for(object, field, &managers);
            return Some(Finding::Fight(Fight {
                object: key.0,
                field: key.1,
                managers,
                flips,
                period_ms,
                values,
                fix,
                ignore,
            }));
        }
        if managers.len() == 1 && history.len() >= self.rules.flips && self.churns.insert(key.clone()) {
            let changes = history.len();
            return Some(Finding::Churn(Churn {
                object: key.0,
                field: key.1,
                manager: managers.remove(0),
                changes,
                period_ms,
            }));
        }
        None
    }
}

/// The way out of a fight over `field` of `object`, by the kinds of its managers (the one
/// classification, [`ManagerKind::of`]), and the ignore rule it is, if one.
fn fix_for(object: &FoughtObject, field: &str, managers: &[Writer]) -> (String, Option<IgnoreRule>) {
    let of_kind = |kind: ManagerKind| -> Vec<&Writer> {
        managers
            .iter()
            .filter(|w| {
                let manager = Manager {
                    name: w.manager.clone(),
                    operation: w.operation,
                    api_version: None,
                    subresource: w.subresource.clone(),
                };
                ManagerKind::of(&manager) == kind
            })
            .collect()
    };
    let (controllers, appliers, humans) =
        (of_kind(ManagerKind::Controller), of_kind(ManagerKind::Applier), of_kind(ManagerKind::Human));
    let list = |writers: &[&Writer]| writers.iter().map(|w| w.manager.as_str()).collect::<Vec<_>>().join(", ");
    match (controllers.as_slice(), appliers.as_slice()) {
        // An autoscaler against an applier's replicas (kubernetes#99003): the applier lets go.
        ([controller, ..], [_, ..]) if field == ".spec.replicas" || controller.subresource == "scale" => (
            format!(
                "{} (a controller) keeps setting {field}: drop {field} from the configuration of {} and \
                 hand it over (kubectl owners transfer --from {} --to {} --to-operation Update)",
                controller.manager,
                list(&appliers),
                appliers.iter().map(|w| w.manager.as_str()).collect::<Vec<_>>().join(","),
                controller.manager
            ),
            None,
        ),
        ([controller, ..], [_, ..]) => ignore_fix(object, field, controller, &appliers),
        ([_, _, ..], []) if humans.is_empty() => (
            format!(
                "controllers {} all set {field}: configure all but one of them to leave it alone",
                list(&controllers)
            ),
            None,
        ),
        ([], [_, _, ..]) => (
            format!(
                "appliers {} each apply {field} (with --force-conflicts): keep it in one configuration and remove \
                 it from the others",
                list(&appliers)
            ),
            None,
        ),
        _ => (
            format!(
                "{} change {field} by hand while {} set it: make the change in the owner's configuration instead",
                list(&humans),
                list(&[controllers.as_slice(), appliers.as_slice()].concat())
            ),
            None,
        ),
    }
}

/// The fix when `controller` (a controller, or a webhook's writes) rewrites `field` that
/// `appliers` apply: the applier ignores the field. For a GitOps tool, its own rule, from
/// the policy "`controller` may own `field` of `object`" emitted as `owners drift --emit`
/// does; for any other applier, the instruction.
fn ignore_fix(
    object: &FoughtObject,
    field: &str,
    controller: &Writer,
    appliers: &[&Writer],
) -> (String, Option<IgnoreRule>) {
    let names = appliers.iter().map(|w| w.manager.as_str()).collect::<Vec<_>>().join(", ");
    let said =
        format!("{} (a controller or webhook) rewrites {field} after every apply by {names}", controller.manager);
    let Some((applier, tool)) = appliers.iter().find_map(|w| GitOpsTool::of_manager(&w.manager).map(|t| (w, t))) else {
        return (
            format!(
                "{said}: make {names} ignore {field} (leave it out of the applied configuration, or add an ignore \
                 rule where it is applied) so that {} owns it alone",
                controller.manager
            ),
            None,
        );
    };
    let emitted = emit::allow_field(tool, &object.facts(), field, &controller.manager);
    let (place, rules) = match tool {
        GitOpsTool::ArgoCd => ("the Argo CD Application's spec", &emitted.value["ignoreDifferences"]),
        GitOpsTool::Flux => ("the Flux HelmRelease's spec", &emitted.value["driftDetection"]["ignore"]),
    };
    let mut notes = emitted.notes.join("; ");
    if applier.manager == "kustomize-controller" {
        notes = format!(
            "drift-ignore rules are helm-controller's: for a Kustomization, leave {field} out of its manifests"
        );
    }
    if rules.as_array().is_none_or(Vec::is_empty) {
        return (format!("{said}: make {} ignore {field} ({notes})", tool.name()), None);
    }
    let mut fix = format!("{said}: let {} ignore it; add to {place}:\n{}", tool.name(), to_yaml(&emitted.value));
    if !notes.is_empty() {
        fix.push_str(&format!("(note: {notes})\n"));
    }
    (fix.trim_end().to_string(), Some(IgnoreRule { tool, snippet: emitted.value }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::Operation;
    use serde_json::json;

    fn writer(name: &str, operation: Operation, subresource: &str) -> Writer {
        Writer { manager: name.into(), operation, subresource: subresource.into() }
    }

    fn cm() -> FoughtObject {
        FoughtObject::of(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "shop"}}),
            "cm/x".into(),
        )
    }

    fn deploy() -> FoughtObject {
        FoughtObject::of(
            &json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": "shop"}}),
            "deploy/x".into(),
        )
    }

    /// The fight `b` completes by taking the field back from `a` the second time.
    fn fight_of(object: &FoughtObject, field: &str, a: &Writer, b: &Writer) -> Fight {
        let mut watch = FightWatch::new(FightRules { flips: 2, window_ms: 60_000 });
        watch.record(object, field, 0, a, Some(json!("1")));
        watch.record(object, field, 1, b, Some(json!("2")));
        match watch.record(object, field, 2, a, Some(json!("1"))) {
            Some(Finding::Fight(fight)) => fight,
            other => panic!("not a fight: {other:?}"),
        }
    }

    #[test]
    fn two_appliers_flipping_three_times_is_one_fight() {
        let (a, b) = (writer("a", Operation::Apply, ""), writer("b", Operation::Apply, ""));
        let mut watch = FightWatch::new(FightRules::default());
        assert_eq!(watch.record(&cm(), ".data.x", 0, &a, Some(json!("a"))), None);
        assert_eq!(watch.record(&cm(), ".data.x", 1000, &b, Some(json!("b"))), None);
        assert_eq!(watch.record(&cm(), ".data.x", 2000, &a, Some(json!("a"))), None);
        let Some(Finding::Fight(fight)) = watch.record(&cm(), ".data.x", 3000, &b, Some(json!("b"))) else {
            panic!("the third flip is a fight")
        };
        assert_eq!(
            fight,
            Fight {
                object: "cm/x".into(),
                field: ".data.x".into(),
                managers: vec![a.clone(), b.clone()],
                flips: 3,
                period_ms: 3000,
                values: vec![Some(json!("a")), Some(json!("b"))],
                fix: "appliers a, b each apply .data.x (with --force-conflicts): keep it in one configuration and \
                      remove it from the others"
                    .into(),
                ignore: None,
            }
        );
        assert_eq!(watch.record(&cm(), ".data.x", 4000, &a, Some(json!("a"))), None, "reported once");
    }

    #[test]
    fn flips_older_than_the_window_do_not_count() {
        let (a, b) = (writer("a", Operation::Apply, ""), writer("b", Operation::Apply, ""));
        let mut watch = FightWatch::new(FightRules { flips: 3, window_ms: 1500 });
        for (i, w) in [&a, &b, &a, &b, &a].into_iter().enumerate() {
            let value = Some(json!(w.manager));
            assert_eq!(watch.record(&cm(), ".data.x", i as i64 * 1000, w, value), None, "change {i}");
        }
    }

    #[test]
    fn one_manager_rewriting_is_churn_not_a_fight() {
        let hpa = writer("horizontal-pod-autoscaler", Operation::Update, "scale");
        let mut watch = FightWatch::new(FightRules::default());
        assert_eq!(watch.record(&deploy(), ".spec.replicas", 0, &hpa, Some(json!(2))), None);
        assert_eq!(watch.record(&deploy(), ".spec.replicas", 10, &hpa, Some(json!(3))), None);
        let Some(Finding::Churn(churn)) = watch.record(&deploy(), ".spec.replicas", 20, &hpa, Some(json!(4))) else {
            panic!("churn")
        };
        assert_eq!((churn.manager, churn.changes, churn.period_ms), (hpa.clone(), 3, 20));
        assert_eq!(watch.record(&deploy(), ".spec.replicas", 30, &hpa, Some(json!(5))), None, "reported once");
    }

    #[test]
    fn an_autoscaler_against_an_applier_is_fixed_by_dropping_the_field_and_handing_it_over() {
        let (argo, hpa) = (writer("argocd", Operation::Apply, ""), writer("autoscaler", Operation::Update, "scale"));
        let mut watch = FightWatch::new(FightRules { flips: 2, window_ms: 60_000 });
        watch.record(&deploy(), ".spec.replicas", 0, &argo, Some(json!(1)));
        watch.record(&deploy(), ".spec.replicas", 1, &hpa, Some(json!(4)));
        let Some(Finding::Fight(fight)) = watch.record(&deploy(), ".spec.replicas", 2, &argo, Some(json!(1))) else {
            panic!("fight")
        };
        assert_eq!(
            fight.fix,
            "autoscaler (a controller) keeps setting .spec.replicas: drop .spec.replicas from the configuration of \
             argocd and hand it over (kubectl owners transfer --from argocd --to autoscaler --to-operation Update)"
        );
    }

    #[test]
    fn a_human_editing_what_an_applier_sets_is_told_to_change_the_configuration() {
        let (me, flux) = (writer("kubectl-edit", Operation::Update, ""), writer("flux", Operation::Apply, ""));
        let mut watch = FightWatch::new(FightRules { flips: 1, window_ms: 60_000 });
        watch.record(&cm(), ".data.x", 0, &flux, Some(json!("1")));
        let Some(Finding::Fight(fight)) = watch.record(&cm(), ".data.x", 1, &me, Some(json!("2"))) else {
            panic!("fight")
        };
        assert_eq!(
            fight.fix,
            "kubectl-edit change .data.x by hand while flux set it: make the change in the owner's configuration instead"
        );
    }

    #[test]
    fn a_controller_rewriting_what_argo_cd_applies_is_fixed_by_argo_cds_ignore_rule() {
        let (argo, injector) =
            (writer("argocd-controller", Operation::Apply, ""), writer("ca-injector", Operation::Update, ""));
        let fight = fight_of(&cm(), ".data.bundle", &argo, &injector);
        let snippet = json!({"ignoreDifferences": [{"group": "", "kind": "ConfigMap", "name": "x", "namespace": "shop",
                                                   "jqPathExpressions": [".data.bundle"],
                                                   "managedFieldsManagers": ["ca-injector"]}]});
        assert_eq!(fight.ignore, Some(IgnoreRule { tool: GitOpsTool::ArgoCd, snippet: snippet.clone() }));
        // The same snippet `owners drift --emit argocd` writes for that one allowance.
        let facts = ObjectFacts { group: "", kind: "ConfigMap", namespace: "shop", name: "x", labels: None };
        assert_eq!(emit::allow_field(GitOpsTool::ArgoCd, &facts, ".data.bundle", "ca-injector").value, snippet);
        assert_eq!(
            fight.fix,
            "ca-injector (a controller or webhook) rewrites .data.bundle after every apply by argocd-controller: \
             let Argo CD ignore it; add to the Argo CD Application's spec:\nignoreDifferences:\n- group: \"\"\n  \
             kind: ConfigMap\n  name: x\n  namespace: shop\n  jqPathExpressions:\n  - .data.bundle\n  \
             managedFieldsManagers:\n  - ca-injector"
        );
    }

    #[test]
    fn a_controller_rewriting_what_flux_applies_is_fixed_by_a_flux_drift_ignore_rule() {
        let (helm, policy) =
            (writer("helm-controller", Operation::Update, ""), writer("policy-controller", Operation::Update, ""));
        let fight = fight_of(&deploy(), ".spec.template.metadata.annotations.sidecar", &helm, &policy);
        let snippet = json!({"driftDetection": {"mode": "enabled", "ignore": [{
            "paths": ["/spec/template/metadata/annotations/sidecar"],
            "target": {"group": "apps", "kind": "Deployment", "name": "x", "namespace": "shop"}}]}});
        assert_eq!(fight.ignore, Some(IgnoreRule { tool: GitOpsTool::Flux, snippet }));
        assert!(fight.fix.contains("add to the Flux HelmRelease's spec:\ndriftDetection:"), "{}", fight.fix);
        assert!(!fight.fix.contains("note:"), "{}", fight.fix);
        // kustomize-controller is Flux too, but a Kustomization has no drift-ignore rule: said so.
        let kustomize = writer("kustomize-controller", Operation::Apply, "");
        let fight = fight_of(&deploy(), ".spec.template.metadata.annotations.sidecar", &kustomize, &policy);
        assert_eq!(fight.ignore.map(|i| i.tool), Some(GitOpsTool::Flux));
        assert!(
            fight.fix.ends_with(
                "(note: drift-ignore rules are helm-controller's: for a Kustomization, leave \
                 .spec.template.metadata.annotations.sidecar out of its manifests)"
            ),
            "{}",
            fight.fix
        );
    }

    #[test]
    fn a_controller_rewriting_what_another_applier_applies_is_told_in_words() {
        let (ci, policy) = (writer("ci", Operation::Apply, ""), writer("policy-controller", Operation::Update, ""));
        let fight = fight_of(&cm(), ".data.bundle", &ci, &policy);
        assert_eq!(fight.ignore, None);
        assert_eq!(
            fight.fix,
            "policy-controller (a controller or webhook) rewrites .data.bundle after every apply by ci: make ci \
             ignore .data.bundle (leave it out of the applied configuration, or add an ignore rule where it is \
             applied) so that policy-controller owns it alone"
        );
        // What no tool can address is said, never emitted half: a list item has no JSON pointer.
        let flux = writer("helm-controller", Operation::Update, "");
        let fight = fight_of(&deploy(), ".spec.template.spec.containers[name=\"app\"].image", &flux, &policy);
        assert_eq!(fight.ignore, None);
        assert!(fight.fix.contains(": make Flux ignore .spec.template.spec.containers"), "{}", fight.fix);
        assert!(fight.fix.contains("has no JSON pointer"), "{}", fight.fix);
    }

    #[test]
    fn an_autoscaler_against_argo_cd_still_hands_replicas_over() {
        let (argo, hpa) =
            (writer("argocd-controller", Operation::Apply, ""), writer("keda", Operation::Update, "scale"));
        let fight = fight_of(&deploy(), ".spec.replicas", &argo, &hpa);
        assert_eq!(fight.ignore, None);
        assert!(fight.fix.contains("kubectl owners transfer --from argocd-controller --to keda"), "{}", fight.fix);
    }
}
