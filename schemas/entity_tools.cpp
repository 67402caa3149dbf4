#include "schemas/tools.hpp"

namespace engram::schemas {

namespace {

// The entity tools (entity_*) and the traversal (graph_*).
// Lengths match schemas/entity_command.hpp's entity_limits.
#define ENGRAM_NAME R"({"type": "string", "minLength": 1, "maxLength": 256})"
#define ENGRAM_ATTRIBUTES \
  R"({"type": "object", "description": "Key-value metadata (string values; keys up to 64 bytes, values up to 1,024, at most 64 keys)."})"
#define ENGRAM_EDGE_TYPES \
  R"({"type": "array", "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 64}, "description": "Follow only these relationship labels (compared as lower snake case)."})"
#define ENGRAM_DIRECTION R"({"type": "string", "enum": ["outgoing", "incoming", "both"], "default": "both"})"

constexpr std::string_view definitions =
    R"([
{"name": "entity_add",
 "description": "Add an entity (a company, person, technology, product, location or any other type) to this organisation's graph, or merge attributes into the entity of that name (new keys added, existing keys updated; created is then false). People and organisations found in mail are the same nodes.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["name", "entity_type"],
   "properties": {"name": )" ENGRAM_NAME R"(,
     "entity_type": {"type": "string", "minLength": 1, "maxLength": 64, "description": "company, person, technology, product, location, other, or your own type (kept as given)."},
     "attributes": )" ENGRAM_ATTRIBUTES R"(,
     "observations": {"type": "array", "maxItems": 256, "items": {"type": "string", "minLength": 1, "maxLength": 2048}}}},
 "outputSchema": {"type": "object", "required": ["name", "entity_type", "attributes", "created"],
   "properties": {"name": {"type": "string"}, "entity_type": {"type": "string"}, "attributes": {"type": "object"},
     "observations": {"type": "array", "items": {"type": "string"}}, "created": {"type": "boolean"}}}},
{"name": "entity_relate",
 "description": "Create a directed relationship between two entities that both exist (uses, employs, competes_with, acquired, founded_by, located_in, depends_on, part_of, or any label; stored as lower snake case).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["from", "to", "relationship"],
   "properties": {"from": )" ENGRAM_NAME R"(, "to": )" ENGRAM_NAME R"(,
     "relationship": {"type": "string", "minLength": 1, "maxLength": 64},
     "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000000, "default": 1},
     "attributes": )" ENGRAM_ATTRIBUTES R"(}},
 "outputSchema": {"type": "object", "required": ["from", "to", "relationship", "created"],
   "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "relationship": {"type": "string"},
     "created": {"type": "boolean"}}}},
{"name": "entity_query",
 "description": "Answer a question from the graph: entities whose names, aliases, types or attributes match the question's words, with their relationships, and a short answer composed from those facts (no LLM). Example: which companies use Rust?",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["question"],
   "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 2000},
     "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}}},
 "outputSchema": {"type": "object", "required": ["entities", "answer"],
   "properties": {"entities": {"type": "array", "items": {"type": "object"}}, "answer": {"type": "string"}}}},
{"name": "entity_merge",
 "description": "Merge entity B into entity A when both name the same thing: B's attributes (those A lacks), names, observations, relationships in both directions and links to knowledge move to A, and B is deleted.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["name_a", "name_b"],
   "properties": {"name_a": )" ENGRAM_NAME R"(, "name_b": )" ENGRAM_NAME R"(}},
 "outputSchema": {"type": "object", "required": ["merged_into", "removed", "attributes_gained", "relationships_gained"],
   "properties": {"merged_into": {"type": "string"}, "removed": {"type": "string"},
     "attributes_gained": {"type": "integer"}, "relationships_gained": {"type": "integer"}}}},
{"name": "entity_search",
 "description": "Fuzzy search over entity names and aliases (exact, prefix, word, substring and typo matches), scored 0..1, best first.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["query"],
   "properties": {"query": )" ENGRAM_NAME
    R"(, "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}}},
 "outputSchema": {"type": "object", "required": ["results"],
   "properties": {"results": {"type": "array", "items": {"type": "object", "required": ["name", "entity_type", "score"],
     "properties": {"name": {"type": "string"}, "entity_type": {"type": "string"}, "score": {"type": "number"}}}}}}},
{"name": "entity_find_related",
 "description": "Entities connected to an entity by any relationship, in either direction (outgoing: it is the source).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["name"],
   "properties": {"name": )" ENGRAM_NAME
    R"(, "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 200}}},
 "outputSchema": {"type": "object", "required": ["entity", "related"],
   "properties": {"entity": {"type": "string"}, "related": {"type": "array", "items": {"type": "object",
     "required": ["name", "relationship", "direction"], "properties": {"name": {"type": "string"},
     "relationship": {"type": "string"}, "direction": {"type": "string", "enum": ["outgoing", "incoming"]}}}}}}},
{"name": "entity_visualize",
 "description": "A Mermaid diagram (graph LR) of the graph, or of the part around one entity; bounded by limit, with a note of what was left out.",
 "inputSchema": {"type": "object", "additionalProperties": false,
   "properties": {"name": )" ENGRAM_NAME R"(, "depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
     "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}}},
 "outputSchema": {"type": "object", "required": ["mermaid", "nodes", "omitted"],
   "properties": {"mermaid": {"type": "string"}, "nodes": {"type": "integer"}, "omitted": {"type": "integer"}}}},
{"name": "graph_traverse",
 "description": "Breadth-first walk from an entity up to max_depth hops, optionally over some relationship labels and one direction; each entity with its distance and similarity 1/(1+distance).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["start", "max_depth"],
   "properties": {"start": )" ENGRAM_NAME R"(, "max_depth": {"type": "integer", "minimum": 1, "maximum": 5},
     "edge_types": )" ENGRAM_EDGE_TYPES R"(, "direction": )" ENGRAM_DIRECTION R"(,
     "entity_type": {"type": "string", "minLength": 1, "maxLength": 64, "description": "Only entities of this type or a subtype (confidence 0.8 per level)."},
     "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}},
 "outputSchema": {"type": "object", "required": ["start", "nodes", "truncated"],
   "properties": {"start": {"type": "string"}, "truncated": {"type": "boolean"}, "nodes": {"type": "array", "items": {"type": "object",
     "required": ["name", "entity_type", "distance", "similarity"], "properties": {"name": {"type": "string"},
     "entity_type": {"type": "string"}, "distance": {"type": "integer"}, "similarity": {"type": "number"},
     "type_confidence": {"type": "number"}, "via": {"type": "string"}, "relationship": {"type": "string"}}}}}}},
{"name": "graph_path",
 "description": "The shortest path between two entities by hops (or by total edge weight with by=weight), within max_depth hops.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["from", "to"],
   "properties": {"from": )" ENGRAM_NAME R"(, "to": )" ENGRAM_NAME R"(, "edge_types": )" ENGRAM_EDGE_TYPES R"(,
     "max_depth": {"type": "integer", "minimum": 1, "maximum": 6, "default": 4}, "direction": )" ENGRAM_DIRECTION R"(,
     "by": {"type": "string", "enum": ["hops", "weight"], "default": "hops"}}},
 "outputSchema": {"type": "object", "required": ["from", "to", "hops", "total_weight", "nodes", "edges"],
   "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "hops": {"type": "integer"},
     "total_weight": {"type": "number"}, "nodes": {"type": "array", "items": {"type": "string"}},
     "edges": {"type": "array", "items": {"type": "object", "properties": {"from": {"type": "string"},
     "to": {"type": "string"}, "relationship": {"type": "string"}, "weight": {"type": "number"}}}}}}}
])";

// The graph query (docs/graph-queries.md): its inputSchema and response shape, the
// seed's limits (query 10 KB, 50 hints, max_hops 3, limit 100).
constexpr std::string_view kag_definitions = R"([
{"name": "kag_query",
 "description": "Query the knowledge graph for entities and their relationships. Use this for questions about concepts, people, organizations, or how things relate to each other in the indexed documents and mail (who works where, who reports to whom, who uses what, where an organisation is, which organisations are partners, customers or competitors), including questions that need two or three hops. Answers the entities the question names and those around them, ranked, the relations between them with the statements that support them, and a Markdown context for an LLM.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["query"],
   "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 10240, "description": "Natural language question or search terms; at most 10 KB"},
     "entities": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 256}, "description": "Optional: specific entity names to search for"},
     "include_relations": {"type": "boolean", "default": true, "description": "Include relationships between entities"},
     "max_hops": {"type": "integer", "minimum": 0, "default": 2, "maximum": 3, "description": "Maximum relationship hops for graph traversal"},
     "limit": {"type": "integer", "minimum": 1, "default": 20, "maximum": 100, "description": "Maximum number of entities to return"},
     "source_id": {"type": "string", "minLength": 1, "maxLength": 256, "description": "Optional: only relations read from this message or document: its eventId or document id"}}},
 "outputSchema": {"type": "object", "required": ["entities", "relations", "context", "total_entities"],
   "properties": {"entities": {"type": "array", "items": {"type": "object", "required": ["id", "name", "type", "confidence"],
       "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "type": {"type": "string"},
         "description": {"type": "string"}, "confidence": {"type": "number"}, "distance": {"type": "integer"},
         "source_document_id": {"type": "string"}, "source_document_title": {"type": "string"}}}},
     "relations": {"type": "array", "items": {"type": "object", "required": ["subject", "predicate", "object", "confidence"],
       "properties": {"subject": {"type": "string"}, "predicate": {"type": "string"}, "object": {"type": "string"},
         "confidence": {"type": "number"}, "valid_from": {"type": "string"}, "valid_to": {"type": "string"},
         "statement": {"type": "string"}, "source_document_id": {"type": "string"}, "source_document_title": {"type": "string"}}}},
     "context": {"type": "string"}, "total_entities": {"type": "integer"}, "note": {"type": "string"}}}}
])";

}  // namespace

std::string_view entity_tool_definitions() { return definitions; }

std::string_view kag_tool_definitions() { return kag_definitions; }

}  // namespace engram::schemas
