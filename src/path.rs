//! POSIX-style directory paths: a child's `cwd` resolves against its parent's
//! effective directory. Pure string work, no filesystem.

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
}
