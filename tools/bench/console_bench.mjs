// The web console's figures (docs/console.md), in Debian's headless chromium:
//   node tools/bench/console_bench.mjs BASE_URL TOKEN [RUNS]
// (ENGRAM_NODE_MODULES: where tools/dev.sh setup installed tests/mcp/package.json; Node 22.)
// Builds a neighbourhood of 500 entities in the token's organisation (a hub, 25 entities
// around it, 19 around each of those) through the MCP memory tools, then prints the bytes of
// the first load (page, script, style) and the time from asking for the 500-node
// neighbourhood (two hops) to its first paint, and the API's share of it: medians of RUNS.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import os from 'node:os';

const [base, token, runsArg] = process.argv.slice(2);
const runs = parseInt(runsArg || '5', 10);
const modules = process.env.ENGRAM_NODE_MODULES;
const { default: puppeteer } = await import(
  pathToFileURL(path.join(modules, 'puppeteer-core/lib/puppeteer/puppeteer-core.js')).href);

async function tool(name, args) {
  const r = await fetch(base + '/mcp', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const j = await r.json();
  if (!j.result || j.result.isError) throw new Error(name + ': ' + JSON.stringify(j).slice(0, 300));
  return j.result.structuredContent;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// The neighbourhood: Hub, Mid 0..24 around it, Leaf i.j (19 each) around those: 501 entities.
const entities = [{ name: 'Hub', entityType: 'company', observations: [] }];
const relations = [];
for (let i = 0; i < 25; ++i) {
  entities.push({ name: `Mid ${i}`, entityType: 'team', observations: [] });
  relations.push({ from: 'Hub', to: `Mid ${i}`, relationType: 'has_part' });
  for (let j = 0; j < 19; ++j) {
    entities.push({ name: `Leaf ${i}.${j}`, entityType: 'person', observations: [] });
    relations.push({ from: `Leaf ${i}.${j}`, to: `Mid ${i}`, relationType: 'works_in' });
  }
}
for (let at = 0; at < entities.length; at += 100) await tool('create_entities', { entities: entities.slice(at, at + 100) });
for (let at = 0; at < relations.length; at += 100) await tool('create_relations', { relations: relations.slice(at, at + 100) });

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const firstLoad = [], drawn = [], apiMs = [];
let nodes = 0;
try {
  for (let r = 0; r < runs; ++r) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    page.setDefaultTimeout(120000);
    await page.setViewport({ width: 1280, height: 800 });
    let bytes = 0, counting = true;
    page.on('response', async (res) => {
      if (counting && res.url().includes('/ui/') && res.status() === 200) bytes += (await res.buffer()).length;
    });
    await page.goto(base + '/ui/');
    await page.waitForSelector('#token');
    await page.type('#token', token);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.body.dataset.page === 'overview');
    counting = false;
    firstLoad.push(bytes);
    const t0 = Date.now();
    const api = await fetch(base + '/v1/entities/Hub/neighbourhood?depth=2&limit=500', { headers: { Authorization: 'Bearer ' + token } });
    const g = await api.json();
    apiMs.push(Date.now() - t0);
    nodes = g.nodes.length;
    await page.evaluate(() => { location.hash = '#/graph/Hub?depth=2&limit=500'; });
    await page.waitForFunction(() => typeof window.engramGraphDrawnMs === 'number');
    drawn.push(await page.evaluate(() => window.engramGraphDrawnMs));
    const shown = await page.evaluate(() => window.engramGraph.nodes().length);
    if (shown !== nodes) throw new Error(`drew ${shown} nodes of ${nodes}`);
    await ctx.close();
  }
} finally {
  await browser.close();
}
console.log(`Web console, headless chromium, ${os.cpus().length} cores, medians of ${runs} runs:\n`);
console.log('| figure | value |\n|---|---|');
console.log(`| first load (page, script, style; the graph library loads with the graph page) | ${median(firstLoad)} bytes |`);
console.log(`| ${nodes}-node neighbourhood (2 hops): asked to painted | ${median(drawn).toFixed(0)} ms |`);
console.log(`| of which /v1/entities/{name}/neighbourhood alone (from outside the browser) | ${median(apiMs).toFixed(0)} ms |`);
