// Benchmark (not a test): time to simulate and redraw a scenario in the page, in headless
// Chromium. Opens the page with the scenario in its share link, then presses Run ROUNDS
// times and reports, per round, the worker's "done in ... ms" (simulation, from posting
// the TOML to the result) and the time from the click to the plots drawn (simulation +
// result transfer + redraw, up to the next animation frame).
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
await page.goto(`${BASE}#v=1&s=&toml=${enc(readFileSync(file, 'utf8'))}`);
const done = () => page.waitForFunction(() => document.querySelector('#status')?.textContent.startsWith('done'), null, { timeout: 600000 });
await done();
const sim = [];
const total = [];
for (let i = 0; i < rounds; i++) {
  const t = await page.evaluate(() => new Promise((resolve) => {
    const t0 = performance.now();
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
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(JSON.stringify({ file, rounds, simulate_ms: sim.map(Math.round), median_simulate_ms: Math.round(med(sim)), simulate_and_redraw_ms: total.map(Math.round), median_simulate_and_redraw_ms: Math.round(med(total)) }));
await context.close();
