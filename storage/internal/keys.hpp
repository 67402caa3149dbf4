#pragma once
// The graph store's key layout and key codec (internal to storage/): every file of the RocksDB
// store reads and writes keys through this header, and tests/unit/storage/keys_test.cpp
// round-trips them.
//
// Key layout (parts joined by '\0'; ids never contain '\0': the decoder refuses control
// characters). Every key starts with the organizationId, so a tenant is one contiguous range.
//
//   messages      org \0 eventId                               -> canonical event JSON
//   entities      org \0 entityId                              -> entity JSON
//   entity_names  org \0 normalisedName \0 entityId            -> ""   (names and addresses)
//   links         org \0 entityId \0 kind \0 targetId          -> role (kind: message | thread)
//   by_thread     org \0 threadId \0 "message" \0 eventId      -> sentAt
//   by_contact    org \0 contactId \0 "message" \0 eventId     -> ""
//                 org \0 contactId \0 "entry" \0 entryId       -> ""
//   entries       org \0 entryId                               -> entry record (knowledge/entry.hpp)
//   by_type       org \0 type \0 createdAt \0 entryId           -> ""
//   by_thread     org \0 threadId \0 "entry" \0 entryId         -> ""   under each thread the entry's
//                 messages came from (merges add theirs); retention drops a thread's once it empties it
//   links         org \0 entityId \0 "entry" \0 entryId          -> "mention"
//   titles        org \0 type \0 titleKey \0 valuesKey \0 time \0 entryId -> ""   exact-match dedup: the
//                 signature key, then knowledge::values_key as 16 hex digits; time is time_key(createdAt)
//   by_slot       org \0 normalisedSubject \0 slot \0 time \0 entryId -> ""   contradiction candidates
//   relations     org \0 fromId \0 relationType \0 toId            -> reason
//   relations_in  org \0 toId \0 relationType \0 fromId            -> reason
//   text          org \0 term \0 entryId          -> tf(u32 BE) + document length(u32 BE)   BM25
//   vectors       org \0 "q" \0 seq(u64 BE) -> entryId \0 schemas::to_bytes(vector8): scale + int8[dim]
//                 org \0 "e" \0 entryId     -> seq(u64 BE)
//                 (the per-organisation HNSW index is derived from these, in seq order)
//   branches      org \0 branchId \0 seq(u64 BE)   -> u32 BE length + knowledge-save JSON + to_bytes(vector8)
//   expiry        org \0 expiresAtMs(u64 BE) \0 entryId       -> ""   what an expire command removes
//   due           org \0 dueMs(u64 BE) \0 entryId              -> ""   action items awaiting their reminder
//   review        org \0 flaggedEntryId                         -> the contradicting entry's id
//   entity_edges     org \0 fromEntityId \0 label \0 toEntityId  -> edge JSON {weight, attributes,
//                    createdAt, eventId}   the entity graph (label: schemas::relation_label)
//   entity_edges_in  org \0 toEntityId \0 label \0 fromEntityId  -> ""   the same edge, seen from its end
//   kg            org \0 "h" \0 bundle                          -> the visible version: a kg-bundle chunk-0
//                                                                 record without entities, plus counts
//                 org \0 "s" \0 bundle                          -> the last apply's status (kg_result::json)
//                 org \0 "e" \0 bundle \0 type \0 id              -> entity JSON (derived values included)
//                 org \0 "p" \0 bundle \0 applyId \0 chunk(u32 BE) -> a staged chunk's record, until the last
//   kg_index      org \0 bundle \0 type \0 field \0 value \0 id     -> ""   list_<type> filters
//   passages      org \0 "p" \0 passageId                     -> passage JSON (graph_store::get_passage)
//                 org \0 "v" \0 seq(u64 BE)                   -> passageId \0 to_bytes(vector8)
//                 (the per-organisation HNSW index of passages is derived from these, in seq order)
//                 org \0 "t" \0 threadId                     -> the thread's last passage: sender address \0
//                                                                 eventId \0 words \0 the words before them \0
//                                                                 to_bytes(vector8) (a reply's context)
//   passage_text  org \0 term \0 passageId   -> tf(u32 BE) + passage length(u32 BE)   BM25 of passages
//   entry_sources org \0 entryId \0 n(u64 BE)  -> knowledge::encode(source_ref): the n-th source moved
//                 out of the entry's record (n from 0: its 2nd source said), see stored_entry::sources
//   meta          "s" \0 org \0 eventId                        -> ""   seen eventIds (logical)
//                 "S" \0 org \0 eventId                        -> ""   seen branch saves
//                 "b" \0 org \0 branchId                       -> last seq (u64 BE) + last save ms (u64 BE)
//                 "m" \0 partition(u32 BE)                      -> next engram-reminders offset recorded
//                 "n" \0 org \0 counter                        -> u64 BE (events, contacts, ...,
//                                                                 vectors = the last vector seq)
//                 "o" \0 topic \0 partition(u32 BE)            -> next offset (u64 BE) + clusterId
//                 "d" \0 topic \0 partition(u32 BE)            -> u64 BE duplicates delivered there
//                 "r" \0 topic \0 partition(u32 BE)            -> u64 BE records skipped there (undecodable)
//                                                                 (stores written before these were kept per
//                                                                 partition also hold "d" \0 topic and "r" \0 topic,
//                                                                 one row a topic: every row is summed)
//                 "g" \0 topic \0 partition(u32 BE) from(u64 BE) -> to (u64 BE): an accepted gap, offsets
//                                                                 [from, to) deleted before they were read
//                 "c" \0 org \0 documentId \0 chunk(u64 BE)     -> JSON status of a document's
//                                                                 chunk (ingest-docs; kag status)
//                 "f" \0 org \0 issuedAt \0 eventId            -> a forget's audit row (JSON: who, when, what, id)
//                 "x" \0 org \0 eventId                        -> the forget that forgot this message
//                 "X" \0 org \0 kind \0 personKey              -> the forget that forgot this person (kind: address,
//                                                                 contact, name; storage::person_key, a SHA-256)
//                 "R" \0 org                                   -> a forget of messages whose rebuild is under way
//                                                                 (JSON: its eventId, the counts before)
//                 "v"                                          -> layout version
//                 "i"                                          -> the snapshot of the in-memory indexes is
//                                                                 current: indexes.bin's size, FNV-1a (u64s)
//                 "j" \0 org \0 n(u64 BE)                      -> what a batch written after that snapshot
//                                                                 did to them (index_journal.cpp)
//
// "o", "d", "r" and "g" are physical (they depend on how the log was delivered), and so are "v"
// (how the bytes are laid out), "i" and "j" (derived indexes): they stay out of the digest;
// everything else is logical.

#include "base/text.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/time.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace engram::storage::detail {

enum cf : std::size_t {
  cf_default,
  cf_messages,
  cf_entities,
  cf_entity_names,
  cf_links,
  cf_by_thread,
  cf_by_contact,
  cf_meta,
  cf_entries,
  cf_by_type,
  cf_titles,
  cf_by_slot,
  cf_relations,
  cf_relations_in,
  cf_vectors,
  cf_text,
  cf_branches,
  cf_expiry,
  cf_due,
  cf_review,
  cf_entity_edges,
  cf_entity_edges_in,
  cf_kg,
  cf_kg_index,
  cf_passages,
  cf_passage_text,
  cf_entry_sources,
  cf_count
};

constexpr std::array<const char*, cf_count> cf_names{"default",      "messages",        "entities",     "entity_names",
                                                     "links",        "by_thread",       "by_contact",   "meta",
                                                     "entries",      "by_type",         "titles",       "by_slot",
                                                     "relations",    "relations_in",    "vectors",      "text",
                                                     "branches",     "expiry",          "due",          "review",
                                                     "entity_edges", "entity_edges_in", "kg",           "kg_index",
                                                     "passages",     "passage_text",    "entry_sources"};

/// 5: vectors are int8 with a scale (schemas/vector.hpp), no longer float32.
/// 6: entries are typed binary records (knowledge/entry.hpp), no longer JSON.
/// 7: passages (the passages and passage_text column families).
/// 8: by_slot and titles keys end with the entry's creation time (time_key), so the newest
///    are read first; titles keys hold the entry's dedup values key before it. A change to
///    knowledge::values_key or knowledge::markers_of changes what those keys mean: it needs a new
///    layout version.
/// 9: an entry's titles and by_slot rows exist only while it is not superseded (dedup and
///    contradiction read those lists only to find entries that are not). A store of layout 8
///    is upgraded at open (kv_graph_store::upgrade_from_8).
/// 10: an entry's record keeps its first source and its latest (knowledge::kept_sources); the
///    ones between are entry_sources rows, and a record that moved some is entry format 3. A
///    store of layout 9 is upgraded at open (kv_graph_store::upgrade_from_9).
/// A store of an older layout is refused at open: rebuild it from engram-log (engramctl replay).
constexpr const char* layout_version = "10";

/// A creation time as keys sort it: the instant in UTC at a fixed width, so that
/// "2026-03-05T10:00:00+09:00" sorts before "2026-03-05T05:00:00Z" (the text as given when it
/// is not an RFC 3339 time).
inline std::string time_key(std::string_view at) {
  if (auto ms = schemas::parse_rfc3339(at))
    return schemas::format_rfc3339(*ms);
  return std::string(at);
}

/// The rows of a family read newest first by group (graph_store::entries_with_title and
/// entries_with_slot): how many leading parts name the group, each ended by its '\0'; 0 for
/// the other families. RocksDB keeps a bloom filter of these groups in each table (rocks_kv.cpp),
/// so reading a group skips the tables that hold none of its rows; a new value needs a new name
/// of the filter's prefix (tables with another name are read without their filter).
inline constexpr std::size_t group_parts(std::size_t family) {
  return family == cf_titles ? 4 : family == cf_by_slot ? 3 : 0;
}

/// The length of a key's first `parts` parts, each with the '\0' that ends it; 0 when it has
/// fewer (or `parts` is 0).
inline std::size_t parts_length(std::string_view key, std::size_t parts) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < key.size() && parts != 0; ++i)
    if (key[i] == '\0' && ++seen == parts)
      return i + 1;
  return 0;
}

/// Joins key parts with '\0'.
template <class... Parts>
inline std::string key(const Parts&... parts) {
  std::string out;
  for (std::string_view part : {std::string_view(parts)...}) {
    out.push_back('\0');
    out.append(part);
  }
  out.erase(0, 1);  // no separator before the first part
  return out;
}

/// The meta rows' first part (the layout above), each named once: every read, write, drop,
/// compaction and the digest go through these.
namespace meta_tag {
inline constexpr const char* seen = "s";               // logical
inline constexpr const char* seen_save = "S";          // logical
inline constexpr const char* branch = "b";             // logical
inline constexpr const char* reminder_offset = "m";    // logical
inline constexpr const char* counter = "n";            // logical
inline constexpr const char* offset = "o";             // physical
inline constexpr const char* duplicates = "d";         // physical
inline constexpr const char* skipped = "r";            // physical
inline constexpr const char* gap = "g";                // physical
inline constexpr const char* chunk = "c";              // logical
inline constexpr const char* forget_audit = "f";       // logical
inline constexpr const char* forgotten_message = "x";  // logical
inline constexpr const char* forgotten_person = "X";   // logical
inline constexpr const char* rebuild = "R";            // logical
inline constexpr const char* layout_version = "v";     // physical
inline constexpr const char* indexes = "i";            // physical: the snapshot of the in-memory indexes
inline constexpr const char* index_journal = "j";      // physical: what batches did to them since

/// What an organisation's records leave in meta: its state, which a compaction of the
/// organisation rewrites and a forget of everything it holds removes with its data.
inline constexpr std::array<const char*, 6> organisation_state = {seen,  seen_save, branch,
                                                                  chunk, counter,   index_journal};
/// Every tag whose rows begin with an organisation but a rebuild's mark: its state and what
/// its forgets recorded (a drop of all it holds removes these too).
inline constexpr std::array<const char*, 9> organisation_held = {
    seen, seen_save, branch, chunk, counter, index_journal, forget_audit, forgotten_message, forgotten_person};
/// Every tag whose rows begin with an organisation (an organisation's digest visits these).
inline constexpr std::array<const char*, 9> organisation_rows = {
    rebuild, seen_save, forgotten_person, branch, chunk, forget_audit, counter, seen, forgotten_message};
/// Physical tags: rows of how the log was delivered and how bytes are laid out, left out of
/// the digest.
[[nodiscard]] inline bool physical(std::string_view tag) {
  return tag == offset || tag == duplicates || tag == skipped || tag == gap || tag == layout_version ||
         tag == indexes || tag == index_journal;
}
}  // namespace meta_tag

/// Calls `range(cf, begin, end)` for every key range of the organisations `first`..`last`
/// (sorted; one organisation when equal): its span in each organisation-first column family,
/// and in meta under each of `meta_tags` (rows "tag\0org\0...").
template <class Tags, class F>
void organization_ranges(const std::string& first, const std::string& last, const Tags& meta_tags, F&& range) {
  const auto end = last + '\1';  // past "last\0..." and before any later organisation
  for (std::size_t f = cf_messages; f < cf_count; ++f)
    if (f != cf_meta)
      range(f, key(first, ""), end);
  for (const char* tag : meta_tags)
    range(cf_meta, key(tag, first, ""), key(tag, end));
}

inline std::string encode_u64(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8)
    out[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

inline std::uint64_t decode_u64(std::string_view s) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && i < s.size(); ++i)
    v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}

/// Reads a big-endian u32 (the first 4 bytes of `s`).
inline std::uint32_t decode_u32(std::string_view s) { return static_cast<std::uint32_t>(decode_u64(s.substr(0, 4))); }

inline std::string encode_u32(std::uint32_t v) {
  std::string out(4, '\0');
  for (int i = 3; i >= 0; --i, v >>= 8)
    out[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

}  // namespace engram::storage::detail
