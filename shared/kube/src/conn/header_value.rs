//! What an HTTP header can carry, checked before a client is built: a bearer token, an
//! impersonated user, group or UID become header values, and the client library panics
//! (in its authorization layer) on a token with a newline. client-go refuses them too
//! (Go's `net/http`: invalid header field value); here each is refused by name, where it
//! came from (`--token`, the kubeconfig user's `token`, its `tokenFile`), never quoted: a
//! token is a secret.
//!
//! A `tokenFile` is read here, once, and its surrounding whitespace trimmed as client-go
//! trims it (`echo TOKEN > file` leaves a newline the header cannot carry).

use kube::config::AuthInfo;

use crate::conn::error::{ConnError, ConnResult as Result};
use crate::conn::flags::KubeFlags;

/// Whether `value` can be an HTTP header value (what `http::HeaderValue` accepts: visible
/// characters, spaces and tabs; no newline or other control character).
pub fn can_carry(value: &str) -> bool {
    value.bytes().all(|b| (b >= 0x20 && b != 0x7f) || b == b'\t')
}

/// Refuses `value`, described as `what`, if a header cannot carry it.
pub fn check(value: &str, what: &str) -> Result<()> {
    if can_carry(value) {
        return Ok(());
    }
    Err(ConnError::usage(format!(
        "invalid {what}: it contains a newline or another control character, which an HTTP header cannot carry (look for a line break copied with it)"
    )))
}

/// Checks every value of the kubeconfig user `name` (after the flags were applied to it)
/// that the client sends as a header, and replaces its `tokenFile` by the file's trimmed
/// token (see the module docs).
pub fn check_user(user: &mut AuthInfo, name: &str, flags: &KubeFlags) -> Result<()> {
    let entry = format!("kubeconfig user \"{name}\"");
    if let Some(token) = &user.token {
        use secrecy::ExposeSecret;
        let what = if flags.token.is_some() { "--token".to_string() } else { format!("token of {entry}") };
        check(token.expose_secret(), &what)?;
    } else if let Some(path) = user.token_file.clone().filter(|p| !p.is_empty()) {
        // Within the input limit, as every file read whole; a token is text.
        let text = crate::local::input::read_file_bytes(std::path::Path::new(&path), "the file")
            .and_then(|bytes| {
                String::from_utf8(bytes).map_err(|_| crate::local::error::LocalError::input("it is not UTF-8 text"))
            })
            .map_err(|e| ConnError::Kubeconfig(format!("cannot read the tokenFile {path} of {entry}: {e}")))?;
        let token = text.trim();
        check(token, &format!("token in the tokenFile {path} of {entry}"))?;
        user.token = Some(token.to_string().into());
        user.token_file = None;
    }
    if let Some(provider) = &user.auth_provider {
        for key in ["id-token", "access-token"] {
            if let Some(value) = provider.config.get(key) {
                check(value, &format!("{key} of the auth-provider of {entry}"))?;
            }
        }
    }
    let flag_or = |flag: bool, flag_name: &str, field: &str| {
        if flag {
            flag_name.to_string()
        } else {
            format!("{field} of {entry}")
        }
    };
    if let Some(user_name) = &user.impersonate {
        check(user_name, &flag_or(flags.as_user.is_some(), "--as", "as"))?;
    }
    if let Some(uid) = &user.impersonate_uid {
        check(uid, &flag_or(flags.as_uid.is_some(), "--as-uid", "as-uid"))?;
    }
    for group in user.impersonate_groups.iter().flatten() {
        check(group, &flag_or(!flags.as_group.is_empty(), "--as-group", "as-groups"))?;
    }
    for (key, values) in user.impersonate_user_extra.iter().flatten() {
        for value in values {
            check(value, &format!("as-user-extra {key:?} of {entry}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::flags::SecretFlag;

    #[test]
    fn control_characters_are_refused_and_named_never_quoted() {
        assert!(can_carry("abc.DEF-123_~+/= \t"));
        for bad in ["s3cret\n", "s3\rcret", "s3cret\u{0}", "s3cret\u{7f}"] {
            let mut user = AuthInfo { token: Some(bad.to_string().into()), ..Default::default() };
            let flags = KubeFlags { token: Some(SecretFlag(bad.into())), ..Default::default() };
            let err = check_user(&mut user, "admin", &flags).unwrap_err().to_string();
            assert_eq!(
                err,
                "invalid --token: it contains a newline or another control character, which an HTTP header cannot carry (look for a line break copied with it)"
            );
            let err = check_user(&mut user, "admin", &KubeFlags::default()).unwrap_err().to_string();
            assert!(err.starts_with("invalid token of kubeconfig user \"admin\": "), "{err}");
            assert!(!err.contains("s3"), "the token leaked: {err}");
        }
    }

    #[test]
    fn impersonation_values_are_checked_by_their_flag_or_field() {
        let mut user = AuthInfo { impersonate: Some("jane\n".into()), ..Default::default() };
        let err = check_user(&mut user, "u", &KubeFlags { as_user: Some("jane\n".into()), ..Default::default() });
        assert!(err.unwrap_err().to_string().starts_with("invalid --as: "));
        let mut user = AuthInfo { impersonate_groups: Some(vec!["ok".into(), "b\nad".into()]), ..Default::default() };
        let err = check_user(&mut user, "u", &KubeFlags::default()).unwrap_err().to_string();
        assert!(err.starts_with("invalid as-groups of kubeconfig user \"u\": "), "{err}");
    }

    #[test]
    fn a_token_file_is_read_trimmed_as_client_go_reads_it() {
        let dir = std::env::temp_dir().join(format!("fw-token-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "s3cret-token\n").unwrap();
        let path = file.to_string_lossy().into_owned();
        let mut user = AuthInfo { token_file: Some(path.clone()), ..Default::default() };
        check_user(&mut user, "u", &KubeFlags::default()).unwrap();
        use secrecy::ExposeSecret;
        assert_eq!(user.token.as_ref().map(|t| t.expose_secret().to_string()).as_deref(), Some("s3cret-token"));
        assert!(user.token_file.is_none());

        std::fs::write(&file, "s3cret\ntoken\n").unwrap();
        let mut user = AuthInfo { token_file: Some(path.clone()), ..Default::default() };
        let err = check_user(&mut user, "u", &KubeFlags::default()).unwrap_err().to_string();
        assert!(err.starts_with(&format!("invalid token in the tokenFile {path} of kubeconfig user \"u\": ")), "{err}");
        assert!(!err.contains("s3cret"), "{err}");
        std::fs::remove_dir_all(dir).ok();
    }
}
