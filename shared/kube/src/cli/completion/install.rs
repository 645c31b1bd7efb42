//! `kubectl <plugin> completion install|uninstall`: the `kubectl_complete-<plugin>`
//! completer next to the installed plugin binary.
//!
//! kubectl (>= 1.26) completes `kubectl owners <TAB>` by running an executable
//! named `kubectl_complete-owners` found on `$PATH`; Krew does not create it
//! (krew#812), so users had to make a symlink by hand. `install` makes it in
//! the directory the plugin was started from (Krew's `~/.krew/bin`, or wherever
//! the binary is): on Unix a relative symlink to the plugin's own file name, so
//! a `kubectl krew upgrade` that replaces the plugin's link keeps it working;
//! on Windows, where symlinks need privileges, a copy of the `.exe` (a hard link
//! could not be removed by the running plugin). Both commands are idempotent and touch nothing else: a file of
//! that name that we did not make is left alone, with an error saying so.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::completer_name;
use crate::error::InstallError;

/// What `install` or `uninstall` did, for the one line printed to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The completer was created (or replaced a stale one of ours).
    Installed(PathBuf),
    /// The completer was already there and pointing at this binary: nothing changed.
    AlreadyInstalled(PathBuf),
    /// The completer was removed.
    Removed(PathBuf),
    /// There was no completer to remove: nothing changed.
    NotInstalled(PathBuf),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Installed(p) => write!(f, "completion installed: {}", p.display()),
            Outcome::AlreadyInstalled(p) => write!(f, "completion already installed: {}", p.display()),
            Outcome::Removed(p) => write!(f, "completion uninstalled: removed {}", p.display()),
            Outcome::NotInstalled(p) => write!(f, "completion not installed: no {}", p.display()),
        }
    }
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |source| InstallError::Io { action, path, source }
}

/// The plugin binary as installed: the path kubectl (or the user) started, not
/// the file behind Krew's symlink, so the completer lands in a directory on `$PATH`.
///
/// `argv0` with a directory part wins; a bare name is looked up on `path_var`;
/// `current_exe` is the last resort (Windows shells often pass a bare name).
pub fn installed_binary(
    argv0: &OsStr,
    path_var: Option<&OsStr>,
    current_exe: io::Result<PathBuf>,
) -> Result<PathBuf, InstallError> {
    let argv0 = Path::new(argv0);
    if argv0.parent().is_some_and(|p| !p.as_os_str().is_empty()) {
        let absolute = if argv0.is_absolute() {
            argv0.to_path_buf()
        } else {
            std::env::current_dir().map_err(InstallError::NoBinary)?.join(argv0)
        };
        if absolute.is_file() {
            return Ok(absolute);
        }
    } else if let (Some(name), Some(path_var)) = (argv0.file_name(), path_var) {
        for dir in std::env::split_paths(path_var) {
            for candidate in [dir.join(name), dir.join(Path::new(name).with_extension("exe"))] {
                if candidate.is_file() {
                    return Ok(candidate);
                }
            }
        }
    }
    current_exe.map_err(InstallError::NoBinary)
}

/// The completer's path beside `binary`: `kubectl_complete-owners` (`.exe` on Windows).
pub fn completer_path(binary: &Path, plugin: &str) -> PathBuf {
    let mut name = completer_name(plugin);
    if cfg!(windows) {
        name.push_str(".exe");
    }
    binary.with_file_name(name)
}

/// Creates the completer beside `binary`; a second run changes nothing.
pub fn install(binary: &Path, plugin: &str) -> Result<Outcome, InstallError> {
    let completer = completer_path(binary, plugin);
    match fs::symlink_metadata(&completer) {
        Ok(_) if is_ours(&completer, binary)? => return Ok(Outcome::AlreadyInstalled(completer)),
        Ok(meta) if replaceable(&meta, &completer, binary)? => {
            fs::remove_file(&completer).map_err(io_err("remove", &completer))?;
        }
        Ok(_) => return Err(InstallError::Foreign(completer)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err("read", &completer)(e)),
    }
    link(binary, &completer).map_err(io_err("create", &completer))?;
    Ok(Outcome::Installed(completer))
}

/// Removes the completer beside `binary` if it is ours; a second run changes nothing.
pub fn uninstall(binary: &Path, plugin: &str) -> Result<Outcome, InstallError> {
    let completer = completer_path(binary, plugin);
    match fs::symlink_metadata(&completer) {
        Ok(meta) if replaceable(&meta, &completer, binary)? => {
            fs::remove_file(&completer).map_err(io_err("remove", &completer))?;
            Ok(Outcome::Removed(completer))
        }
        Ok(_) => Err(InstallError::Foreign(completer)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Outcome::NotInstalled(completer)),
        Err(e) => Err(io_err("read", &completer)(e)),
    }
}

/// Whether the completer already runs this binary.
fn is_ours(completer: &Path, binary: &Path) -> Result<bool, InstallError> {
    if cfg!(windows) {
        return same_contents(completer, binary);
    }
    Ok(fs::read_link(completer).is_ok_and(|target| Some(target.as_os_str()) == binary.file_name()))
}

/// Whether an existing completer may be replaced or removed: a symlink to a
/// `kubectl-*` binary (ours from an older install, or the one the README used
/// to tell users to make by hand); on Windows, a copy of a plugin binary.
fn replaceable(meta: &fs::Metadata, completer: &Path, binary: &Path) -> Result<bool, InstallError> {
    if meta.file_type().is_symlink() {
        let target = fs::read_link(completer).map_err(io_err("read", completer))?;
        return Ok(target.file_name().and_then(OsStr::to_str).is_some_and(|n| n.starts_with("kubectl-")));
    }
    Ok(cfg!(windows) && meta.is_file() && (same_contents(completer, binary)? || looks_like_exe(completer)?))
}

fn same_contents(a: &Path, b: &Path) -> Result<bool, InstallError> {
    let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) else { return Ok(false) };
    if ma.len() != mb.len() {
        return Ok(false);
    }
    Ok(fs::read(a).map_err(io_err("read", a))? == fs::read(b).map_err(io_err("read", b))?)
}

/// A Windows executable (starts with `MZ`): a copy of an older plugin build.
fn looks_like_exe(path: &Path) -> Result<bool, InstallError> {
    use io::Read;
    let mut magic = [0u8; 2];
    let mut file = fs::File::open(path).map_err(io_err("read", path))?;
    Ok(file.read_exact(&mut magic).is_ok() && &magic == b"MZ")
}

#[cfg(unix)]
fn link(binary: &Path, completer: &Path) -> io::Result<()> {
    // Relative: the link follows the plugin's own link when Krew upgrades it.
    let target = binary.file_name().ok_or_else(|| io::Error::other("the binary has no file name"))?;
    std::os::unix::fs::symlink(target, completer)
}

#[cfg(not(unix))]
fn link(binary: &Path, completer: &Path) -> io::Result<()> {
    // A copy, not a hard link: a hard link is the running plugin's own file, which Windows
    // refuses to delete while it runs, so `completion uninstall` could not remove it (seen under wine).
    fs::copy(binary, completer).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fieldwise-completion-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    #[test]
    fn install_is_idempotent_and_uninstall_removes_only_the_link() {
        let dir = scratch("idempotent");
        let binary = dir.join("kubectl-safe_patch");
        fs::write(&binary, b"binary").unwrap();
        let completer = dir.join("kubectl_complete-safe_patch");

        assert_eq!(install(&binary, "safe-patch").unwrap(), Outcome::Installed(completer.clone()));
        assert_eq!(fs::read_link(&completer).unwrap(), PathBuf::from("kubectl-safe_patch"));
        assert_eq!(fs::read(&completer).unwrap(), b"binary");
        assert_eq!(install(&binary, "safe-patch").unwrap(), Outcome::AlreadyInstalled(completer.clone()));

        assert_eq!(uninstall(&binary, "safe-patch").unwrap(), Outcome::Removed(completer.clone()));
        assert!(fs::symlink_metadata(&completer).is_err());
        assert!(binary.is_file(), "the plugin itself stays");
        assert_eq!(uninstall(&binary, "safe-patch").unwrap(), Outcome::NotInstalled(completer));
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_stale_link_is_replaced_and_a_foreign_file_is_left_alone() {
        let dir = scratch("foreign");
        let binary = dir.join("kubectl-owners");
        fs::write(&binary, b"binary").unwrap();
        let completer = dir.join("kubectl_complete-owners");
        std::os::unix::fs::symlink("/old/place/kubectl-owners", &completer).unwrap();
        assert_eq!(install(&binary, "owners").unwrap(), Outcome::Installed(completer.clone()));
        assert_eq!(fs::read_link(&completer).unwrap(), PathBuf::from("kubectl-owners"));

        fs::remove_file(&completer).unwrap();
        fs::write(&completer, b"someone else's script").unwrap();
        let err = install(&binary, "owners").unwrap_err();
        assert!(matches!(err, InstallError::Foreign(_)), "{err}");
        assert!(err.to_string().contains("remove it and run the command again"), "{err}");
        assert!(matches!(uninstall(&binary, "owners"), Err(InstallError::Foreign(_))));
        assert_eq!(fs::read(&completer).unwrap(), b"someone else's script");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_binary_is_found_where_it_was_started_from() {
        let dir = scratch("argv0");
        let binary = dir.join("kubectl-owners");
        fs::write(&binary, b"binary").unwrap();
        let never = || Err(io::Error::other("not used"));
        // kubectl passes the full path it found on $PATH (Krew's bin link, not the store file).
        assert_eq!(installed_binary(binary.as_os_str(), None, never()).unwrap(), binary);
        // A bare name is looked up on PATH.
        let path_var = std::env::join_paths([Path::new("/nonexistent"), &dir]).unwrap();
        assert_eq!(installed_binary(OsStr::new("kubectl-owners"), Some(&path_var), never()).unwrap(), binary);
        // Nothing found: the running executable.
        let found = installed_binary(OsStr::new("kubectl-owners"), None, Ok(PathBuf::from("/x/kubectl-owners")));
        assert_eq!(found.unwrap(), PathBuf::from("/x/kubectl-owners"));
        assert!(matches!(
            installed_binary(OsStr::new("kubectl-owners"), None, never()),
            Err(InstallError::NoBinary(_))
        ));
        fs::remove_dir_all(dir).unwrap();
    }
}
