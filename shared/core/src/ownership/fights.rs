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

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::blame::Writer;
use super::classify::ManagerKind;
use super::managers::Manager;

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
    /// What to do about it.
    pub fix: String,
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
        object: &str,
        field: &str,
        at_ms: i64,
        writer: &Writer,
        value: Option<Value>,
    ) -> Option<Finding> {
        let key = (object.to_string(), field.to_string());
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
            let fix = fix_for(field, &managers);
            return Some(Finding::Fight(Fight {
                object: key.0,
                field: key.1,
                managers,
                flips,
                period_ms,
                values,
                fix,
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

/// The way out of a fight over `field`, by the kinds of its managers (the one
/// classification, [`ManagerKind::of`]).
fn fix_for(field: &str, managers: &[Writer]) -> String {
    let of_kind = |kind: ManagerKind| -> Vec<&str> {
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
            .map(|w| w.manager.as_str())
            .collect()
    };
    let (controllers, appliers, humans) =
        (of_kind(ManagerKind::Controller), of_kind(ManagerKind::Applier), of_kind(ManagerKind::Human));
    let list = |names: &[&str]| names.join(", ");
    match (controllers.as_slice(), appliers.as_slice()) {
        ([controller, ..], [_, ..]) => format!(
            "{controller} (a controller) keeps setting {field}: drop {field} from the configuration of {} and \
             hand it over (kubectl owners transfer --from {} --to {controller} --to-operation Update)",
            list(&appliers),
            appliers.join(",")
        ),
        ([_, _, ..], []) if humans.is_empty() => format!(
            "controllers {} all set {field}: configure all but one of them to leave it alone",
            list(&controllers)
        ),
        ([], [_, _, ..]) => format!(
            "appliers {} each apply {field} (with --force-conflicts): keep it in one configuration and remove it \
             from the others",
            list(&appliers)
        ),
        _ => format!(
            "{} change {field} by hand while {} set it: make the change in the owner's configuration instead",
            list(&humans),
            list(&[controllers.as_slice(), appliers.as_slice()].concat())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::Operation;
    use serde_json::json;

    fn writer(name: &str, operation: Operation, subresource: &str) -> Writer {
        Writer { manager: name.into(), operation, subresource: subresource.into() }
    }

    #[test]
    fn two_appliers_flipping_three_times_is_one_fight() {
        let (a, b) = (writer("a", Operation::Apply, ""), writer("b", Operation::Apply, ""));
        let mut watch = FightWatch::new(FightRules::default());
        assert_eq!(watch.record("cm/x", ".data.x", 0, &a, Some(json!("a"))), None);
        assert_eq!(watch.record("cm/x", ".data.x", 1000, &b, Some(json!("b"))), None);
        assert_eq!(watch.record("cm/x", ".data.x", 2000, &a, Some(json!("a"))), None);
        let Some(Finding::Fight(fight)) = watch.record("cm/x", ".data.x", 3000, &b, Some(json!("b"))) else {
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
            }
        );
        assert_eq!(watch.record("cm/x", ".data.x", 4000, &a, Some(json!("a"))), None, "reported once");
    }

    #[test]
    fn flips_older_than_the_window_do_not_count() {
        let (a, b) = (writer("a", Operation::Apply, ""), writer("b", Operation::Apply, ""));
        let mut watch = FightWatch::new(FightRules { flips: 3, window_ms: 1500 });
        for (i, w) in [&a, &b, &a, &b, &a].into_iter().enumerate() {
            let value = Some(json!(w.manager));
            assert_eq!(watch.record("cm/x", ".data.x", i as i64 * 1000, w, value), None, "change {i}");
        }
    }

    #[test]
    fn one_manager_rewriting_is_churn_not_a_fight() {
        let hpa = writer("horizontal-pod-autoscaler", Operation::Update, "scale");
        let mut watch = FightWatch::new(FightRules::default());
        assert_eq!(watch.record("deploy/x", ".spec.replicas", 0, &hpa, Some(json!(2))), None);
        assert_eq!(watch.record("deploy/x", ".spec.replicas", 10, &hpa, Some(json!(3))), None);
        let Some(Finding::Churn(churn)) = watch.record("deploy/x", ".spec.replicas", 20, &hpa, Some(json!(4))) else {
            panic!("churn")
        };
        assert_eq!((churn.manager, churn.changes, churn.period_ms), (hpa.clone(), 3, 20));
        assert_eq!(watch.record("deploy/x", ".spec.replicas", 30, &hpa, Some(json!(5))), None, "reported once");
    }

    #[test]
    fn an_autoscaler_against_an_applier_is_fixed_by_dropping_the_field_and_handing_it_over() {
        let (argo, hpa) = (writer("argocd", Operation::Apply, ""), writer("autoscaler", Operation::Update, "scale"));
        let mut watch = FightWatch::new(FightRules { flips: 2, window_ms: 60_000 });
        watch.record("deploy/x", ".spec.replicas", 0, &argo, Some(json!(1)));
        watch.record("deploy/x", ".spec.replicas", 1, &hpa, Some(json!(4)));
        let Some(Finding::Fight(fight)) = watch.record("deploy/x", ".spec.replicas", 2, &argo, Some(json!(1))) else {
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
        watch.record("cm/x", ".data.x", 0, &flux, Some(json!("1")));
        let Some(Finding::Fight(fight)) = watch.record("cm/x", ".data.x", 1, &me, Some(json!("2"))) else {
            panic!("fight")
        };
        assert_eq!(
            fight.fix,
            "kubectl-edit change .data.x by hand while flux set it: make the change in the owner's configuration instead"
        );
    }
}
