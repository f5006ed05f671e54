//! File handling shared by every command: reading a scenario file within bounds, file
//! names built from user-controlled strings,
//! result files written atomically (a temporary file in the same directory, renamed over
//! the target when complete) and the exclusive lock of an output directory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Failure: exit code and message.
pub type Failure = (u8, String);

/// Exit code for bad input (scenario or arguments).
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for an I/O failure (a file that cannot be read or written).
pub const EXIT_IO: u8 = 1;

/// Largest scenario file read: far above any real scenario (the largest committed one is a
/// few KB), small enough that `run /dev/zero`-like inputs fail at once.
pub const MAX_SCENARIO_BYTES: u64 = 16 * 1024 * 1024;

/// Largest trace file read (`rate = { trace = "..." }`): room for sim-core's limit of
/// 2 000 000 opportunities of up to eight digits each.
pub const MAX_TRACE_BYTES: u64 = 32 * 1024 * 1024;

/// Parses the scenario `text` read from `file`: trace files its links name are read
/// relative to `file`'s directory ([`read_trace`]). Errors start with the file's name.
pub fn parse_scenario(file: &Path, text: &str) -> Result<sim_core::scenario::Scenario, Failure> {
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let load = move |name: &str| read_trace(&dir.join(name));
    sim_core::scenario::parse_str_with_traces(text, &load)
        .map_err(|e| (EXIT_BAD_INPUT, format!("{}: {e}", file.display())))
}

/// Reads a trace file: a regular file of at most [`MAX_TRACE_BYTES`], in UTF-8; the error
/// says why not (sim-core names the scenario key and the file).
pub fn read_trace(path: &Path) -> Result<String, String> {
    let mut file = open_nonblocking(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{}: not a regular file ({})",
            path.display(),
            kind_of(&meta)
        ));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(format!(
            "{}: larger than {} MB",
            path.display(),
            MAX_TRACE_BYTES / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

/// Reads a scenario file: a regular file (not a FIFO, device or directory: those are
/// refused before anything is read, so a FIFO never blocks) of at most
/// [`MAX_SCENARIO_BYTES`], in UTF-8. A file that cannot be opened or read is an I/O
/// failure (exit 1); a file of the wrong kind, too large or not UTF-8 is bad input (exit 2).
pub fn read_scenario(path: &Path) -> Result<String, Failure> {
    let io = |e: std::io::Error| (EXIT_IO, format!("{}: cannot read: {e}", path.display()));
    let mut file = open_nonblocking(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "{}: not a regular file ({}): a scenario is a TOML file",
                path.display(),
                kind_of(&meta)
            ),
        ));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err((
            EXIT_BAD_INPUT,
            format!(
                "{}: larger than {} MB: a scenario file is at most {MAX_SCENARIO_BYTES} bytes",
                path.display(),
                MAX_SCENARIO_BYTES / (1024 * 1024)
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        (
            EXIT_BAD_INPUT,
            format!(
                "{}: not UTF-8 text (line {line}: invalid byte at offset {at}): a scenario is a TOML file in UTF-8",
                path.display(),
            ),
        )
    })
}

/// Opens `path` for reading without blocking on a FIFO (O_NONBLOCK; a regular file reads
/// the same with or without it).
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Opens `path` for reading; elsewhere than on Unix the kind of file is checked first.
#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind_of(&meta)),
        ));
    }
    std::fs::File::open(path)
}

/// What kind of file `meta` describes, for messages.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

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

/// The temporary file [`AtomicFile`] writes before renaming it to `path`: hidden, in the
/// same directory (so the rename is atomic), unique to this process, with `path`'s
/// extension kept last (the PNG encoder picks the format by extension).
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp{ext}", process_tag()))
}

/// This process's id where there is one (not on WASI, where `std::process::id` panics;
/// there is one process per directory there).
fn process_tag() -> u32 {
    #[cfg(any(unix, windows))]
    {
        std::process::id()
    }
    #[cfg(not(any(unix, windows)))]
    {
        0
    }
}

/// A file written atomically: its bytes go to [`temp_path`], and [`AtomicFile::commit`]
/// renames it over the target once complete. Dropped without a commit (an error on the
/// way), the temporary file is removed and the target is untouched.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    w: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let tmp = temp_path(path);
        let f = std::fs::File::create(&tmp)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            w: Some(std::io::BufWriter::new(f)),
        })
    }

    /// Flushes the file and renames it to its target (on failure the temporary file is
    /// removed and the target left as it was).
    pub fn commit(mut self) -> std::io::Result<()> {
        let w = self.w.take().expect("not committed yet");
        let done = w.into_inner().map_err(|e| e.into_error()).and_then(|f| {
            drop(f);
            std::fs::rename(&self.tmp, &self.path)
        });
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        done
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.as_mut().expect("not committed").write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.w.as_mut().expect("not committed").write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically ([`AtomicFile`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let io = |e: std::io::Error| (EXIT_IO, format!("{}: {e}", path.display()));
    let mut f = AtomicFile::create(path).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.commit().map_err(io)
}

/// Runs `draw` on [`temp_path`]`(out)` and renames the result to `out` when it succeeds
/// (the temporary file is removed when it fails): a figure is written atomically by
/// drawing backends that take a path.
pub fn draw_atomic<E>(out: &Path, draw: impl FnOnce(&Path) -> Result<(), E>) -> Result<(), E>
where
    E: From<String>,
{
    let tmp = temp_path(out);
    match draw(&tmp) {
        Ok(()) => std::fs::rename(&tmp, out).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            E::from(format!("{}: {e}", out.display()))
        }),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Whether `a` and `b` name the same existing file (the same device and inode on Unix, the
/// same canonical path elsewhere).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (a.canonicalize(), b.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

/// Refuses an output file that is one of the command's inputs (`inputs`: what each is,
/// and its path): drawing it would overwrite what it is drawn from. Exit 2, naming
/// `--out`.
pub fn refuse_input_as_output(out: &Path, inputs: &[(&str, &Path)]) -> Result<(), Failure> {
    for (what, input) in inputs {
        if same_file(out, input) {
            return Err((
                EXIT_BAD_INPUT,
                format!(
                    "--out {}: is the {what} ({}): the figure would overwrite it; choose another output file",
                    out.display(),
                    input.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Name of the lock file of an output directory.
#[cfg(unix)]
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

    #[test]
    fn temp_paths_keep_the_directory_and_extension() {
        let t = temp_path(Path::new("d/fig.png"));
        assert_eq!(t.parent(), Some(Path::new("d")));
        assert_eq!(t.extension().unwrap(), "png");
        assert!(t
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(".fig.png."));
    }
}
