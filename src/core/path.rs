//! POSIX-style directory paths: a child's `cwd` resolves against its parent's
//! effective directory. Pure string work, no filesystem.
//!
//! The directory policy ([`confine`]): by default a child's directory must lie
//! inside its root's directory, so a host that treats `turn.cwd` as a sandbox
//! is never handed `/`, `/etc` or a `..` escape by a model. A path with a NUL
//! character is refused always (it would cut the path short in any C API).

use crate::core::error::{Quoted, Result};
use crate::core::limits::{check_bytes, MAX_CWD_BYTES};
use crate::core::name::quote_truncated;

/// A directory as given (`cwd`, `defaultCwd`): no NUL, at most [`MAX_CWD_BYTES`].
pub fn check_text(what: &str, path: &str) -> Result<()> {
    check_bytes(what, path.len(), "cwdBytes", MAX_CWD_BYTES)?;
    if path.contains('\0') {
        return Err(crate::err!(
            InvalidArgument,
            "{what} {} contains a NUL character, which no directory name can hold",
            quote_truncated(path, 80)
        ));
    }
    Ok(())
}

/// A child's directory: `requested` resolved against the parent's directory
/// and, when `confined`, required to be the root's directory or below it.
pub fn confine(root: &str, parent: &str, requested: Option<&str>, confined: bool) -> Result<String> {
    if let Some(p) = requested {
        check_text("cwd", p)?;
        // On a Windows host `..\..` climbs as `../..` does: a confined child may not name it.
        if confined && p.contains('\\') {
            return Err(crate::err!(
                InvalidArgument,
                "cwd {} contains a backslash; a child's directory uses / as its separator, so no path escapes the root's directory on any host",
                quote_truncated(p, 80)
            ));
        }
    }
    let resolved = resolve(parent, requested);
    if confined && !is_within(&resolved, &normalize(root)) {
        return Err(crate::err!(
            Unauthorized,
            "cwd {} resolves to {}, outside the root's directory {}; children are confined to it",
            quote_truncated(requested.unwrap_or_default(), 80),
            quote_truncated(&resolved, 80),
            Quoted(&normalize(root))
        ));
    }
    Ok(resolved)
}

/// Whether normalised `path` is `dir` or below it.
pub fn is_within(path: &str, dir: &str) -> bool {
    dir == "/" || path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// Resolves `requested` against `base` (absolute), normalising `.` and `..`.
pub fn resolve(base: &str, requested: Option<&str>) -> String {
    match requested {
        None => normalize(base),
        Some(p) if p.starts_with('/') => normalize(p),
        Some(p) => normalize(&format!("{}/{}", base.trim_end_matches('/'), p)),
    }
}

/// An absolute, normalised path (`..` never climbs above `/`).
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_against_the_base() {
        assert_eq!(resolve("/work/app", None), "/work/app");
        assert_eq!(resolve("/work/app", Some("src")), "/work/app/src");
        assert_eq!(resolve("/work/app/", Some("../lib/./x")), "/work/lib/x");
        assert_eq!(resolve("/work", Some("/etc//x/")), "/etc/x");
        assert_eq!(resolve("/", Some("../../..")), "/");
        assert_eq!(normalize("relative/dir"), "/relative/dir");
    }

    #[test]
    fn children_are_confined_to_the_root_directory() {
        let ok = |root, parent, req| confine(root, parent, req, true).unwrap();
        let refused = |root, parent, req| confine(root, parent, req, true).unwrap_err();
        assert_eq!(ok("/work", "/work/app", None), "/work/app");
        assert_eq!(ok("/work", "/work/app", Some("src")), "/work/app/src");
        assert_eq!(ok("/work", "/work/app", Some("../lib")), "/work/lib");
        assert_eq!(ok("/work", "/work", Some("/work/x/../y")), "/work/y");
        assert_eq!(ok("/", "/", Some("/etc")), "/etc");
        for escape in ["/", "../../..", "/etc", "..", "/workshop", "/work/../etc"] {
            let e = refused("/work", "/work", Some(escape));
            assert_eq!(e.code, crate::ErrorCode::Unauthorized, "{escape}");
            assert!(e.message.contains("outside the root's directory \"/work\""), "{}", e.message);
        }
        for windows in ["..\\..\\..", "a\\b", "C:\\Windows"] {
            let e = refused("/work", "/work", Some(windows));
            assert_eq!(e.code, crate::ErrorCode::InvalidArgument, "{windows}");
            assert!(e.message.contains("backslash"), "{}", e.message);
        }
        assert_eq!(
            confine("/work", "/work", Some("a\\b"), false).unwrap(),
            "/work/a\\b",
            "unconfined: a name like any other"
        );
        let nul = refused("/work", "/work", Some("a\0b"));
        assert_eq!(nul.code, crate::ErrorCode::InvalidArgument);
        assert!(nul.message.contains("NUL"), "{}", nul.message);
        // Unconfined: escapes resolve, NUL still refused.
        assert_eq!(confine("/work", "/work", Some("/etc"), false).unwrap(), "/etc");
        assert!(confine("/work", "/work", Some("\0"), false).is_err());
        assert_eq!(refused("/w", "/w", Some(&"a".repeat(5000))).code, crate::ErrorCode::LimitExceeded);
        assert!(is_within("/work/a", "/work") && !is_within("/workx", "/work") && is_within("/x", "/"));
    }
}
