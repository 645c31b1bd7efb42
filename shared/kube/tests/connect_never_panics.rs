//! Whatever a kubeconfig file or the connection flags say, connecting ends in a client or a
//! clear error, never a panic (issue #28: a token with a newline panicked in the client
//! library's authorization layer, a huge `--request-timeout` in a deadline's arithmetic).
//! Every string field a kubeconfig has and every string flag is generated; nothing is sent.

use fieldwise_kube::conn::client::connect_with;
use fieldwise_kube::conn::flags::{KubeFlags, SecretFlag};
use fieldwise_kube::conn::kubeconfig_file;
use proptest::prelude::*;
use serde_json::json;

/// Any text, weighted toward what broke before: control characters, `/`, `%`, huge numbers.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,12}",
        "[a-z0-9/%.\\n\\r\\t\\u{0}\\u{7f} -]{0,10}",
        "[0-9]{1,25}(ns|us|ms|s|m|h|d|\\.|)",
        Just("https://127.0.0.1:6443".to_string()),
    ]
}

fn optional(strategy: impl Strategy<Value = String>) -> impl Strategy<Value = Option<String>> {
    prop::option::of(strategy)
}

/// One kubeconfig, every string field from `fields` (in order), as YAML text (JSON is YAML).
fn kubeconfig_text(f: &[String]) -> String {
    json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {
            "server": f[0], "tls-server-name": f[1], "proxy-url": f[2], "insecure-skip-tls-verify": true,
        }}],
        "users": [{"name": "u", "user": {
            "token": f[3], "username": f[4], "password": f[5],
            "as": f[6], "as-groups": [f[7]], "as-uid": f[8], "as-user-extra": {f[9].clone(): [f[10]]},
        }}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": f[11]}}],
    })
    .to_string()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn the_kubeconfig_loader_never_panics_on_any_text(text in "\\PC{0,200}") {
        let _ = kubeconfig_file::parse(&text, None);
    }

    #[test]
    fn connecting_never_panics_whatever_the_kubeconfig_and_flags_say(
        fields in prop::collection::vec(field(), 12),
        namespace in optional(field()),
        token in optional(field()),
        request_timeout in field(),
        as_user in optional(field()),
        as_group in prop::collection::vec(field(), 0..2),
        server in optional(field()),
        tls_server_name in optional(field()),
    ) {
        let text = kubeconfig_text(&fields);
        let Ok(kubeconfig) = kubeconfig_file::parse(&text, None) else { return Ok(()) };
        let flags = KubeFlags {
            namespace,
            token: token.map(SecretFlag),
            request_timeout,
            as_user: as_user.clone(),
            as_group: if as_user.is_some() { as_group } else { Vec::new() },
            server,
            tls_server_name,
            ..KubeFlags::default()
        };
        // Any outcome but a panic: a client, or an error that prints as one line.
        if let Err(err) = runtime().block_on(connect_with(kubeconfig, &flags)) {
            let err = fieldwise_kube::Error::from(err);
            prop_assert!(err.printed().starts_with("error: "), "{}", err.printed());
        }
    }
}
