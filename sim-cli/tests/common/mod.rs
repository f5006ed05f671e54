//! Helpers shared by the integration tests of sim-cli (`mod common;` in each test file).

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A fresh scratch directory `temp_dir()/quicsim-<kind>-<pid>-<name>` (emptied first if a
/// previous run of this process id left it), removed with its contents when dropped,
/// except while the thread is panicking: a failing test keeps its directory for
/// inspection. It dereferences to [`Path`] (and is `AsRef<Path>` for the generic `std::fs`
/// functions).
pub struct TmpDir(PathBuf);

impl TmpDir {
    pub fn new(kind: &str, name: &str) -> TmpDir {
        let d = std::env::temp_dir().join(format!("quicsim-{kind}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TmpDir(d)
    }
}

impl Deref for TmpDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TmpDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
