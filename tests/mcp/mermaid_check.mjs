// Parses Mermaid diagrams with the real Mermaid parser (npm mermaid, with jsdom for the DOM it
// expects): node mermaid_check.mjs FILE... exits 0 when every file parses, else 1, printing
// one line per file ("ok FILE" or "error FILE: the parser's message").
// (ENGRAM_NODE_MODULES: where tools/dev.sh setup installed tests/mcp/package.json.)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.ENGRAM_NODE_MODULES;
const require = createRequire(path.join(modules, 'noop.js'));
const { JSDOM } = require('jsdom');
const dom = new JSDOM('<!DOCTYPE html><body></body>', { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const k of ['Element', 'HTMLElement', 'SVGElement', 'Node', 'DOMParser', 'MutationObserver', 'getComputedStyle'])
  if (!(k in globalThis)) globalThis[k] = dom.window[k];
const entry = JSON.parse(readFileSync(path.join(modules, 'mermaid/package.json'), 'utf8')).exports['.'].import;
const { default: mermaid } = await import(pathToFileURL(path.join(modules, 'mermaid', entry)).href);
mermaid.initialize({ startOnLoad: false });

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    await mermaid.parse(readFileSync(file, 'utf8'));
    console.log(`ok ${file}`);
  } catch (e) {
    failed++;
    console.log(`error ${file}: ${String(e?.message ?? e).split('\n').slice(0, 3).join(' | ')}`);
  }
}
process.exit(failed ? 1 : 0);
