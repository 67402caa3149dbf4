// The memory-server workload, driven by the official MCP TypeScript SDK client against one
// server: the reference (npm @modelcontextprotocol/server-memory, over stdio, as its users run
// it) or Engram (over HTTP). Prints one JSON line of figures; engram_bench entities runs it
// against both and prints the table.
//
//   node memory_compare.mjs reference ENTITIES
//   node memory_compare.mjs engram ENTITIES URL TOKEN PID
//
// Data: ENTITIES entities "ent-00000".. with 3 observations each, one of 25 types
// ("kind00".."kind24", ~4 % each), the word "active" in the observations of 42 % of them;
// ENTITIES relations (entity i -> i+1, i -> i*7 mod n alternately). Query classes for
// search_nodes: one entity (its full name), ~4 % (a type), ~42 % ("active"), none.
// (ENGRAM_NODE_MODULES: where tools/dev.sh setup installed tests/mcp/package.json.)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.ENGRAM_NODE_MODULES;
const load = (p) => import(pathToFileURL(path.join(modules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await load('client/index.js');

const [mode, count] = [process.argv[2], Number(process.argv[3])];
let transport;
let pid;
let scratch;
if (mode === 'reference') {
  const { StdioClientTransport } = await load('client/stdio.js');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'memory-ref-'));
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(modules, '@modelcontextprotocol/server-memory/dist/index.js')],
    env: { ...process.env, MEMORY_FILE_PATH: path.join(scratch, 'memory.jsonl') },
    stderr: 'ignore',
  });
} else {
  const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
  transport = new StreamableHTTPClientTransport(new URL(process.argv[4]), {
    requestInit: { headers: { Authorization: `Bearer ${process.argv[5]}` } },
  });
  pid = Number(process.argv[6]);
}
const client = new Client({ name: 'engram-memory-bench', version: '1.0.0' });
await client.connect(transport);
if (mode === 'reference') pid = transport.pid;

const vmhwm = () => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
};
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600000 });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
  return r;
};
const pct = (xs, p) => {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor(p * v.length))];
};
const timed = async (fn) => {
  const t = process.hrtime.bigint();
  const r = await fn();
  return [Number(process.hrtime.bigint() - t) / 1e6, r];
};
const name = (i) => `ent-${String(i).padStart(5, '0')}`;

// Create: batches of 100, as an agent importing would.
const t0 = process.hrtime.bigint();
for (let b = 0; b < count; b += 100) {
  const entities = [];
  for (let i = b; i < Math.min(count, b + 100); i++)
    entities.push({
      name: name(i),
      entityType: `kind${String(i % 25).padStart(2, '0')}`,
      observations: [`note ${i} about the account`, i % 100 < 42 ? 'status active' : 'status dormant',
                     `owner team ${i % 13}`],
    });
  await call('create_entities', { entities });
}
for (let b = 0; b < count; b += 100) {
  const relations = [];
  for (let i = b; i < Math.min(count, b + 100); i++)
    relations.push({ from: name(i), to: name(i % 2 ? (i * 7) % count : (i + 1) % count), relationType: 'relates_to' });
  await call('create_relations', { relations });
}
const create_s = Number(process.hrtime.bigint() - t0) / 1e9;

const classes = {
  one: (k) => name((k * 37) % count),
  four_percent: (k) => `kind${String(k % 25).padStart(2, '0')}`,
  forty_two_percent: () => 'active',
  none: (k) => `nothing-${k}`,
};
const search = {};
const rounds = Number(process.env.MEMORY_BENCH_QUERIES || 50);
for (const [cls, q] of Object.entries(classes)) {
  const ms = [];
  let matched = 0;
  let bytes = 0;
  for (let k = 0; k < rounds; k++) {
    const [t, r] = await timed(() => call('search_nodes', { query: q(k) }));
    ms.push(t);
    matched = r.structuredContent?.total ?? r.structuredContent?.entities?.length ?? 0;
    bytes = r.content[0].text.length;
  }
  search[cls] = { p50: pct(ms, 0.5), p99: pct(ms, 0.99), matched, bytes };
}
const open = [];
for (let k = 0; k < rounds; k++) {
  const [t] = await timed(() => call('open_nodes', { names: [name((k * 101) % count), name((k * 211) % count)] }));
  open.push(t);
}
const [read_ms, graph] = await timed(() => call('read_graph', {}));
const out = {
  mode, entities: count, create_s,
  search, open: { p50: pct(open, 0.5), p99: pct(open, 0.99) },
  read_graph: { ms: read_ms, bytes: graph.content[0].text.length, entities: graph.structuredContent?.entities?.length ?? 0 },
  peak_rss: vmhwm(),
};
await client.close();
if (scratch) rmSync(scratch, { recursive: true, force: true });
console.log(JSON.stringify(out));
