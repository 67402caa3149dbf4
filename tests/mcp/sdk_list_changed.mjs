// The official MCP TypeScript SDK client, told that its tool list changed:
//   node tests/mcp/sdk_list_changed.mjs URL TOKEN TOOL
// (ENGRAM_NODE_MODULES: where tools/dev.sh setup installed tests/mcp/package.json.)
// Connects (the SDK opens its GET event stream after initialize), lists the tools, then waits
// for notifications/tools/list_changed and lists again, until TOOL is listed (at most 120 s).
// Prints one JSON line: the tool count before, whether TOOL is listed after, how many
// notifications came; exits 1 on any failed check.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [url, token, tool] = process.argv.slice(2);
const modules = process.env.ENGRAM_NODE_MODULES;
const load = (p) => import(pathToFileURL(path.join(modules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { ToolListChangedNotificationSchema } = await load('types.js');

const failures = [];
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'engram-list-changed-test', version: '1.0.0' });
let notified = 0;
let wake = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { notified += 1; wake(); });
await client.connect(transport);
if (client.getServerCapabilities()?.tools?.listChanged !== true)
  failures.push('initialize does not declare tools.listChanged');
const before = (await client.listTools()).tools.map((t) => t.name);
if (before.includes(tool)) failures.push(`${tool} is listed before the change`);

const deadline = setTimeout(() => wake(true), 120000);
let listed = false;
let seen = 0;
while (!listed) {
  if (notified === seen) {  // nothing new since the last listing: wait for the next notification
    const timedOut = await new Promise((resolve) => { wake = resolve; });
    if (timedOut === true) { failures.push(`no list_changed that lists ${tool} within 120 s`); break; }
  }
  seen = notified;
  listed = (await client.listTools()).tools.some((t) => t.name === tool);
}
clearTimeout(deadline);
await client.close();
console.log(JSON.stringify({ before: before.length, listed, notified, failures }));
process.exit(failures.length ? 1 : 0);
