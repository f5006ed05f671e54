//! What JavaScript calls: `start_app` (the page) and `WasmRun` (the worker's stepped run).

use crate::runner::{PlotSeries, Runner};
use wasm_bindgen::prelude::*;

/// Mounts the app into the page's `<body>`.
#[wasm_bindgen]
pub fn start_app() {
    yew::Renderer::<crate::app::App>::new().render();
}

/// [`crate::timeline::Timeline`] of flow `flow`, connection `connection` in the
/// scenario's first run, as JSON; throws the CLI's field-named error.
#[wasm_bindgen]
pub fn timeline(toml: &str, flow: u32, connection: u32) -> Result<String, JsValue> {
    crate::timeline::build_for(toml, flow, connection)
        .map(|t| serde_json::to_string(&t).expect("JSON"))
        .map_err(|e| JsValue::from_str(&e.to_string()))
}

/// The qlog traces (qvis format) of flow 0's client and server in the scenario's first
/// run, as JSON `[[file name, text], ...]`; throws the CLI's field-named error.
#[wasm_bindgen]
pub fn qlog(toml: &str) -> Result<String, JsValue> {
    crate::runner::qlog_files(toml)
        .map(|f| serde_json::to_string(&f).expect("JSON"))
        .map_err(|e| JsValue::from_str(&e.to_string()))
}

/// A scenario run stepped by `worker.js` a slice of events at a time.
#[wasm_bindgen]
pub struct WasmRun(Runner, Option<PlotSeries>);

#[wasm_bindgen]
impl WasmRun {
    /// Parses the scenario; throws the CLI's field-named error.
    #[wasm_bindgen(constructor)]
    pub fn new(toml: &str) -> Result<WasmRun, JsValue> {
        Runner::new(toml)
            .map(|r| WasmRun(r, None))
            .map_err(|e| JsValue::from_str(&e.to_string()))
    }

    /// At most `budget` events; `true` once every job has finished.
    pub fn step(&mut self, budget: f64) -> Result<bool, JsValue> {
        self.0
            .step(budget.max(1.0) as u64)
            .map_err(|e| JsValue::from_str(&e.to_string()))
    }

    /// [`crate::runner::RunProgress`] as JSON.
    pub fn progress(&self) -> String {
        serde_json::to_string(&self.0.progress()).expect("JSON")
    }

    /// [`crate::runner::RunOutput`] as JSON without its series: those are kept for
    /// [`WasmRun::series_columns`] and [`WasmRun::series_values`].
    pub fn output(&mut self) -> String {
        let mut out = self.0.output();
        self.1 = out.series.take();
        serde_json::to_string(&out).expect("JSON")
    }

    /// Keeps the series of finished job `job` (point-major index) for
    /// [`WasmRun::series_columns`] and [`WasmRun::series_values`]; `false` if it has none.
    pub fn select_series(&mut self, job: usize) -> bool {
        self.1 = self.0.series_of(job);
        self.1.is_some()
    }

    /// The series' column names as JSON (`null` without series); after `output`.
    pub fn series_columns(&self) -> String {
        serde_json::to_string(&self.1.as_ref().map(|s| &s.columns)).expect("JSON")
    }

    /// The series' [`crate::runner::RunMeta`] (roles and events) as JSON (`null` without
    /// series); after `output`.
    pub fn series_meta(&self) -> String {
        serde_json::to_string(&self.1.as_ref().map(|s| &s.meta)).expect("JSON")
    }

    /// The series' samples, row-major, NaN where missing (a `Float64Array`); after `output`.
    pub fn series_values(&self) -> Vec<f64> {
        self.1.as_ref().map(PlotSeries::flat).unwrap_or_default()
    }
}
