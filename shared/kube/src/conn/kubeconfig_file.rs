//! One kubeconfig file read as kubectl reads it: client-go's `clientcmd.Load` converts the
//! YAML with sigs.k8s.io/yaml (YAML 1.1, first document only), the same conversion
//! [`fieldwise_core::yaml::to_json`] makes, so `insecure-skip-tls-verify: yes` is `true`
//! here as it is for kubectl. Relative file paths in it (certificates, keys, token files)
//! are taken relative to the file's directory, as client-go resolves them.

use std::path::Path;

use kube::config::Kubeconfig;

/// Reads the kubeconfig file at `path`, within the input limit (`--kubeconfig /dev/zero`
/// is refused after 32 MiB, not read until memory runs out). The error says what is wrong
/// without quoting a value from the file (a misplaced token must not reach the terminal).
pub fn read(path: &Path) -> Result<Kubeconfig, String> {
    let bytes = crate::local::input::read_file_bytes(path, "the file").map_err(|e| e.to_string())?;
    parse(&text_of(&bytes)?, path.parent())
}

/// The file's text in the encodings go-yaml detects: UTF-8 (a byte-order mark dropped),
/// or UTF-16 little- or big-endian after their byte-order mark.
fn text_of(bytes: &[u8]) -> Result<String, String> {
    let utf16 = |rest: &[u8], unit: fn([u8; 2]) -> u16| {
        let units: Vec<u16> = rest.chunks(2).map(|c| unit([c[0], *c.get(1).unwrap_or(&0)])).collect();
        String::from_utf16(&units).map_err(|_| "the file is not valid UTF-16 text".to_string())
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [0xEF, 0xBB, 0xBF, rest @ ..] => text_of(rest),
        _ => String::from_utf8(bytes.to_vec()).map_err(|_| "the file is not UTF-8 text".to_string()),
    }
}

/// Parses kubeconfig text; relative paths in it are made absolute against `dir`.
pub fn parse(text: &str, dir: Option<&Path>) -> Result<Kubeconfig, String> {
    let value = fieldwise_core::yaml::to_json(text).map_err(|e| e.to_string())?;
    let mut config: Kubeconfig = if value.is_null() {
        Kubeconfig::default()
    } else {
        serde_json::from_value(value).map_err(|e| without_quoted_values(&e.to_string()))?
    };
    if let Some(dir) = dir {
        resolve_paths(&mut config, dir);
    }
    Ok(config)
}

/// Makes the file paths of clusters and users absolute against the kubeconfig's directory.
fn resolve_paths(config: &mut Kubeconfig, dir: &Path) {
    let absolute = |path: &mut Option<String>| {
        if let Some(p) = path.as_deref().filter(|p| !p.is_empty() && Path::new(p).is_relative()) {
            if let Some(joined) = dir.join(p).to_str() {
                *path = Some(joined.to_string());
            }
        }
    };
    for cluster in config.clusters.iter_mut().filter_map(|named| named.cluster.as_mut()) {
        absolute(&mut cluster.certificate_authority);
    }
    for user in config.auth_infos.iter_mut().filter_map(|named| named.auth_info.as_mut()) {
        absolute(&mut user.client_certificate);
        absolute(&mut user.client_key);
        absolute(&mut user.token_file);
    }
}

/// serde's `invalid type: string "VALUE", expected ...` with the value left out.
fn without_quoted_values(message: &str) -> String {
    match (message.find('"'), message.rfind('"')) {
        (Some(first), Some(last)) if first < last => format!("{}…{}", &message[..first], &message[last + 1..]),
        _ => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_1_as_client_go_reads_it_and_relative_paths_resolved() {
        let text = "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://h:6443\n    insecure-skip-tls-verify: yes\n    certificate-authority: ca.crt\nusers:\n- name: u\n  user:\n    client-certificate: /abs/u.crt\n    client-key: keys/u.key\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n";
        let config = parse(text, Some(Path::new("/home/me/.kube"))).unwrap();
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.insecure_skip_tls_verify, Some(true));
        assert_eq!(cluster.certificate_authority.as_deref(), Some("/home/me/.kube/ca.crt"));
        let user = config.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.client_certificate.as_deref(), Some("/abs/u.crt"));
        assert_eq!(user.client_key.as_deref(), Some("/home/me/.kube/keys/u.key"));
        assert_eq!(config.current_context.as_deref(), Some("c"));
    }

    #[test]
    fn utf8_with_a_mark_and_utf16_both_ways_are_read() {
        let text = "current-context: c\n";
        let le: Vec<u8> = [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect();
        let be: Vec<u8> = [0xFE, 0xFF].into_iter().chain(text.encode_utf16().flat_map(u16::to_be_bytes)).collect();
        let marked: Vec<u8> = [0xEF, 0xBB, 0xBF].into_iter().chain(text.bytes()).collect();
        for bytes in [le, be, marked, text.as_bytes().to_vec()] {
            assert_eq!(text_of(&bytes).unwrap(), text);
        }
        assert!(text_of(&[0xC3, 0x28]).unwrap_err().contains("not UTF-8"));
    }

    #[test]
    fn empty_files_are_empty_configs_and_errors_quote_no_value() {
        assert!(parse("", None).unwrap().clusters.is_empty());
        let err = parse("users:\n- name: u\n  user: {token: [s3cret-token]}\n", None).unwrap_err();
        assert!(!err.contains("s3cret"), "{err}");
        let err = parse("clusters: s3cret-token\n", None).unwrap_err();
        assert!(!err.contains("s3cret") && err.contains("invalid type"), "{err}");
        assert!(parse("a: [\n", None).unwrap_err().contains("line"));
    }
}
