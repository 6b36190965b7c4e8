// Takes docs/editor.png: Monaco (the editor of VS Code, from npm) in Debian's headless
// Chromium, driven by playwright-core, with the real `ggp lsp` behind it: the highlighting is
// the server's semantic tokens, the squiggles and the hover its diagnostics.
//
// Usage (from this folder): npm install && node screenshot.mjs [GGP_BINARY] [OUT.png]
// Needs: apt-get install chromium; the ggp binary (default ../../target/release/ggp).

import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const ggp = process.argv[2] || resolve(here, '../../target/release/ggp');
const out = process.argv[3] || resolve(here, '../../docs/editor.png');

const server = spawn(ggp, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--allow-file-access-from-files'],
});
const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
await page.exposeFunction('lspSend', (message) => {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  server.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
  server.stdin.write(body);
});
let buffer = Buffer.alloc(0);
server.stdout.on('data', async (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString('utf8'));
    buffer = buffer.subarray(end + 4 + length);
    await page.evaluate((m) => window.lspReceive(m), message);
  }
});
await page.goto(pathToFileURL(join(here, 'page.html')).href);
await page.waitForFunction(() => window.diagnosticsShown > 0, null, { timeout: 60000 });
await page.waitForTimeout(1500);
// Show the hover over the singleton `?player` (line 9): the server's explanation.
await page.evaluate(() => {
  window.editor.setPosition({ lineNumber: 9, column: 22 });
  window.editor.focus();
  window.editor.trigger('screenshot', 'editor.action.showHover', {});
});
await page.waitForFunction(
  () => [...document.querySelectorAll('.monaco-hover-content')].some((e) => e.innerText.includes('W010')),
  null,
  { timeout: 30000 },
);
await page.waitForTimeout(800);
await page.screenshot({ path: out });
await browser.close();
server.stdin.end();
console.log(`wrote ${out}`);
