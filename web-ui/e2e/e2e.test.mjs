// End-to-end tests of the browser UI in real headless Chromium (playwright-core driving
// /usr/bin/chromium). Needs the site served (BASE_URL, default http://127.0.0.1:8799/) and
// the native CLI (QUICSIM, default ../../target/release/quicsim) for the digest check.
// scripts/test-web builds, serves and runs this. Screenshots go to ARTIFACTS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const BASE = process.env.BASE_URL || 'http://127.0.0.1:8799/';
const CLI = process.env.QUICSIM || resolve('../../target/release/quicsim');
const ART = process.env.ARTIFACTS || resolve('artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
mkdirSync(ART, { recursive: true });

let context, page;
const problems = []; // console errors and page errors, over the whole session

before(async () => {
  // A fresh profile directory per session (playwright passes it as --user-data-dir).
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'quicsim-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
  });
  page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(BASE);
});

after(async () => { await context?.close(); });

/** Waits until the run status says done; returns the first digest shown. */
async function waitDone(timeout = 60000) {
  await page.waitForFunction(() => {
    const s = document.querySelector('#status');
    return s && s.textContent.startsWith('done');
  }, null, { timeout });
  return (await page.textContent('#digest-0')).trim();
}

/** Non-white pixels of a canvas (0 for a blank one). */
async function inked(sel) {
  return page.$eval(sel, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250) n++;
    return n;
  });
}

/** The `digest` of run 0 of `quicsim run FILE --json` on `toml`. */
function cliDigest(toml) {
  const dir = mkdtempSync(join(tmpdir(), 'quicsim-e2e-'));
  const f = join(dir, 'scenario.toml');
  writeFileSync(f, toml);
  const doc = JSON.parse(execFileSync(CLI, ['run', f, '--json'], { encoding: 'utf8' }));
  return doc.runs[0].digest;
}

test('page loads, runs the first scenario and draws, with no console error', async () => {
  await page.waitForSelector('nav button[data-scenario]');
  const n = await page.locator('nav button[data-scenario]').count();
  assert.ok(n >= 10, `gallery has ${n} entries`);
  await waitDone();
  await page.waitForSelector('#chart-0');
  assert.ok(await inked('#chart-0') > 1000, 'chart drawn');
  await page.screenshot({ path: join(ART, 'main.png') });
  assert.deepEqual(problems, []);
});

test('choosing a scenario runs it and draws its plot', async () => {
  await page.click('button[data-scenario="validation/newreno-sawtooth.toml"]');
  assert.match(await page.inputValue('#toml'), /newreno-periodic/);
  await waitDone();
  await page.waitForSelector('#chart-0');
  assert.ok(await inked('#chart-0') > 1000);
  const titles = await page.$$eval('canvas.chart', (cs) => cs.map((c) => c.dataset.title));
  assert.ok(titles.some((t) => t.startsWith('Congestion window')), titles.join());
  await page.screenshot({ path: join(ART, 'sawtooth.png') });
});

test('a parameter edit rewrites the TOML and changes the result and the plot', async () => {
  await page.click('button[data-scenario=""]'); // the sandbox
  const d1 = await waitDone();
  const before = await page.$eval('#chart-0', (c) => c.toDataURL());
  await page.fill('input[data-field="topology.link.rate"]', '3Mbps');
  await page.press('input[data-field="topology.link.rate"]', 'Enter');
  assert.match(await page.inputValue('#toml'), /rate = "3Mbps"/);
  await page.waitForFunction((d) => {
    const s = document.querySelector('#status');
    const g = document.querySelector('#digest-0');
    return s && s.textContent.startsWith('done') && g && g.textContent.trim() !== d;
  }, d1, { timeout: 60000 });
  const after = await page.$eval('#chart-0', (c) => c.toDataURL());
  assert.notEqual(after, before);
});

test('a bad input shows the field-named error of the CLI, inline, and nothing runs', async () => {
  await page.click('button[data-scenario=""]');
  await waitDone();
  await page.fill('input[data-field="topology.link.rate"]', 'fast');
  await page.press('input[data-field="topology.link.rate"]', 'Enter');
  const inline = page.locator('[data-error-for="topology.link.rate"]');
  await inline.waitFor();
  const msg = (await inline.textContent()).trim();
  assert.match(msg, /rate/);
  assert.ok(await page.isDisabled('#run'));
  // The same words as the CLI prints for the same file.
  const dir = mkdtempSync(join(tmpdir(), 'quicsim-e2e-'));
  const f = join(dir, 'bad.toml');
  writeFileSync(f, await page.inputValue('#toml'));
  let stderr = '';
  try { execFileSync(CLI, ['validate', f], { encoding: 'utf8', stdio: 'pipe' }); } catch (e) { stderr = e.stderr; }
  assert.equal(stderr.trim(), `error: ${f}: ${msg}`);
  // Nothing ran: the status is not "running" and no new result appeared.
  assert.ok(!(await page.textContent('#status')).startsWith('running'));
  await page.screenshot({ path: join(ART, 'error.png') });
});

test('the digest shown equals the CLI digest of the downloaded TOML (native = wasm)', async () => {
  await page.click('button[data-scenario="examples/quic-bulk-ge.toml"]');
  const shown = await waitDone();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const file = join(mkdtempSync(join(tmpdir(), 'quicsim-e2e-')), dl.suggestedFilename());
  await dl.saveAs(file);
  const toml = readFileSync(file, 'utf8');
  assert.equal(toml, await page.inputValue('#toml'));
  assert.equal(cliDigest(toml), shown);
});

test('cancel stops a long run', async () => {
  await page.click('button[data-scenario=""]');
  await waitDone();
  const long = (await page.inputValue('#toml'))
    .replace('bytes = "1MB"', 'bytes = "2GB"').replace('"10Mbps"', '"1Gbps"');
  await page.fill('#toml', long);
  await page.click('#run');
  await page.waitForSelector('#cancel');
  await page.waitForSelector('#progress');
  await page.click('#cancel');
  await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'cancelled');
  await page.waitForTimeout(1500);
  assert.equal((await page.textContent('#status')).trim(), 'cancelled');
  // The page still works after a cancel.
  await page.click('button[data-scenario=""]');
  await waitDone();
  assert.deepEqual(problems, []);
});
