// Every engram-log record kind, and every knowledge-command op, through the log's encoder
// and decoder: what goes in comes out, field for field (operator== compares every member).
// A field a producer sets and the codec drops once made merge_branch fail on every call.
#include "schemas/log_record.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

namespace {

using namespace engram::schemas;
using json = nlohmann::json;

// A field added to a record must be set below (and carried by its codec): these sizes
// (x86-64/AArch64 libstdc++) make the compiler say so.
static_assert(
    sizeof(inbound_message) == 568,
    "inbound_message changed: set the new field in full_message() (a document in InboundMessageKeepsEveryField)");
static_assert(sizeof(knowledge_save) == 376, "knowledge_save changed: set the new field in full_save()");
static_assert(sizeof(extracted_message) == 1008, "extracted_message changed: set the new field in full_extracted()");
static_assert(sizeof(extraction) == 408, "extraction changed: set the new field in full_extracted()");
static_assert(sizeof(entry) == 496, "entry changed: set the new field in full_extracted()");
static_assert(sizeof(entity_mention) == 232, "entity_mention changed: set the new field in full_extracted()");
static_assert(sizeof(entity_relation) == 112, "entity_relation changed: set the new field in full_extracted()");
static_assert(sizeof(knowledge_command) == 488, "knowledge_command changed: set the new field in full_command()");
static_assert(sizeof(entity_command) == 304, "entity_command changed: set the new field in full_entity_command()");
static_assert(sizeof(entity_spec) == 136, "entity_spec changed: set the new field in full_entity_command()");
static_assert(sizeof(relation_spec) == 152, "relation_spec changed: set the new field in full_entity_command()");

log_payload round_trip(const log_payload& in) {
  auto rec = encode(in);
  EXPECT_EQ(rec.key, organization_of(in));
  EXPECT_EQ(parse_record_kind(rec.kind), kind_of(in));
  auto out = decode_record(rec.kind, rec.value, {});
  if (auto* bad = std::get_if<record_error>(&out)) {
    ADD_FAILURE() << rec.kind << " " << rec.value << ": " << bad->reason;
    return in;
  }
  return std::get<log_payload>(out);
}

inbound_message full_message() {
  inbound_message m;
  m.event_id = "evt-1";
  m.organization_id = "acme";
  m.source = source_type::chat;
  m.source_id = "<id@host>";
  m.thread_id = "thr-1";
  m.sent_at = "2026-03-05T10:00:00Z";
  m.sent_at_ms = *parse_rfc3339(m.sent_at);
  m.from = {"Sarah Lee", "sarah@acme.example", "c-17"};
  m.to = {{"Bob", "bob@ourco.example", "c-2"}};
  m.cc = {{"Eve", "eve@ourco.example", "c-3"}};
  m.subject = "Trial extension";
  m.body = "The trial runs until June 30.";
  m.contact_ids = {"c-17", "c-2"};
  m.headers = {{"list-id", "<sales.acme.example>"}, {"precedence", "list"}};
  return m;
}

knowledge_save full_save() {
  knowledge_save s;
  s.event_id = "save-1";
  s.organization_id = "acme";
  s.saved_at = "2026-03-05T10:00:00.000Z";
  s.saved_at_ms = *parse_rfc3339(s.saved_at);
  s.saved_by = "agent-1";
  s.type = entry_type::action_item;
  s.title = "Send the contract";
  s.content = "Send Acme the signed contract by Friday.";
  s.confidence = 0.875;
  s.contact_id = "c-17";
  s.expires_at = "2026-04-04T10:00:00.000Z";
  s.tags = {"legal", "contracts"};
  s.branch_id = "what-if";
  s.branch_ttl_ms = 86400000;
  s.embedding = quantise(std::vector<float>{0.6f, -0.8f, 0.0f, 0.01f});
  return s;
}

/// A message with what was read from it, every field of every part set.
extracted_message full_extracted() {
  extracted_message x;
  x.message = full_message();
  x.embedder = "use-lite";
  auto& k = x.knowledge;
  k.extractor = "llm";
  k.reader = "names-1/0123456789abcdef";
  k.dropped_low_confidence = 2;
  k.mentions.push_back(
      {entity_kind::person, "Sarah Lee", "Sarah Lee", "", "sarah@acme.example", "VP Sales", "Acme", "+1 555 0100"});
  k.mentions.push_back({entity_kind::amount, "$12,500", "12500", "USD", "", "", "", ""});
  k.mentions.push_back({entity_kind::organization, "Acme", "Acme", "", "", "", "", ""});
  k.mentions.push_back({entity_kind::technology, "Snowflake", "Snowflake", "", "", "", "", ""});
  k.mentions.push_back({entity_kind::location, "Lisbon", "Lisbon", "", "", "", "", ""});
  k.sender_signature = k.mentions[0];
  // Every field of a relation set; one with no statement and not ended.
  k.relations.push_back({0, 2, "works_at", 0.85, 1, true, "VP Sales"});
  k.relations.push_back({2, 3, "uses", 0.75, std::nullopt, false, ""});
  k.relations.push_back({2, 4, "located_in", 0.7250000000000001, 0, false, ""});
  entry e;
  e.type = entry_type::action_item;
  e.title = "Send the contract";
  e.content = "Sarah Lee will send the $12,500 contract by June 30.";
  e.confidence = 0.7250000000000001;  // a double that needs 16 digits
  e.subject = "contract";
  e.slot = "due";
  e.value = "2026-06-30";
  e.positive = false;
  e.due_at = "2026-06-30";
  e.suspicious = true;
  e.mentions = {0, 1};
  e.sig = {{"3"}, {"2026-06-30"}, {"12500 USD"}, {"sarah lee"}, "sarah lee send contract", "send contract"};
  e.tags = {"legal"};
  e.expires_at = "2026-09-30T00:00:00.000Z";
  std::vector<float> v(512);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 37) % 101) / 101.0f - 0.5f;
  e.embedding = quantise(v);
  k.entries.push_back(e);
  e.embedding = {};  // an entry the encoder could not embed
  e.mentions.clear();
  k.entries.push_back(e);
  // A passage with its entry's vector, and a suspicious one without a vector.
  k.passages.push_back({"Sarah Lee will send the $12,500 contract by June 30.",
                        "sarah lee send 12500 contract june 30",
                        {"2026-06-30"},
                        false,
                        k.entries[0].embedding});
  k.passages.push_back({"Thanks, talk soon.", "thank talk soon", {}, true, {}});
  return x;
}

/// A command with every field set to something other than its default.
knowledge_command full_command(command_op op) {
  knowledge_command c;
  c.event_id = "cmd-1";
  c.organization_id = "acme";
  c.issued_at = "2026-03-05T10:00:00.000Z";
  c.issued_at_ms = *parse_rfc3339(c.issued_at);
  c.issued_by = "agent-1";
  c.op = op;
  c.id = "e-0123456789abcdef";
  c.outcome = "approved";
  c.keep = "both";
  c.branch_id = "what-if";
  c.limit = 100;
  c.ttl_ms = 86400000;
  c.reminder_id = "rem-e-0123456789abcdef";
  c.reminder_partition = 3;
  c.reminder_offset = 42;
  c.title = "Vendor review";
  c.chunk = 1;
  c.chunks = 3;
  c.reason = "/document/chunk: must be less than chunks";
  c.what = "entry";
  c.events = {"evt-1", "evt-2"};
  c.people = {"address:0123abcd"};
  return c;
}

/// A command as its producer makes it: only the op's fields.
knowledge_command minimal_command(command_op op) {
  auto full = full_command(op);
  knowledge_command c;
  c.event_id = full.event_id;
  c.organization_id = full.organization_id;
  c.issued_at = full.issued_at;
  c.issued_at_ms = full.issued_at_ms;
  c.op = op;
  switch (op) {
    case command_op::validate:
      c.id = full.id;
      c.outcome = "rejected";
      break;
    case command_op::resolve_review:
      c.id = full.id;
      c.keep = "older";
      break;
    case command_op::merge_branch:  // as MCP makes it: with the branches' time to live
      c.branch_id = full.branch_id;
      c.ttl_ms = full.ttl_ms;
      break;
    case command_op::discard_branch: c.branch_id = full.branch_id; break;
    case command_op::expire:
      c.limit = full.limit;
      c.ttl_ms = full.ttl_ms;
      break;
    case command_op::reminder_sent:
      c.id = full.id;
      c.reminder_id = full.reminder_id;
      c.reminder_partition = 0;
      c.reminder_offset = 0;
      break;
    case command_op::chunk_failed:
      c.id = "doc-0123";
      c.chunk = 0;
      c.chunks = 2;
      c.reason = "/body: required non-empty string";
      break;
    case command_op::forget:
      c.id = full.id;
      c.what = "entry";
      break;
  }
  return c;
}

constexpr command_op all_ops[] = {command_op::validate,       command_op::resolve_review, command_op::merge_branch,
                                  command_op::discard_branch, command_op::expire,         command_op::reminder_sent,
                                  command_op::chunk_failed,   command_op::forget};

TEST(LogRecord, EveryKindHasAHeaderNameThatParsesBack) {
  for (auto k : all_record_kinds)
    EXPECT_EQ(parse_record_kind(to_string(k)), k) << to_string(k);
  EXPECT_EQ(parse_record_kind(""), record_kind::inbound_message);  // records of the first releases
  EXPECT_FALSE(parse_record_kind("knowledge-saves"));
}

TEST(LogRecord, InboundMessageKeepsEveryField) {
  const log_payload in = full_message();
  EXPECT_EQ(std::get<inbound_message>(round_trip(in)), std::get<inbound_message>(in));
  // A chunk of a document (sourceType file) with its document_ref.
  auto doc = full_message();
  doc.source = source_type::file;
  doc.document = document_ref{"doc-0123", "Vendor review", "Vendors > Data", 1, 4};
  const log_payload chunk = doc;
  EXPECT_EQ(std::get<inbound_message>(round_trip(chunk)), doc);
}

TEST(LogRecord, KnowledgeSaveKeepsEveryField) {
  const log_payload branch = full_save();
  EXPECT_EQ(std::get<knowledge_save>(round_trip(branch)), std::get<knowledge_save>(branch));
  auto main = full_save();
  main.branch_id.clear();
  main.branch_ttl_ms = 0;
  main.contact_id.clear();
  main.expires_at.clear();
  main.tags.clear();
  main.embedding = {};  // saved by an engramd without an encoder, or before saves carried one
  EXPECT_EQ(std::get<knowledge_save>(round_trip(main)), main);
}

TEST(LogRecord, ExtractedMessageKeepsEveryFieldOfTheMessageItsEntriesMentionsAndVectors) {
  const auto in = full_extracted();
  const auto out = std::get<extracted_message>(round_trip(in));
  EXPECT_EQ(out.message, in.message);
  ASSERT_EQ(out.knowledge.entries.size(), 2u);
  EXPECT_EQ(out.knowledge.entries[0].embedding, in.knowledge.entries[0].embedding);  // bits: scale and components
  EXPECT_EQ(out.knowledge.entries[0], in.knowledge.entries[0]);
  EXPECT_EQ(out, in);
  auto bare = in;
  bare.knowledge = {};
  bare.embedder.clear();
  EXPECT_EQ(std::get<extracted_message>(round_trip(bare)), bare);
  EXPECT_EQ(json::parse(encode(in).value)["formatVersion"], 3);
  // A record of format 2 (written before passages) is still applied: no passages.
  auto v2 = json::parse(encode(bare).value);
  v2["formatVersion"] = 2;
  auto old = decode_record("extracted-message", v2.dump(), {});
  ASSERT_TRUE(std::holds_alternative<log_payload>(old));
  EXPECT_EQ(std::get<extracted_message>(std::get<log_payload>(old)), bare);
}

TEST(LogRecord, ExtractedMessageErrorsNameTheField) {
  const auto good = json::parse(encode(full_extracted()).value);
  // clang-format off
  const std::pair<std::function<void(json&)>, const char*> cases[] = {
      {[](json& j) { j["formatVersion"] = 4; }, "/formatVersion: this build reads versions 2 and 3, not 4"},
      // Past any integer type (fuzz_log_record: converting it was undefined behaviour): as written.
      {[](json& j) { j["formatVersion"] = 3.7e126; }, "/formatVersion: this build reads versions 2 and 3, not 3.7e+126"},
      {[](json& j) { j["formatVersion"] = 2.5; }, "/formatVersion: this build reads versions 2 and 3, not 2.5"},
      {[](json& j) { j["extraction"]["passages"][1]["text"] = ""; }, "/extraction/passages/1/text: must not be empty"},
      {[](json& j) { j["extraction"]["passages"][0].erase("text"); }, "/extraction/passages/0/text: required"},
      {[](json& j) { j["extraction"]["passages"] = json::array({"x"}); }, "/extraction/passages/0/: must be an object"},
      {[](json& j) { j["extraction"]["passages"] = json::array(); for (int i = 0; i < 25; ++i) j["extraction"]["passages"].push_back({{"text", "x"}}); },
       "/extraction/passages: at most 24 a message"},
      {[](json& j) { j.erase("extraction"); }, "/extraction: required"},
      {[](json& j) { j["message"].erase("organizationId"); }, "/message/organizationId"},
      {[](json& j) { j["extraction"]["entries"][0]["type"] = "rumour"; },
       "/extraction/entries/0/type: unknown entry type 'rumour'"},
      {[](json& j) { j["extraction"]["entries"][1]["confidence"] = 2; },
       "/extraction/entries/1/confidence: must be within 0..1"},
      {[](json& j) { j["extraction"]["entries"][0]["mentions"] = {7}; }, "/extraction/entries/0/mentions: must be"},
      {[](json& j) { j["extraction"]["entries"][0]["vector"]["q"] = "!!!!"; },
       "/extraction/entries/0/vector/q: not base64"},
      {[](json& j) { j["extraction"]["mentions"][1]["kind"] = "planet"; },
       "/extraction/mentions/1/kind: unknown entity kind 'planet'"},
      {[](json& j) { j["extraction"]["relations"][0]["subject"] = 9; },
       "/extraction/relations/0/subject: must be an index into /extraction/mentions (0..5)"},
      {[](json& j) { j["extraction"]["relations"][1].erase("object"); }, "/extraction/relations/1/object: must be"},
      {[](json& j) { j["extraction"]["relations"][0]["predicate"] = "likes"; },
       "/extraction/relations/0/predicate: unknown relation 'likes'"},
      {[](json& j) { j["extraction"]["relations"][0].erase("predicate"); }, "/extraction/relations/0/predicate: required"},
      {[](json& j) { j["extraction"]["relations"][0]["confidence"] = 1.5; },
       "/extraction/relations/0/confidence: must be within 0..1"},
      {[](json& j) { j["extraction"]["relations"][0]["entry"] = 2; },
       "/extraction/relations/0/entry: must be an index into /extraction/entries (0..2)"},
      {[](json& j) { j["extraction"]["relations"][0]["ended"] = "yes"; },
       "/extraction/relations/0/ended: must be true or false"},
      {[](json& j) { j["extraction"]["relations"] = "none"; }, "/extraction/relations: must be an array"},
  };
  // clang-format on
  for (const auto& [change, says] : cases) {
    auto j = good;
    change(j);
    auto out = decode_record("extracted-message", j.dump(), {});
    ASSERT_TRUE(std::holds_alternative<record_error>(out)) << says;
    const auto& e = std::get<record_error>(out);
    EXPECT_NE(e.reason.find(says), std::string::npos) << e.reason;
    EXPECT_EQ(e.reason.rfind("extracted-message ", 0), 0u) << e.reason;
    EXPECT_EQ(e.label, "schema");
  }
}

TEST(LogRecord, EveryCommandOpKeepsEveryFieldSet) {
  for (auto op : all_ops) {
    SCOPED_TRACE(std::string(to_string(op)));
    const auto full = full_command(op);
    EXPECT_EQ(std::get<knowledge_command>(round_trip(full)), full);
    const auto minimal = minimal_command(op);
    EXPECT_EQ(std::get<knowledge_command>(round_trip(minimal)), minimal);
  }
}

// What the sequencer records a refused chunk under: an organisation and a document valid on
// their own (ids are key parts joined by NUL in the store), and a reason that may be cut.
TEST(LogRecord, ARefusedChunkIsRecordedOnlyUnderAValidOrganisationAndDocument) {
  auto chunk = refused_chunk_of(
      R"({"organizationId": "acme", "eventId": "e1", "sentAt": "x", "document": {"id": "d", "chunk": 1, "chunks": 2}})");
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->organization_id, "acme");
  EXPECT_EQ(chunk->event_id, "e1");
  EXPECT_EQ(chunk->document.chunk, 1u);
  for (const auto* bad : {R"({"organizationId": "acme\u0000x", "document": {"id": "d", "chunk": 0, "chunks": 2}})",
                          R"({"organizationId": "", "document": {"id": "d", "chunk": 0, "chunks": 2}})",
                          R"({"organizationId": "acme", "document": {"id": "d\u0001", "chunk": 0, "chunks": 2}})",
                          R"({"organizationId": "acme", "document": {"id": "d", "chunk": 0, "chunks": 2000000}})",
                          R"({"organizationId": "acme", "document": {"id": "d", "chunk": 2, "chunks": 2}})",
                          R"({"organizationId": "acme"})", "not json"})
    EXPECT_FALSE(refused_chunk_of(bad)) << bad;
  auto c = minimal_command(command_op::chunk_failed);
  c.reason = std::string("/sentAt: must be an RFC 3339 date-time, got \"2026\xC3");  // cut inside a character
                                                                                     // clang-format off
  const auto rec = encode(log_payload{c});
  auto back = decode_record("knowledge-command", rec.value, {});
  ASSERT_TRUE(std::holds_alternative<log_payload>(back));
  EXPECT_EQ(std::get<knowledge_command>(std::get<log_payload>(back)).reason.rfind("/sentAt: must be", 0), 0u);
}

TEST(LogRecord, MergeBranchCarriesTheBranchesTimeToLive) {
  auto rec = encode(minimal_command(command_op::merge_branch));
  EXPECT_EQ(json::parse(rec.value).value("ttlMs", std::int64_t{0}), 86400000) << rec.value;
}

TEST(LogRecord, MergeBranchWrittenBeforeTtlMsDecodesAsItWasApplied) {
  auto j = json::parse(encode(minimal_command(command_op::merge_branch)).value);
  j.erase("ttlMs");
  auto out = decode_record("knowledge-command", j.dump(), {});
  ASSERT_TRUE(std::holds_alternative<log_payload>(out)) << std::get<record_error>(out).reason;
  EXPECT_EQ(std::get<knowledge_command>(std::get<log_payload>(out)).ttl_ms, 0);
}

TEST(LogRecord, EachOpsRequiredFieldIsNamedWhenMissing) {
  const std::pair<command_op, const char*> required[] = {
      {command_op::validate, "id"},          {command_op::validate, "outcome"},
      {command_op::resolve_review, "id"},    {command_op::resolve_review, "keep"},
      {command_op::merge_branch, "branchId"}, {command_op::discard_branch, "branchId"},
      {command_op::expire, "limit"},         {command_op::expire, "ttlMs"},
      {command_op::reminder_sent, "id"},     {command_op::reminder_sent, "reminderId"},
      {command_op::reminder_sent, "partition"}, {command_op::reminder_sent, "offset"},
      {command_op::chunk_failed, "id"},      {command_op::chunk_failed, "chunk"},
      {command_op::chunk_failed, "chunks"},  {command_op::chunk_failed, "reason"},
      {command_op::forget, "id"},            {command_op::forget, "what"}};
                                                                                     // clang-format on
  for (auto [op, field] : required) {
    auto j = json::parse(encode(minimal_command(op)).value);
    ASSERT_TRUE(j.contains(field)) << to_string(op) << " " << field;
    j.erase(field);
    auto out = decode_record("knowledge-command", j.dump(), {});
    ASSERT_TRUE(std::holds_alternative<record_error>(out)) << to_string(op) << " without " << field;
    const auto& e = std::get<record_error>(out);
    EXPECT_NE(e.reason.find(std::string("/") + field + ":"), std::string::npos) << e.reason;
    EXPECT_EQ(e.label, "schema");
  }
}

TEST(LogRecord, BadRecordsSayWhyWithTheirDeadLetterLabel) {
  struct bad_case {
    const char* kind;
    std::string value;
    const char* label;
    const char* says;
  };
  const bad_case cases[] = {
      {"knowledge-thing", "{}", "unknown_kind", "unknown record kind 'knowledge-thing'"},
      {"inbound-message", "{", "invalid_json", ""},
      {"", R"({"eventId": "e"})", "schema", "organizationId"},
      {"knowledge-save", "[]", "schema", "knowledge-save not a JSON object"},
      {"knowledge-command", R"({"eventId":"c","organizationId":"a","issuedAt":"2026-03-05T10:00:00Z","op":"fly"})",
       "schema", "/op: unknown operation 'fly'"},
      {"knowledge-command",
       R"({"eventId":"c","organizationId":"a","issuedAt":"2026-03-05T10:00:00Z","op":"expire","limit":-1,"ttlMs":5})",
       "schema", "/limit: must be a non-negative integer"},
  };
  for (const auto& c : cases) {
    auto out = decode_record(c.kind, c.value, {});
    ASSERT_TRUE(std::holds_alternative<record_error>(out)) << c.kind << " " << c.value;
    const auto& e = std::get<record_error>(out);
    EXPECT_EQ(e.label, c.label) << e.reason;
    EXPECT_NE(e.reason.find(c.says), std::string::npos) << e.reason;
  }
}

constexpr entity_op all_entity_ops[] = {entity_op::add_entities,        entity_op::relate,
                                        entity_op::add_observations,    entity_op::delete_entities,
                                        entity_op::delete_observations, entity_op::delete_relations,
                                        entity_op::merge_entities};

/// An entity command with every field its op carries set away from its default.
entity_command full_entity_command(entity_op op) {
  entity_command c;
  c.event_id = "ent-1";
  c.organization_id = "acme";
  c.issued_at = "2026-03-05T10:00:00.000Z";
  c.issued_at_ms = *parse_rfc3339(c.issued_at);
  c.issued_by = "agent-1";
  c.op = op;
  switch (op) {
    case entity_op::add_entities:
      c.merge_existing = true;
      c.entities = {{"Stripe", "company", {{"founded", "2010"}, {"industry", "payments"}}, {"Uses Rust", "Öffnet"}},
                    {"Rust", "technology", {}, {}}};
      break;
    case entity_op::relate:
      c.relations = {{"Stripe", "Rust", "uses", 2.5, {{"since", "2019"}}}, {"Tokio", "Rust", "part of", 1.0, {}}};
      break;
    case entity_op::delete_relations: c.relations = {{"Stripe", "Rust", "uses", 1.0, {}}}; break;
    case entity_op::add_observations:
    case entity_op::delete_observations:
      c.observations = {{"Stripe", {"Founded in 2010", "HQ in SF"}}, {"Rust", {"Memory safe"}}};
      break;
    case entity_op::delete_entities: c.names = {"Stripe", "Stripe, Inc."}; break;
    case entity_op::merge_entities:
      c.name_a = "Stripe";
      c.name_b = "Stripe, Inc.";
      break;
  }
  return c;
}

TEST(LogRecord, EveryEntityOpKeepsEveryFieldSet) {
  for (auto op : all_entity_ops) {
    SCOPED_TRACE(std::string(to_string(op)));
    const auto full = full_entity_command(op);
    EXPECT_EQ(std::get<entity_command>(round_trip(full)), full);
    EXPECT_EQ(parse_entity_op(to_string(op)), op);
  }
  auto skip = full_entity_command(entity_op::add_entities);
  skip.merge_existing = false;
  EXPECT_EQ(std::get<entity_command>(round_trip(skip)), skip);
}

TEST(LogRecord, EntityCommandsSayWhatIsWrongAndWhere) {
  auto error_of = [](const json& j) {
    auto out = decode_record("entity-command", j.dump(), {});
    return std::holds_alternative<record_error>(out) ? std::get<record_error>(out).reason : std::string();
  };
  const auto relate = json::parse(encode(full_entity_command(entity_op::relate)).value);
  auto with = [](json j, const json::json_pointer& at, json v) {
    j[at] = std::move(v);
    return j;
  };
  EXPECT_EQ(error_of(with(relate, "/relations/1/to"_json_pointer, "  ")),
            "entity-command /relations/1/to: must not be empty");
  EXPECT_EQ(error_of(with(relate, "/relations/0/relationType"_json_pointer, "--")),
            "entity-command /relations/0/relationType: has no letters or digits");
  EXPECT_EQ(error_of(with(relate, "/relations/0/weight"_json_pointer, 0)),
            "entity-command /relations/0/weight: must be a positive number");
  EXPECT_EQ(error_of(with(relate, "/relations/0/from"_json_pointer, std::string(300, 'x'))),
            "entity-command /relations/0/from: at most 256 bytes");
  EXPECT_EQ(error_of(with(relate, "/op"_json_pointer, "fly")), "entity-command /op: unknown operation 'fly'");
  const auto add = json::parse(encode(full_entity_command(entity_op::add_entities)).value);
  EXPECT_EQ(error_of(with(add, "/entities/0/attributes/founded"_json_pointer, 2010)),
            "entity-command /entities/0/attributes/founded: must be a string");
  EXPECT_EQ(error_of(with(add, "/onExisting"_json_pointer, "replace")),
            "entity-command /onExisting: must be merge or skip");
  // Another type is refused, not thrown (it once ended the log consumer's thread, and the
  // record, never passed, ended every restart).
  EXPECT_EQ(error_of(with(add, "/onExisting"_json_pointer, 1)), "entity-command /onExisting: must be a string");
  EXPECT_EQ(error_of(with(add, "/onExisting"_json_pointer, nullptr)), "entity-command /onExisting: must be a string");
  auto no_type = add;
  no_type["entities"][1].erase("entityType");
  EXPECT_EQ(error_of(no_type), "entity-command /entities/1/entityType: required");
  const auto merge = json::parse(encode(full_entity_command(entity_op::merge_entities)).value);
  auto no_b = merge;
  no_b.erase("nameB");
  EXPECT_EQ(error_of(no_b), "entity-command /nameB: required");
}

TEST(EntityLabels, AreTrimmedLowerSnakeCase) {
  EXPECT_EQ(relation_label("uses"), "uses");
  EXPECT_EQ(relation_label("  Works At "), "works_at");
  EXPECT_EQ(relation_label("worksAt"), "works_at");
  EXPECT_EQ(relation_label("competes-with"), "competes_with");
  EXPECT_EQ(relation_label("founded_by"), "founded_by");
  EXPECT_EQ(relation_label("--"), "");
  EXPECT_EQ(type_key("SaaS Company"), "saas_company");
  EXPECT_EQ(type_key("saas_company"), "saas_company");
}

}  // namespace

namespace {

static_assert(sizeof(kg_command) == 328, "kg_command changed: set the new field in full_kg_command()");
static_assert(sizeof(kg_type_spec) == 224, "kg_type_spec changed: set the new field in full_kg_command()");
static_assert(sizeof(kg_item) == 96, "kg_item changed: set the new field in full_kg_command()");

/// A bundle record with every field its op and chunk carry set away from its default.
kg_command full_kg_command(kg_op op, std::uint32_t chunk) {
  kg_command c;
  c.event_id = "kg-a1-" + std::to_string(chunk);
  c.organization_id = "acme";
  c.issued_at = "2026-03-05T10:00:00.000Z";
  c.issued_at_ms = *parse_rfc3339(c.issued_at);
  c.issued_by = "engramctl";
  c.op = op;
  c.bundle = "legal-kb";
  if (op == kg_op::remove)
    return c;
  c.apply_id = "a1";
  c.chunk = chunk;
  c.chunks = 3;
  if (chunk == 0) {
    c.version = "1.2.0";
    c.description = "Statutes by jurisdiction.";
    c.types = {{"statute",
                "code",
                "Statutes.",
                {"list", "get", "list_ids"},
                {"topic", "year"},
                {{"topic", "topic"}},
                R"({"properties":{"code":{"type":"string"}},"type":"object","x-id-field":"code"})"},
               {"topic", "code", "", {"get"}, {}, {}, R"({"type":"object"})"}};
  }
  c.items = {{"statute", "s-1", R"({"code":"s-1","title":"Ünïcode Act","topic":"privacy","year":2018})"},
             {"topic", "privacy", R"({"code":"privacy"})"}};
  return c;
}

TEST(LogRecord, KgBundleRecordsKeepEveryFieldSet) {
  for (auto [op, chunk] : {std::pair{kg_op::apply, 0u}, {kg_op::apply, 2u}, {kg_op::remove, 0u}}) {
    SCOPED_TRACE(std::string(to_string(op)) + " chunk " + std::to_string(chunk));
    const auto full = full_kg_command(op, chunk);
    EXPECT_EQ(std::get<kg_command>(round_trip(full)), full);
  }
}

TEST(LogRecord, KgBundleRecordsSayWhatIsWrongAndWhere) {
  const auto good = json::parse(encode(full_kg_command(kg_op::apply, 0)).value);
  struct bad_case {
    std::function<void(json&)> change;
    std::string says;
  };
  // clang-format off
  const bad_case cases[] = {
      {[](json& j) { j["bundle"] = "Legal KB"; }, "/bundle: 'Legal KB' must be lowercase letters, digits and '-'"},
      {[](json& j) { j["chunk"] = 3; }, "/chunk: must be below chunks"},
      {[](json& j) { j["types"][0]["name"] = "Statute"; }, "/types/0/name: 'Statute' must be lowercase"},
      {[](json& j) { j["types"][0]["expose"] = {"list", "delete"}; }, "/types/0/expose: 'delete' is not list, get or list_ids"},
      {[](json& j) { j["entities"][1].erase("data"); }, "/entities/1/data: must be an object"},
      {[](json& j) { j["op"] = "merge"; }, "/op: unknown operation 'merge'"},
      {[](json& j) { j.erase("types"); }, "/types: must hold 1..100 types"},
  };
  // clang-format on
  for (const auto& c : cases) {
    auto j = good;
    c.change(j);
    auto out = decode_record(kind_kg_bundle, j.dump(), {});
    ASSERT_TRUE(std::holds_alternative<record_error>(out)) << j.dump();
    const auto& e = std::get<record_error>(out);
    EXPECT_EQ(e.label, "schema");
    EXPECT_NE(e.reason.find(c.says), std::string::npos) << e.reason;
  }
}

}  // namespace

// The three commands begin with one envelope, read by one decoder: the same record problem
// gets the same words whichever command carries it.
TEST(LogRecord, EveryCommandReadsItsEnvelopeTheSameWay) {
  const std::pair<std::string, json> commands[] = {
      {"knowledge-command", json::parse(encode(full_command(command_op::validate)).value)},
      {"entity-command", json::parse(encode(full_entity_command(entity_op::relate)).value)},
      {"kg-bundle", json::parse(encode(full_kg_command(kg_op::apply, 0)).value)},
  };
  for (const auto& [kind, good] : commands) {
    SCOPED_TRACE(kind);
    auto error_of = [&kind = kind](const json& j) {
      auto out = decode_record(kind, j.dump(), {});
      return std::holds_alternative<record_error>(out) ? std::get<record_error>(out).reason : std::string();
    };
    EXPECT_EQ(error_of(good), "");
    auto no_event = good;
    no_event.erase("eventId");
    EXPECT_EQ(error_of(no_event), kind + " /eventId: required");
    auto empty_org = good;
    empty_org["organizationId"] = "";
    EXPECT_EQ(error_of(empty_org), kind + " /organizationId: must not be empty");
    auto long_org = good;
    long_org["organizationId"] = std::string(257, 'o');
    EXPECT_EQ(error_of(long_org), kind + " /organizationId: at most 256 bytes");
    auto bad_time = good;
    bad_time["issuedAt"] = "yesterday";
    EXPECT_EQ(error_of(bad_time), kind + " /issuedAt: not an RFC 3339 time");
    auto by_number = good;
    by_number["issuedBy"] = 7;
    EXPECT_EQ(error_of(by_number), kind + " /issuedBy: must be a string");
    auto no_by = good;
    no_by.erase("issuedBy");
    EXPECT_EQ(error_of(no_by), "");  // optional
  }
}
