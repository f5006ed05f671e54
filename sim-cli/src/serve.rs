//! `quicsim serve`: serves the browser UI's built files (`web-ui/dist/`, made by
//! `scripts/build-web`) on 127.0.0.1. Static files only: every simulation runs in the page.
//!
//! The server is a small HTTP/1.1 file server on `std::net`, bounded by construction
//! (issue 28 items 2-4; tiny_http, used before, read a whole request line into memory,
//! served every method and answered connections one at a time, so one client that did
//! not read stalled every other):
//!
//! - a request head of at most [`MAX_HEAD`] bytes (431 past it), read with a timeout;
//!   one request per connection (`Connection: close`);
//! - at most [`MAX_CONNECTIONS`] connections at once, each on its own thread with read
//!   and write timeouts, so a client that never reads holds one slot for at most
//!   [`IO_TIMEOUT`] per write and no other request waits for it; past the limit a
//!   connection gets 503;
//! - `GET` and `HEAD` only (405 with `Allow`); a `Host` naming this server
//!   (127.0.0.1 or localhost and its port: 421 otherwise, against DNS rebinding);
//! - a path percent-decoded, of normal components none of which starts with a dot (no
//!   `..`, no dotfiles), canonicalised (symlinks resolved) and served only when it stays
//!   under the canonical root;
//! - `X-Content-Type-Options: nosniff` and a Content-Security-Policy on every answer;
//! - compression (issue 29 item 14): when the request accepts it, the precompressed
//!   sibling that `scripts/build-web` writes (`NAME.br`, `NAME.gz`; used only when not
//!   older than `NAME`, and resolved under the root like any file), else gzip made here
//!   once per file version and kept; `Content-Encoding` and `Vary: Accept-Encoding`;
//! - caching: an `ETag` per file version and encoding (length and modification time),
//!   `If-None-Match` answered 304; files with a content hash in their name (a part of 16
//!   hex digits, e.g. `web-ui-0123456789abcdef_bg.wasm`) are `immutable` for a year,
//!   every other file `no-cache` (revalidated: a 304 when unchanged).
//!
//! Why not a larger stack: the UI needs GET/HEAD of a few static files on the loopback
//! interface; hyper + tokio would add some forty crates and minutes of build on every CI
//! run for nothing more, and embedding the assets is not possible because the site is
//! built (to wasm) after this binary.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Longest request head (request line and headers) read.
pub const MAX_HEAD: usize = 8 * 1024;
/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 32;
/// Read and write timeout of a connection.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest file compressed (larger ones are sent as they are).
const MAX_GZIP: u64 = 64 * 1024 * 1024;

/// The policy of every answer: the page's own scripts, styles and wasm (compiled from
/// `'self'`), style attributes (the UI sets widths), images from `data:`/`blob:`.
pub const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; worker-src 'self'; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

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

/// Whether a file's name carries a content hash: one of its parts (split on `-`, `_`
/// and `.`) is 16 lowercase hex digits. `scripts/build-web` names the wasm and its JS
/// glue so; such a file never changes under its name and is cached for a year.
pub fn content_hashed(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.split(['-', '_', '.'])
            .any(|p| p.len() == 16 && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
    })
}

/// The `Cache-Control` of a file.
pub fn cache_control(path: &Path) -> &'static str {
    if content_hashed(path) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    }
}

/// A content coding the server can send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    Identity,
    Gzip,
    Brotli,
}

impl Coding {
    /// The `Content-Encoding` name, and the extension of a precompressed sibling.
    fn name(self) -> Option<(&'static str, &'static str)> {
        match self {
            Coding::Identity => None,
            Coding::Gzip => Some(("gzip", "gz")),
            Coding::Brotli => Some(("br", "br")),
        }
    }
}

/// The codings an `Accept-Encoding` value accepts among gzip and br (`q=0` refuses one,
/// also against a `*`, which stands for both): (gzip, br).
pub fn accepted(value: &str) -> (bool, bool) {
    // (named, refused) per coding, and whether `*` is accepted.
    let (mut gzip, mut br, mut any) = ((false, false), (false, false), false);
    for c in value.split(',') {
        let mut it = c.split(';');
        let coding = it.next().unwrap_or("").trim();
        let zero = it.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .is_some_and(|q| q.trim().parse::<f64>().is_ok_and(|q| q == 0.0))
        });
        let slot = if coding.eq_ignore_ascii_case("gzip") {
            &mut gzip
        } else if coding.eq_ignore_ascii_case("br") {
            &mut br
        } else {
            any |= coding == "*" && !zero;
            continue;
        };
        if zero {
            slot.1 = true;
        } else {
            slot.0 = true;
        }
    }
    ((gzip.0 || any) && !gzip.1, (br.0 || any) && !br.1)
}

/// The strong validator of a file version (length and modification time) sent with
/// `coding`: each encoding is its own representation.
pub fn etag(meta: &std::fs::Metadata, coding: Coding) -> String {
    let at = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let suffix = coding.name().map_or("", |(_, ext)| ext);
    let sep = if suffix.is_empty() { "" } else { "-" };
    format!("\"{:x}-{at:x}{sep}{suffix}\"", meta.len())
}

/// Whether an `If-None-Match` value matches `tag` (weak comparison, RFC 9110 §13.1.2:
/// a `W/` prefix is ignored; `*` matches any).
pub fn none_match(value: &str, tag: &str) -> bool {
    value.split(',').any(|t| {
        let t = t.trim();
        t == "*" || t.strip_prefix("W/").unwrap_or(t) == tag
    })
}

/// Whether a file of this type is worth compressing.
fn compressible(path: &Path) -> bool {
    !matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("png" | "gz" | "br") | None
    )
}

/// `%XX` escapes decoded; `None` for a bad escape or a result that is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b.get(i + 1..i + 3)?;
            let h = std::str::from_utf8(h).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The file a request target names under `root` (canonical), or `None`: the path is
/// percent-decoded and split on `/`; every part must be a plain name that does not start
/// with a dot (no `..`, no dotfiles) and holds no `\` or NUL; the file, symlinks
/// resolved, must be a regular file under `root`. `/` and directories are their
/// `index.html`; a query string or fragment is ignored.
pub fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let path = path.strip_prefix('/')?;
    let path = percent_decode(path)?;
    let mut out = root.to_path_buf();
    for part in path.split('/') {
        if part.is_empty() {
            continue;
        }
        if part.starts_with('.') || part.contains(['\\', '\0']) {
            return None;
        }
        out.push(part);
    }
    let mut real = out.canonicalize().ok()?;
    if real.is_dir() {
        real = real.join("index.html").canonicalize().ok()?;
    }
    // Symlinks resolved: still under the root, and no part of it below the root hidden.
    let rel = real.strip_prefix(root).ok()?;
    if rel
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
    {
        return None;
    }
    real.is_file().then_some(real)
}

/// A parsed request head.
struct Head {
    method: String,
    target: String,
    host: Option<String>,
    gzip: bool,
    br: bool,
    if_none_match: Option<String>,
}

/// Why a request head could not be read.
enum HeadError {
    /// Longer than [`MAX_HEAD`].
    TooLarge,
    /// Malformed.
    Bad,
    /// The client went away or timed out: no answer.
    Gone,
}

/// Reads the request head, at most [`MAX_HEAD`] bytes.
fn read_head(stream: &TcpStream) -> Result<Head, HeadError> {
    let mut r = BufReader::new(stream.take(MAX_HEAD as u64 + 1));
    let mut used = 0usize;
    let mut line = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|_| HeadError::Gone)?;
        used += n;
        if used > MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        if n == 0 {
            return Err(if lines.is_empty() && used == 0 {
                HeadError::Gone
            } else {
                HeadError::Bad
            });
        }
        if !line.ends_with(b"\n") {
            return Err(HeadError::Bad);
        }
        let text = std::str::from_utf8(&line).map_err(|_| HeadError::Bad)?;
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if lines.is_empty() {
                continue; // RFC 9112 §2.2: empty lines before the request line
            }
            break;
        }
        lines.push(text.to_string());
    }
    let mut parts = lines[0].split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Bad);
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || target.is_empty() {
        return Err(HeadError::Bad);
    }
    let mut head = Head {
        method: method.to_string(),
        target: target.to_string(),
        host: None,
        gzip: false,
        br: false,
        if_none_match: None,
    };
    for h in &lines[1..] {
        let Some((name, value)) = h.split_once(':') else {
            return Err(HeadError::Bad);
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("host") {
            if head.host.is_some() {
                return Err(HeadError::Bad);
            }
            head.host = Some(value.to_ascii_lowercase());
        } else if name.eq_ignore_ascii_case("accept-encoding") {
            let (gzip, br) = accepted(value);
            head.gzip |= gzip;
            head.br |= br;
        } else if name.eq_ignore_ascii_case("if-none-match") {
            head.if_none_match = Some(match head.if_none_match.take() {
                Some(v) => format!("{v}, {value}"),
                None => value.to_string(),
            });
        }
    }
    Ok(head)
}

/// The compressed versions of the files served, by path, with the version (length and
/// modification time) they were made from.
type GzipCache = Mutex<HashMap<PathBuf, (u64, Option<SystemTime>, Arc<Vec<u8>>)>>;

struct Site {
    root: PathBuf,
    port: u16,
    gzip: GzipCache,
}

/// The compressed body of `path` (its current version), from the cache or made now.
fn gzipped(site: &Site, path: &Path, meta: &std::fs::Metadata) -> Option<Arc<Vec<u8>>> {
    if meta.len() > MAX_GZIP || !compressible(path) {
        return None;
    }
    let version = (meta.len(), meta.modified().ok());
    if let Some((len, at, body)) = site.gzip.lock().ok()?.get(path) {
        if (*len, *at) == version {
            return Some(body.clone());
        }
    }
    let data = std::fs::read(path).ok()?;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&data).ok()?;
    let body = Arc::new(enc.finish().ok()?);
    site.gzip
        .lock()
        .ok()?
        .insert(path.to_path_buf(), (version.0, version.1, body.clone()));
    Some(body)
}

/// The precompressed sibling `NAME.ext` of `path` when it is a regular file under the
/// root (symlinks resolved, as for any file) not older than `path`: its file and size.
fn sibling(
    site: &Site,
    path: &Path,
    meta: &std::fs::Metadata,
    ext: &str,
) -> Option<(std::fs::File, u64)> {
    let mut name = path.file_name()?.to_os_string();
    name.push(".");
    name.push(ext);
    let real = path.with_file_name(name).canonicalize().ok()?;
    if !real.starts_with(&site.root) || real.parent() != path.parent() {
        return None;
    }
    let file = std::fs::File::open(&real).ok()?;
    let m = file.metadata().ok()?;
    if !m.is_file() || m.modified().ok()? < meta.modified().ok()? {
        return None;
    }
    Some((file, m.len()))
}

/// A body to send.
enum Body {
    File(std::fs::File),
    Bytes(Arc<Vec<u8>>),
}

/// Writes a complete answer without a file body.
fn answer(stream: &mut TcpStream, status: &str, extra: &str, body: &str) {
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         X-Content-Type-Options: nosniff\r\nContent-Security-Policy: {CSP}\r\n{extra}\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(msg.as_bytes());
    let _ = stream.flush();
}

/// Serves one connection: one request.
fn handle(site: &Site, mut stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let head = match read_head(&stream) {
        Ok(h) => h,
        Err(HeadError::TooLarge) => {
            return answer(
                &mut stream,
                "431 Request Header Fields Too Large",
                "",
                "request head too large\n",
            );
        }
        Err(HeadError::Bad) => {
            return answer(&mut stream, "400 Bad Request", "", "bad request\n");
        }
        Err(HeadError::Gone) => return,
    };
    let allowed_hosts = [
        format!("127.0.0.1:{}", site.port),
        format!("localhost:{}", site.port),
    ];
    match &head.host {
        None => return answer(&mut stream, "400 Bad Request", "", "Host required\n"),
        Some(h) if !allowed_hosts.contains(h) => {
            return answer(
                &mut stream,
                "421 Misdirected Request",
                "",
                "this server answers to 127.0.0.1 and localhost only\n",
            );
        }
        Some(_) => {}
    }
    let head_only = match head.method.as_str() {
        "GET" => false,
        "HEAD" => true,
        _ => {
            return answer(
                &mut stream,
                "405 Method Not Allowed",
                "Allow: GET, HEAD\r\n",
                "GET and HEAD only\n",
            );
        }
    };
    let Some(path) = resolve(&site.root, &head.target) else {
        return answer(&mut stream, "404 Not Found", "", "not found\n");
    };
    let Ok(file) = std::fs::File::open(&path) else {
        return answer(&mut stream, "404 Not Found", "", "not found\n");
    };
    let Ok(meta) = file.metadata() else {
        return answer(&mut stream, "404 Not Found", "", "not found\n");
    };
    // The representation: a precompressed sibling (br, then gzip) when accepted, else
    // gzip made here, else the file as it is.
    let mut chosen: Option<(Coding, Body, u64)> = None;
    if compressible(&path) {
        for (ok, coding) in [(head.br, Coding::Brotli), (head.gzip, Coding::Gzip)] {
            if chosen.is_none() && ok {
                let ext = coding.name().map_or("", |(_, e)| e);
                chosen = sibling(site, &path, &meta, ext).map(|(f, n)| (coding, Body::File(f), n));
            }
        }
        if chosen.is_none() && head.gzip {
            chosen = gzipped(site, &path, &meta).map(|b| {
                let n = b.len() as u64;
                (Coding::Gzip, Body::Bytes(b), n)
            });
        }
    }
    let (coding, body, len) = chosen.unwrap_or((Coding::Identity, Body::File(file), meta.len()));
    let tag = etag(&meta, coding);
    let mut common = format!(
        "ETag: {tag}\r\nCache-Control: {}\r\nX-Content-Type-Options: nosniff\r\n\
         Content-Security-Policy: {CSP}\r\n",
        cache_control(&path)
    );
    if compressible(&path) {
        common.push_str("Vary: Accept-Encoding\r\n");
    }
    if head
        .if_none_match
        .as_deref()
        .is_some_and(|v| none_match(v, &tag))
    {
        let msg = format!("HTTP/1.1 304 Not Modified\r\n{common}Connection: close\r\n\r\n");
        let _ = stream.write_all(msg.as_bytes());
        let _ = stream.flush();
        return;
    }
    let mut msg = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {len}\r\n{common}",
        mime(&path)
    );
    if let Some((name, _)) = coding.name() {
        msg.push_str(&format!("Content-Encoding: {name}\r\n"));
    }
    msg.push_str("Connection: close\r\n\r\n");
    if stream.write_all(msg.as_bytes()).is_err() || head_only {
        return;
    }
    // A client that stops reading fails a write after IO_TIMEOUT; only its own
    // connection waits.
    let _ = match body {
        Body::Bytes(b) => stream.write_all(&b),
        Body::File(mut f) => std::io::copy(&mut f, &mut stream).map(|_| ()),
    };
    let _ = stream.flush();
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
    let root = dir
        .canonicalize()
        .map_err(|e| (1, format!("{}: {e}", dir.display())))?;
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| (1, format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    crate::stdout(&format!(
        "serving {} at http://127.0.0.1:{port}/\n",
        dir.display()
    ))?;
    let site = Arc::new(Site {
        root,
        port,
        gzip: Mutex::new(HashMap::new()),
    });
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(mut stream) = conn else { continue };
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            // Busy: a short answer that cannot block the accepting thread.
            let _ = stream.set_nonblocking(true);
            let _ = stream.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n",
            );
            continue;
        }
        active.fetch_add(1, Ordering::SeqCst);
        let (site, slot) = (site.clone(), active.clone());
        let spawned = std::thread::Builder::new()
            .name("serve".into())
            .spawn(move || {
                handle(&site, stream);
                slot.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
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
        let d = std::env::temp_dir().join(format!("quicsim-serve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("web-ui.js"), "x").unwrap();
        std::fs::write(d.join("index.html"), "x").unwrap();
        std::fs::write(d.join(".hidden"), "x").unwrap();
        let root = d.canonicalize().unwrap();
        assert_eq!(
            resolve(&root, "/web-ui.js?x=1"),
            Some(root.join("web-ui.js"))
        );
        assert_eq!(resolve(&root, "/"), Some(root.join("index.html")));
        assert_eq!(resolve(&root, "/sub/"), None); // no index.html there
        for bad in [
            "/../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/.hidden",
            "/%2ehidden",
            "/sub/../web-ui.js",
            "web-ui.js",
            "/a%5c..%5cb",
            "/%zz",
        ] {
            assert_eq!(resolve(&root, bad), None, "{bad}");
        }
        assert_eq!(percent_decode("a%20b"), Some("a b".into()));
        // Removed only when the test passes: a failing one keeps its directory to look at.
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn hashed_names_encodings_and_validators() {
        for (name, hashed) in [
            ("web-ui-0123456789abcdef_bg.wasm", true),
            ("web-ui-0123456789abcdef.js", true),
            ("web-ui_bg.wasm", false),
            ("index.html", false),
            ("web-ui-0123456789ABCDEF.js", false), // lowercase only
            ("web-ui-0123456789abcde.js", false),  // 15 digits
            ("web-ui-0123456789abcdef0.js", false), // 17 digits
            ("main.js", false),
        ] {
            assert_eq!(content_hashed(Path::new(name)), hashed, "{name}");
        }
        assert_eq!(
            cache_control(Path::new("a/web-ui-0123456789abcdef_bg.wasm")),
            "public, max-age=31536000, immutable"
        );
        assert_eq!(cache_control(Path::new("index.html")), "no-cache");
        assert_eq!(accepted("gzip, deflate, br, zstd"), (true, true));
        assert_eq!(accepted("gzip;q=0.5"), (true, false));
        assert_eq!(accepted("br;q=0, gzip"), (true, false));
        assert_eq!(accepted("GZIP;q=0"), (false, false));
        assert_eq!(accepted("*"), (true, true));
        assert_eq!(accepted("gzip;q=0, *"), (false, true));
        assert_eq!(accepted("*;q=0, br"), (false, true));
        assert_eq!(accepted("identity"), (false, false));
        let d = std::env::temp_dir().join(format!("quicsim-serve-tag-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f"), "12345").unwrap();
        let m = std::fs::metadata(d.join("f")).unwrap();
        let plain = etag(&m, Coding::Identity);
        let gz = etag(&m, Coding::Gzip);
        let br = etag(&m, Coding::Brotli);
        assert!(plain.starts_with("\"5-") && plain.ends_with('"'), "{plain}");
        assert!(gz.ends_with("-gz\"") && br.ends_with("-br\""), "{gz} {br}");
        assert!(plain != gz && gz != br);
        assert!(none_match(&plain, &plain));
        assert!(none_match(&format!("\"x\", W/{gz}"), &gz));
        assert!(none_match("*", &br));
        assert!(!none_match(&plain, &gz));
        assert!(!none_match("\"x\"", &plain));
        // Removed only when the test passes, as in `mime_types_and_paths`.
        let _ = std::fs::remove_dir_all(&d);
    }
}
