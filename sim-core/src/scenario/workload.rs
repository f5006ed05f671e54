//! The keys of the `web_page` and `video` workloads, read from a flow table (the
//! transport × workload spelling flattened): [`parse_web_page`], [`parse_video`].

use super::build::array_of_tables;
use super::raw::{render, Read};
use super::schema::WEB_OBJECT;
use crate::config::workload::{paper003_page, validate_page, VideoSpec, WebObject, WebPageSpec};
use crate::units::Bytes;
use crate::validate::{join, ConfigError};
use toml::Value;

/// The `web_page` keys of `r`: `objects` (each read against [`WEB_OBJECT`], `after` by
/// index or name) or the `preset`, checked by [`validate_page`].
pub(super) fn parse_web_page(r: &Read) -> Result<WebPageSpec, ConfigError> {
    let request_size = r.req::<Bytes>("request_size")?.0;
    let objects = match (r.raw("objects"), r.raw("preset")) {
        (Some(_), Some(p)) => {
            return Err(ConfigError::new(
                r.at("preset"),
                render(p),
                "either `objects` or `preset`, not both",
            ))
        }
        (None, _) => {
            // The only preset so far (the key's choices are checked by `req`).
            let _preset: String = r.get("preset")?.unwrap_or_else(|| "paper003".into());
            paper003_page(request_size)
        }
        (Some(list), None) => {
            let at = r.at("objects");
            let items = array_of_tables(list, &at, "objects = [{ name, size, ... }, ...]")?;
            let names: Vec<Option<String>> = items
                .iter()
                .map(|i| i.get("name").and_then(Value::as_str).map(str::to_string))
                .collect();
            let mut objects = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let opath = format!("{at}[{i}]");
                let o = Read::open(item, &opath, &[&WEB_OBJECT])?;
                let name = o
                    .get::<String>("name")?
                    .unwrap_or_else(|| format!("object{i}"));
                let size = o.req::<Bytes>("size")?.0;
                let own = o.get::<Bytes>("request_size")?.map(|b| b.0);
                let after = match o.raw("after") {
                    None => Vec::new(),
                    Some(v) => parse_after(v, &join(&opath, "after"), &names)?,
                };
                objects.push(WebObject {
                    name,
                    size,
                    request_size: own.unwrap_or(request_size),
                    after,
                });
            }
            objects
        }
    };
    validate_page(&objects).map_err(|(f, v, a)| ConfigError::new(workload_at(r, &f), v, a))?;
    Ok(WebPageSpec { objects })
}

/// `after = [0, "index.html"]`: indices, or names of objects of the page.
fn parse_after(v: &Value, path: &str, names: &[Option<String>]) -> Result<Vec<usize>, ConfigError> {
    let expected = "an array of object indices (>= 0) or names, e.g. [0] or [\"index.html\"]";
    let Value::Array(a) = v else {
        return Err(ConfigError::new(path, render(v), expected));
    };
    let mut out = Vec::new();
    for (j, d) in a.iter().enumerate() {
        let at = format!("{path}[{j}]");
        match d {
            Value::Integer(n) if *n >= 0 => out.push(*n as usize),
            Value::String(s) => match names.iter().position(|n| n.as_deref() == Some(s)) {
                Some(k) => out.push(k),
                None => {
                    return Err(ConfigError::new(
                        at,
                        render(d),
                        "the name of an object of the page (no object has this name)",
                    ))
                }
            },
            _ => return Err(ConfigError::new(at, render(d), expected)),
        }
    }
    Ok(out)
}

/// The `video` keys of `r`, checked by [`VideoSpec::validate`].
pub(super) fn parse_video(r: &Read) -> Result<VideoSpec, ConfigError> {
    let spec = VideoSpec {
        length: r.req("length")?,
        segment: r.req("segment")?,
        buffer: r.req("buffer")?,
        startup: r.req("startup")?,
        request_size: r.req::<Bytes>("request_size")?.0,
        hd_rate: r.req("hd_rate")?,
        fhd_rate: r.req("fhd_rate")?,
        qhd_rate: r.req("qhd_rate")?,
        fhd_delay: r.req("fhd_delay")?,
        hd_delay: r.req("hd_delay")?,
        seek_at: r.get("seek_at")?,
        seek_after_playback: r.get("seek_after_playback")?,
        seek_jitter: r.get("seek_jitter")?,
        seek_to: r.get("seek_to")?,
        delay_estimate: r.req("delay_estimate")?,
        seek_quality: r.get("seek_quality")?,
        reconnections: r.req("reconnections")?,
    };
    spec.validate()
        .map_err(|(f, v, a)| ConfigError::new(workload_at(r, f), v, a))?;
    Ok(spec)
}

/// Where a rule about workload key `field` (`objects[1].after`, `seek_to`) points: the key
/// as written (moved under `workload` by the spelling's origin map), or, when it was not
/// written, `workload.<field>` itself.
fn workload_at(r: &Read, field: &str) -> String {
    let key = field.split(['.', '[']).next().unwrap_or(field);
    if r.raw(key).is_some() {
        r.at(field)
    } else {
        r.at(&format!("workload.{field}"))
    }
}
