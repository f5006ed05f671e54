//! File handling shared by every command: file names built from user-controlled strings.

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
