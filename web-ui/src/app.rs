//! The page (yew): the gallery, the TOML editor with the generated parameter panel, and
//! the run view (progress and Cancel, summary, plots). Runs go to a module web worker
//! (`worker.js`, the same wasm); cancelling terminates it and starts a fresh one.
//! Each view is its own function so later views (A/B compare, packet timeline, sharing)
//! slot in beside them.

use crate::gallery;
use crate::panel::{self, Section, Seg};
use crate::runner::{RunOutput, RunProgress};
use crate::summary;
use gloo_timers::callback::Timeout;
use sim_core::scenario::schema::{DefaultValue, Field, Kind};
use sim_core::scenario::{parse_str, ConfigError};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement, MessageEvent, Worker};
use yew::prelude::*;

/// Re-run automatically after an edit when the last run took less than this (ms).
const AUTO_RERUN_MS: f64 = 3000.0;
/// Debounce of the automatic re-run (ms).
const DEBOUNCE_MS: u32 = 350;

/// The page's messages.
pub enum Msg {
    /// A gallery entry (its id) or the sandbox (`""`).
    Select(String),
    /// The editor's text changed.
    Edit(String),
    /// A panel field changed: (section path, field, typed text).
    SetField(Vec<Seg>, &'static Field, String),
    /// A loss model chosen: (loss path, model).
    SetLoss(Vec<Seg>, String),
    /// Start a run of the editor's text.
    Run,
    /// The debounce timer fired for edit generation `.0`.
    AutoRun(u64),
    /// Stop the running run.
    Cancel,
    /// A message from the worker.
    Worker(JsValue),
    /// Save the editor's text as a file.
    Download,
}

enum RunState {
    Idle,
    Running(Option<RunProgress>),
    Done(Box<RunOutput>, f64),
    Failed(String),
    Cancelled,
}

/// The app component.
pub struct App {
    selected: String,
    toml: String,
    error: Option<ConfigError>,
    edited: Option<String>,
    edit_gen: u64,
    debounce: Option<Timeout>,
    worker: Worker,
    _onmessage: Closure<dyn FnMut(MessageEvent)>,
    run_id: u64,
    state: RunState,
    last_ms: Option<f64>,
    redraw: bool,
}

fn spawn_worker(ctx: &Context<App>) -> (Worker, Closure<dyn FnMut(MessageEvent)>) {
    let opts = web_sys::WorkerOptions::new();
    opts.set_type(web_sys::WorkerType::Module);
    let worker = Worker::new_with_options("./worker.js", &opts).expect("worker");
    let link = ctx.link().clone();
    let cb = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        link.send_message(Msg::Worker(e.data()));
    });
    worker.set_onmessage(Some(cb.as_ref().unchecked_ref()));
    (worker, cb)
}

fn get(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

impl App {
    fn set_text(&mut self, ctx: &Context<Self>, text: String, auto: bool) {
        self.toml = text;
        self.edit_gen += 1;
        self.debounce = None;
        match parse_str(&self.toml) {
            Err(e) => {
                self.error = Some(e);
                self.stop();
            }
            Ok(_) => {
                self.error = None;
                let short = self.last_ms.is_none_or(|ms| ms < AUTO_RERUN_MS);
                if auto && short {
                    let link = ctx.link().clone();
                    let generation = self.edit_gen;
                    self.debounce = Some(Timeout::new(DEBOUNCE_MS, move || {
                        link.send_message(Msg::AutoRun(generation))
                    }));
                }
            }
        }
    }

    /// Terminates a running worker (a fresh one is started by the next run).
    fn stop(&mut self) {
        if matches!(self.state, RunState::Running(_)) {
            self.worker.terminate();
            self.run_id += 1;
            self.state = RunState::Cancelled;
        }
    }

    fn start(&mut self, ctx: &Context<Self>) {
        // A pending automatic re-run is this run.
        self.debounce = None;
        if self.error.is_some() {
            return;
        }
        if matches!(self.state, RunState::Running(_)) || matches!(self.state, RunState::Cancelled) {
            self.worker.terminate();
            let (w, cb) = spawn_worker(ctx);
            self.worker = w;
            self._onmessage = cb;
        }
        self.run_id += 1;
        let msg = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&msg, &"id".into(), &JsValue::from_f64(self.run_id as f64));
        let _ = js_sys::Reflect::set(&msg, &"toml".into(), &JsValue::from_str(&self.toml));
        let _ = self.worker.post_message(&msg);
        self.state = RunState::Running(None);
    }

    fn file_name(&self) -> String {
        let doc: Option<toml_edit::DocumentMut> = self.toml.parse().ok();
        let name = doc
            .and_then(|d| d.get("name").and_then(|n| n.as_str().map(str::to_string)))
            .unwrap_or_else(|| "scenario".into());
        format!("{name}.toml")
    }

    fn download(&self) {
        let parts = js_sys::Array::of1(&JsValue::from_str(&self.toml));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type("application/toml");
        let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
            return;
        };
        let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
            return;
        };
        let doc = web_sys::window()
            .and_then(|w| w.document())
            .expect("document");
        if let Ok(a) = doc.create_element("a") {
            let a: web_sys::HtmlAnchorElement = a.unchecked_into();
            a.set_href(&url);
            a.set_download(&self.file_name());
            a.click();
        }
        let _ = web_sys::Url::revoke_object_url(&url);
    }
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let (worker, cb) = spawn_worker(ctx);
        let first = gallery::entries()
            .into_iter()
            .find(|e| e.id() == "examples/quic-bulk.toml");
        let (selected, toml) = match first {
            Some(e) => (e.id(), e.toml.to_string()),
            None => (String::new(), gallery::SANDBOX.to_string()),
        };
        let mut app = App {
            selected,
            toml: String::new(),
            error: None,
            edited: None,
            edit_gen: 0,
            debounce: None,
            worker,
            _onmessage: cb,
            run_id: 0,
            state: RunState::Idle,
            last_ms: None,
            redraw: false,
        };
        app.set_text(ctx, toml, false);
        app.start(ctx);
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Select(id) => {
                let text = gallery::find(&id)
                    .map(|e| e.toml.to_string())
                    .unwrap_or_else(|| gallery::SANDBOX.to_string());
                self.selected = id;
                self.edited = None;
                self.last_ms = None;
                self.set_text(ctx, text, false);
                self.start(ctx);
            }
            Msg::Edit(text) => {
                self.edited = None;
                self.set_text(ctx, text, true);
            }
            Msg::SetField(path, field, value) => {
                let dotted = {
                    let base = panel::dotted(&path);
                    if base.is_empty() {
                        field.name.to_string()
                    } else {
                        format!("{base}.{}", field.name)
                    }
                };
                match panel::set_value(&self.toml, &path, field, &value) {
                    Ok(text) => {
                        self.edited = Some(dotted);
                        self.set_text(ctx, text, true);
                    }
                    Err(e) => {
                        self.error = Some(ConfigError::new(dotted, value, e));
                    }
                }
            }
            Msg::SetLoss(path, model) => {
                if let Ok(text) = panel::set_loss_model(&self.toml, &path, &model) {
                    self.edited = Some(panel::dotted(&path));
                    self.set_text(ctx, text, true);
                }
            }
            Msg::Run => self.start(ctx),
            Msg::AutoRun(generation) => {
                if generation == self.edit_gen {
                    self.start(ctx);
                }
            }
            Msg::Cancel => {
                self.debounce = None;
                self.stop();
            }
            Msg::Worker(data) => {
                let id = get(&data, "id").as_f64().unwrap_or(-1.0) as u64;
                if id != self.run_id || !matches!(self.state, RunState::Running(_)) {
                    return false;
                }
                match get(&data, "kind").as_string().as_deref() {
                    Some("progress") => {
                        let p = get(&data, "progress").as_string().unwrap_or_default();
                        self.state = RunState::Running(serde_json::from_str(&p).ok());
                    }
                    Some("done") => {
                        let out = get(&data, "output").as_string().unwrap_or_default();
                        let ms = get(&data, "ms").as_f64().unwrap_or(0.0);
                        self.last_ms = Some(ms);
                        self.state = match serde_json::from_str::<RunOutput>(&out) {
                            Ok(o) => RunState::Done(Box::new(o), ms),
                            Err(e) => RunState::Failed(format!("result: {e}")),
                        };
                        self.redraw = true;
                    }
                    _ => {
                        let e = get(&data, "error").as_string().unwrap_or_default();
                        self.state = RunState::Failed(e);
                    }
                }
            }
            Msg::Download => {
                self.download();
                return false;
            }
        }
        true
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
        if self.redraw {
            self.redraw = false;
            if let RunState::Done(out, _) = &self.state {
                if let Some(series) = out.series.as_ref() {
                    crate::plots::draw_all(series);
                }
            }
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        html! {
            <>
            <header>
                <h1>{"quicsim"}</h1>
                <span>{"deterministic QUIC simulator — sim-core running in your browser (WebAssembly)"}</span>
            </header>
            <main>
                <nav class="col" aria-label="Scenario gallery">{ self.view_gallery(ctx) }</nav>
                <section class="col" aria-label="Scenario">{ self.view_editor(ctx) }{ self.view_panel(ctx) }</section>
                <section class="col" aria-label="Run">{ self.view_run(ctx) }</section>
            </main>
            </>
        }
    }
}

fn field_input(ctx: &Context<App>, sec: &Section, fv: &panel::FieldView) -> Html {
    let path = sec.path.clone();
    let field = fv.field;
    let id = format!("f-{}", fv.dotted);
    let value = fv.value.clone().unwrap_or_default();
    let default = match field.default {
        DefaultValue::Value(v) => v.trim_matches('"').to_string(),
        DefaultValue::Required => "required".to_string(),
        DefaultValue::Unset(t) => t.to_string(),
    };
    let title = format!(
        "{} ({}; {}): {}",
        field.name,
        field.kind.name(),
        field.allowed,
        field.help
    );
    let choices: Option<Vec<&str>> = match field.kind {
        Kind::Enum => Some(field.choices.to_vec()),
        Kind::Bool => Some(vec!["true", "false"]),
        _ => None,
    };
    match choices {
        Some(choices) if !choices.is_empty() => {
            let onchange = ctx.link().callback(move |e: Event| {
                let v = e.target_unchecked_into::<HtmlSelectElement>().value();
                Msg::SetField(path.clone(), field, v)
            });
            html! {
                <select id={id} {title} {onchange} data-field={fv.dotted.clone()}>
                    <option value="" selected={value.is_empty()}>{format!("default ({default})")}</option>
                    { for choices.iter().map(|c| html! {
                        <option value={c.to_string()} selected={value == *c}>{*c}</option>
                    }) }
                </select>
            }
        }
        _ => {
            let onchange = ctx.link().callback(move |e: Event| {
                let v = e.target_unchecked_into::<HtmlInputElement>().value();
                Msg::SetField(path.clone(), field, v)
            });
            html! {
                <input id={id} type="text" {title} {value} placeholder={default} {onchange}
                    data-field={fv.dotted.clone()} />
            }
        }
    }
}

impl App {
    fn view_gallery(&self, ctx: &Context<Self>) -> Html {
        let item = |id: String, name: String, desc: String| {
            let sel = if self.selected == id { "sel" } else { "" };
            let onclick = {
                let id = id.clone();
                ctx.link().callback(move |_| Msg::Select(id.clone()))
            };
            html! {
                <button class={sel} {onclick} data-scenario={id.clone()} title={id}>
                    <b>{name}</b><small>{desc}</small>
                </button>
            }
        };
        html! {
            <>
            <h2>{"Sandbox"}</h2>
            { item(String::new(), "blank sandbox".into(), "start from scratch".into()) }
            { for gallery::groups().into_iter().map(|(g, entries)| html! {
                <>
                <h2>{g}</h2>
                { for entries.into_iter().map(|e| item(e.id(), e.name(), e.description())) }
                </>
            }) }
            </>
        }
    }

    fn view_editor(&self, ctx: &Context<Self>) -> Html {
        let oninput = ctx.link().callback(|e: InputEvent| {
            Msg::Edit(e.target_unchecked_into::<HtmlTextAreaElement>().value())
        });
        html! {
            <>
            <h2><label for="toml">{"Scenario (TOML)"}</label></h2>
            <textarea id="toml" spellcheck="false" value={self.toml.clone()} {oninput} />
            <div class="runline">
                <button id="run" onclick={ctx.link().callback(|_| Msg::Run)}
                    disabled={self.error.is_some()}>{"Run"}</button>
                <button id="download" onclick={ctx.link().callback(|_| Msg::Download)}>{"Download TOML"}</button>
            </div>
            { for self.error.as_ref().map(|e| html! {
                <div id="error" class="error" role="alert">{e.to_string()}</div>
            }) }
            </>
        }
    }

    fn view_panel(&self, ctx: &Context<Self>) -> Html {
        let sections = match panel::sections(&self.toml) {
            Ok(s) => s,
            Err(_) => return html! { <p>{"Fix the TOML syntax to use the parameter panel."}</p> },
        };
        let err = self.error.as_ref();
        html! {
            <>
            <h2>{"Parameters"}</h2>
            { for sections.iter().map(|sec| {
                let loss = panel::loss_model_of(sec).map(|model| {
                    let path = sec.path.clone();
                    let onchange = ctx.link().callback(move |e: Event| {
                        Msg::SetLoss(path.clone(), e.target_unchecked_into::<HtmlSelectElement>().value())
                    });
                    let id = format!("f-{}.model", panel::dotted(&sec.path));
                    html! {
                        <div class="field">
                            <label for={id.clone()}>{"model"}</label>
                            <select id={id} {onchange}>
                                { for panel::loss_models().iter().map(|m| html! {
                                    <option value={m.to_string()} selected={*m == model}>{*m}</option>
                                }) }
                            </select>
                        </div>
                    }
                });
                html! {
                    <details open={sec.open}>
                        <summary>{&sec.title}</summary>
                        { for loss }
                        { for sec.fields.iter().filter(|f| !(loss_model_of_is(sec) && f.field.name == "model")).map(|fv| {
                            let show_err = err.filter(|e| {
                                e.field == fv.dotted || self.edited.as_deref() == Some(fv.dotted.as_str())
                            });
                            html! {
                                <div class="field">
                                    <label for={format!("f-{}", fv.dotted)} title={fv.field.help}>{fv.field.name}</label>
                                    { field_input(ctx, sec, fv) }
                                    { for show_err.map(|e| html! {
                                        <div class="error field-error" data-error-for={fv.dotted.clone()}>{e.to_string()}</div>
                                    }) }
                                </div>
                            }
                        }) }
                    </details>
                }
            }) }
            </>
        }
    }

    fn view_run(&self, ctx: &Context<Self>) -> Html {
        let status = match &self.state {
            RunState::Idle => html! { <span id="status">{"idle"}</span> },
            RunState::Running(p) => {
                let (frac, text) = match p {
                    Some(p) => (
                        p.fraction,
                        format!(
                            "run {}/{} · t = {:.3} s · {} events",
                            p.done + 1,
                            p.jobs,
                            p.time_s,
                            p.events
                        ),
                    ),
                    None => (0.0, "starting".into()),
                };
                html! {
                    <>
                    <span id="status">{"running"}</span>
                    <div class="bar" role="progressbar" aria-valuenow={format!("{:.0}", frac * 100.0)}>
                        <div style={format!("width:{:.1}%", frac * 100.0)}></div>
                    </div>
                    <button id="cancel" onclick={ctx.link().callback(|_| Msg::Cancel)}>{"Cancel"}</button>
                    <small id="progress">{text}</small>
                    </>
                }
            }
            RunState::Done(_, ms) => {
                html! { <span id="status">{format!("done in {ms:.0} ms")}</span> }
            }
            RunState::Failed(e) => {
                html! { <span id="status" class="error">{format!("failed: {e}")}</span> }
            }
            RunState::Cancelled => html! { <span id="status">{"cancelled"}</span> },
        };
        let body = match &self.state {
            RunState::Done(out, _) => self.view_results(out),
            _ => html! {},
        };
        html! {
            <>
            <h2>{"Run"}</h2>
            <div class="runline">{status}</div>
            {body}
            </>
        }
    }

    fn view_results(&self, out: &RunOutput) -> Html {
        let lines = &out.lines;
        let sums = summary::completion_summaries(lines);
        let charts = out
            .series
            .as_ref()
            .map(|s| crate::charts::charts(&s.columns))
            .unwrap_or_default();
        html! {
            <>
            <table id="summary">
                <tr><th>{"seed"}</th><th>{"status"}</th><th>{"end (s)"}</th><th>{"events"}</th><th>{"digest"}</th></tr>
                { for lines.iter().enumerate().map(|(i, l)| html! {
                    <tr>
                        <td>{l.seed}</td><td class="run-status">{&l.status}</td>
                        <td>{format!("{:.6}", l.end_s)}</td><td>{l.events}</td>
                        <td><code class="digest" id={format!("digest-{i}")}>{&l.digest}</code></td>
                    </tr>
                }) }
            </table>
            <table id="flows">
                <tr><th>{"run / flow"}</th><th>{"loss ratio"}</th><th>{"completion (s)"}</th><th>{"goodput"}</th></tr>
                { for lines.iter().flat_map(|l| l.flows.iter().map(move |f| (l.seed, f))).map(|(seed, f)| html! {
                    <tr>
                        <td>{format!("seed {seed} / flow {}", f.flow)}</td>
                        <td>{f.loss_ratio.map(|l| format!("{:.4} %", l * 100.0)).unwrap_or_else(|| "—".into())}</td>
                        <td>{f.completion_s.map(|c| format!("{c:.4}")).unwrap_or_else(|| "—".into())}</td>
                        <td>{f.goodput_bps.map(summary::fmt_rate).unwrap_or_else(|| "—".into())}</td>
                    </tr>
                }) }
            </table>
            { for sums.iter().filter(|(_, s)| s.n > 1).map(|(flow, s)| html! {
                <p class="ci">{format!(
                    "flow {flow}: completion over {} runs: mean {:.4} s, 95 % CI [{:.4}, {:.4}] s",
                    s.n, s.mean, s.ci95.map(|c| c.0).unwrap_or(s.mean), s.ci95.map(|c| c.1).unwrap_or(s.mean)
                )}</p>
            }) }
            { if out.lines.len() > 1 { html! { <p><small>{"Plots show the first run."}</small></p> } } else { html! {} } }
            { for charts.iter().enumerate().map(|(i, c)| html! {
                <canvas id={format!("chart-{i}")} class="chart" data-title={c.title} width="560" height="260"></canvas>
            }) }
            </>
        }
    }
}

fn loss_model_of_is(sec: &Section) -> bool {
    panel::loss_model_of(sec).is_some()
}
