//! A small hand-made schema of Pods and Deployments, with the strategic-merge
//! metadata of the real types, so the generators can be tested without the
//! full built-in schema.

use fieldwise_core::schema::{
    Field, Gvk, ListKind, ListType, MapKind, MapType, PatchStrategy, ScalarKind, Schema, StructType, TypeDef, TypeId,
};

/// Builds struct types field by field.
struct StructBuilder(StructType);

impl StructBuilder {
    fn new() -> Self {
        StructBuilder(StructType::default())
    }

    fn field(mut self, name: &str, ty: TypeId) -> Self {
        self.0.fields.insert(
            name.into(),
            Field { ty, patch_strategy: PatchStrategy::default(), merge_key: None, default: None },
        );
        self
    }

    fn strategic(mut self, name: &str, ty: TypeId, strategy: &str, merge_key: Option<&str>) -> Self {
        let field = Field {
            ty,
            patch_strategy: PatchStrategy::parse(strategy),
            merge_key: merge_key.map(Into::into),
            default: None,
        };
        self.0.fields.insert(name.into(), field);
        self
    }

    fn build(self) -> TypeDef {
        TypeDef::Struct(self.0)
    }
}

/// Pods and Deployments (`v1/Pod`, `apps/v1/Deployment`) with containers keyed by
/// name, ports by containerPort, env by name, volumes keyed by name with
/// retained keys, finalizers as a set, and the deployment strategy with retained keys.
pub fn workloads() -> Schema {
    let mut s = Schema::new();
    let string = s.add(None, TypeDef::Scalar(ScalarKind::String));
    let integer = s.add(None, TypeDef::Scalar(ScalarKind::Integer));
    let boolean = s.add(None, TypeDef::Scalar(ScalarKind::Boolean));
    let int_or_string = s.add(None, TypeDef::Scalar(ScalarKind::IntOrString));
    let strings = s.add(None, TypeDef::List(ListType { items: string, list_kind: ListKind::Atomic }));
    let string_set = s.add(None, TypeDef::List(ListType { items: string, list_kind: ListKind::Set }));
    let labels = s.add(None, TypeDef::Map(MapType { values: string, map_kind: MapKind::Granular }));

    let meta = StructBuilder::new()
        .field("name", string)
        .field("labels", labels)
        .field("annotations", labels)
        .strategic("finalizers", string_set, "merge", None)
        .build();
    let meta = s.add(Some("ObjectMeta"), meta);

    let port = s.add(
        Some("ContainerPort"),
        StructBuilder::new().field("containerPort", integer).field("protocol", string).field("name", string).build(),
    );
    let ports = keyed_list(&mut s, port, &["containerPort", "protocol"]);
    let env_var = s.add(Some("EnvVar"), StructBuilder::new().field("name", string).field("value", string).build());
    let env = keyed_list(&mut s, env_var, &["name"]);
    let container = StructBuilder::new()
        .field("name", string)
        .field("image", string)
        .field("command", strings)
        .strategic("ports", ports, "merge", Some("containerPort"))
        .strategic("env", env, "merge", Some("name"))
        .build();
    let container = s.add(Some("Container"), container);
    let containers = keyed_list(&mut s, container, &["name"]);

    let empty_dir = s.add(Some("EmptyDirVolumeSource"), StructBuilder::new().field("medium", string).build());
    let config_map = s.add(
        Some("ConfigMapVolumeSource"),
        StructBuilder::new().field("name", string).field("optional", boolean).build(),
    );
    let volume = StructBuilder::new().field("name", string).field("emptyDir", empty_dir).field("configMap", config_map);
    let volume = s.add(Some("Volume"), volume.build());
    let volumes = keyed_list(&mut s, volume, &["name"]);

    let pod_spec = StructBuilder::new()
        .strategic("containers", containers, "merge", Some("name"))
        .strategic("volumes", volumes, "merge,retainKeys", Some("name"))
        .field("restartPolicy", string)
        .build();
    let pod_spec = s.add(Some("PodSpec"), pod_spec);
    let pod = StructBuilder::new()
        .field("apiVersion", string)
        .field("kind", string)
        .field("metadata", meta)
        .field("spec", pod_spec)
        .build();
    let pod = s.add(Some("Pod"), pod);
    s.add_root(Gvk::new("", "v1", "Pod"), pod);

    let template =
        s.add(Some("PodTemplateSpec"), StructBuilder::new().field("metadata", meta).field("spec", pod_spec).build());
    let rolling = StructBuilder::new().field("maxSurge", int_or_string).field("maxUnavailable", int_or_string).build();
    let rolling = s.add(Some("RollingUpdateDeployment"), rolling);
    let strategy = s.add(
        Some("DeploymentStrategy"),
        StructBuilder::new().field("type", string).field("rollingUpdate", rolling).build(),
    );
    let deployment_spec = StructBuilder::new()
        .field("replicas", integer)
        .field("template", template)
        .strategic("strategy", strategy, "retainKeys", None)
        .build();
    let deployment_spec = s.add(Some("DeploymentSpec"), deployment_spec);
    let deployment = StructBuilder::new()
        .field("apiVersion", string)
        .field("kind", string)
        .field("metadata", meta)
        .field("spec", deployment_spec)
        .build();
    let deployment = s.add(Some("Deployment"), deployment);
    s.add_root(Gvk::new("apps", "v1", "Deployment"), deployment);
    s
}

/// A list of `items` keyed (for server-side apply) by `keys`.
fn keyed_list(s: &mut Schema, items: TypeId, keys: &[&str]) -> TypeId {
    let kind = ListKind::Map(keys.iter().map(|k| k.to_string()).collect());
    s.add(None, TypeDef::List(ListType { items, list_kind: kind }))
}
