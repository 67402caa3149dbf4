// The official MCP TypeScript SDK client against a running engramd:
//   node tests/mcp/sdk_client.mjs URL TOKEN
// (ENGRAM_NODE_MODULES: where tools/dev.sh setup installed tests/mcp/package.json.)
// Connects, lists the tools, saves, recalls what was saved, gets it. Prints one JSON line
// with what it saw; exits 1 on any failed check.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [url, token] = process.argv.slice(2);
const modules = process.env.ENGRAM_NODE_MODULES;
const load = (p) => import(pathToFileURL(path.join(modules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');

const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'engram-sdk-test', version: '1.0.0' });
await client.connect(transport);
check(client.getServerVersion()?.name === 'engram', 'serverInfo.name is engram');

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === JSON.stringify(['discard_branch', 'get_knowledge', 'list_review_queue', 'merge_branch',
                                              'recall_knowledge', 'resolve_review', 'save_knowledge', 'search_knowledge',
                                              'validate_knowledge']),
      `tools: ${names}`);

const saved = await client.callTool({
  name: 'save_knowledge',
  arguments: { type: 'decision', title: 'Fabrikam pilot', content: 'We decided to run the Fabrikam pilot with 40 seats.',
               confidence: 0.9, tags: ['pilot'] },
});
check(!saved.isError, `save: ${JSON.stringify(saved.content)}`);
const id = saved.structuredContent?.id;
check(saved.structuredContent?.outcome === 'created', `outcome ${saved.structuredContent?.outcome}`);

const recalled = await client.callTool({ name: 'recall_knowledge', arguments: { query: 'Fabrikam pilot seats', limit: 3 } });
check(!recalled.isError, 'recall answered');
check(recalled.structuredContent?.results?.[0]?.id === id, 'recall finds the save first');

const got = await client.callTool({ name: 'get_knowledge', arguments: { id } });
check(got.structuredContent?.entry?.content === 'We decided to run the Fabrikam pilot with 40 seats.', 'get returns it');
check(got.structuredContent?.entry?.entryType === 'decision', 'get keeps its type');

const bad = await client.callTool({ name: 'recall_knowledge', arguments: { query: 'x', limit: 500 } });
check(bad.isError === true, 'an out-of-range limit is a tool error');

await client.close();
console.log(JSON.stringify({ tools: names, id, failures }));
process.exit(failures.length ? 1 : 0);
