// The official MCP TypeScript SDK client against a running engramd:
//   node tests/mcp/sdk_client.mjs URL TOKEN
// (ENGRAM_NODE_MODULES: where tools/dev.sh setup installed tests/mcp/package.json.)
// Connects, lists the tools, saves, recalls what was saved, gets it, then makes the
// reference memory server's calls, kag_query and two entity tools' calls. Prints one JSON line
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
check(JSON.stringify(names) === JSON.stringify([
  'add_observations', 'create_entities', 'create_relations', 'delete_entities', 'delete_observations', 'delete_relations',
  'discard_branch', 'entity_add', 'entity_find_related', 'entity_merge', 'entity_query', 'entity_relate', 'entity_search',
  'entity_visualize', 'forget_knowledge', 'get_knowledge', 'graph_path', 'graph_traverse', 'kag_query', 'list_review_queue', 'merge_branch', 'open_nodes',
  'read_graph', 'recall_knowledge', 'resolve_review', 'save_knowledge', 'search_knowledge', 'search_nodes',
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

// The memory server's calls, as its users make them: the SDK checks each structuredContent
// against the tool's outputSchema.
const created = await client.callTool({ name: 'create_entities', arguments: { entities: [
  { name: 'Ada', entityType: 'person', observations: ['writes programs'] },
  { name: 'Analytical Engine', entityType: 'machine', observations: [] }] } });
check(!created.isError && created.structuredContent?.entities?.length === 2, `create_entities: ${JSON.stringify(created)}`);
const related = await client.callTool({ name: 'create_relations', arguments: { relations: [
  { from: 'Ada', to: 'Analytical Engine', relationType: 'programs' }] } });
check(related.structuredContent?.relations?.[0]?.relationType === 'programs', `create_relations: ${JSON.stringify(related)}`);
const found = await client.callTool({ name: 'search_nodes', arguments: { query: 'ada' } });
check(found.structuredContent?.entities?.[0]?.name === 'Ada' && found.structuredContent?.relations?.length === 1,
      `search_nodes: ${JSON.stringify(found)}`);
// kag_query's answer passes the SDK's check against its outputSchema.
const kag = await client.callTool({ name: 'kag_query', arguments: { query: 'Who programs the Analytical Engine?' } });
check(!kag.isError && kag.structuredContent?.entities?.some((e) => e.name === 'Ada') &&
      kag.structuredContent?.relations?.[0]?.predicate === 'programs' &&
      kag.structuredContent?.context?.includes('## Relations'), `kag_query: ${JSON.stringify(kag)}`);
const opened = await client.callTool({ name: 'open_nodes', arguments: { names: ['Analytical Engine'] } });
check(opened.structuredContent?.relations?.[0]?.from === 'Ada', `open_nodes: ${JSON.stringify(opened)}`);
const graph = await client.callTool({ name: 'read_graph', arguments: {} });
check(graph.structuredContent?.entities?.length === 2, `read_graph: ${JSON.stringify(graph)}`);
const deleted = await client.callTool({ name: 'delete_entities', arguments: { entityNames: ['Analytical Engine'] } });
check(deleted.structuredContent?.success === true, `delete_entities: ${JSON.stringify(deleted)}`);
const added = await client.callTool({ name: 'entity_add', arguments: { name: 'Ada', entity_type: 'person',
                                                                     attributes: { born: '1815' } } });
check(added.structuredContent?.created === false && added.structuredContent?.attributes?.born === '1815',
      `entity_add: ${JSON.stringify(added)}`);
const drawn = await client.callTool({ name: 'entity_visualize', arguments: {} });
check(drawn.structuredContent?.mermaid?.startsWith('graph LR'), `entity_visualize: ${JSON.stringify(drawn)}`);

await client.close();
console.log(JSON.stringify({ tools: names, id, failures }));
process.exit(failures.length ? 1 : 0);
