//! The page (yew): the gallery, the TOML editor with the generated parameter panel, and
//! the run view (progress and Cancel, summary, plots). Runs go to a module web worker
//! (`worker.js`, the same wasm, handed over compiled: fetched once per page); cancelling
//! terminates it and starts a fresh one.
//! Each view is its own function so later views (A/B compare, packet timeline, sharing)
//! slot in beside them.

use crate::gallery;
use crate::panel::{self, Section, Seg};
use crate::runner::{RunOutput, RunProgress};
use crate::summary;
use crate::timeline::Timeline;
use gloo_timers::callback::Timeout;
use sim_core::scenario::schema::{DefaultValue, Field, Kind};
use sim_core::scenario::ConfigError;
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
    /// A panel field changed: (section path, field, typed text, live: moved by a slider,
    /// re-run at once and again whenever the previous run is done).
    SetField(Vec<Seg>, &'static Field, String, bool),
    /// A what-if knob moved: (its key, the value written, live).
    Knob(String, String, bool),
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
    /// Download the results: `json`, `csv` or `qlog` (traced in the worker).
    Export(&'static str),
    /// Dismiss the notice about a link that could not be opened.
    DismissNotice,
    /// Pin the finished run's configuration and results as A.
    Pin,
    /// Forget A.
    Unpin,
    /// The pointer is over chart `.0` at canvas x `.1` (pixels); `None`: left it.
    Hover(usize, Option<f64>),
    /// Draw the result's canvases from canvas `.1` on, of drawing generation `.0`
    /// ([`App::schedule_draw`]): a few per task, so drawing a result never holds the main
    /// thread for long.
    Draw(u64, usize),
    /// The frame after the result's render of drawing generation `.0` is under way.
    FrameDone(u64),
    /// Build the packet timeline of the current scenario (flow 0, connection 0).
    TimelineOpen,
    /// Rebuild the timeline for another flow and connection (`"flow/connection"`).
    TimelineChoose(String),
    /// Close the timeline.
    TimelineClose,
    /// Move the timeline's current step by this many steps.
    TimelineStep(i64),
    /// Move to the next step marked so (`handshake`, `loss`, `timeout`, `migration`;
    /// [`crate::timeline::next_mark`]).
    TimelineNext(&'static str),
    /// A key pressed in the timeline (arrows step, `h`/`l`/`t`/`m` jump).
    TimelineKey(String),
    /// Zoom: show half (`true`) or twice (`false`) the steps.
    TimelineZoom(bool),
    /// Show this sweep point's runs in the time plots (its first run).
    ShowPoint(usize),
    /// Show this run (of the shown point) in the time plots.
    ShowRun(u32),
    /// Run a scenario the page warned about ([`crate::runner::size_warning`]).
    RunAnyway,
    /// The sweep plot's metric ([`crate::sweepplot::Metric::id`]).
    SweepMetric(String),
    /// Copy the share link to the clipboard.
    CopyLink,
    /// The clipboard took the link (`true`) or refused it.
    Copied(bool),
}

/// The packet timeline's view state.
struct TimelineView {
    id: u64,
    toml: String,
    flow: u32,
    connection: u32,
    data: Option<Result<std::rc::Rc<Timeline>, String>>,
    step: usize,
    zoom: usize,
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
    /// The drawing generation: a new redraw starts a new one and the steps of the old one
    /// stop; `draw_timer` holds the next step's task (dropped, it is cancelled).
    draw_gen: u64,
    draw_timer: Option<Timeout>,
    /// A of the A/B comparison: its scenario text and results.
    pinned: Option<Pinned>,
    timeline: Option<TimelineView>,
    /// Why the page's link could not be opened (shown until dismissed).
    notice: Option<String>,
    /// The scenario text of the last run started.
    ran_toml: String,
    /// The chart under the pointer and the series row nearest to it.
    hover: Option<(usize, usize)>,
    /// The (point, run) the time plots show; `shown_req`: the id of the pending request for
    /// another run's series and the (point, run) it is for.
    shown: (usize, u32),
    shown_req: Option<(u64, (usize, u32))>,
    /// Why the scenario was not run by itself: it is huge (Run runs it anyway).
    huge: Option<String>,
    /// Callbacks made once, so the memoised gallery and panel see equal props.
    cbs: Callbacks,
    /// A live edit (a slider or knob being dragged) arrived while a run was going: run
    /// the latest text when it is done.
    live_pending: bool,
    /// While a live re-run goes, the previous results stay on screen.
    stale: Option<Box<RunOutput>>,
    /// The sweep plot's metric.
    sweep_metric: crate::sweepplot::Metric,
    /// A share link being restored: B to run after A, the timeline to open after.
    restore: Option<Restore>,
    /// The timeline place a link asked for, applied when the timeline arrives.
    timeline_want: Option<crate::share::TimelinePos>,
    /// What the last copy of the share link did.
    copied: Option<bool>,
}

/// The rest of a share link being opened: the page runs A (the pinned text) first, pins it,
/// then runs B; then it opens the timeline where the link left it.
struct Restore {
    b: Option<String>,
    timeline: Option<crate::share::TimelinePos>,
}

/// The callbacks handed to the gallery and the panel (equal from render to render).
struct Callbacks {
    select: Callback<String>,
    field: Callback<FieldEdit>,
    loss: Callback<(Vec<Seg>, String)>,
    knob: Callback<(String, String, bool)>,
}

/// The pinned configuration (A).
struct Pinned {
    toml: String,
    out: Box<RunOutput>,
    /// The sweep point A's plots showed when it was pinned (the A/B table compares it).
    point: usize,
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
    // The page's compiled wasm module, first message of every worker (issue 29 item 14):
    // the worker instantiates it and never fetches the wasm, also after a Cancel.
    let init = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&init, &"module".into(), &wasm_bindgen::module());
    let _ = worker.post_message(&init);
    (worker, cb)
}

fn get(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

impl App {
    /// Asks the worker for the series of (point, run) of the finished run, to plot.
    fn show(&mut self, (point, run): (usize, u32)) -> bool {
        let RunState::Done(out, _) = &self.state else {
            return false;
        };
        let run = if out.lines.iter().any(|l| l.point == point && l.run == run) {
            run
        } else {
            0
        };
        let Some(job) = out
            .lines
            .iter()
            .position(|l| l.point == point && l.run == run)
        else {
            return false;
        };
        if (point, run) == self.shown && self.shown_req.is_none() {
            return false;
        }
        let id = 3_000_000_000 + self.shown_req.map_or(0, |r| r.0 % 1_000_000 + 1);
        let msg = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&msg, &"id".into(), &JsValue::from_f64(id as f64));
        let _ = js_sys::Reflect::set(&msg, &"mode".into(), &JsValue::from_str("series"));
        let _ = js_sys::Reflect::set(&msg, &"job".into(), &JsValue::from_f64(job as f64));
        let _ = self.worker.post_message(&msg);
        self.shown_req = Some((id, (point, run)));
        true
    }

    /// What a share link of the page now carries: the entry, the text, the pinned A and
    /// the open timeline's place.
    fn shared(&self) -> crate::share::Shared {
        crate::share::Shared {
            selected: self.selected.clone(),
            toml: self.toml.clone(),
            pinned: self.pinned.as_ref().map(|p| p.toml.clone()),
            timeline: self.timeline.as_ref().map(|t| crate::share::TimelinePos {
                flow: t.flow,
                connection: t.connection,
                step: t.step as u32,
            }),
        }
    }

    /// Writes the page's state into the URL fragment (the share link). While a link is
    /// being restored (A, then B, then the timeline) the fragment stays the link's.
    fn update_hash(&self) {
        if self.restore.is_some() {
            return;
        }
        let frag = crate::share::encode(&self.shared());
        if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&format!("#{frag}")));
        }
    }

    fn set_text(&mut self, ctx: &Context<Self>, text: String, auto: bool) {
        self.toml = text;
        self.huge = None;
        self.update_hash();
        self.edit_gen += 1;
        self.debounce = None;
        match crate::gallery::parse(&self.toml) {
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
            self.stale = None;
            self.live_pending = false;
        }
    }

    /// The next step of opening a share link, after a run finished: pin A and run B, or
    /// open the timeline at the link's place.
    fn restore_next(&mut self, ctx: &Context<Self>, r: Restore) {
        if !matches!(self.state, RunState::Done(..)) {
            self.update_hash();
            return;
        }
        if let Some(b) = r.b {
            if let RunState::Done(out, _) = &self.state {
                self.pinned = Some(Pinned {
                    toml: self.toml.clone(),
                    out: out.clone(),
                    point: self.shown.0,
                });
            }
            self.restore = Some(Restore {
                b: None,
                timeline: r.timeline,
            });
            self.set_text(ctx, b, false);
            self.start_checked(ctx);
            if !matches!(self.state, RunState::Running(_)) {
                self.restore = None;
            }
        } else if let Some(t) = r.timeline {
            self.timeline_want = Some(t);
            ctx.link()
                .send_message(Msg::TimelineChoose(format!("{}/{}", t.flow, t.connection)));
        } else {
            self.update_hash();
        }
    }

    /// A live edit's re-run: at once when no run is going (the previous results stay on
    /// screen until the new ones come), else as soon as the running one is done, so a
    /// dragged knob re-runs as often as runs finish. A scenario whose last run took
    /// [`AUTO_RERUN_MS`] or more waits for Run, as after any edit.
    fn live_run(&mut self, ctx: &Context<Self>) {
        if self.error.is_some() || self.last_ms.is_some_and(|ms| ms >= AUTO_RERUN_MS) {
            return;
        }
        if matches!(self.state, RunState::Running(_)) {
            self.live_pending = true;
            return;
        }
        let prev = match &self.state {
            RunState::Done(out, _) => Some(out.clone()),
            _ => None,
        };
        self.start_checked(ctx);
        if matches!(self.state, RunState::Running(_)) {
            self.stale = prev;
        }
    }

    /// Starts a run unless the scenario is huge ([`crate::runner::size_warning`]): then
    /// the page says why and waits for Run (a running run is stopped).
    fn start_checked(&mut self, ctx: &Context<Self>) {
        if self.error.is_none() {
            if let Some(why) = crate::runner::size_warning(&self.toml) {
                self.debounce = None;
                if matches!(self.state, RunState::Running(_)) {
                    self.worker.terminate();
                    let (w, cb) = spawn_worker(ctx);
                    self.worker = w;
                    self._onmessage = cb;
                    self.run_id += 1;
                }
                self.state = RunState::Idle;
                self.huge = Some(why);
                return;
            }
        }
        self.start(ctx);
    }

    fn start(&mut self, ctx: &Context<Self>) {
        // A pending automatic re-run is this run.
        self.debounce = None;
        self.huge = None;
        self.stale = None;
        self.live_pending = false;
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
        self.ran_toml = self.toml.clone();
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
        save(&self.file_name(), "application/toml", &self.toml);
    }

    /// Asks the worker for a job that is not a run (`timeline`, `qlog`), numbered `id`.
    fn post_job(&mut self, ctx: &Context<Self>, id: u64, mode: &str) {
        self.post_job_for(ctx, id, mode, (0, 0));
    }

    /// [`App::post_job`] for flow and connection `fc` (the timeline's choice).
    fn post_job_for(&mut self, ctx: &Context<Self>, id: u64, mode: &str, fc: (u32, u32)) {
        if matches!(self.state, RunState::Cancelled) {
            let (w, cb) = spawn_worker(ctx);
            self.worker = w;
            self._onmessage = cb;
            self.state = RunState::Idle;
        }
        let msg = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&msg, &"id".into(), &JsValue::from_f64(id as f64));
        let _ = js_sys::Reflect::set(&msg, &"toml".into(), &JsValue::from_str(&self.toml));
        let _ = js_sys::Reflect::set(&msg, &"mode".into(), &JsValue::from_str(mode));
        let _ = js_sys::Reflect::set(&msg, &"flow".into(), &JsValue::from_f64(fc.0 as f64));
        let _ = js_sys::Reflect::set(&msg, &"connection".into(), &JsValue::from_f64(fc.1 as f64));
        let _ = self.worker.post_message(&msg);
    }
}

/// A drawing task starts no further canvas after this long (ms): one canvas costs 5-40 ms,
/// so a task stays well under the 100 ms of issue 29 item 14.
const DRAW_TASK_MS: f64 = 30.0;

/// Marks the page's root element `data-drawing` while result canvases remain to be drawn.
fn set_drawing(on: bool) {
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = if on {
            root.set_attribute("data-drawing", "")
        } else {
            root.remove_attribute("data-drawing")
        };
    }
}

/// Saves `text` as a file named `name` (a download).
fn save(name: &str, mime: &str, text: &str) {
    {
        let parts = js_sys::Array::of1(&JsValue::from_str(text));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type(mime);
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
            a.set_download(name);
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
        let (mut selected, mut toml) = match first {
            Some(e) => (e.id(), e.toml.to_string()),
            None => (String::new(), gallery::SANDBOX.to_string()),
        };
        // A share link replaces the defaults; a bad one says why and keeps them.
        let hash = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .unwrap_or_default();
        let mut restore = None;
        let notice = match crate::share::decode(&hash) {
            Ok(Some(shared)) => {
                selected = shared.selected;
                // With a pinned A, A runs first and B after it (`Restore`).
                match shared.pinned {
                    Some(a) => {
                        toml = a;
                        restore = Some(Restore {
                            b: Some(shared.toml),
                            timeline: shared.timeline,
                        });
                    }
                    None => {
                        toml = shared.toml;
                        restore = shared.timeline.map(|t| Restore {
                            b: None,
                            timeline: Some(t),
                        });
                    }
                }
                None
            }
            Ok(None) => None,
            Err(why) => Some(format!(
                "This link could not be opened: {why}. Showing the default scenario instead."
            )),
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
            draw_gen: 0,
            draw_timer: None,
            pinned: None,
            timeline: None,
            notice,
            ran_toml: String::new(),
            hover: None,
            shown: (0, 0),
            shown_req: None,
            huge: None,
            live_pending: false,
            stale: None,
            sweep_metric: crate::sweepplot::Metric::Completion,
            restore,
            timeline_want: None,
            copied: None,
            cbs: Callbacks {
                select: ctx.link().callback(Msg::Select),
                field: ctx
                    .link()
                    .callback(|(path, field, value, live): FieldEdit| {
                        Msg::SetField(path, field, value, live)
                    }),
                knob: ctx
                    .link()
                    .callback(|(key, value, live): (String, String, bool)| {
                        Msg::Knob(key, value, live)
                    }),
                loss: ctx
                    .link()
                    .callback(|(path, model): (Vec<Seg>, String)| Msg::SetLoss(path, model)),
            },
        };
        app.set_text(ctx, toml, false);
        app.start_checked(ctx);
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        // These change what a share link carries (A, the timeline's place).
        let rehash = matches!(
            msg,
            Msg::Pin
                | Msg::Unpin
                | Msg::TimelineOpen
                | Msg::TimelineChoose(_)
                | Msg::TimelineClose
                | Msg::TimelineStep(_)
                | Msg::TimelineNext(_)
        );
        let changed = self.update_inner(ctx, msg);
        if rehash {
            self.update_hash();
        }
        changed
    }

    fn rendered(&mut self, ctx: &Context<Self>, first: bool) {
        self.rendered_inner(ctx, first)
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        self.view_page(ctx)
    }
}

impl App {
    fn update_inner(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Select(id) => {
                let text = gallery::find(&id)
                    .map(|e| e.toml.to_string())
                    .unwrap_or_else(|| gallery::SANDBOX.to_string());
                self.selected = id;
                self.edited = None;
                self.last_ms = None;
                self.set_text(ctx, text, false);
                self.start_checked(ctx);
            }
            Msg::Edit(text) => {
                self.edited = None;
                self.set_text(ctx, text, true);
            }
            Msg::Knob(key, value, live) => {
                let knobs = crate::whatif::knobs(&self.toml);
                let Some(k) = knobs.iter().find(|k| k.key == key) else {
                    return false;
                };
                let dotted = k
                    .targets
                    .first()
                    .map(|t| format!("{}.{}", panel::dotted(&t.path), t.field.name))
                    .unwrap_or_default();
                match crate::whatif::set(&self.toml, k, &value) {
                    Ok(text) => {
                        self.edited = Some(dotted);
                        self.set_text(ctx, text, !live);
                        if live {
                            self.live_run(ctx);
                        }
                    }
                    Err(e) => self.error = Some(ConfigError::new(dotted, value, e)),
                }
            }
            Msg::SetField(path, field, value, live) => {
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
                        self.set_text(ctx, text, !live);
                        if live {
                            self.live_run(ctx);
                        }
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
            Msg::RunAnyway => self.start(ctx),
            Msg::AutoRun(generation) => {
                if generation == self.edit_gen {
                    self.start_checked(ctx);
                }
            }
            Msg::Cancel => {
                self.debounce = None;
                self.stop();
            }
            Msg::Worker(data) => {
                let id = get(&data, "id").as_f64().unwrap_or(-1.0) as u64;
                let kind = get(&data, "kind").as_string().unwrap_or_default();
                if kind.starts_with("qlog") {
                    if kind == "qlog" {
                        let json = get(&data, "files").as_string().unwrap_or_default();
                        let files: Vec<(String, String)> =
                            serde_json::from_str(&json).unwrap_or_default();
                        for (name, text) in files {
                            save(&name, "application/json-seq", &text);
                        }
                    } else {
                        self.notice = Some(get(&data, "error").as_string().unwrap_or_default());
                        return true;
                    }
                    return false;
                }
                if kind == "series" {
                    let Some((req, shown)) = self.shown_req else {
                        return false;
                    };
                    let RunState::Done(out, _) = &mut self.state else {
                        return false;
                    };
                    if req != id {
                        return false;
                    }
                    let cols = get(&data, "columns").as_string().unwrap_or_default();
                    if let Ok(Some(columns)) = serde_json::from_str::<Option<Vec<String>>>(&cols) {
                        let values = js_sys::Float64Array::new(&get(&data, "values"));
                        out.series = Some(crate::runner::PlotSeries::from_flat(
                            columns,
                            &values.to_vec(),
                            meta_of(&data),
                        ));
                    } else {
                        out.series = None;
                    }
                    self.shown = shown;
                    self.shown_req = None;
                    self.hover = None;
                    self.redraw = true;
                    return true;
                }
                if kind.starts_with("timeline") {
                    if let Some(tv) = self.timeline.as_mut().filter(|t| t.id == id) {
                        tv.data = Some(if kind == "timeline" {
                            let json = get(&data, "timeline").as_string().unwrap_or_default();
                            serde_json::from_str::<Timeline>(&json)
                                .map(std::rc::Rc::new)
                                .map_err(|e| e.to_string())
                        } else {
                            Err(get(&data, "error").as_string().unwrap_or_default())
                        });
                        // A share link's place in the timeline.
                        if let (Some(want), Some(Ok(t))) = (self.timeline_want.take(), &tv.data) {
                            tv.step = (want.step as usize).min(t.steps.len().saturating_sub(1));
                        }
                        self.update_hash();
                        return true;
                    }
                    return false;
                }
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
                        self.shown = (0, 0);
                        self.shown_req = None;
                        self.state = match serde_json::from_str::<RunOutput>(&out) {
                            Ok(mut o) => {
                                // The series come apart (worker.js): names as JSON, the
                                // samples as a Float64Array.
                                let cols = get(&data, "columns").as_string().unwrap_or_default();
                                if let Ok(Some(columns)) =
                                    serde_json::from_str::<Option<Vec<String>>>(&cols)
                                {
                                    let values = js_sys::Float64Array::new(&get(&data, "values"));
                                    o.series = Some(crate::runner::PlotSeries::from_flat(
                                        columns,
                                        &values.to_vec(),
                                        meta_of(&data),
                                    ));
                                }
                                RunState::Done(Box::new(o), ms)
                            }
                            Err(e) => RunState::Failed(format!("result: {e}")),
                        };
                        self.stale = None;
                        self.redraw = true;
                        if let Some(r) = self.restore.take() {
                            self.restore_next(ctx, r);
                            return true;
                        }
                        if std::mem::take(&mut self.live_pending)
                            && self.toml != self.ran_toml
                            && self.error.is_none()
                        {
                            self.live_run(ctx);
                        }
                    }
                    _ => {
                        let e = get(&data, "error").as_string().unwrap_or_default();
                        self.state = RunState::Failed(e);
                        self.stale = None;
                        self.live_pending = false;
                    }
                }
            }
            Msg::Download => {
                self.download();
                return false;
            }
            Msg::FrameDone(generation) => {
                // The first canvas in a task after the frame.
                if generation == self.draw_gen {
                    self.schedule_draw(ctx, 0);
                }
                return false;
            }
            Msg::Draw(generation, k) => {
                if generation == self.draw_gen {
                    // Canvases while the task is young, the rest in the next task.
                    let t0 = js_sys::Date::now();
                    let mut k = k;
                    loop {
                        if !self.draw_step(k) {
                            self.draw_timer = None;
                            set_drawing(false);
                            break;
                        }
                        k += 1;
                        if js_sys::Date::now() - t0 >= DRAW_TASK_MS {
                            self.schedule_draw(ctx, k);
                            break;
                        }
                    }
                }
                return false;
            }
            Msg::Export(what) => {
                let RunState::Done(out, _) = &self.state else {
                    return false;
                };
                let stem = self.file_name();
                let stem = stem.trim_end_matches(".toml");
                match what {
                    "json" => save(
                        &format!("{stem}-results.json"),
                        "application/json",
                        &serde_json::to_string_pretty(&out.doc).unwrap_or_default(),
                    ),
                    "csv" => save(
                        &format!("{stem}-results.csv"),
                        "text/csv",
                        &crate::share::results_csv(&out.lines, &out.points),
                    ),
                    _ => {
                        let toml = self.ran_toml.clone();
                        let old = std::mem::replace(&mut self.toml, toml);
                        self.post_job(ctx, 2_000_000_000 + self.run_id, "qlog");
                        self.toml = old;
                    }
                }
                return false;
            }
            Msg::DismissNotice => {
                self.notice = None;
                self.update_hash();
            }
            Msg::Pin => {
                if let RunState::Done(out, _) = &self.state {
                    self.pinned = Some(Pinned {
                        toml: self.toml.clone(),
                        out: out.clone(),
                        point: self.shown.0,
                    });
                    self.redraw = true;
                }
            }
            Msg::Unpin => {
                self.pinned = None;
                self.redraw = true;
            }
            Msg::Hover(chart, px) => {
                let RunState::Done(out, _) = &self.state else {
                    return false;
                };
                let Some(series) = out.series.as_ref() else {
                    return false;
                };
                let a_rows = self
                    .pinned
                    .as_ref()
                    .and_then(|p| p.out.series.as_ref())
                    .map(|s| s.rows.as_slice());
                let t_max = crate::charts::t_axis(&series.rows, a_rows);
                let new = px
                    .and_then(|px| crate::charts::row_at(&series.rows, t_max, px))
                    .map(|row| (chart, row));
                if new == self.hover {
                    return false;
                }
                self.hover = new;
            }
            Msg::TimelineOpen | Msg::TimelineChoose(_) => {
                if self.error.is_some() {
                    return false;
                }
                let fc = match &msg {
                    Msg::TimelineChoose(v) => {
                        let mut it = v.split('/').map(|x| x.parse::<u32>().unwrap_or(0));
                        (it.next().unwrap_or(0), it.next().unwrap_or(0))
                    }
                    _ => (0, 0),
                };
                // Timeline requests are numbered apart from runs (the worker echoes the id).
                let id = 1_000_000_000
                    + self
                        .timeline
                        .as_ref()
                        .map_or(0, |t| t.id % 1_000_000_000 + 1);
                self.post_job_for(ctx, id, "timeline", fc);
                self.timeline = Some(TimelineView {
                    id,
                    toml: self.toml.clone(),
                    flow: fc.0,
                    connection: fc.1,
                    data: None,
                    step: 0,
                    zoom: 24,
                });
            }
            Msg::TimelineClose => self.timeline = None,
            Msg::ShowPoint(point) => return self.show((point, 0)),
            Msg::CopyLink => {
                let link = ctx.link().clone();
                let url = web_sys::window().and_then(|w| {
                    let l = w.location();
                    Some(format!(
                        "{}{}{}#{}",
                        l.origin().ok()?,
                        l.pathname().ok()?,
                        l.search().ok()?,
                        crate::share::encode(&self.shared())
                    ))
                });
                let clip = web_sys::window()
                    .and_then(|w| js_sys::Reflect::get(&w, &"navigator".into()).ok())
                    .map(|n| js_sys::Reflect::get(&n, &"clipboard".into()))
                    .and_then(Result::ok)
                    .filter(|c| !c.is_undefined());
                let write = clip.as_ref().and_then(|c| {
                    js_sys::Reflect::get(c, &"writeText".into())
                        .ok()
                        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                });
                match (url, clip, write) {
                    (Some(url), Some(clip), Some(write)) => {
                        let p = write.call1(&clip, &JsValue::from_str(&url));
                        match p.ok().and_then(|p| p.dyn_into::<js_sys::Promise>().ok()) {
                            Some(p) => {
                                let ok = link.callback(|_: JsValue| Msg::Copied(true));
                                let err = link.callback(|_: JsValue| Msg::Copied(false));
                                let ok = Closure::once(move |v: JsValue| ok.emit(v));
                                let err = Closure::once(move |v: JsValue| err.emit(v));
                                let _ = p.then2(&ok, &err);
                                ok.forget();
                                err.forget();
                            }
                            None => self.copied = Some(false),
                        }
                    }
                    _ => self.copied = Some(false),
                }
            }
            Msg::Copied(ok) => self.copied = Some(ok),
            Msg::SweepMetric(id) => {
                if let Some(m) = crate::sweepplot::Metric::from_id(&id) {
                    self.sweep_metric = m;
                    self.redraw = true;
                }
            }
            Msg::ShowRun(run) => return self.show((self.shown.0, run)),
            Msg::TimelineStep(d) => {
                if let Some(tv) = self.timeline.as_mut() {
                    let n = match &tv.data {
                        Some(Ok(t)) => t.steps.len(),
                        _ => 0,
                    };
                    if n > 0 {
                        tv.step = (tv.step as i64 + d).clamp(0, n as i64 - 1) as usize;
                    }
                }
            }
            Msg::TimelineNext(mark) => {
                if let Some(tv) = self.timeline.as_mut() {
                    if let Some(Ok(t)) = &tv.data {
                        if let Some(i) = crate::timeline::next_mark(t, tv.step, mark) {
                            tv.step = i;
                        }
                    }
                }
            }
            Msg::TimelineKey(key) => {
                let m = match key.as_str() {
                    "ArrowRight" | "ArrowDown" => Msg::TimelineStep(1),
                    "ArrowLeft" | "ArrowUp" => Msg::TimelineStep(-1),
                    "PageDown" => Msg::TimelineStep(10),
                    "PageUp" => Msg::TimelineStep(-10),
                    "Home" => Msg::TimelineStep(-1_000_000),
                    "End" => Msg::TimelineStep(1_000_000),
                    "h" => Msg::TimelineNext("handshake"),
                    "l" => Msg::TimelineNext("loss"),
                    "t" => Msg::TimelineNext("timeout"),
                    "m" => Msg::TimelineNext("migration"),
                    _ => return false,
                };
                return Component::update(self, ctx, m);
            }
            Msg::TimelineZoom(zoom_in) => {
                if let Some(tv) = self.timeline.as_mut() {
                    tv.zoom = if zoom_in {
                        (tv.zoom / 2).max(4)
                    } else {
                        (tv.zoom * 2).min(512)
                    };
                }
            }
        }
        true
    }

    fn rendered_inner(&mut self, ctx: &Context<Self>, _first: bool) {
        if std::mem::take(&mut self.redraw) {
            self.draw_gen += 1;
            self.draw_timer = None;
            if matches!(self.state, RunState::Done(..)) {
                set_drawing(true);
                // The first canvas after the next frame: the browser lays the new result
                // out in its own rendering step, not forced inside a drawing task (plotters
                // measures text with a span in the page, `plotters::style::font::web`).
                let link = ctx.link().clone();
                let generation = self.draw_gen;
                let start =
                    Closure::once_into_js(move || link.send_message(Msg::FrameDone(generation)));
                let frame =
                    web_sys::window().map(|w| w.request_animation_frame(start.unchecked_ref()));
                if !matches!(frame, Some(Ok(_))) {
                    self.schedule_draw(ctx, 0);
                }
            } else {
                set_drawing(false);
            }
        }
    }

    /// Draws the result's canvases from canvas `k` on in a new task, as many as fit in
    /// [`DRAW_TASK_MS`], the rest in the next: the time charts in order, then the
    /// completion-time distribution, the sweep plot and the trace capacities. A result
    /// drawn in one task held the main thread for up to half a second (issue 29 item 14:
    /// no task over 100 ms). While canvases remain, the page's root element carries
    /// `data-drawing` (the e2e tests wait for it to go).
    fn schedule_draw(&mut self, ctx: &Context<Self>, k: usize) {
        let link = ctx.link().clone();
        let generation = self.draw_gen;
        self.draw_timer = Some(Timeout::new(0, move || {
            link.send_message(Msg::Draw(generation, k))
        }));
    }

    /// One step of [`App::schedule_draw`]; `false`: nothing was left to draw.
    fn draw_step(&self, k: usize) -> bool {
        let RunState::Done(out, _) = &self.state else {
            return false;
        };
        let mut k = k;
        if let Some(series) = out.series.as_ref() {
            let charts = crate::charts::charts_with_data(series).0;
            if let Some(chart) = charts.get(k) {
                let a = self.pinned.as_ref().and_then(|p| p.out.series.as_ref());
                crate::plots::draw_chart(k, series, a, chart);
                return true;
            }
            k -= charts.len();
        }
        if let Some((values, s)) = distribution(out, self.shown.0) {
            if k == 0 {
                let what = if out.points.len() > 1 {
                    format!("point {}, flow 0", self.shown.0)
                } else {
                    "flow 0".to_string()
                };
                let _ = crate::plots::draw_distribution("dist", &what, &values, &s);
                return true;
            }
            k -= 1;
        }
        if let Some(p) = self.sweep_plot(out) {
            if k == 0 {
                let _ = crate::plots::draw_sweep("sweep-plot", &p);
                return true;
            }
            k -= 1;
        }
        match out.capacity.get(k) {
            Some(c) => {
                let _ = crate::plots::draw_capacity(&format!("capacity-{k}"), c);
                true
            }
            None => false,
        }
    }

    fn view_page(&self, ctx: &Context<Self>) -> Html {
        html! {
            <>
            <header>
                <h1>{"quicsim"}</h1>
                <span>{"deterministic QUIC simulator — sim-core running in your browser (WebAssembly)"}</span>
            </header>
            { for self.notice.as_ref().map(|n| html! {
                <div id="link-error" class="error notice" role="alert">{n.clone()}
                    <button onclick={ctx.link().callback(|_| Msg::DismissNotice)}>{"OK"}</button></div>
            }) }
            <main>
                <nav class="col" aria-label="Scenario gallery">
                    <Gallery selected={self.selected.clone()} on_select={self.cbs.select.clone()} />
                </nav>
                <section class="col" aria-label="Scenario">
                    <WhatIf toml={AttrValue::from(self.toml.clone())} on_knob={self.cbs.knob.clone()} />
                    { self.view_editor(ctx) }
                    <Panel toml={AttrValue::from(self.toml.clone())} error={self.error.clone()}
                        edited={self.edited.clone()} on_field={self.cbs.field.clone()}
                        on_loss={self.cbs.loss.clone()} /></section>
                <section class={classes!("col", self.stale.is_some().then_some("updating"))}
                    aria-label="Run">{ self.view_run(ctx) }</section>
            </main>
            </>
        }
    }
}

/// A panel field edit: (section path, field, typed text).
type FieldEdit = (Vec<Seg>, &'static Field, String, bool);

/// The gallery's props: re-rendered only when the selection changes (its entries'
/// names and descriptions are read off their TOML).
#[derive(Properties, PartialEq)]
struct GalleryProps {
    selected: String,
    on_select: Callback<String>,
}

#[function_component]
fn Gallery(props: &GalleryProps) -> Html {
    let item = |id: String, name: String, desc: String| {
        let sel = if props.selected == id { "sel" } else { "" };
        let onclick = {
            let id = id.clone();
            props.on_select.reform(move |_| id.clone())
        };
        html! {
            <button class={sel} {onclick} data-scenario={id.clone()} title={id}>
                <b>{name}</b><small>{desc}</small>
            </button>
        }
    };
    html! {
        <>
        <h2>{"Lessons"}</h2>
        { for crate::lessons::LESSONS.iter().map(|l| {
            let sel = if props.selected == l.entry { "sel" } else { "" };
            let onclick = {
                let entry = l.entry.to_string();
                props.on_select.reform(move |_| entry.clone())
            };
            html! {
                <button class={sel} {onclick} data-lesson={l.id} title={l.entry}>
                    <b>{l.title}</b><small>{format!("lesson: {}", l.entry)}</small>
                </button>
            }
        }) }
        <h2>{"Sandbox"}</h2>
        { item(String::new(), "blank sandbox".into(), "start from scratch".into()) }
        { for gallery::listing().iter().map(|(g, entries)| html! {
            <>
            <h2>{*g}</h2>
            { for entries.iter().map(|(id, name, desc)| item(id.clone(), name.clone(), desc.clone())) }
            </>
        }) }
        </>
    }
}

/// The what-if strip's props: re-rendered when the scenario text changes.
#[derive(Properties, PartialEq)]
struct WhatIfProps {
    toml: AttrValue,
    on_knob: Callback<(String, String, bool)>,
}

/// The what-if strip ([`crate::whatif`]): the first knobs a teacher turns, in words with
/// units; dragging one re-runs as often as runs finish.
#[function_component]
fn WhatIf(props: &WhatIfProps) -> Html {
    use crate::whatif::{slider_text, Control};
    let knobs = crate::whatif::knobs(&props.toml);
    if knobs.is_empty() {
        return html! {};
    }
    html! {
        <section id="whatif" class="whatif" aria-label="What if">
            <h2>{"What if…"}</h2>
            <div class="knobs">
            { for knobs.iter().map(|k| {
                let key = k.key.clone();
                let id = format!("k-{}", k.key.replace(['@', '.', '+', '[', ']'], "-"));
                let control = match &k.control {
                    Control::Slider { slider, pos, spell } => {
                        let (s, sp) = (*slider, *spell);
                        let oninput = props.on_knob.reform(move |e: InputEvent| {
                            let p = e.target_unchecked_into::<HtmlInputElement>().value();
                            (key.clone(), slider_text(&s, sp, p.parse().unwrap_or(0)), true)
                        });
                        html! {
                            <input type="range" id={id.clone()} min="0" max={crate::slider::STEPS.to_string()}
                                step="1" value={pos.to_string()} {oninput}
                                aria-label={format!("{} slider", k.label)} aria-valuetext={k.shown.clone()}
                                data-knob={k.key.clone()} />
                        }
                    }
                    Control::Choice { choices, current } => {
                        let onchange = props.on_knob.reform(move |e: Event| {
                            (key.clone(), e.target_unchecked_into::<HtmlSelectElement>().value(), true)
                        });
                        html! {
                            <select id={id.clone()} {onchange} data-knob={k.key.clone()}>
                                { for choices.iter().map(|(v, words)| html! {
                                    <option value={v.clone()} selected={v == current}>{words.clone()}</option>
                                }) }
                            </select>
                        }
                    }
                    Control::Fixed(why) => html! { <small class="fixed">{why.clone()}</small> },
                };
                html! {
                    <div class="knob" title={k.help.clone()} data-knob-label={k.label.clone()}>
                        <label for={id}>{k.label.clone()}</label>
                        <output class="shown">{k.shown.clone()}</output>
                        {control}
                    </div>
                }
            }) }
            </div>
        </section>
    }
}

/// The parameter panel's props: it is regenerated from the TOML only when they change
/// (not when only a run's progress or result did).
#[derive(Properties, PartialEq)]
struct PanelProps {
    toml: AttrValue,
    error: Option<ConfigError>,
    edited: Option<String>,
    on_field: Callback<FieldEdit>,
    on_loss: Callback<(Vec<Seg>, String)>,
}

#[function_component]
fn Panel(props: &PanelProps) -> Html {
    let sections = match panel::sections(&props.toml) {
        Ok(s) => s,
        Err(_) => return html! { <p>{"Fix the TOML syntax to use the parameter panel."}</p> },
    };
    let err = props.error.as_ref();
    html! {
        <>
        <h2>{"Parameters"}</h2>
        { for sections.iter().map(|sec| {
            let loss = panel::loss_model_of(sec).map(|model| {
                let path = sec.path.clone();
                let onchange = props.on_loss.reform(move |e: Event| {
                    (path.clone(), e.target_unchecked_into::<HtmlSelectElement>().value())
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
                            e.field == fv.dotted || props.edited.as_deref() == Some(fv.dotted.as_str())
                        });
                        html! {
                            <div class="field">
                                <label for={format!("f-{}", fv.dotted)} title={fv.field.help}>{fv.field.name}</label>
                                { field_input(&props.on_field, sec, fv) }
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

fn field_input(on_field: &Callback<FieldEdit>, sec: &Section, fv: &panel::FieldView) -> Html {
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
            let onchange = on_field.reform(move |e: Event| {
                let v = e.target_unchecked_into::<HtmlSelectElement>().value();
                (path.clone(), field, v, true)
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
            let onchange = on_field.reform(move |e: Event| {
                let v = e.target_unchecked_into::<HtmlInputElement>().value();
                (path.clone(), field, v, false)
            });
            let slider = crate::slider::slider(field, fv.value.as_deref()).map(|s| {
                let pos = s
                    .position(if value.is_empty() { &default } else { &value })
                    .unwrap_or(0);
                let path = sec.path.clone();
                let oninput = on_field.reform(move |e: InputEvent| {
                    let p = e.target_unchecked_into::<HtmlInputElement>().value();
                    (path.clone(), field, s.value(p.parse().unwrap_or(0)), true)
                });
                let shown = if value.is_empty() {
                    default.clone()
                } else {
                    value.clone()
                };
                html! {
                    <input type="range" min="0" max={crate::slider::STEPS.to_string()} step="1"
                        value={pos.to_string()} {oninput}
                        aria-label={format!("{} slider", fv.dotted)} aria-valuetext={shown}
                        data-slider={fv.dotted.clone()} />
                }
            });
            html! {
                <span class="inp">
                <input id={id} type="text" {title} {value} placeholder={default} {onchange}
                    data-field={fv.dotted.clone()} />
                { for slider }
                </span>
            }
        }
    }
}

impl App {
    fn view_editor(&self, ctx: &Context<Self>) -> Html {
        let oninput = ctx.link().callback(|e: InputEvent| {
            Msg::Edit(e.target_unchecked_into::<HtmlTextAreaElement>().value())
        });
        html! {
            <>
            { for crate::lessons::of_entry(&self.selected).map(|l| html! {
                <aside id="lesson" class="lesson" data-lesson={l.id}>
                    <h2>{format!("Lesson: {}", l.title)}</h2>
                    <p class="intro">{l.intro}</p>
                    <p class="change"><b>{"Change: "}</b>{l.change}</p>
                    <p class="look"><b>{"Look for: "}</b>{l.look}</p>
                </aside>
            }) }
            <h2><label for="toml">{"Scenario (TOML)"}</label></h2>
            <textarea id="toml" spellcheck="false" value={self.toml.clone()} {oninput} />
            <div class="runline">
                <button id="run" onclick={ctx.link().callback(|_| Msg::Run)}
                    disabled={self.error.is_some()}>{"Run"}</button>
                <button id="download" onclick={ctx.link().callback(|_| Msg::Download)}>{"Download TOML"}</button>
                { match &self.state {
                    RunState::Done(out, _) if self.ran_toml == self.toml => html! {
                        <small title="what `quicsim run FILE --json` prints as runs[0].digest for the downloaded file">
                            {"quicsim run digest: "}<code id="toml-digest">{out.lines.first().map(|l| l.digest.clone()).unwrap_or_default()}</code>
                        </small>
                    },
                    _ => html! {},
                } }
            </div>
            { for self.error.as_ref().map(|e| html! {
                <div id="error" class="error" role="alert">{e.to_string()}</div>
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
        let body = match (&self.state, &self.stale) {
            (RunState::Done(out, _), _) => self.view_results(ctx, out),
            // A live re-run: the previous results until the new ones come.
            (RunState::Running(_), Some(out)) => self.view_results(ctx, out),
            _ => html! {},
        };
        let done = matches!(self.state, RunState::Done(..));
        html! {
            <>
            <h2>{"Run"}</h2>
            <div class="runline">{status}</div>
            <div class="runline">
                <button id="pin" onclick={ctx.link().callback(|_| Msg::Pin)} disabled={!done}
                    title="Keep this configuration and its results as A; change parameters for B">
                    {"Pin as A"}</button>
                { if self.pinned.is_some() { html! {
                    <>
                    <span id="pinned">{"A pinned: plots overlay A (dashed) and B (current, solid)"}</span>
                    <button id="unpin" onclick={ctx.link().callback(|_| Msg::Unpin)}>{"Clear A"}</button>
                    </>
                } } else { html! {} } }
                <button id="timeline" onclick={ctx.link().callback(|_| Msg::TimelineOpen)}
                    disabled={self.error.is_some()}
                    title="Step through the packets of flow 0 of the first run">{"Packet timeline"}</button>
            </div>
            { for self.huge.as_ref().map(|why| html! {
                <div id="huge-warning" class="notice warning" role="alert">
                    <span>{why.clone()}</span>
                    <button id="run-anyway" onclick={ctx.link().callback(|_| Msg::RunAnyway)}>{"Run anyway"}</button>
                </div>
            }) }
            { self.view_timeline(ctx) }
            {body}
            </>
        }
    }

    fn view_results(&self, ctx: &Context<Self>, out: &RunOutput) -> Html {
        let lines = &out.lines;
        let sums = summary::completion_summaries(lines);
        let (charts, no_data) = out
            .series
            .as_ref()
            .map(crate::charts::charts_with_data)
            .unwrap_or_default();
        let columns: &[String] = out.series.as_ref().map_or(&[], |s| &s.columns);
        let a_columns = self
            .pinned
            .as_ref()
            .and_then(|p| p.out.series.as_ref())
            .map(|s| s.columns.as_slice());
        let swept = out.points.len() > 1;
        let point_cell = |p: usize| {
            let info = out.points.get(p);
            let label = info.map(|i| i.label.clone()).unwrap_or_default();
            let full = info
                .map(|i| {
                    i.params
                        .iter()
                        .map(|(k, v)| format!("{k} = {v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            html! { <td class="point" data-point={p.to_string()} title={full}>{format!("{p}: {label}")}</td> }
        };
        let point_name = |p: usize| {
            out.points
                .get(p)
                .map(|i| format!("point {p} ({})", i.label))
                .unwrap_or_else(|| format!("point {p}"))
        };
        let (sp, sr) = self.shown;
        let shown_seed = lines
            .iter()
            .find(|l| l.point == sp && l.run == sr)
            .map(|l| l.seed)
            .unwrap_or_default();
        let runs_of_point: Vec<&summary::RunLine> =
            lines.iter().filter(|l| l.point == sp).collect();
        let chooser = if lines.len() > 1 {
            let onpoint = ctx.link().callback(|e: Event| {
                Msg::ShowPoint(
                    e.target_unchecked_into::<HtmlSelectElement>()
                        .value()
                        .parse()
                        .unwrap_or(0),
                )
            });
            let onrun = ctx.link().callback(|e: Event| {
                Msg::ShowRun(
                    e.target_unchecked_into::<HtmlSelectElement>()
                        .value()
                        .parse()
                        .unwrap_or(0),
                )
            });
            let pending = self.shown_req.is_some();
            html! {
                <div class="runline chooser">
                    <span>{"Time plots show"}</span>
                    { if swept { html! {
                        <select id="plot-point" aria-label="sweep point shown in the time plots" onchange={onpoint}>
                            { for out.points.iter().map(|p| html! {
                                <option value={p.index.to_string()} selected={p.index == sp}>{format!("point {}: {}", p.index, p.label)}</option>
                            }) }
                        </select>
                    } } else { html! {} } }
                    <select id="plot-run" aria-label="run shown in the time plots" onchange={onrun}>
                        { for runs_of_point.iter().map(|l| html! {
                            <option value={l.run.to_string()} selected={l.run == sr}>{format!("run {} (seed {})", l.run, l.seed)}</option>
                        }) }
                    </select>
                    { if pending { html! { <small>{"loading…"}</small> } } else { html! {} } }
                </div>
            }
        } else {
            html! {}
        };
        html! {
            <>
            <table id="summary">
                <tr>{ if swept { html! { <th>{"point"}</th> } } else { html! {} } }<th>{"seed"}</th><th>{"status"}</th><th>{"end (s)"}</th><th>{"events"}</th><th>{"digest"}</th></tr>
                { for lines.iter().enumerate().map(|(i, l)| html! {
                    <tr>
                        { if swept { point_cell(l.point) } else { html! {} } }
                        <td>{l.seed}</td><td class="run-status" title={l.note.clone()}>{&l.status}</td>
                        <td>{format!("{:.6}", l.end_s)}</td><td>{l.events}</td>
                        <td><code class="digest" id={format!("digest-{i}")}>{&l.digest}</code></td>
                    </tr>
                }) }
            </table>
            { if lines.iter().any(|l| l.status != "completed") || lines.len() == 1 { html! {
                <ul id="run-notes">
                    { for lines.iter().enumerate().filter(|(_, l)| l.status != "completed" || lines.len() == 1).take(50).map(|(i, l)| html! {
                        <li class={format!("run-note st-{}", l.status)} id={format!("run-note-{i}")} data-status={l.status.clone()}>
                            { if lines.len() > 1 { format!("{}run {} (seed {}): ", if swept { format!("point {} ", l.point) } else { String::new() }, l.run, l.seed) } else { String::new() } }
                            {&l.note}
                        </li>
                    }) }
                    { if lines.iter().filter(|l| l.status != "completed").count() > 50 { html! { <li>{"… more runs did not complete (see the status column)"}</li> } } else { html! {} } }
                </ul>
            } } else { html! {} } }
            <table id="flows">
                <tr>{ if swept { html! { <th>{"point"}</th> } } else { html! {} } }<th>{"run / flow"}</th><th>{"loss ratio"}</th><th>{"completion (s)"}</th><th>{"goodput"}</th></tr>
                { for lines.iter().flat_map(|l| l.flows.iter().map(move |f| (l, f))).map(|(l, f)| html! {
                    <tr>
                        { if swept { point_cell(l.point) } else { html! {} } }
                        <td>{format!("seed {} / flow {}", l.seed, f.flow)}</td>
                        <td>{f.loss_ratio.map(|l| format!("{:.4} %", l * 100.0)).unwrap_or_else(|| "—".into())}</td>
                        <td title={if f.completion_s.is_none() { l.note.clone() } else { String::new() }}>{f.completion_s.map(|c| format!("{c:.4}")).unwrap_or_else(|| if l.status == "completed" { "—".into() } else { format!("— ({})", l.status.replace('_', " ")) })}</td>
                        <td>{f.goodput_bps.map(summary::fmt_rate).unwrap_or_else(|| "—".into())}</td>
                    </tr>
                }) }
            </table>
            { for sums.iter().filter(|(_, _, s)| s.n > 1).map(|(point, flow, s)| html! {
                <p class="ci" data-point={point.to_string()} data-flow={flow.to_string()}>{format!(
                    "{}flow {flow}: completion over {} runs: mean {:.4} s, 95 % CI [{:.4}, {:.4}] s",
                    if swept { format!("{} · ", point_name(*point)) } else { String::new() },
                    s.n, s.mean, s.ci95.map(|c| c.0).unwrap_or(s.mean), s.ci95.map(|c| c.1).unwrap_or(s.mean)
                )}</p>
            }) }
            { if swept { html! { <p><small>{"Statistics are per sweep point: each point is its own configuration (mean and Student-t 95 % CI over its runs)."}</small></p> } } else { html! {} } }
            { self.view_sweep_plot(ctx, out) }
            { chooser }
            { if lines.len() > 1 { html! {
                <p id="plot-shown"><small>{format!("Plots show {}run {sr} (seed {shown_seed}).", if swept { format!("{}, ", point_name(sp)) } else { String::new() })}</small></p>
            } } else { html! {} } }
            <div class="runline">
                <button id="dl-json" onclick={ctx.link().callback(|_| Msg::Export("json"))}>{"Results JSON"}</button>
                <button id="dl-csv" onclick={ctx.link().callback(|_| Msg::Export("csv"))}>{"Results CSV"}</button>
                <button id="dl-qlog" onclick={ctx.link().callback(|_| Msg::Export("qlog"))}
                    title="qlog traces (qvis) of flow 0 in the first run">{"qlog trace"}</button>
                <a id="share" href={format!("#{}", crate::share::encode(&self.shared()))}
                    title="this link reproduces the view: the scenario, the pinned A and the timeline's place">{"share link"}</a>
                <button id="copy-link" onclick={ctx.link().callback(|_| Msg::CopyLink)}
                    title="copy the share link">{"Copy link"}</button>
                { match self.copied {
                    Some(true) => html! { <small id="copied">{"link copied"}</small> },
                    Some(false) => html! { <small id="copied" class="error">{"the browser refused the clipboard: use the share link"}</small> },
                    None => html! {},
                } }
            </div>
            { self.view_diff(out) }
            { view_breakdown(out) }
            { view_paired(out) }
            { for distribution(out, self.shown.0).map(|(_, s)| {
                let (lo, hi) = s.ci95.unwrap_or((s.mean, s.mean));
                html! {
                <figure class="chart-box">
                <canvas id="dist" class="dist" width="560" height="200"
                    aria-label="completion time of every run, its mean and 95 % CI"></canvas>
                <ul class="legend" id="dist-legend">
                    <li data-style="band"><span class="swatch band"></span>{format!("95 % CI of the mean [{lo:.4}, {hi:.4}] s")}</li>
                    <li data-style="line"><span class="swatch" style="--c: rgb(0,0,255)"></span>{format!("mean {:.4} s", s.mean)}</li>
                    <li data-style="dot"><span class="swatch dot"></span>{"a run"}</li>
                </ul>
                </figure>
            } }) }
            { for thin_note(columns).map(|t| html! { <p id="thin-note"><small>{t}</small></p> }) }
            { for out.capacity.iter().enumerate().map(|(i, c)| html! {
                <figure class="chart-box">
                    <canvas id={format!("capacity-{i}")} class="capacity" width="560" height="180"
                        data-link={c.link.clone()} data-mean={format!("{}", c.mean_mbps)}
                        data-bins={c.mbps.len().to_string()} data-bin-s={format!("{}", c.bin_s)} />
                    <div class="x-title">{"time (s)"}</div>
                    <p><small>{format!("Capacity of the trace-driven link {} ({}): what its delivery opportunities offer per {:.0} ms, mean {:.2} Mbit/s (Mahimahi format, 1500 B per opportunity, the trace repeating).", c.link, c.file, c.bin_s * 1e3, c.mean_mbps)}</small></p>
                </figure>
            }) }
            { for charts.iter().enumerate().map(|(i, c)| {
                let (na, nb) = crate::charts::line_count(c, columns, a_columns);
                let onmousemove = ctx.link().callback(move |e: MouseEvent| {
                    let canvas = e.target_unchecked_into::<web_sys::Element>();
                    let scale = crate::charts::CANVAS_W / (canvas.client_width().max(1) as f64);
                    Msg::Hover(i, Some(e.offset_x() as f64 * scale))
                });
                let onmouseleave = ctx.link().callback(move |_: MouseEvent| Msg::Hover(i, None));
                let readout = match (self.hover, out.series.as_ref()) {
                    (Some((h, row)), Some(s)) if h == i => hover_text(s, c, row),
                    _ => "hover over the plot for values".to_string(),
                };
                let (legend, counts, y) = match out.series.as_ref() {
                    Some(s) => chart_legend(s, self.pinned.as_ref().and_then(|p| p.out.series.as_ref()), c),
                    None => (Vec::new(), [0; 5], (0.0, 1.0)),
                };
                html! {
                    <figure class="chart-box">
                    <canvas id={format!("chart-{i}")} class="chart" data-title={c.title}
                        data-lines-a={na.to_string()} data-lines-b={nb.to_string()}
                        data-y-min={y.0.to_string()} data-y-max={y.1.to_string()}
                        data-marks-loss={counts[0].to_string()} data-marks-pto={counts[1].to_string()}
                        data-marks-handover={counts[2].to_string()} data-marks-migration={counts[3].to_string()}
                        data-marks-blocked={counts[4].to_string()}
                        data-rows={out.series.as_ref().map_or(0, |s| s.rows.len()).to_string()}
                        width={crate::charts::CANVAS_W.to_string()} height={crate::charts::CANVAS_H.to_string()}
                        {onmousemove} {onmouseleave}></canvas>
                    <div class="x-title" id={format!("x-title-{i}")}>{"time (s)"}</div>
                    <ul class="legend" id={format!("legend-{i}")}>
                        { for legend.iter().map(|e| html! {
                            <li data-style={e.style}>
                                <span class={format!("swatch {}", e.style)} style={format!("--c: {}", e.color)}></span>
                                {e.label.clone()}
                            </li>
                        }) }
                    </ul>
                    <div class="hover" id={format!("hover-{i}")}>{readout}</div>
                    </figure>
                }
            }) }
            { if no_data.is_empty() { html! {} } else { html! {
                <p id="no-data"><small>{format!("No data in this run (no sample but 0, not drawn): {}.", no_data.join(", "))}</small></p>
            } } }
            </>
        }
    }
}

impl App {
    /// The A/B difference summary, when A is pinned.
    /// The sweep plot of the chosen metric, falling back to the first metric with data.
    fn sweep_plot(&self, out: &RunOutput) -> Option<crate::sweepplot::SweepPlot> {
        use crate::sweepplot::{metrics_with_data, plot};
        let have = metrics_with_data(&out.lines, 0);
        let metric = if have.contains(&self.sweep_metric) {
            self.sweep_metric
        } else {
            *have.first()?
        };
        plot(&out.points, &out.lines, metric, 0)
    }

    /// A metric of flow 0 against the swept parameter (issue 29 item 11): mean and 95 % CI
    /// per point, a line per value of the other swept keys, a chooser of the metric.
    fn view_sweep_plot(&self, ctx: &Context<Self>, out: &RunOutput) -> Html {
        let Some(p) = self.sweep_plot(out) else {
            return html! {};
        };
        let have = crate::sweepplot::metrics_with_data(&out.lines, 0);
        let onchange = ctx.link().callback(|e: Event| {
            Msg::SweepMetric(e.target_unchecked_into::<HtmlSelectElement>().value())
        });
        let marks: usize = p.lines.iter().map(|l| l.marks.len()).sum();
        let x_title = if p.log_x {
            format!("{} (log scale)", p.x_key)
        } else {
            p.x_key.clone()
        };
        html! {
            <figure class="chart-box" id="sweep-box">
                <div class="runline">
                    <label for="sweep-metric">{"Sweep: flow 0's"}</label>
                    <select id="sweep-metric" {onchange}>
                        { for have.iter().map(|m| html! {
                            <option value={m.id()} selected={*m == p.metric}>{m.axis()}</option>
                        }) }
                    </select>
                    <small>{format!("against {}, mean and 95 % CI per point", p.x_key)}</small>
                </div>
                <canvas id="sweep-plot" class="sweep" width="560" height="260"
                    data-x={p.x_key.clone()} data-metric={p.metric.id()}
                    data-lines={p.lines.len().to_string()} data-marks={marks.to_string()}
                    data-means={p.lines.iter().flat_map(|l| l.marks.iter().map(|m| format!("{}:{}", m.point, m.summary.mean))).collect::<Vec<_>>().join(" ")} />
                <div class="x-title">{x_title}</div>
                { if p.lines.len() > 1 || !p.lines[0].name.is_empty() { html! {
                    <ul class="legend" id="sweep-legend">
                        { for p.lines.iter().enumerate().map(|(k, l)| html! {
                            <li><span class="swatch" style={format!("--c:{}", crate::charts::css(crate::charts::color(k)))}></span>
                                {if l.name.is_empty() { "all points".to_string() } else { l.name.clone() }}</li>
                        }) }
                    </ul>
                } } else { html! {} } }
            </figure>
        }
    }

    fn view_diff(&self, out: &RunOutput) -> Html {
        let Some(p) = self.pinned.as_ref() else {
            return html! {};
        };
        let of = |lines: &[summary::RunLine], point: usize| -> Vec<summary::RunLine> {
            lines.iter().filter(|l| l.point == point).cloned().collect()
        };
        let rows = crate::compare::diff(&of(&p.out.lines, p.point), &of(&out.lines, self.shown.0));
        let num = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_else(|| "—".into());
        let same = p.toml == self.toml;
        html! {
            <>
            <h2>{"A/B difference (mean over runs)"}</h2>
            { if same { html! { <p><small>{"B is still A's configuration: change a parameter."}</small></p> } } else { html! {} } }
            <table id="ab-diff">
                <tr><th>{"flow / metric"}</th><th>{"A"}</th><th>{"B"}</th><th>{"B − A"}</th><th>{"change"}</th></tr>
                { for rows.iter().map(|r| html! {
                    <tr data-metric={r.metric}>
                        <td>{format!("flow {} {} ({})", r.flow, r.metric, r.unit)}</td>
                        <td class="a">{num(r.a)}</td><td class="b">{num(r.b)}</td>
                        <td>{num(r.delta())}</td>
                        <td>{r.relative_pct().map(|p| format!("{p:+.1} %")).unwrap_or_else(|| "—".into())}</td>
                    </tr>
                }) }
            </table>
            </>
        }
    }
}

/// Geometry of the sequence diagram (SVG user units).
const TL_W: f64 = 560.0;
const TL_H: f64 = 340.0;
const TL_CLIENT_X: f64 = 110.0;
const TL_SERVER_X: f64 = 450.0;
/// One text line of the diagram's labels (`#tl-svg` font: 9px monospace, plus leading):
/// two overlapping labels closer than this would overprint.
const TL_LINE: f64 = 12.0;
/// A character's advance in that font, a little over 0.6 em (monospace fonts' usual
/// advance), so that the estimated boxes are never smaller than the drawn text.
const TL_CHAR_W: f64 = 5.6;
/// Characters a label keeps in the diagram (the full label is above it): between the
/// lifelines, and beside one (left of the client, right of the server: 104 units).
const TL_LABEL_CHARS: usize = 30;
const TL_SIDE_CHARS: usize = 18;

impl App {
    fn view_timeline(&self, ctx: &Context<Self>) -> Html {
        let Some(tv) = self.timeline.as_ref() else {
            return html! {};
        };
        let link = ctx.link();
        let close = html! {
            <button id="tl-close" onclick={link.callback(|_| Msg::TimelineClose)}>{"Close"}</button>
        };
        let tl = match &tv.data {
            None => {
                return html! {
                    <section id="timeline-view"><h2>{"Packet timeline"}</h2>
                    <p id="tl-status">{"tracing the first run…"}</p>{close}</section>
                }
            }
            Some(Err(e)) => {
                return html! {
                    <section id="timeline-view"><h2>{"Packet timeline"}</h2>
                    <p class="error">{e.clone()}</p>{close}</section>
                }
            }
            Some(Ok(t)) => t,
        };
        // The flow and connection chooser: every flow and connection the run has.
        let chooser = {
            let cur = format!("{}/{}", tv.flow, tv.connection);
            let onchange = link.callback(|e: Event| {
                let v = e
                    .target_unchecked_into::<web_sys::HtmlSelectElement>()
                    .value();
                Msg::TimelineChoose(v)
            });
            html! {
                <label>{"flow / connection "}
                <select id="tl-choose" {onchange}>
                    { for tl.choices.iter().map(|c| {
                        let v = format!("{}/{}", c.flow, c.connection);
                        let text = format!("flow {} · connection {} · {}", c.flow, c.connection, c.protocol);
                        html! { <option value={v.clone()} selected={v == cur}>{text}</option> }
                    }) }
                </select></label>
            }
        };
        let n = tl.steps.len();
        if n == 0 {
            return html! {
                <section id="timeline-view"><h2>{"Packet timeline"}</h2>
                {chooser}
                <p id="tl-status">{format!("flow {} connection {} has no events", tv.flow, tv.connection)}</p>{close}</section>
            };
        }
        let cur = tv.step.min(n - 1);
        let lo = cur.saturating_sub(tv.zoom / 2);
        let hi = (lo + tv.zoom).min(n);
        let lo = hi.saturating_sub(tv.zoom);
        let t0 = tl.steps[lo].t_s;
        let t1 = tl.steps[hi - 1].t_s.max(t0 + 1e-4);
        let y = |t: f64| 30.0 + ((t - t0) / (t1 - t0)).clamp(0.0, 1.05) * (TL_H - 50.0);
        let x = |side: &str| match side {
            "client" => TL_CLIENT_X,
            "server" => TL_SERVER_X,
            _ => (TL_CLIENT_X + TL_SERVER_X) / 2.0,
        };
        // Where each label goes (its height and lane: left of the client, between the
        // lifelines, right of the server), then which are drawn: never two closer than a
        // text line on one lane (crate::timeline::label_visible), the current one always.
        let arrow_end = |s: &crate::timeline::Step| -> (f64, f64, bool) {
            let x0 = x(&s.side);
            let y0 = y(s.t_s);
            let x1 = if s.side == "client" {
                TL_SERVER_X
            } else {
                TL_CLIENT_X
            };
            match (s.arrive_s, s.dropped_s) {
                (Some(a), _) => (x1, y(a), false),
                (None, Some(d)) => ((x0 + x1) / 2.0, y(d).max(y0 + 4.0), true),
                (None, None) => ((x0 + x1) / 2.0, y0 + 8.0, true),
            }
        };
        // Each label: its text (cut to the room it has) and box [x0, x1, baseline y].
        let place: Vec<(String, [f64; 3])> = (lo..hi)
            .map(|i| {
                let s = &tl.steps[i];
                let y0 = y(s.t_s);
                let x0 = x(&s.side);
                let room = match (s.kind.as_str(), s.side.as_str()) {
                    ("sent", _) | (_, "network") => TL_LABEL_CHARS,
                    _ => TL_SIDE_CHARS,
                };
                let text = crate::timeline::ellipsize(&s.label, room);
                let w = text.chars().count() as f64 * TL_CHAR_W;
                let b = match (s.kind.as_str(), s.side.as_str()) {
                    ("sent", _) => {
                        let (x1, y1, _) = arrow_end(s);
                        let tx = x0 + (x1 - x0) * 0.25;
                        [tx, tx + w, y0 + (y1 - y0) * 0.25 - 2.0]
                    }
                    // A received packet is a dot without a label.
                    ("received", _) => [0.0, 0.0, y0],
                    (_, "client") => [x0 - 6.0 - w, x0 - 6.0, y0 + 3.0],
                    (_, "server") => [x0 + 6.0, x0 + 6.0 + w, y0 + 3.0],
                    _ => [x0, x0 + w, y0 + 3.0],
                };
                (text, b)
            })
            .collect();
        let shown = crate::timeline::label_visible(
            &place.iter().map(|p| p.1).collect::<Vec<_>>(),
            TL_LINE,
            Some(cur - lo),
        );
        let items = (lo..hi).map(|i| {
            let s = &tl.steps[i];
            let sel = i == cur;
            let show = shown[i - lo] && s.kind != "received";
            let text = place[i - lo].0.clone();
            let class = format!("tl-{}{}", s.kind, if sel { " tl-cur" } else { "" });
            let x0 = x(&s.side);
            let y0 = y(s.t_s);
            match s.kind.as_str() {
                "sent" => {
                    let (x1, y1, lost) = arrow_end(s);
                    let tx = x0 + (x1 - x0) * 0.25;
                    let ty = place[i - lo].1[2];
                    html! {
                        <g class={class}>
                            <line x1={format!("{x0:.1}")} y1={format!("{y0:.1}")} x2={format!("{x1:.1}")} y2={format!("{y1:.1}")} marker-end={if lost { "" } else { "url(#arrow)" }} />
                            { if lost { html! { <text class="tl-x" x={format!("{:.1}", x1 - 4.0)} y={format!("{:.1}", y1 + 4.0)}>{"✗"}</text> } } else { html! {} } }
                            { if show { html! { <text class="tl-label" x={format!("{tx:.1}")} y={format!("{ty:.1}")}>{text}</text> } } else { html! {} } }
                        </g>
                    }
                }
                "received" => html! {
                    <g class={class}><circle cx={format!("{x0:.1}")} cy={format!("{y0:.1}")} r="2" /></g>
                },
                _ => {
                    let anchor = if s.side == "client" { "end" } else { "start" };
                    let dx = match s.side.as_str() { "client" => -6.0, "server" => 6.0, _ => 0.0 };
                    html! {
                        <g class={class}>
                            <circle cx={format!("{x0:.1}")} cy={format!("{y0:.1}")} r="3" />
                            { if show { html! { <text class="tl-label" x={format!("{:.1}", x0 + dx)} y={format!("{:.1}", y0 + 3.0)} text-anchor={anchor}>{text}</text> } } else { html! {} } }
                        </g>
                    }
                }
            }
        });
        let s = &tl.steps[cur];
        let proto = tl.protocol.as_str();
        let has_rto = proto == "tcp" || proto == "sctp";
        let state_row = |i: usize, name: &str| {
            let st = &s.state[i];
            let ssthresh = st.ssthresh.map_or("—".to_string(), |v| v.to_string());
            html! {
                <tr>
                    <td>{name.to_string()}</td><td>{if st.cc.is_empty() { "—".to_string() } else { st.cc.clone() }}</td>
                    <td>{st.pto_count}</td><td>{st.cwnd}</td><td>{ssthresh}</td><td>{st.bytes_in_flight}</td>
                    <td>{format!("{:.1}", st.srtt_ms)}</td>
                    { if has_rto { html! { <td>{st.rto_ms.map_or("—".to_string(), |r| format!("{r:.0}"))}</td> } } else { html! {} } }
                </tr>
            }
        };
        // The state is the protocol's own: QUIC's RFC 9002 PTO count, TCP's RTO backoff
        // and RTO (RFC 6298), SCTP's error count (RFC 9260).
        let (timeouts, flight, source) = match proto {
            "tcp" => (
                "RTO backoff",
                "pipe (B)",
                "TCP sender state (RFC 5681, RFC 6675, RFC 6298)",
            ),
            "sctp" => (
                "error count",
                "flight size (B)",
                "SCTP sender state (RFC 9260 §6.3, §7.2)",
            ),
            _ => ("PTO count", "in flight (B)", "RFC 9002 state"),
        };
        let onkeydown = link.batch_callback(|e: KeyboardEvent| {
            // The chooser keeps its own keys (arrows pick a flow and connection).
            if e.target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
                .is_some()
            {
                return None;
            }
            let k = e.key();
            let handled = matches!(
                k.as_str(),
                "ArrowRight"
                    | "ArrowDown"
                    | "ArrowLeft"
                    | "ArrowUp"
                    | "PageDown"
                    | "PageUp"
                    | "Home"
                    | "End"
                    | "h"
                    | "l"
                    | "t"
                    | "m"
            );
            if handled && !e.ctrl_key() && !e.meta_key() && !e.alt_key() {
                e.prevent_default();
                Some(Msg::TimelineKey(k))
            } else {
                None
            }
        });
        let stale = tv.toml != self.toml;
        html! {
            <section id="timeline-view" aria-label="Packet timeline" tabindex="0" {onkeydown}>
            <h2>{format!("Packet timeline (flow {}, connection {}, {}, first run)", tv.flow, tv.connection, if proto.is_empty() { "—" } else { proto })}</h2>
            <p><small>{"Keys: ← → step, PgUp/PgDn ten steps, Home/End, h handshake, l next loss, t next timeout, m migration."}</small></p>
            {chooser}
            { if stale { html! { <p><small>{"The scenario changed since: press Packet timeline to rebuild."}</small></p> } } else { html! {} } }
            <div class="runline">
                <button id="tl-first" onclick={link.callback(|_| Msg::TimelineStep(-1_000_000))} title="first step">{"first"}</button>
                <button id="tl-prev" onclick={link.callback(|_| Msg::TimelineStep(-1))}>{"◀ prev"}</button>
                <button id="tl-next" onclick={link.callback(|_| Msg::TimelineStep(1))}>{"next ▶"}</button>
                <button id="tl-handshake" onclick={link.callback(|_| Msg::TimelineNext("handshake"))} title="the handshake (key h)">{"handshake"}</button>
                <button id="tl-next-loss" onclick={link.callback(|_| Msg::TimelineNext("loss"))} title="next loss (key l)">{"next loss"}</button>
                <button id="tl-next-timeout" onclick={link.callback(|_| Msg::TimelineNext("timeout"))} title="next PTO, RTO, tail loss probe or T3-rtx expiry (key t)">{"next PTO/RTO"}</button>
                <button id="tl-next-migration" onclick={link.callback(|_| Msg::TimelineNext("migration"))} title="next migration or handover (key m)">{"next migration"}</button>
                <button id="tl-zoom-in" onclick={link.callback(|_| Msg::TimelineZoom(true))} title="fewer steps in view">{"zoom +"}</button>
                <button id="tl-zoom-out" onclick={link.callback(|_| Msg::TimelineZoom(false))} title="more steps in view">{"zoom −"}</button>
                {close}
            </div>
            <p id="tl-pos">{format!("step {} of {}{} · t = {:.3} ms · {}", cur + 1, n, if tl.truncated { "+ (cut)" } else { "" }, s.t_s * 1e3, s.side)}</p>
            <p><b id="tl-label">{&s.label}</b></p>
            <p id="tl-rule" class="rule">{&s.rule}</p>
            <table id="tl-state">
                <caption>{source}</caption>
                <tr><th>{"after this step"}</th><th>{"congestion state"}</th><th>{timeouts}</th><th>{"cwnd (B)"}</th><th>{"ssthresh (B)"}</th><th>{flight}</th><th>{"srtt (ms)"}</th>
                { if has_rto { html! { <th>{"RTO (ms)"}</th> } } else { html! {} } }</tr>
                { state_row(0, "client") }
                { state_row(1, "server") }
            </table>
            <svg id="tl-svg" viewBox={format!("0 0 {TL_W} {TL_H}")} width={TL_W.to_string()} height={TL_H.to_string()} role="img"
                aria-label="sequence diagram of the packets around the current step">
                <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" /></marker></defs>
                <text x={TL_CLIENT_X.to_string()} y="14" text-anchor="middle" class="tl-head">{"client"}</text>
                <text x={TL_SERVER_X.to_string()} y="14" text-anchor="middle" class="tl-head">{"server"}</text>
                <line class="tl-life" x1={TL_CLIENT_X.to_string()} y1="20" x2={TL_CLIENT_X.to_string()} y2={(TL_H - 10.0).to_string()} />
                <line class="tl-life" x1={TL_SERVER_X.to_string()} y1="20" x2={TL_SERVER_X.to_string()} y2={(TL_H - 10.0).to_string()} />
                <text x="4" y="28" class="tl-axis">{format!("{:.3} ms", t0 * 1e3)}</text>
                <text x="4" y={format!("{:.0}", TL_H - 22.0)} class="tl-axis">{format!("{:.3} ms", t1 * 1e3)}</text>
                { for items }
            </svg>
            </section>
        }
    }
}

/// Flow 0's (or the first flow's) completion times over the runs of sweep point `point`
/// and their summary, when there are at least two.
fn distribution(out: &RunOutput, point: usize) -> Option<(Vec<f64>, sim_core::stats::Summary)> {
    let (_, flow, s) = summary::completion_summaries(&out.lines)
        .into_iter()
        .find(|(p, _, _)| *p == point)?;
    if s.n < 2 {
        return None;
    }
    Some((summary::completions(&out.lines, point, flow), s))
}

/// The paired comparison of a multi-transport scenario, as `quicsim run` prints it.
fn view_paired(out: &RunOutput) -> Html {
    if out.paired.is_empty() {
        return html! {};
    }
    html! {
        <div id="paired">
            <h3>{"Paired comparison"}</h3>
            <p><small>{"Differences = variant - baseline per run (same seed); mean and Student-t 95 % CI over the runs (docs/paired.md)."}</small></p>
            { for out.paired.iter().map(|t| html! {
                <div class="paired-metric">
                    { if t.grid.is_empty() { html! {} } else { html! { <p>{&t.grid}</p> } } }
                    <table class="paired-table" data-metric={t.metric.clone()}>
                        <caption>{&t.metric}</caption>
                        <tr>{ for t.head.iter().map(|h| html! { <th>{h}</th> }) }</tr>
                        { for t.rows.iter().map(|r| html! {
                            <tr>{ for r.iter().map(|c| html! { <td>{c}</td> }) }</tr>
                        }) }
                    </table>
                    <ul class="paired-diffs">
                        { for t.differences.iter().map(|d| html! { <li>{d}</li> }) }
                    </ul>
                </div>
            }) }
        </div>
    }
}

/// "Where the time went": per flow of the first run (of each variant in a paired
/// comparison: one bar per transport), a stacked bar of the data sender's time
/// (`sim_core::breakdown`), each part's width its share of the total.
fn view_breakdown(out: &RunOutput) -> Html {
    if out.breakdown.is_empty() {
        return html! {};
    }
    let swept = out.points.len() > 1;
    // One time scale for every bar: the longest is the full width.
    let longest = out
        .breakdown
        .iter()
        .map(|b| b.total_s)
        .fold(0.0f64, f64::max)
        .max(1e-12);
    let point_words = |p: usize| {
        out.points
            .get(p)
            .map(|i| format!("point {p} ({}) · ", i.label))
            .unwrap_or_else(|| format!("point {p} · "))
    };
    html! {
        <div id="breakdown">
            <h3>{"Where the time went"}</h3>
            <p><small>{"The data sender's time from its connection start to its completion (last byte acknowledged), first run of each point; every bar on one time scale (the longest spans the width); rules in docs/breakdown.md."}</small></p>
            { for out.breakdown.iter().map(|b| {
                let total = b.total_s.max(1e-12);
                // Point 0 keeps the plain id (`breakdown-<flow>`); a paired comparison's
                // other variants are `breakdown-<point>-<flow>`.
                let id = if b.point == 0 {
                    format!("breakdown-{}", b.flow)
                } else {
                    format!("breakdown-{}-{}", b.point, b.flow)
                };
                // A run cut short (time limit, event budget, stalled): say so under its bar.
                let cut = out
                    .lines
                    .iter()
                    .find(|l| l.point == b.point && l.run == 0)
                    .filter(|l| b.completion_s.is_none() && l.status != "completed")
                    .map(|l| l.note.clone());
                html! {
                    <>
                    <div class="bd-row">
                        <span class="bd-label">{format!("{}flow {} ({}): {:.4} s", if swept { point_words(b.point) } else { String::new() }, b.flow, b.transport, b.total_s)}</span>
                        <div class="bd-track">
                        <div class="bd-bar" id={id.clone()} data-transport={b.transport.clone()}
                            style={format!("width:{:.3}%", 100.0 * b.total_s / longest)}
                            data-total={format!("{}", b.total_s)}
                            data-completion={b.completion_s.map(|c| format!("{c}")).unwrap_or_default()}
                            role="img"
                            aria-label={b.parts.iter().filter(|p| p.2 > 0.0).map(|p| format!("{} {:.4} s", p.1, p.2)).collect::<Vec<_>>().join(", ")}>
                            { for b.parts.iter().filter(|p| p.2 > 0.0).map(|(key, label, secs)| html! {
                                <span class={format!("bd-part bd-{key}")} data-part={key.clone()} data-secs={format!("{secs}")}
                                    style={format!("width:{:.3}%", 100.0 * secs / total)}
                                    title={format!("{label}: {secs:.4} s ({:.1} %)", 100.0 * secs / total)}></span>
                            }) }
                        </div>
                        </div>
                    </div>
                    { for cut.map(|note| html! {
                        <p class="bd-cut" id={format!("{id}-cut")}>{format!("Not finished: {note}. The bar covers the run so far.")}</p>
                    }) }
                    </>
                }
            }) }
            <div class="bd-legend">
                { for out.breakdown[0].parts.iter().map(|(key, label, _)| html! {
                    <span class="bd-key"><span class={format!("bd-swatch bd-{key}")}></span>{label.clone()}</span>
                }) }
            </div>
        </div>
    }
}

/// What the plots left out of a run of many streams (`None`: nothing): the series' sum
/// columns ([`crate::runner::stream_sum_column`]) name the number of streams.
fn thin_note(columns: &[String]) -> Option<String> {
    let n = columns
        .iter()
        .filter_map(|c| c.rsplit_once(".streams_sum_of_"))
        .filter_map(|(_, rest)| rest.split_once('_')?.0.parse::<usize>().ok())
        .max()?;
    Some(format!(
        "Per-stream lines: the first {} of {n} streams of each endpoint are drawn, and each \"sum of {n} streams …\" line is the sum over all of them (every stream's series: quicsim run --series).",
        crate::runner::STREAM_LINES
    ))
}

/// The series' roles and events the worker sent as JSON beside the samples.
fn meta_of(data: &JsValue) -> crate::runner::RunMeta {
    let json = get(data, "meta").as_string().unwrap_or_default();
    serde_json::from_str::<Option<crate::runner::RunMeta>>(&json)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Chart `c`'s legend (each line in words: A dashed, B solid; the congestion events; the
/// run's events by kind with their count), the event counts, and its y axis range.
fn chart_legend(
    s: &crate::runner::PlotSeries,
    a: Option<&crate::runner::PlotSeries>,
    c: &crate::charts::Chart,
) -> (Vec<crate::charts::LegendEntry>, [usize; 5], (f64, f64)) {
    use crate::charts::{css, LegendEntry};
    let names = crate::charts::Labeller::new(&s.columns, &s.meta);
    let mut out = Vec::new();
    let mut spans: Vec<(&[Vec<Option<f64>>], usize)> = Vec::new();
    for (k, &col) in c.columns.iter().enumerate() {
        let label = names.label(&s.columns[col]);
        let color = css(crate::charts::color(k));
        let ac = a.and_then(|a| crate::charts::overlay_column(&a.columns, &s.columns[col]));
        if let (Some(a), Some(ac)) = (a, ac) {
            spans.push((&a.rows, ac));
            out.push(LegendEntry {
                label: format!("A: {label}"),
                color: color.clone(),
                style: "dashed",
            });
        }
        spans.push((&s.rows, col));
        let label = if a.is_some() {
            format!("B: {label}")
        } else {
            label
        };
        out.push(LegendEntry {
            label,
            color,
            style: "line",
        });
    }
    let congestion = crate::charts::cwnd_pairs(&s.columns)
        .into_iter()
        .filter(|(cw, _)| c.columns.contains(cw))
        .map(|(cw, t)| crate::charts::congestion_events(&s.rows, cw, t).len())
        .sum::<usize>();
    if congestion > 0 {
        out.push(LegendEntry {
            label: format!("congestion event: ssthresh set ({congestion}, RFC 9002 §7.3.2)"),
            color: css(crate::charts::CONGESTION_COLOR),
            style: "marker",
        });
    }
    let counts = crate::charts::event_counts(&s.meta);
    for (n, (_, words, col)) in counts.iter().zip(crate::charts::EVENT_KINDS) {
        if *n > 0 {
            out.push(LegendEntry {
                label: format!("{words} ({n})"),
                color: css(col),
                style: "tick",
            });
        }
    }
    (out, counts, crate::charts::y_range(c, &spans))
}

/// The values of chart `c` at series row `row`, with the time and the axis unit.
fn hover_text(s: &crate::runner::PlotSeries, c: &crate::charts::Chart, row: usize) -> String {
    let names = crate::charts::Labeller::new(&s.columns, &s.meta);
    let r = &s.rows[row];
    let mut parts = vec![format!("t = {:.4} s", r[0].unwrap_or(0.0))];
    for &col in &c.columns {
        let v = crate::charts::drawn(r[col], c.scale)
            .map(|v| {
                format!("{v:.6}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            })
            .unwrap_or_else(|| "—".into());
        parts.push(format!("{}: {v}", names.label(&s.columns[col])));
    }
    format!("{} ({})", parts.join(" · "), c.y_label)
}

fn loss_model_of_is(sec: &Section) -> bool {
    panel::loss_model_of(sec).is_some()
}
