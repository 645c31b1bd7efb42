//! Files and directories only the user can read, for everything that may hold
//! an object's values (backups, cached schemas, editor buffers): directories
//! 0700, files 0600, set at creation so there is no moment when they are open
//! to others. On platforms without Unix modes the platform's defaults apply.

use std::fs;
use std::io;
use std::path::Path;

/// Creates `dir` and its missing parents, each 0700.
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates a file for writing, 0600: `exclusive` refuses one that exists (so a file
/// planted by someone else is never reused); otherwise an existing one is truncated.
pub fn create_file(path: &Path, exclusive: bool) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    if exclusive {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_modes_and_exclusive_creation() {
        let dir = std::env::temp_dir().join(format!("fw-private-fs-{}", std::process::id())).join("a/b");
        create_dirs(&dir).unwrap();
        let file = dir.join("f");
        create_file(&file, true).unwrap();
        assert_eq!(create_file(&file, true).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        create_file(&file, false).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600));
        }
        fs::remove_dir_all(dir.parent().unwrap().parent().unwrap()).unwrap();
    }
}
