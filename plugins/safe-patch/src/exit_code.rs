//! The exit codes safe-patch ends with besides 0 and 1 (the `--help` text lists them all):
//! the single patch, the patch of many objects and both undos end with the same codes for
//! the same reasons, so they are declared once, below every flow that returns them.

/// Exit code when a lint needs `--force` or the user declined.
pub const EXIT_REFUSED: u8 = 2;

/// Exit code when the object changed since the write being undone.
pub const EXIT_CHANGED: u8 = 3;
