// Runs a wasm32-wasip1 binary under node's built-in WASI: node wasi-run.mjs FILE.wasm ARGS...
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
// The current directory, and the absolute directories of WASI_PREOPEN (colon-separated;
// golden-check's scratch directory in /dev/shm), under their own paths.
const preopens = { '.': '.' };
for (const d of (process.env.WASI_PREOPEN || '').split(':').filter(Boolean)) preopens[d] = d;
const wasi = new WASI({ version: 'preview1', args: process.argv.slice(2), env: {}, preopens });
const m = await WebAssembly.compile(await readFile(process.argv[2]));
const code = wasi.start(await WebAssembly.instantiate(m, wasi.getImportObject()));
process.exit(code ?? 0);
