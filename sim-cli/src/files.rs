//! File handling shared by every command: file names built from user-controlled strings
//! and the exclusive lock of an output directory.

use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;

/// Failure: exit code and message.
pub type Failure = (u8, String);

/// Exit code for bad input (scenario or arguments).
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for an I/O failure (a file that cannot be read or written).
pub const EXIT_IO: u8 = 1;

/// Longest file-name component built from a user-controlled string.
pub const MAX_COMPONENT_CHARS: usize = 100;

/// Checks that `s`, a user-controlled string (`what` names where it comes from), is one
/// plain file-name component before it is joined to a path: 1 to
/// [`MAX_COMPONENT_CHARS`] characters of `[A-Za-z0-9._-]`, not `.` or `..` — no separator,
/// no absolute path, nothing that leaves the directory it is joined to. The scenario
/// validation already enforces this for `[paper] id`; this is the check at the join.
pub fn safe_component<'a>(what: &str, s: &'a str) -> Result<&'a str, Failure> {
    let ok = !s.is_empty()
        && s.chars().count() <= MAX_COMPONENT_CHARS
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(s)
    } else {
        Err((
            EXIT_BAD_INPUT,
            format!(
                "{what}: {s:?} cannot be part of a file name: expected 1 to {MAX_COMPONENT_CHARS} characters of A-Z a-z 0-9 . _ -, not \".\" or \"..\""
            ),
        ))
    }
}

/// Checks that `s`, a file stem found on disk (`what` names it), is usable as one
/// file-name component: not empty, `.` or `..` (the stem of `...toml`), no separator.
pub fn plain_component<'a>(what: &str, s: &'a str) -> Result<&'a str, Failure> {
    if s.is_empty() || s == "." || s == ".." || s.contains(['/', '\\', '\0']) {
        return Err((
            EXIT_BAD_INPUT,
            format!("{what}: {s:?} cannot be part of a file name: rename the file"),
        ));
    }
    Ok(s)
}

/// Name of the lock file of an output directory.
pub const LOCK_FILE: &str = ".quicsim.lock";

/// The exclusive lock of an output directory, held while a command writes into it: an
/// advisory `flock` on `DIR/.quicsim.lock`, taken without waiting. The kernel releases it
/// when the process ends however it ends (a killed sweep never leaves a stale lock; its
/// `--resume` takes the lock again), and the file is removed when the lock is dropped.
/// Elsewhere than on Unix (the WASI build, one process) it is a no-op.
pub struct DirLock {
    #[cfg(unix)]
    file: Option<std::fs::File>,
    #[cfg(unix)]
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock of `dir` (which must exist), or fails with exit 1 and a message
    /// saying another process holds it.
    #[cfg(unix)]
    pub fn acquire(dir: &Path) -> Result<DirLock, Failure> {
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::io::AsRawFd;
        let path = dir.join(LOCK_FILE);
        let io = |e: std::io::Error| (EXIT_IO, format!("{}: cannot lock: {e}", path.display()));
        // A holder removes the file when it is done: the lock is ours only if the file we
        // locked is still the one at `path` (else retry on the new file).
        for _ in 0..100 {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            // SAFETY: flock on a file descriptor we own, for the lifetime of `file`.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::WouldBlock {
                    return Err((
                        EXIT_IO,
                        format!(
                            "{}: another quicsim process is writing this directory (it holds {}); wait for it to finish, or choose another --out",
                            dir.display(),
                            path.display()
                        ),
                    ));
                }
                return Err(io(e));
            }
            let ours = file.metadata().map_err(io)?;
            match std::fs::metadata(&path) {
                Ok(now) if now.dev() == ours.dev() && now.ino() == ours.ino() => {
                    return Ok(DirLock {
                        file: Some(file),
                        path,
                    })
                }
                _ => continue,
            }
        }
        Err((
            EXIT_IO,
            format!(
                "{}: cannot lock: the lock file keeps changing",
                path.display()
            ),
        ))
    }

    /// No lock outside Unix.
    #[cfg(not(unix))]
    pub fn acquire(_dir: &Path) -> Result<DirLock, Failure> {
        Ok(DirLock {})
    }
}

#[cfg(unix)]
impl Drop for DirLock {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            // Removed while still locked, then unlocked by closing: a process waiting on
            // the old file sees it is no longer at the path and retries.
            let _ = std::fs::remove_file(&self.path);
            drop(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components() {
        for ok in ["000", "paper-1.b_c", "a"] {
            assert!(safe_component("x", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../../x",
            "/abs",
            "a/b",
            "a\\b",
            "é",
            &"a".repeat(101),
        ] {
            let e = safe_component("[paper] id", bad).unwrap_err();
            assert_eq!(e.0, EXIT_BAD_INPUT);
            assert!(e.1.starts_with("[paper] id: "), "{}", e.1);
        }
    }
}
