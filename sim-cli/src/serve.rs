//! `quicsim serve`: serves the browser UI's built files (`web-ui/dist/`, made by
//! `scripts/build-web`) on 127.0.0.1 with tiny_http. Static files only: every simulation
//! runs in the page.

use std::path::{Component, Path, PathBuf};

/// The MIME type of a file by its extension (`.wasm` must be `application/wasm` for
/// streaming compilation; module scripts need a JavaScript type).
pub fn mime(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "toml" | "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The file a request path names inside `dir`, or `None` when it would leave `dir`
/// (`..`, absolute parts). `/` is `index.html`; a query string is ignored.
pub fn resolve(dir: &Path, url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let mut out = dir.to_path_buf();
    for part in Path::new(path.trim_start_matches('/')).components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    Some(out)
}

/// Serves `dir` on `127.0.0.1:port` until killed; prints the URL.
pub fn serve(dir: &Path, port: u16) -> Result<(), (u8, String)> {
    if !dir.join("index.html").is_file() {
        return Err((
            1,
            format!(
                "{}: no built site here (index.html missing); build it first with ./scripts/build-web",
                dir.display()
            ),
        ));
    }
    let server = tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|e| (1, format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .unwrap_or(port);
    crate::stdout(&format!(
        "serving {} at http://127.0.0.1:{port}/\n",
        dir.display()
    ))?;
    for req in server.incoming_requests() {
        let file = resolve(dir, req.url()).filter(|p| p.is_file());
        let res = match file.and_then(|p| std::fs::read(&p).ok().map(|b| (p, b))) {
            Some((p, body)) => {
                let ct = tiny_http::Header::from_bytes("Content-Type", mime(&p)).expect("header");
                let nc =
                    tiny_http::Header::from_bytes("Cache-Control", "no-cache").expect("header");
                req.respond(
                    tiny_http::Response::from_data(body)
                        .with_header(ct)
                        .with_header(nc),
                )
            }
            None => {
                req.respond(tiny_http::Response::from_string("not found").with_status_code(404))
            }
        };
        // A client that went away is not the server's problem.
        let _ = res;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_types_and_paths() {
        assert_eq!(mime(Path::new("a/web-ui_bg.wasm")), "application/wasm");
        assert!(mime(Path::new("web-ui.js")).starts_with("text/javascript"));
        assert!(mime(Path::new("index.html")).starts_with("text/html"));
        let d = Path::new("/srv");
        assert_eq!(
            resolve(d, "/web-ui.js?x=1"),
            Some(PathBuf::from("/srv/web-ui.js"))
        );
        assert_eq!(resolve(d, "/../etc/passwd"), None);
    }
}
