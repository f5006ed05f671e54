// The page's entry point (a file, not an inline script: `quicsim serve` sends a
// Content-Security-Policy without 'unsafe-inline' scripts).
import init, { start_app } from './web-ui.js';

await init({ module_or_path: './web-ui_bg.wasm' });
start_app();
