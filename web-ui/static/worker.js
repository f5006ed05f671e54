// The run worker: steps a scenario (sim-core in wasm) a slice of events at a time and
// posts progress between slices; the page stops a run by terminating the worker.
// Its first message is the page's compiled WebAssembly.Module (app.rs, spawn_worker):
// the worker instantiates it, so the wasm is fetched and compiled once per page load,
// not again per worker (after each Cancel).
import init, { WasmRun, timeline, qlog } from './web-ui.js';

let ready = null;
const SLICE = 20000; // events per slice: a few ms of work, then a progress message
// The last finished run, kept for the series of its other runs (freed by the next run).
let last = null;

self.onmessage = async (e) => {
  if (e.data && e.data.module instanceof WebAssembly.Module) {
    ready = init({ module_or_path: e.data.module });
    return;
  }
  // Without the page's module (not expected): fetch it.
  await (ready ??= init({ module_or_path: './web-ui_bg.wasm' }));
  const { id, toml, mode } = e.data;
  if (mode === 'timeline') {
    try {
      // Any flow and connection (the page's chooser); flow 0, connection 0 by default.
      const flow = e.data.flow ?? 0;
      const connection = e.data.connection ?? 0;
      self.postMessage({ id, kind: 'timeline', timeline: timeline(toml, flow, connection) });
    } catch (err) {
      self.postMessage({ id, kind: 'timeline-error', error: String(err) });
    }
    return;
  }
  if (mode === 'series') {
    // Another run's series of the last finished run (the page's point and run chooser).
    if (last && last.select_series(e.data.job)) {
      const columns = last.series_columns();
      const meta = last.series_meta();
      const values = last.series_values();
      self.postMessage({ id, kind: 'series', columns, meta, values }, [values.buffer]);
    } else {
      self.postMessage({ id, kind: 'series', columns: 'null', values: new Float64Array(0) });
    }
    return;
  }
  if (mode === 'qlog') {
    try {
      self.postMessage({ id, kind: 'qlog', files: qlog(toml) });
    } catch (err) {
      self.postMessage({ id, kind: 'qlog-error', error: String(err) });
    }
    return;
  }
  const t0 = performance.now();
  if (last) { last.free(); last = null; }
  let run;
  try {
    run = new WasmRun(toml);
    while (!run.step(SLICE)) {
      self.postMessage({ id, kind: 'progress', progress: run.progress() });
    }
    const output = run.output();
    // The time series go apart from the JSON: column names, and the samples as a
    // transferred Float64Array (row-major, NaN where missing).
    const columns = run.series_columns();
    const meta = run.series_meta(); // who is who, and the run's events for the time axis
    const values = run.series_values();
    self.postMessage({ id, kind: 'done', output, columns, meta, values, ms: performance.now() - t0 },
      [values.buffer]);
    last = run;
    run = null;
  } catch (err) {
    self.postMessage({ id, kind: 'error', error: String(err) });
  } finally {
    if (run) run.free();
  }
};
