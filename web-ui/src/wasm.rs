//! What JavaScript calls: `start_app` (the page) and `WasmRun` (the worker's stepped run).

use crate::runner::Runner;
use wasm_bindgen::prelude::*;

/// Mounts the app into the page's `<body>`.
#[wasm_bindgen]
pub fn start_app() {
    yew::Renderer::<crate::app::App>::new().render();
}

/// A scenario run stepped by `worker.js` a slice of events at a time.
#[wasm_bindgen]
pub struct WasmRun(Runner);

#[wasm_bindgen]
impl WasmRun {
    /// Parses the scenario; throws the CLI's field-named error.
    #[wasm_bindgen(constructor)]
    pub fn new(toml: &str) -> Result<WasmRun, JsValue> {
        Runner::new(toml)
            .map(WasmRun)
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

    /// [`crate::runner::RunOutput`] as JSON.
    pub fn output(&self) -> String {
        serde_json::to_string(&self.0.output()).expect("JSON")
    }
}
