#include "schemas/tools.hpp"

namespace engram::schemas {

namespace {

// The reference MCP memory server's tools (npm @modelcontextprotocol/server-memory 2026.8.31,
// dist/index.js): the same names, input names, required fields and result keys; lengths and
// counts bounded (schemas/entity_command.hpp's entity_limits); read_graph paged and
// search_nodes limited (Engram's additions, both optional).
#define ENGRAM_MEM_NAME R"({"type": "string", "minLength": 1, "maxLength": 256})"
#define ENGRAM_MEM_OBSERVATIONS \
  R"({"type": "array", "maxItems": 256, "items": {"type": "string", "minLength": 1, "maxLength": 2048}})"
#define ENGRAM_MEM_ENTITY                                                                                 \
  R"({"type": "object", "required": ["name", "entityType", "observations"], "properties": {)"             \
  R"("name": )" ENGRAM_MEM_NAME R"(, "entityType": {"type": "string", "minLength": 1, "maxLength": 64},)" \
  R"( "observations": )" ENGRAM_MEM_OBSERVATIONS R"(}})"
#define ENGRAM_MEM_RELATION                                                           \
  R"({"type": "object", "required": ["from", "to", "relationType"], "properties": {)" \
  R"("from": )" ENGRAM_MEM_NAME R"(, "to": )" ENGRAM_MEM_NAME R"(,)"                  \
  R"( "relationType": {"type": "string", "minLength": 1, "maxLength": 64}}})"
#define ENGRAM_MEM_GRAPH                                                         \
  R"({"type": "object", "required": ["entities", "relations"], "properties": {)" \
  R"("entities": {"type": "array", "items": )" ENGRAM_MEM_ENTITY R"(},)"         \
  R"( "relations": {"type": "array", "items": )" ENGRAM_MEM_RELATION R"(},)"     \
  R"( "nextCursor": {"type": "string"}, "total": {"type": "integer"}}})"
#define ENGRAM_MEM_DONE                                                                                      \
  R"({"type": "object", "required": ["success", "message"], "properties": {"success": {"type": "boolean"},)" \
  R"( "message": {"type": "string"}, "deleted": {"type": "integer"}}})"

constexpr std::string_view definitions = R"([
{"name": "create_entities",
 "description": "Create multiple new entities in the knowledge graph (names that exist already are skipped; the answer lists those created).",
 "inputSchema": {"type": "object", "required": ["entities"],
   "properties": {"entities": {"type": "array", "maxItems": 1000, "items": )" ENGRAM_MEM_ENTITY R"(}}},
 "outputSchema": {"type": "object", "required": ["entities"],
   "properties": {"entities": {"type": "array", "items": )" ENGRAM_MEM_ENTITY R"(}}}},
{"name": "create_relations",
 "description": "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice. Both ends must exist; existing relations are skipped.",
 "inputSchema": {"type": "object", "required": ["relations"],
   "properties": {"relations": {"type": "array", "maxItems": 1000, "items": )" ENGRAM_MEM_RELATION R"(}}},
 "outputSchema": {"type": "object", "required": ["relations"],
   "properties": {"relations": {"type": "array", "items": )" ENGRAM_MEM_RELATION R"(}}}},
{"name": "add_observations",
 "description": "Add new observations to existing entities in the knowledge graph",
 "inputSchema": {"type": "object", "required": ["observations"],
   "properties": {"observations": {"type": "array", "maxItems": 1000, "items": {"type": "object",
     "required": ["entityName", "contents"], "properties": {"entityName": )" ENGRAM_MEM_NAME R"(,
     "contents": )" ENGRAM_MEM_OBSERVATIONS R"(}}}}},
 "outputSchema": {"type": "object", "required": ["results"],
   "properties": {"results": {"type": "array", "items": {"type": "object", "required": ["entityName", "addedObservations"],
     "properties": {"entityName": {"type": "string"}, "addedObservations": {"type": "array", "items": {"type": "string"}}}}}}}},
{"name": "delete_entities",
 "description": "Delete multiple entities and their associated relations from the knowledge graph",
 "inputSchema": {"type": "object", "required": ["entityNames"],
   "properties": {"entityNames": {"type": "array", "maxItems": 1000, "items": )" ENGRAM_MEM_NAME R"(}}},
 "outputSchema": )" ENGRAM_MEM_DONE R"(},
{"name": "delete_observations",
 "description": "Delete specific observations from entities in the knowledge graph",
 "inputSchema": {"type": "object", "required": ["deletions"],
   "properties": {"deletions": {"type": "array", "maxItems": 1000, "items": {"type": "object",
     "required": ["entityName", "observations"], "properties": {"entityName": )" ENGRAM_MEM_NAME R"(,
     "observations": )" ENGRAM_MEM_OBSERVATIONS R"(}}}}},
 "outputSchema": )" ENGRAM_MEM_DONE R"(},
{"name": "delete_relations",
 "description": "Delete multiple relations from the knowledge graph",
 "inputSchema": {"type": "object", "required": ["relations"],
   "properties": {"relations": {"type": "array", "maxItems": 1000, "items": )" ENGRAM_MEM_RELATION R"(}}},
 "outputSchema": )" ENGRAM_MEM_DONE R"(},
{"name": "read_graph",
 "description": "Read the knowledge graph, a page at a time: up to limit entities (default 100) with the relations leaving them; pass nextCursor back as cursor for the next page.",
 "inputSchema": {"type": "object",
   "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
     "cursor": {"type": "string", "minLength": 1, "maxLength": 600}}},
 "outputSchema": )" ENGRAM_MEM_GRAPH R"(},
{"name": "search_nodes",
 "description": "Search for nodes in the knowledge graph based on a query (matched against entity names, types and observation content, case-insensitively), best matches first: exact name, name prefix, a word of the name, within the name, type, observations.",
 "inputSchema": {"type": "object", "required": ["query"],
   "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 256},
     "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}},
 "outputSchema": )" ENGRAM_MEM_GRAPH R"(},
{"name": "open_nodes",
 "description": "Open specific nodes in the knowledge graph by their names, with every relation that touches them",
 "inputSchema": {"type": "object", "required": ["names"],
   "properties": {"names": {"type": "array", "maxItems": 1000, "items": )" ENGRAM_MEM_NAME R"(}}},
 "outputSchema": )" ENGRAM_MEM_GRAPH R"(}
])";

}  // namespace

std::string_view memory_tool_definitions() { return definitions; }

}  // namespace engram::schemas
