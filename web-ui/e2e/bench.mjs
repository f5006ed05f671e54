// Benchmark (not a test): time to simulate and redraw a scenario in the page, in headless
// Chromium. Opens the page with the scenario in its share link, then presses Run ROUNDS
// times and reports, per round, the worker's "done in ... ms" (simulation, from posting
// the TOML to the result) and the time from the click to the plots drawn (simulation +
// result transfer + redraw, up to the frame after the last canvas: the page draws its
// canvases in short tasks and clears `data-drawing` on its root after the last).
// With BENCH_SPLIT=1 it also splits each round (instrumentation from an init script, so the
// figures carry its small overhead): click -> the worker's "done" message arriving in the
// page (simulation + output JSON + transfer), the page's handler (JSON parse + update),
// the time spent inside canvas 2D calls (plotters' redraw), and the rest (yew render, up
// to the next frame).
// Usage (site served, e.g. by scripts/test-web's server or `quicsim serve`):
//   node bench.mjs FILE.toml [ROUNDS]      BASE_URL defaults to http://127.0.0.1:8799/
//   node bench.mjs --load [ROUNDS]         first load, throttled (issue 29 item 14)
//   node bench.mjs --longtasks [FILTER]    longest main-thread task per gallery entry
// --load: each round a fresh browser profile (cold cache) with the network throttled by
// CDP's Network.emulateNetworkConditions (LOAD_KBPS, default 20 000 kbit/s both ways;
// LOAD_LATENCY_MS, default 40 ms per request), then a second load in the same profile
// (warm cache, same throttling). Reports, from the navigation's start: "UI ready" (the
// gallery's buttons in the DOM), "first result" (the status says done for the first
// scenario), the wasm requests made and the bytes transferred, and the longest
// main-thread task of the load (PerformanceObserver 'longtask').
// --longtasks: unthrottled, one page; clicks every gallery entry (FILTER: ids containing
// it) and the 10 000-stream sandbox of the e2e test, and reports the longest main-thread
// task from the click to 500 ms after the result is drawn.
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const BASE = process.env.BASE_URL || 'http://127.0.0.1:8799/';
const file = process.argv[2];
const rounds = Number(process.argv[3] || 5);
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const launch = () => chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'quicsim-bench-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ARGS,
  viewport: { width: 1280, height: 800 },
});
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

if (file === '--load') {
  await benchLoad(Number(process.argv[3] || 5));
  process.exit(0);
}
if (file === '--longtasks') {
  await benchLongTasks(process.argv[3] || '');
  process.exit(0);
}

/** Installed before the page's scripts: the times the gallery and the first result appear, and long tasks. */
function watchLoad() {
  const w = window;
  w.__load = { ui: null, done: null, longest: 0, tasks: 0 };
  try {
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) { w.__load.longest = Math.max(w.__load.longest, e.duration); w.__load.tasks++; }
    }).observe({ type: 'longtask', buffered: true });
  } catch (_) { /* no longtask support */ }
  const check = () => {
    const now = performance.now();
    if (w.__load.ui === null && document.querySelector('nav button[data-scenario]')) w.__load.ui = now;
    if (w.__load.done === null && document.querySelector('#status')?.textContent.startsWith('done')) w.__load.done = now;
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true, characterData: true });
}

async function loadOnce(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  const kbps = Number(process.env.LOAD_KBPS || 20000);
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: Number(process.env.LOAD_LATENCY_MS || 40),
    downloadThroughput: (kbps * 1000) / 8,
    uploadThroughput: (kbps * 1000) / 8,
  });
  let wasmRequests = 0;
  const onReq = (r) => { if (r.url().split(/[?#]/)[0].endsWith('.wasm')) wasmRequests++; };
  context.on('request', onReq);
  await page.goto(BASE);
  await page.waitForFunction(() => window.__load.done !== null, null, { timeout: 120000, polling: 50 });
  await page.waitForTimeout(300);
  const r = await page.evaluate(() => {
    const res = performance.getEntriesByType('resource');
    const nav = performance.getEntriesByType('navigation')[0];
    const wasm = res.filter((e) => e.name.split(/[?#]/)[0].endsWith('.wasm'));
    return {
      ui_ready_ms: Math.round(window.__load.ui),
      first_result_ms: Math.round(window.__load.done),
      longest_task_ms: Math.round(window.__load.longest),
      wasm_transfer_bytes: wasm.reduce((a, e) => a + e.transferSize, 0),
      total_transfer_bytes: res.reduce((a, e) => a + e.transferSize, 0) + (nav ? nav.transferSize : 0),
    };
  });
  context.off('request', onReq);
  await cdp.detach();
  return { ...r, wasm_requests: wasmRequests };
}

async function benchLoad(n) {
  const cold = [];
  const warm = [];
  for (let i = 0; i < n; i++) {
    const context = await launch();
    await context.addInitScript(watchLoad);
    cold.push(await loadOnce(context, await context.newPage()));
    warm.push(await loadOnce(context, await context.newPage()));
    await context.close();
  }
  const sum = (rows) => Object.fromEntries(Object.keys(rows[0]).map((k) => [k, med(rows.map((r) => r[k]))]));
  console.log(JSON.stringify({ base: BASE, rounds: n, kbps: Number(process.env.LOAD_KBPS || 20000),
    latency_ms: Number(process.env.LOAD_LATENCY_MS || 40), cold_median: sum(cold), warm_median: sum(warm), cold, warm }));
}

async function benchLongTasks(filter) {
  const context = await launch();
  const page = await context.newPage();
  await page.goto(BASE);
  const isDone = () => page.waitForFunction(() => document.querySelector('#status')?.textContent.startsWith('done'), null, { timeout: 600000 });
  await isDone();
  await page.evaluate(() => {
    window.__lt = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__lt.push(e.duration); }).observe({ type: 'longtask' });
  });
  const measure = async (act) => {
    await page.evaluate(() => { window.__lt = []; });
    const t0 = Date.now();
    await act();
    await page.waitForTimeout(500);
    return { longest_ms: Math.round(await page.evaluate(() => Math.max(0, ...window.__lt))), wall_ms: Date.now() - t0 };
  };
  const ids = (await page.$$eval('nav button[data-scenario]', (bs) => bs.map((b) => b.dataset.scenario)))
    .filter((id) => id.includes(filter));
  const rows = [];
  for (const id of ids) {
    const m = await measure(async () => {
      await page.click(`button[data-scenario="${id}"]`);
      await page.waitForFunction(() => !document.querySelector('#status')?.textContent.startsWith('done'), null, { timeout: 5000 }).catch(() => {});
      if ((await page.inputValue('#toml')).includes('trace =')) return; // refused in the browser
      await isDone();
    });
    rows.push({ id, ...m });
    console.error(JSON.stringify(rows.at(-1)));
  }
  if (!filter) {
    // The e2e test's 10 000 streams: the sandbox with streams = 10000, run anyway.
    await page.click('button[data-scenario=""]');
    await isDone();
    const d0 = (await page.textContent('#digest-0')).trim();
    const text = (await page.inputValue('#toml')).replace('bytes = "1MB" }', 'bytes = "1MB", streams = 10000 }');
    await page.fill('#toml', text);
    await page.waitForSelector('#huge-warning');
    const m = await measure(async () => {
      await page.click('#run-anyway');
      await page.waitForFunction((d) => document.querySelector('#status')?.textContent.startsWith('done')
        && document.querySelector('#digest-0')?.textContent.trim() !== d, d0, { timeout: 600000 });
      await page.waitForSelector('#chart-0');
    });
    rows.push({ id: 'sandbox, 10 000 streams', ...m });
  }
  const worst = rows.reduce((a, r) => (r.longest_ms > a.longest_ms ? r : a), rows[0]);
  console.log(JSON.stringify({ base: BASE, entries: rows.length, worst, over_100_ms: rows.filter((r) => r.longest_ms > 100), rows }));
  await context.close();
}

const enc = (s) => Array.from(new TextEncoder().encode(s))
  .map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0')))
  .join('');

const context = await launch();
const page = await context.newPage();
const split = process.env.BENCH_SPLIT === '1';
if (split) {
  await page.addInitScript(() => {
    const w = window;
    w.__bench = { msgAt: 0, handlerMs: 0, canvasMs: 0, outBytes: 0 };
    const Orig = w.Worker;
    w.Worker = class extends Orig {
      set onmessage(f) {
        super.onmessage = (e) => {
          const t0 = performance.now();
          const done = e.data && e.data.kind === 'done';
          if (done) { w.__bench.msgAt = t0; w.__bench.outBytes = (e.data.output || '').length; }
          f(e);
          if (done) w.__bench.handlerMs = performance.now() - t0;
        };
      }
    };
    const P = w.CanvasRenderingContext2D.prototype;
    for (const k of Object.getOwnPropertyNames(P)) {
      const d = Object.getOwnPropertyDescriptor(P, k);
      if (typeof d.value !== 'function' || k === 'constructor') continue;
      const f = d.value;
      P[k] = function (...a) { const t = performance.now(); try { return f.apply(this, a); } finally { w.__bench.canvasMs += performance.now() - t; } };
    }
  });
}
await page.goto(`${BASE}#v=1&s=&toml=${enc(readFileSync(file, 'utf8'))}`);
const done = () => page.waitForFunction(() => document.querySelector('#status')?.textContent.startsWith('done'), null, { timeout: 600000 });
await done();
const sim = [];
const total = [];
const parts = [];
for (let i = 0; i < rounds; i++) {
  if (split) await page.evaluate(() => { window.__bench.canvasMs = 0; });
  const t = await page.evaluate(() => new Promise((resolve) => {
    const t0 = performance.now();
    window.__t0 = t0;
    document.querySelector('#run').click();
    let started = false;
    const poll = () => {
      const s = document.querySelector('#status')?.textContent || '';
      if (!s.startsWith('done')) started = true;
      if (started && s.startsWith('done') && document.querySelector('#chart-0')
        && !document.documentElement.hasAttribute('data-drawing')) {
        // The page draws one canvas per task and marks its root `data-drawing` until the last.
        requestAnimationFrame(() => resolve([Number(s.match(/([\d.]+) ms/)[1]), performance.now() - t0]));
      } else {
        setTimeout(poll, 0);
      }
    };
    poll();
  }));
  sim.push(t[0]);
  total.push(t[1]);
  if (split) {
    parts.push(await page.evaluate(() => {
      const b = window.__bench;
      return { to_message_ms: b.msgAt - window.__t0, handler_ms: b.handlerMs, canvas_ms: b.canvasMs, output_bytes: b.outBytes };
    }));
  }
}
const out = { file, rounds, simulate_ms: sim.map(Math.round), median_simulate_ms: Math.round(med(sim)), simulate_and_redraw_ms: total.map(Math.round), median_simulate_and_redraw_ms: Math.round(med(total)) };
if (split) {
  const m = (k) => Math.round(10 * med(parts.map((p) => p[k]))) / 10;
  out.split_median = { to_message_ms: m('to_message_ms'), handler_ms: m('handler_ms'), canvas_ms: m('canvas_ms'), output_bytes: parts[0].output_bytes };
}
console.log(JSON.stringify(out));
await context.close();
