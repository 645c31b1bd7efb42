//! The version string every plugin prints, with the commit it was built from,
//! and the User-Agent every request carries, so cluster admins can tell our
//! requests from anyone's in audit logs.

/// `0.1.0 (commit abc1234)`: the crate version and the git commit of the build.
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("FIELDWISE_COMMIT"), ")");

/// The git commit baked in at build time (`unknown` when the build had no git).
pub const COMMIT: &str = env!("FIELDWISE_COMMIT");

/// The User-Agent of this process, built the way client-go's `DefaultUserAgent`
/// builds kubectl's (`kubectl/v1.33.0 (linux/amd64) kubernetes/abc1234`):
/// `kubectl-safe_patch/v0.1.0 (linux/amd64) fieldwise/abc1234`, from the name
/// the executable was started under.
pub fn user_agent() -> String {
    let executable = std::env::args_os()
        .next()
        .and_then(|arg0| std::path::Path::new(&arg0).file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    user_agent_for(&executable, env!("CARGO_PKG_VERSION"), std::env::consts::OS, std::env::consts::ARCH, COMMIT)
}

/// [`user_agent`] from its parts. Names are Go's (`darwin`, `amd64`, `arm64`),
/// the commit is cut to seven characters as client-go cuts it, and anything a
/// header may not carry becomes `_`.
pub fn user_agent_for(executable: &str, version: &str, os: &str, arch: &str, commit: &str) -> String {
    let executable = if executable.is_empty() { "fieldwise" } else { executable };
    let os = match os {
        "macos" => "darwin",
        other => other,
    };
    let arch = match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    };
    let commit = if commit.is_empty() { "unknown" } else { commit };
    let commit: String = commit.chars().take(7).collect();
    let text = format!("{executable}/v{version} ({os}/{arch}) fieldwise/{commit}");
    text.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_like_kubectls() {
        assert_eq!(
            user_agent_for("kubectl-safe_patch", "0.1.0", "linux", "x86_64", "0123456789ab"),
            "kubectl-safe_patch/v0.1.0 (linux/amd64) fieldwise/0123456"
        );
        assert_eq!(
            user_agent_for("kubectl-owners", "0.1.0", "macos", "aarch64", "unknown"),
            "kubectl-owners/v0.1.0 (darwin/arm64) fieldwise/unknown"
        );
        assert_eq!(
            user_agent_for("", "0.1.0", "linux", "x86_64", ""),
            "fieldwise/v0.1.0 (linux/amd64) fieldwise/unknown"
        );
        assert_eq!(
            user_agent_for("kübectl\n", "0.1.0", "linux", "x86_64", "abc"),
            "k_bectl_/v0.1.0 (linux/amd64) fieldwise/abc"
        );
        assert!(user_agent().contains(&format!("/v{} (", env!("CARGO_PKG_VERSION"))));
    }
}
