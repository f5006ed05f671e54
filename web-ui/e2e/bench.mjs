// Benchmark (not a test): time to simulate and redraw a scenario in the page, in headless
// Chromium. Opens the page with the scenario in its share link, then presses Run ROUNDS
// times and reports, per round, the worker's "done in ... ms" (simulation, from posting
// the TOML to the result) and the time from the click to the plots drawn (simulation +
// result transfer + redraw, up to the next animation frame).
// With BENCH_SPLIT=1 it also splits each round (instrumentation from an init script, so the
// figures carry its small overhead): click -> the worker's "done" message arriving in the
// page (simulation + output JSON + transfer), the page's handler (JSON parse + update),
// the time spent inside canvas 2D calls (plotters' redraw), and the rest (yew render, up
// to the next frame).
// Usage (site served, e.g. by scripts/test-web's server or `quicsim serve`):
//   node bench.mjs FILE.toml [ROUNDS]      BASE_URL defaults to http://127.0.0.1:8799/
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const BASE = process.env.BASE_URL || 'http://127.0.0.1:8799/';
const file = process.argv[2];
const rounds = Number(process.argv[3] || 5);
const enc = (s) => Array.from(new TextEncoder().encode(s))
  .map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0')))
  .join('');

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'quicsim-bench-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 800 },
});
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
      if (started && s.startsWith('done') && document.querySelector('#chart-0')) {
        // yew draws the charts in `rendered`, before the browser paints the frame.
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
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const out = { file, rounds, simulate_ms: sim.map(Math.round), median_simulate_ms: Math.round(med(sim)), simulate_and_redraw_ms: total.map(Math.round), median_simulate_and_redraw_ms: Math.round(med(total)) };
if (split) {
  const m = (k) => Math.round(10 * med(parts.map((p) => p[k]))) / 10;
  out.split_median = { to_message_ms: m('to_message_ms'), handler_ms: m('handler_ms'), canvas_ms: m('canvas_ms'), output_bytes: parts[0].output_bytes };
}
console.log(JSON.stringify(out));
await context.close();
