// RocksDB-backed graph store.
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
//   entries       org \0 entryId                               -> entry JSON (DESIGN.md §3)
//   by_type       org \0 type \0 createdAt \0 entryId           -> ""
//   by_thread     org \0 threadId \0 "entry" \0 entryId         -> ""
//   links         org \0 entityId \0 "entry" \0 entryId          -> "mention"
//   titles        org \0 type \0 titleKey \0 entryId              -> ""   exact-match dedup (signature key)
//   by_slot       org \0 normalisedSubject \0 slot \0 entryId     -> ""   contradiction candidates
//   relations     org \0 fromId \0 relationType \0 toId            -> reason
//   relations_in  org \0 toId \0 relationType \0 fromId            -> reason
//   text          org \0 term \0 entryId          -> tf(u32 BE) + document length(u32 BE)   BM25
//   vectors       org \0 "q" \0 seq(u64 BE) -> entryId \0 float32[dim] (little endian)
//                 org \0 "e" \0 entryId     -> seq(u64 BE)
//                 (the per-organisation HNSW index is derived from these, in seq order)
//   branches      org \0 branchId \0 seq(u64 BE)   -> u32 BE length + knowledge-save JSON + float32[dim]
//   expiry        org \0 expiresAtMs(u64 BE) \0 entryId       -> ""   what an expire command removes
//   due           org \0 dueMs(u64 BE) \0 entryId              -> ""   action items awaiting their reminder
//   review        org \0 flaggedEntryId                         -> the contradicting entry's id
//   meta          "s" \0 org \0 eventId                        -> ""   seen eventIds (logical)
//                 "S" \0 org \0 eventId                        -> ""   seen branch saves
//                 "b" \0 org \0 branchId                       -> last seq (u64 BE) + last save ms (u64 BE)
//                 "t" \0 org \0 term                           -> u64 BE document frequency (BM25)
//                 "m" \0 partition(u32 BE)                      -> next engram-reminders offset recorded
//                 "n" \0 org \0 counter                        -> u64 BE (events, contacts, ...,
//                                                                 vectors = the last vector seq)
//                 "o" \0 topic \0 partition(u32 BE)            -> next offset (u64 BE) + clusterId
//                 "d" \0 topic / "r" \0 topic                  -> u64 BE duplicates / skipped
//                 "v"                                          -> layout version
//
// "o", "d" and "r" are physical (they depend on how the log was delivered) and stay out of
// the digest; everything else is logical.

#include "storage/graph_store.hpp"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <unordered_map>

namespace engram::storage {
namespace {

using json = nlohmann::json;

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
  cf_count
};

constexpr std::array<const char*, cf_count> cf_names{
    "default", "messages",  "entities", "entity_names", "links",        "by_thread", "by_contact", "meta",
    "entries", "by_type",   "titles",   "by_slot",      "relations",    "relations_in", "vectors", "text",
    "branches", "expiry",   "due",      "review"};

constexpr const char* layout_version = "4";

/// validate_knowledge: approved moves confidence half way to 1 (c + (1 - c) * 0.5) and
/// resets lastValidatedAt; rejected halves it.
constexpr double validation_boost = 0.5, validation_penalty = 0.5;

errc to_errc(const rocksdb::Status& s) {
  if (s.ok())
    return errc::ok;
  if (s.IsNotFound())
    return errc::not_found;
  if (s.IsCorruption())
    return errc::corruption;
  if (s.IsInvalidArgument() || s.IsNotSupported())
    return errc::invalid_argument;
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut())
    return errc::busy;
  return errc::io_error;
}

/// Joins key parts with '\0'.
template <class... Parts>
std::string key(const Parts&... parts) {
  std::string out;
  for (std::string_view part : {std::string_view(parts)...}) {
    out.push_back('\0');
    out.append(part);
  }
  out.erase(0, 1);  // no separator before the first part
  return out;
}

std::string encode_u64(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8)
    out[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

std::uint64_t decode_u64(std::string_view s) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && i < s.size(); ++i)
    v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}

/// Reads a big-endian u32 (the first 4 bytes of `s`).
std::uint32_t decode_u32(std::string_view s) {
  return static_cast<std::uint32_t>(decode_u64(s.substr(0, 4)));
}

std::string encode_u32(std::uint32_t v) {
  std::string out(4, '\0');
  for (int i = 3; i >= 0; --i, v >>= 8)
    out[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

std::string lower_ascii(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// Lower-cased, whitespace collapsed and trimmed: the exact-lookup form of a name.
std::string normalise_name(std::string_view s) {
  std::string out;
  bool space = false;
  for (unsigned char c : s) {
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

/// A person or organisation seen for the first time.
json new_entity(const std::string& id, const char* kind, const std::string& name, const std::string& first_seen) {
  return {{"id", id},           {"kind", kind},         {"name", name}, {"aliases", json::array()},
          {"firstSeenAt", first_seen}, {"messages", 0}};
}

std::string person_id(const std::string& address) {
  return "person:" + lower_ascii(address);
}

class rocks_graph_store final : public graph_store {
public:
  rocks_graph_store(std::unique_ptr<rocksdb::DB> db, std::vector<rocksdb::ColumnFamilyHandle*> cfs,
                    bool sync)
    : db_(std::move(db)), cfs_(std::move(cfs)) {
    write_opts_.sync = sync;
  }

  ~rocks_graph_store() override {
    for (auto* h : cfs_)
      db_->DestroyColumnFamilyHandle(h);
    db_->Close();
  }

  errc apply(const log_position& pos, const schemas::inbound_message* m, const schemas::extraction* knowledge,
             const std::vector<schemas::resolution>* resolutions, apply_outcome* outcome) override {
    rocksdb::WriteBatch batch;
    pending_.clear();
    batch_entities_.clear();
    batch_names_.clear();
    batch_entries_.clear();
    apply_outcome result;
    if (!m) {
      result = apply_outcome::skipped;
      if (auto e = bump(batch, key("r", pos.topic), 1); e != errc::ok)
        return e;
    } else {
      std::string ignored;
      auto seen = key("s", m->organization_id, m->event_id);
      auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], seen, &ignored);
      if (st.ok()) {
        result = apply_outcome::duplicate;
        if (auto e = bump(batch, key("d", pos.topic), 1); e != errc::ok)
          return e;
      } else if (!st.IsNotFound()) {
        return to_errc(st);
      } else {
        result = apply_outcome::applied;
        batch.Put(cfs_[cf_meta], seen, "");
        if (auto e = put_message(batch, *m); e != errc::ok)
          return e;
        if (knowledge)
          if (auto e = put_knowledge(batch, *m, *knowledge, resolutions); e != errc::ok)
            return e;
      }
    }
    put_offset(batch, pos);
    if (auto e = commit(batch); e != errc::ok)
      return e;
    if (outcome)
      *outcome = result;
    return errc::ok;
  }

  std::map<std::int32_t, stored_offset> offsets(const std::string& topic) const override {
    std::map<std::int32_t, stored_offset> out;
    auto prefix = key("o", topic, "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      auto k = it->key().ToStringView().substr(prefix.size());
      if (k.size() != 4)
        continue;
      auto partition = static_cast<std::int32_t>(decode_u64(std::string(4, '\0').append(k)));
      auto v = it->value().ToStringView();
      out[partition] = stored_offset{static_cast<std::int64_t>(decode_u64(v)),
                                     std::string(v.size() > 8 ? v.substr(8) : std::string_view{})};
    }
    return out;
  }

  std::vector<organization_stats> stats() const override {
    std::map<std::string, organization_stats> by_org;
    std::string prefix("n\0", 2);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      auto k = it->key().ToStringView().substr(prefix.size());
      auto sep = k.find('\0');
      if (sep == std::string_view::npos)
        continue;
      std::string org(k.substr(0, sep));
      auto counter = k.substr(sep + 1);
      auto& s = by_org[org];
      s.organization_id = org;
      auto v = decode_u64(it->value().ToStringView());
      if (counter == "events")
        s.events = v;
      else if (counter == "contacts")
        s.contacts = v;
      else if (counter == "entries")
        s.entries = v;
      else if (counter == "entities")
        s.entities = v;
      else if (counter == "relations")
        s.relations = v;
    }
    std::vector<organization_stats> out;
    for (auto& [_, s] : by_org)
      out.push_back(std::move(s));
    return out;
  }

  std::pair<std::uint64_t, std::uint64_t> redelivery_counts() const override {
    return {sum_prefix(std::string("d\0", 2)), sum_prefix(std::string("r\0", 2))};
  }

  errc get_message(const std::string& org, const std::string& event_id, std::string* out) const override {
    return to_errc(db_->Get(rocksdb::ReadOptions(), cfs_[cf_messages], key(org, event_id), out));
  }

  errc get_contact(const std::string& org, const std::string& address, std::string* out) const override {
    return to_errc(db_->Get(rocksdb::ReadOptions(), cfs_[cf_entities], key(org, person_id(address)), out));
  }

  std::vector<std::string> thread_messages(const std::string& org, const std::string& thread) const override {
    std::vector<std::string> out;
    auto prefix = key(org, thread, "message", "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_by_thread]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
      out.emplace_back(it->key().ToStringView().substr(prefix.size()));
    return out;
  }

  errc get_entry(const std::string& org, const std::string& id, std::string* out) const override {
    return to_errc(db_->Get(rocksdb::ReadOptions(), cfs_[cf_entries], key(org, id), out));
  }

  std::vector<std::string> entries_of_type(const std::string& org, schemas::entry_type type) const override {
    std::vector<std::string> out;
    auto prefix = key(org, std::string(schemas::to_string(type)), "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_by_type]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      auto rest = it->key().ToStringView().substr(prefix.size());
      out.emplace_back(rest.substr(rest.find('\0') + 1));
    }
    return out;
  }

  std::vector<std::string> entries_with_title(const std::string& org, schemas::entry_type type,
                                              const std::string& title) const override {
    return ids_under(cf_titles, key(org, std::string(schemas::to_string(type)), title, ""));
  }

  std::vector<std::string> entries_with_slot(const std::string& org, const std::string& subject,
                                             const std::string& slot) const override {
    return ids_under(cf_by_slot, key(org, subject, slot, ""));
  }

  std::vector<std::pair<std::string, double>> search_text(const std::string& org,
                                                          const std::vector<std::string>& terms,
                                                          std::size_t limit) const override {
    std::string v;
    double docs = 0, total = 0;
    if (db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], key("n", org, "text_docs"), &v).ok())
      docs = static_cast<double>(decode_u64(v));
    if (db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], key("n", org, "text_length"), &v).ok())
      total = static_cast<double>(decode_u64(v));
    if (docs == 0 || limit == 0)
      return {};
    const double avgdl = total / docs, k1 = 1.2, b = 0.75;
    struct term_df {
      std::string term;
      double df, idf;
    };
    std::vector<term_df> query;
    std::set<std::string> seen;
    for (const auto& term : terms) {
      if (term.empty() || !seen.insert(term).second)
        continue;
      if (!db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], key("t", org, term), &v).ok())
        continue;  // no entry has the term
      const double df = static_cast<double>(decode_u64(v));
      query.push_back({term, df, std::log(1.0 + (docs - df + 0.5) / (df + 0.5))});
    }
    std::sort(query.begin(), query.end(),
              [](const auto& x, const auto& y) { return x.df != y.df ? x.df < y.df : x.term < y.term; });
    auto term_score = [&](const term_df& t, std::string_view posting) {
      const double f = decode_u32(posting.substr(0, 4)), dl = decode_u32(posting.substr(4, 4));
      return t.idf * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl));
    };
    // Terms with short posting lists are read whole; the common ones (in more than
    // `full_scan_df` entries, so of low idf) only score the best candidates found by the
    // rarer terms, by point lookups (the MaxScore idea). An entry that matches the query
    // only by common terms is then not found, unless every term of the query is common:
    // the rarest is read whole then.
    constexpr double full_scan_df = 2000;
    std::unordered_map<std::string, double> scores;
    std::size_t scanned = 0;
    for (const auto& t : query) {
      if (t.df > full_scan_df && scanned > 0)
        break;
      ++scanned;
      const auto prefix = key(org, t.term, "");
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_text]));
      for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
        scores[std::string(it->key().ToStringView().substr(prefix.size()))] += term_score(t, it->value().ToStringView());
    }
    std::vector<std::pair<std::string, double>> out(scores.begin(), scores.end());
    auto best_first = [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    };
    const std::size_t pool = std::max<std::size_t>(limit, 200);
    if (scanned < query.size()) {
      if (out.size() > pool) {
        std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(pool), out.end(), best_first);
        out.resize(pool);
      }
      std::sort(out.begin(), out.end());  // key order: MultiGet reads sorted keys fastest
      for (std::size_t i = scanned; i < query.size(); ++i) {
        std::vector<std::string> keys;
        keys.reserve(out.size());
        for (const auto& [id, score] : out)
          keys.push_back(key(org, query[i].term, id));
        std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
        std::vector<rocksdb::PinnableSlice> values(keys.size());
        std::vector<rocksdb::Status> statuses(keys.size());
        db_->MultiGet(rocksdb::ReadOptions(), cfs_[cf_text], slices.size(), slices.data(), values.data(),
                      statuses.data(), true);
        for (std::size_t j = 0; j < out.size(); ++j)
          if (statuses[j].ok())
            out[j].second += term_score(query[i], values[j].ToStringView());
      }
    }
    std::sort(out.begin(), out.end(), best_first);
    if (out.size() > limit)
      out.resize(limit);
    return out;
  }

  std::string identity() const override {
    std::string id;
    if (!db_->GetDbIdentity(id).ok())
      return "unknown";
    id.erase(std::remove_if(id.begin(), id.end(), [](unsigned char c) { return std::isspace(c); }), id.end());
    return id;
  }

  std::map<std::string, std::uint64_t> vector_sequences() const override {
    std::map<std::string, std::uint64_t> out;
    std::string prefix("n\0", 2);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      auto k = it->key().ToStringView().substr(prefix.size());
      auto sep = k.find('\0');
      if (sep != std::string_view::npos && k.substr(sep + 1) == "vectors")
        out[std::string(k.substr(0, sep))] = decode_u64(it->value().ToStringView());
    }
    return out;
  }

  errc scan_vectors(const std::string& org, std::uint64_t after,
                    const std::function<bool(std::uint64_t, std::string_view, std::span<const float>)>& fn)
      const override {
    auto prefix = key(org, "q", "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_vectors]));
    std::vector<float> v;
    for (it->Seek(prefix + encode_u64(after + 1)); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      auto seq = decode_u64(it->key().ToStringView().substr(prefix.size()));
      auto value = it->value().ToStringView();
      auto sep = value.find('\0');
      if (sep == std::string_view::npos || (value.size() - sep - 1) % sizeof(float) != 0)
        return errc::corruption;
      v.resize((value.size() - sep - 1) / sizeof(float));
      std::memcpy(v.data(), value.data() + sep + 1, v.size() * sizeof(float));
      if (!fn(seq, value.substr(0, sep), v))
        break;
    }
    return to_errc(it->status());
  }

  errc find_entity(const std::string& org, const std::string& name, std::string* out) const override {
    auto id = resolve_name(org, normalise_name(name), "");
    if (id.empty())
      return errc::not_found;
    return to_errc(db_->Get(rocksdb::ReadOptions(), cfs_[cf_entities], key(org, id), out));
  }

  std::map<std::string, std::uint64_t> engine_stats() const override {
    std::map<std::string, std::uint64_t> out;
    for (auto [name, property] : {std::pair{"memtable_bytes", "rocksdb.cur-size-all-mem-tables"},
                                  {"pending_compaction_bytes", "rocksdb.estimate-pending-compaction-bytes"},
                                  {"running_compactions", "rocksdb.num-running-compactions"},
                                  {"live_sst_bytes", "rocksdb.live-sst-files-size"}}) {
      std::uint64_t total = 0;
      if (std::string_view(name) == "running_compactions") {  // a DB-wide figure
        (void)db_->GetIntProperty(property, &total);
      } else {
        for (auto* h : cfs_) {
          std::uint64_t v = 0;
          if (db_->GetIntProperty(h, property, &v))
            total += v;
        }
      }
      out[name] = total;
    }
    return out;
  }

  std::string digest() const override {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
    auto feed = [&](std::string_view s) {
      auto len = encode_u64(s.size());
      EVP_DigestUpdate(ctx.get(), len.data(), len.size());
      EVP_DigestUpdate(ctx.get(), s.data(), s.size());
    };
    // A snapshot makes the digest consistent even while the writer keeps applying.
    const rocksdb::Snapshot* snap = db_->GetSnapshot();
    rocksdb::ReadOptions ro;
    ro.snapshot = snap;
    for (std::size_t c = cf_messages; c < cf_count; ++c) {
      feed(cf_names[c]);
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[c]));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        auto k = it->key().ToStringView();
        if (c == cf_meta && k.size() >= 2 && k[1] == '\0' && (k[0] == 'o' || k[0] == 'd' || k[0] == 'r'))
          continue;
        feed(k);
        feed(it->value().ToStringView());
      }
    }
    db_->ReleaseSnapshot(snap);
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), md.data(), &len);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += hex[md[i] >> 4];
      out += hex[md[i] & 15];
    }
    return out;
  }

  errc init_layout() {
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], "v", &v);
    if (st.IsNotFound())
      return to_errc(db_->Put(write_opts_, cfs_[cf_meta], "v", layout_version));
    if (!st.ok())
      return to_errc(st);
    return v == layout_version ? errc::ok : errc::invalid_argument;
  }

  errc apply_branch_save(const log_position& pos, const schemas::knowledge_save& s, std::span<const float> embedding,
                         apply_outcome* outcome) override {
    rocksdb::WriteBatch batch;
    pending_.clear();
    const auto& org = s.organization_id;
    apply_outcome result = apply_outcome::applied;
    std::string v;
    const auto seen = key("S", org, s.event_id);
    auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], seen, &v);
    if (st.ok()) {
      result = apply_outcome::duplicate;
      if (auto e = bump(batch, key("d", pos.topic), 1); e != errc::ok)
        return e;
    } else if (!st.IsNotFound()) {
      return to_errc(st);
    } else {
      batch.Put(cfs_[cf_meta], seen, "");
      const auto state_key = key("b", org, s.branch_id);
      std::uint64_t seq = 0;
      st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], state_key, &v);
      if (!st.ok() && !st.IsNotFound())
        return to_errc(st);
      if (st.ok()) {
        seq = decode_u64(v);
        const auto last = static_cast<std::int64_t>(decode_u64(std::string_view(v).substr(8)));
        if (last + s.branch_ttl_ms < s.saved_at_ms) {  // abandoned: its saves are gone, a new life starts
          std::size_t dropped = 0;
          if (auto e = drop_branch(batch, org, s.branch_id, &dropped); e != errc::ok)
            return e;
        }
      }
      ++seq;
      const auto doc = schemas::to_json(s);
      std::string value = encode_u32(static_cast<std::uint32_t>(doc.size())) + doc;
      value.append(reinterpret_cast<const char*>(embedding.data()), embedding.size() * sizeof(float));
      batch.Put(cfs_[cf_branches], key(org, s.branch_id, encode_u64(seq)), value);
      batch.Put(cfs_[cf_meta], state_key, encode_u64(seq) + encode_u64(static_cast<std::uint64_t>(s.saved_at_ms)));
    }
    put_offset(batch, pos);
    if (auto e = commit(batch); e != errc::ok)
      return e;
    if (outcome)
      *outcome = result;
    return errc::ok;
  }

  std::vector<branch_save> branch_saves(const std::string& org, const std::string& branch,
                                        std::int64_t* last_save_ms) const override {
    std::vector<branch_save> out;
    std::string v;
    *last_save_ms = 0;
    if (db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], key("b", org, branch), &v).ok() && v.size() >= 16)
      *last_save_ms = static_cast<std::int64_t>(decode_u64(std::string_view(v).substr(8)));
    const auto prefix = key(org, branch, "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_branches]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      auto val = it->value().ToStringView();
      branch_save b;
      b.seq = decode_u64(it->key().ToStringView().substr(prefix.size()));
      const auto n = decode_u32(val);
      b.save_json = std::string(val.substr(4, n));
      auto rest = val.substr(4 + n);
      b.embedding.resize(rest.size() / sizeof(float));
      std::memcpy(b.embedding.data(), rest.data(), b.embedding.size() * sizeof(float));
      out.push_back(std::move(b));
    }
    return out;
  }

  errc apply_command(const log_position& pos, const schemas::knowledge_command& c, command_result* result,
                     apply_outcome* outcome) override {
    rocksdb::WriteBatch batch;
    pending_.clear();
    batch_entries_.clear();
    batch_removed_.clear();
    command_result r;
    apply_outcome how = apply_outcome::applied;
    std::string v;
    const auto& org = c.organization_id;
    const auto seen = key("s", org, c.event_id);
    auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], seen, &v);
    if (st.ok()) {
      how = apply_outcome::duplicate;
      if (auto e = bump(batch, key("d", pos.topic), 1); e != errc::ok)
        return e;
    } else if (!st.IsNotFound()) {
      return to_errc(st);
    } else {
      batch.Put(cfs_[cf_meta], seen, "");
      errc e = errc::ok;
      switch (c.op) {
        case schemas::command_op::validate: e = validate(batch, c, r); break;
        case schemas::command_op::resolve_review: e = resolve_review(batch, c, r); break;
        case schemas::command_op::merge_branch:
        case schemas::command_op::discard_branch: e = drop_branch(batch, org, c.branch_id, &r.dropped_saves); break;
        case schemas::command_op::expire: e = expire(batch, c, r); break;
        case schemas::command_op::reminder_sent: e = reminder_sent(batch, c, r); break;
      }
      if (e != errc::ok)
        return e;
      if (!r.error.empty()) {  // nothing changes but the seen eventId and the offset
        batch.Clear();
        pending_.clear();
        batch_entries_.clear();
        batch.Put(cfs_[cf_meta], seen, "");
      }
      for (const auto& [id, doc] : batch_entries_) {
        batch.Put(cfs_[cf_entries], key(org, id), doc.dump());
        r.entries.push_back(doc.dump());
      }
    }
    put_offset(batch, pos);
    if (auto e = commit(batch); e != errc::ok)
      return e;
    if (result)
      *result = std::move(r);
    if (outcome)
      *outcome = how;
    return errc::ok;
  }

  std::vector<std::pair<std::string, std::string>> review_queue(const std::string& org,
                                                                std::size_t limit) const override {
    std::vector<std::pair<std::string, std::string>> out;
    const auto prefix = key(org, "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_review]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix) && out.size() < limit; it->Next())
      out.emplace_back(std::string(it->key().ToStringView().substr(prefix.size())), it->value().ToString());
    return out;
  }

  std::vector<due_item> due_reminders(std::int64_t until_ms, std::size_t limit) const override {
    std::vector<due_item> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_due]));
    for (it->SeekToFirst(); it->Valid() && out.size() < limit; it->Next()) {
      auto k = it->key().ToStringView();
      auto a = k.find('\0');
      if (a == std::string_view::npos || k.size() < a + 1 + 8 + 1)
        continue;
      const auto org = std::string(k.substr(0, a));
      const auto ms = static_cast<std::int64_t>(decode_u64(k.substr(a + 1, 8)));
      if (ms > until_ms) {  // the rest of this organisation is later: skip to the next one
        it->Seek(org + '\x01');
        if (!it->Valid())
          break;
        it->Prev();
        continue;
      }
      out.push_back({org, std::string(k.substr(a + 1 + 8 + 1)), ms});
    }
    return out;
  }

  bool has_expired(const std::string& org, std::int64_t now_ms, std::int64_t ttl_ms) const override {
    const auto prefix = key(org, "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_expiry]));
    it->Seek(prefix);
    if (it->Valid() && it->key().starts_with(prefix) &&
        static_cast<std::int64_t>(decode_u64(it->key().ToStringView().substr(prefix.size(), 8))) <= now_ms)
      return true;
    const auto branches = key("b", org, "");
    std::unique_ptr<rocksdb::Iterator> b(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
    for (b->Seek(branches); b->Valid() && b->key().starts_with(branches); b->Next())
      if (static_cast<std::int64_t>(decode_u64(b->value().ToStringView().substr(8))) + ttl_ms < now_ms)
        return true;
    return false;
  }

  std::map<std::int32_t, std::int64_t> reminder_marks() const override {
    std::map<std::int32_t, std::int64_t> out;
    const std::string prefix("m\0", 2);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
      out[static_cast<std::int32_t>(decode_u32(it->key().ToStringView().substr(prefix.size())))] =
          static_cast<std::int64_t>(decode_u64(it->value().ToStringView()));
    return out;
  }


private:
  /// Adds `delta` to a u64 counter in meta. The store has one writer, so counters are
  /// cached once read; the new value reaches the cache only when its batch is written.
  errc bump(rocksdb::WriteBatch& batch, const std::string& k, std::uint64_t delta) {
    auto pending = pending_.find(k);
    std::uint64_t current = 0;
    if (pending != pending_.end()) {
      current = pending->second;
    } else if (auto cached = counters_.find(k); cached != counters_.end()) {
      current = cached->second;
    } else {
      std::string v;
      auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], k, &v);
      if (!st.ok() && !st.IsNotFound())
        return to_errc(st);
      current = decode_u64(v);
    }
    pending_[k] = current + delta;
    batch.Put(cfs_[cf_meta], k, encode_u64(current + delta));
    return errc::ok;
  }

  /// Sets a u64 counter in meta to `value` if that is higher (a sequence's high mark).
  errc set_counter(rocksdb::WriteBatch& batch, const std::string& k, std::uint64_t value) {
    std::uint64_t current = 0;
    if (auto e = bump(batch, k, 0); e != errc::ok)
      return e;
    current = pending_[k];
    if (value > current) {
      pending_[k] = value;
      batch.Put(cfs_[cf_meta], k, encode_u64(value));
    }
    return errc::ok;
  }

  /// Writes the batch; on success the counters it changed enter the cache.
  errc commit(rocksdb::WriteBatch& batch) {
    auto e = to_errc(db_->Write(write_opts_, &batch));
    if (e == errc::ok)
      for (auto& [k, v] : pending_)
        counters_[k] = v;
    pending_.clear();
    return e;
  }

  /// The last key part of every key under `prefix` (an index's entry ids).
  std::vector<std::string> ids_under(std::size_t family, const std::string& prefix) const {
    std::vector<std::string> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[family]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
      out.emplace_back(it->key().ToStringView().substr(prefix.size()));
    return out;
  }

  std::uint64_t sum_prefix(const std::string& prefix) const {
    std::uint64_t total = 0;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next())
      total += decode_u64(it->value().ToStringView());
    return total;
  }

  errc put_message(rocksdb::WriteBatch& batch, const schemas::inbound_message& m) {
    const auto& org = m.organization_id;
    batch.Put(cfs_[cf_messages], key(org, m.event_id), schemas::to_json(m));
    const auto& thread = m.thread_or_event();
    batch.Put(cfs_[cf_by_thread], key(org, thread, "message", m.event_id), m.sent_at);

    // Each address once per message; the first role (from, to, cc) wins.
    std::vector<std::pair<const schemas::participant*, const char*>> people;
    std::set<std::string> addresses;
    auto add = [&](const schemas::participant& p, const char* role) {
      if (addresses.insert(lower_ascii(p.address)).second)
        people.emplace_back(&p, role);
    };
    if (m.source != schemas::source_type::manual)  // an agent's save names no mail participants
      add(m.from, "from");
    for (const auto& p : m.to)
      add(p, "to");
    for (const auto& p : m.cc)
      add(p, "cc");

    std::set<std::string> contact_ids(m.contact_ids.begin(), m.contact_ids.end());
    std::uint64_t new_contacts = 0;
    for (const auto& [p, role] : people) {
      auto id = person_id(p->address);
      json e;
      bool exists = false;
      if (auto err = load_entity(org, id, &e, &exists); err != errc::ok)
        return err;
      if (!exists) {
        ++new_contacts;
        e = new_entity(id, "person", p->name, m.sent_at);
        e["address"] = lower_ascii(p->address);
        batch.Put(cfs_[cf_entity_names], key(org, lower_ascii(p->address), id), "");
      }
      if (!p->name.empty()) {
        auto& aliases = e["aliases"];
        bool known = e["name"] == p->name || std::find(aliases.begin(), aliases.end(), p->name) != aliases.end();
        if (e["name"].get<std::string>().empty())
          e["name"] = p->name;
        else if (!known)
          aliases.push_back(p->name);
        if (!known)  // a known name is indexed already
          batch.Put(cfs_[cf_entity_names], key(org, normalise_name(p->name), id), "");
        batch_names_[key(org, normalise_name(p->name))] = id;
      }
      if (!p->contact_id.empty()) {
        e["contactId"] = p->contact_id;
        contact_ids.insert(p->contact_id);
      }
      e["lastSeenAt"] = m.sent_at;
      e["messages"] = e["messages"].get<std::uint64_t>() + 1;
      batch.Put(cfs_[cf_entities], key(org, id), e.dump());
      batch_entities_[id] = e;
      batch.Put(cfs_[cf_links], key(org, id, "message", m.event_id), role);
      batch.Put(cfs_[cf_links], key(org, id, "thread", thread), "");
    }
    for (const auto& c : contact_ids)
      batch.Put(cfs_[cf_by_contact], key(org, c, "message", m.event_id), "");

    if (auto e = bump(batch, key("n", org, "events"), 1); e != errc::ok)
      return e;
    if (new_contacts)
      for (const char* counter : {"contacts", "entities"})
        if (auto e = bump(batch, key("n", org, counter), new_contacts); e != errc::ok)
          return e;
    return errc::ok;
  }

  /// The entity id an exact normalised name (or address) resolves to, preferring ids that
  /// start with `kind_prefix`; "" when none. Names written earlier in the same batch are
  /// seen through `batch_names_`.
  std::string resolve_name(const std::string& org, const std::string& norm, std::string_view kind_prefix) const {
    if (auto it = batch_names_.find(key(org, norm)); it != batch_names_.end())
      if (kind_prefix.empty() || it->second.rfind(kind_prefix, 0) == 0)
        return it->second;
    auto prefix = key(org, norm, "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_entity_names]));
    std::string any;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string id(it->key().ToStringView().substr(prefix.size()));
      if (kind_prefix.empty() || id.rfind(kind_prefix, 0) == 0)
        return id;
      if (any.empty())
        any = id;
    }
    return kind_prefix.empty() ? any : std::string();
  }

  /// Loads an entity as JSON: from this batch if written in it, else from the store.
  errc load_entity(const std::string& org, const std::string& id, json* out, bool* exists) {
    if (auto it = batch_entities_.find(id); it != batch_entities_.end()) {
      *out = it->second;
      *exists = true;
      return errc::ok;
    }
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_entities], key(org, id), &v);
    if (st.IsNotFound()) {
      *exists = false;
      return errc::ok;
    }
    if (!st.ok())
      return to_errc(st);
    *out = json::parse(v, nullptr, false);
    *exists = !out->is_discarded();
    return out->is_discarded() ? errc::corruption : errc::ok;
  }

  /// Stores entries, their indexes, and the people and organisations they mention.
  errc put_knowledge(rocksdb::WriteBatch& batch, const schemas::inbound_message& m, const schemas::extraction& x,
                     const std::vector<schemas::resolution>* resolutions) {
    const auto& org = m.organization_id;
    std::uint64_t new_entities = 0;
    // Mentions of people and organisations -> entity ids (created when unknown).
    std::vector<std::string> entity_of(x.mentions.size());
    for (std::size_t i = 0; i < x.mentions.size(); ++i) {
      const auto& mention = x.mentions[i];
      bool person = mention.kind == schemas::entity_kind::person;
      if (!person && mention.kind != schemas::entity_kind::organization)
        continue;
      auto norm = normalise_name(mention.value);
      std::string id;
      if (person && !mention.address.empty())
        id = person_id(mention.address);
      if (id.empty())
        id = resolve_name(org, norm, person ? "person:" : "org:");
      if (id.empty())
        id = (person ? "person:~" : "org:") + norm;
      json e;
      bool exists = false;
      if (auto err = load_entity(org, id, &e, &exists); err != errc::ok)
        return err;
      if (!exists) {
        ++new_entities;
        e = new_entity(id, person ? "person" : "organization", mention.value, m.sent_at);
        if (person && !mention.address.empty())
          e["address"] = lower_ascii(mention.address);
      }
      auto& aliases = e["aliases"];
      for (const auto* alias : {&mention.value, &mention.text}) {
        if (alias->empty() || normalise_name(*alias) == normalise_name(e["name"].get<std::string>()))
          continue;
        if (std::find(aliases.begin(), aliases.end(), *alias) == aliases.end())
          aliases.push_back(*alias);
        batch.Put(cfs_[cf_entity_names], key(org, normalise_name(*alias), id), "");
        batch_names_[key(org, normalise_name(*alias))] = id;
      }
      batch.Put(cfs_[cf_entity_names], key(org, norm, id), "");
      batch_names_[key(org, norm)] = id;
      for (const char* attr : {"role", "company", "phone"}) {
        const std::string& v = attr[0] == 'r' ? mention.role : attr[0] == 'c' ? mention.company : mention.phone;
        if (!v.empty())
          e[attr] = v;
      }
      batch_entities_[id] = e;
      entity_of[i] = id;
      batch.Put(cfs_[cf_links], key(org, id, "message", m.event_id), "mention");
    }
    for (auto& [id, e] : batch_entities_)
      batch.Put(cfs_[cf_entities], key(org, id), e.dump());

    // Entries: ids derived from (organisation, eventId, index), never random.
    std::set<std::string> contact_ids(m.contact_ids.begin(), m.contact_ids.end());
    if (!m.from.contact_id.empty())
      contact_ids.insert(m.from.contact_id);
    const auto& thread = m.thread_or_event();
    const json source{{"sourceType", schemas::to_string(m.source)},
                      {"sourceId", m.source_id.empty() ? m.event_id : m.source_id},
                      {"eventId", m.event_id},
                      {"author", lower_ascii(m.from.address)}};
    std::uint64_t created = 0, relations = 0, vectors = 0;
    for (std::size_t i = 0; i < x.entries.size(); ++i) {
      const auto& en = x.entries[i];
      const schemas::resolution* r = resolutions && i < resolutions->size() ? &(*resolutions)[i] : nullptr;
      const bool merged = r && r->outcome == schemas::save_outcome::merged;
      const auto id = merged ? r->merged_into : schemas::entry_id(org, m.event_id, i);
      json ents = json::array();
      for (auto mi : en.mentions) {
        if (mi >= x.mentions.size())
          continue;
        const auto& mention = x.mentions[mi];
        json j{{"kind", schemas::to_string(mention.kind)}, {"text", mention.text}, {"value", mention.value}};
        if (!mention.currency.empty())
          j["currency"] = mention.currency;
        if (!entity_of[mi].empty()) {
          j["entityId"] = entity_of[mi];
          batch.Put(cfs_[cf_links], key(org, entity_of[mi], "entry", id), "mention");
        }
        ents.push_back(std::move(j));
      }
      json* doc = nullptr;
      if (merged) {
        if (auto e = load_entry(org, id, &doc); e != errc::ok)
          return e;
        merge_into(*doc, en, ents, source, contact_ids, m.sent_at, r->reason);
      } else {
        json fresh{{"id", id},
                   {"organizationId", org},
                   {"entryType", schemas::to_string(en.type)},
                   {"title", en.title},
                   {"content", en.content},
                   {"sourceType", source["sourceType"]},
                   {"sourceId", source["sourceId"]},
                   {"eventId", m.event_id},
                   {"author", source["author"]},
                   {"sources", json::array({source})},
                   {"contactIds", json(std::vector<std::string>(contact_ids.begin(), contact_ids.end()))},
                   {"threadId", thread},
                   {"confidence", en.confidence},
                   {"lastValidatedAt", m.sent_at},
                   {"expiresAt", en.expires_at.empty() ? json(nullptr) : json(en.expires_at)},
                   {"dueAt", en.due_at.empty() ? json(nullptr) : json(en.due_at)},
                   {"tags", en.tags},
                   {"entities", ents},
                   {"relations", json::array()},
                   {"status", "active"},
                   {"suspicious", en.suspicious},
                   {"subject", en.subject},
                   {"slot", en.slot},
                   {"value", en.value},
                   {"polarity", en.positive ? "positive" : "negative"},
                   {"signature", {{"numbers", en.sig.numbers}, {"dates", en.sig.dates}, {"amounts", en.sig.amounts},
                                  {"entities", en.sig.entities}, {"words", en.sig.words}, {"key", en.sig.key}}},
                   {"extractor", x.extractor},
                   {"outcome", schemas::to_string(r ? r->outcome : schemas::save_outcome::created)},
                   {"createdAt", m.sent_at},
                   {"updatedAt", m.sent_at}};
        if (r && !r->reason.empty())
          fresh["outcomeReason"] = r->reason;
        doc = &(batch_entries_[id] = std::move(fresh));
        ++created;
        if (!en.expires_at.empty())
          if (auto ms = due_ms(en.expires_at))
            batch.Put(cfs_[cf_expiry], key(org, encode_u64(static_cast<std::uint64_t>(*ms)), id), "");
        if (en.type == schemas::entry_type::action_item && !en.due_at.empty())
          if (auto ms = due_ms(en.due_at))
            batch.Put(cfs_[cf_due], key(org, encode_u64(static_cast<std::uint64_t>(*ms)), id), "");
        batch.Put(cfs_[cf_by_type], key(org, std::string(schemas::to_string(en.type)), m.sent_at, id), "");
        if (!en.sig.key.empty())
          batch.Put(cfs_[cf_titles], key(org, std::string(schemas::to_string(en.type)), en.sig.key, id), "");
        if (!en.subject.empty() && !en.slot.empty())
          batch.Put(cfs_[cf_by_slot], key(org, schemas::normal_form(en.subject), en.slot, id), "");
        if (auto e = put_text(batch, org, id, en.sig.key + " " + en.sig.words); e != errc::ok)
          return e;
        if (r && r->vector_seq && !en.embedding.empty()) {
          auto seq = encode_u64(r->vector_seq);
          std::string value = id;
          value.push_back('\0');
          value.append(reinterpret_cast<const char*>(en.embedding.data()), en.embedding.size() * sizeof(float));
          batch.Put(cfs_[cf_vectors], key(org, "q", seq), value);
          batch.Put(cfs_[cf_vectors], key(org, "e", id), seq);
          vectors = std::max(vectors, r->vector_seq);
        }
      }
      batch.Put(cfs_[cf_by_thread], key(org, thread, "entry", id), "");
      for (const auto& c : contact_ids)
        batch.Put(cfs_[cf_by_contact], key(org, c, "entry", id), "");
      if (!r)
        continue;
      for (const auto& edge : r->relations) {
        json* other = nullptr;
        if (auto e = load_entry(org, edge.to, &other); e != errc::ok)
          return e;
        auto type = std::string(schemas::to_string(edge.type));
        batch.Put(cfs_[cf_relations], key(org, id, type, edge.to), edge.reason);
        batch.Put(cfs_[cf_relations_in], key(org, edge.to, type, id), edge.reason);
        (*doc)["relations"].push_back({{"relationType", type}, {"toId", edge.to}, {"reason", edge.reason}});
        (*other)["relations"].push_back({{"relationType", type}, {"fromId", id}, {"reason", edge.reason}});
        ++relations;
      }
      for (const auto& old : r->superseded) {
        json* other = nullptr;
        if (auto e = load_entry(org, old, &other); e != errc::ok)
          return e;
        (*other)["status"] = "superseded";
        (*other)["supersededBy"] = id;
        batch.Delete(cfs_[cf_review], key(org, old));
        if (!(*other)["dueAt"].is_null())
          if (auto ms = due_ms((*other)["dueAt"].get<std::string>()))
            batch.Delete(cfs_[cf_due], key(org, encode_u64(static_cast<std::uint64_t>(*ms)), old));
        (*other)["updatedAt"] = std::max((*other)["updatedAt"].get<std::string>(), m.sent_at);
      }
      for (const auto& old : r->flagged) {
        json* other = nullptr;
        if (auto e = load_entry(org, old, &other); e != errc::ok)
          return e;
        if ((*other)["status"] == "active")
          (*other)["status"] = "flagged";
        (*other)["review"] = {{"contradictedBy", id}, {"reason", r->reason}};
        if ((*other)["status"] == "flagged")
          batch.Put(cfs_[cf_review], key(org, old), id);
      }
    }
    for (const auto& [eid, doc] : batch_entries_)
      batch.Put(cfs_[cf_entries], key(org, eid), doc.dump());
    if (created)
      if (auto e = bump(batch, key("n", org, "entries"), created); e != errc::ok)
        return e;
    if (relations)
      if (auto e = bump(batch, key("n", org, "relations"), relations); e != errc::ok)
        return e;
    if (vectors)
      if (auto e = set_counter(batch, key("n", org, "vectors"), vectors); e != errc::ok)
        return e;
    if (new_entities)
      if (auto e = bump(batch, key("n", org, "entities"), new_entities); e != errc::ok)
        return e;
    return errc::ok;
  }

  /// Indexes an entry's words for BM25: a row per distinct term, and the organisation's
  /// document count and total length (meta counters text_docs, text_length).
  errc put_text(rocksdb::WriteBatch& batch, const std::string& org, const std::string& id, const std::string& words) {
    std::map<std::string, std::uint32_t> tf;
    std::uint32_t length = 0;
    for (auto w : schemas::split_words(words)) {
      ++tf.try_emplace(std::string(w.begin(), w.end())).first->second;
      ++length;
    }
    if (tf.empty())
      return errc::ok;
    for (const auto& [term, n] : tf) {
      batch.Put(cfs_[cf_text], key(org, term, id), encode_u32(n) + encode_u32(length));
      if (auto e = bump(batch, key("t", org, term), 1); e != errc::ok)  // the term's document frequency
        return e;
    }
    if (auto e = bump(batch, key("n", org, "text_docs"), 1); e != errc::ok)
      return e;
    return bump(batch, key("n", org, "text_length"), length);
  }

  /// Loads an entry for update: from this batch if written in it, else from the store.
  /// The pointer stays valid until the batch is written (std::map nodes do not move).
  errc load_entry(const std::string& org, const std::string& id, json** out) {
    if (auto it = batch_entries_.find(id); it != batch_entries_.end()) {
      *out = &it->second;
      return errc::ok;
    }
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_entries], key(org, id), &v);
    if (!st.ok())
      return st.IsNotFound() ? errc::invalid_argument : to_errc(st);  // a decision named an unknown entry
    auto doc = json::parse(v, nullptr, false);
    if (doc.is_discarded())
      return errc::corruption;
    *out = &(batch_entries_[id] = std::move(doc));
    return errc::ok;
  }

  /// Folds a duplicate into the entry it duplicates (DESIGN.md §5): content combined,
  /// confidence raised by noisy-or, contacts, sources and entities united, the newer
  /// timestamp kept.
  void put_offset(rocksdb::WriteBatch& batch, const log_position& pos) {
    if (!pos.advance)
      return;
    batch.Put(cfs_[cf_meta], key("o", pos.topic, encode_u32(static_cast<std::uint32_t>(pos.partition))),
              encode_u64(static_cast<std::uint64_t>(pos.offset + 1)) + pos.cluster_id);
  }

  /// Subtracts `delta` from a u64 counter (never below 0).
  errc drop(rocksdb::WriteBatch& batch, const std::string& k, std::uint64_t delta) {
    if (auto e = bump(batch, k, 0); e != errc::ok)
      return e;
    auto& current = pending_[k];
    current = current > delta ? current - delta : 0;
    batch.Put(cfs_[cf_meta], k, encode_u64(current));
    return errc::ok;
  }

  /// Deletes a branch's saves and its state.
  errc drop_branch(rocksdb::WriteBatch& batch, const std::string& org, const std::string& branch, std::size_t* n) {
    const auto prefix = key(org, branch, "");
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_branches]));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      batch.Delete(cfs_[cf_branches], it->key());
      ++*n;
    }
    batch.Delete(cfs_[cf_meta], key("b", org, branch));
    return to_errc(it->status());
  }

  errc validate(rocksdb::WriteBatch& batch, const schemas::knowledge_command& c, command_result& r) {
    (void)batch;
    json* doc = nullptr;
    if (auto e = load_entry(c.organization_id, c.id, &doc); e != errc::ok)
      return e == errc::invalid_argument ? (r.error = "id: no entry '" + c.id + "' in this organisation", errc::ok) : e;
    const double before = doc->value("confidence", 0.0);
    double after = before;
    if (c.outcome == "approved") {
      after = before + (1.0 - before) * validation_boost;
      (*doc)["lastValidatedAt"] = c.issued_at;
    } else {
      after = before * (1.0 - validation_penalty);
    }
    (*doc)["confidence"] = std::round(after * 1e6) / 1e6;
    (*doc)["updatedAt"] = std::max(doc->value("updatedAt", std::string()), c.issued_at);
    if (!doc->contains("validations"))
      (*doc)["validations"] = json::array();
    (*doc)["validations"].push_back({{"at", c.issued_at}, {"outcome", c.outcome}, {"by", c.issued_by}});
    return errc::ok;
  }

  errc resolve_review(rocksdb::WriteBatch& batch, const schemas::knowledge_command& c, command_result& r) {
    const auto& org = c.organization_id;
    json* older = nullptr;
    if (auto e = load_entry(org, c.id, &older); e != errc::ok)
      return e == errc::invalid_argument ? (r.error = "id: no entry '" + c.id + "' in this organisation", errc::ok) : e;
    if (older->value("status", "") != "flagged" || !older->contains("review") ||
        !(*older)["review"].contains("contradictedBy")) {
      r.error = "id: entry '" + c.id + "' is not awaiting review";
      return errc::ok;
    }
    const auto newer_id = (*older)["review"]["contradictedBy"].get<std::string>();
    json* newer = nullptr;
    if (auto e = load_entry(org, newer_id, &newer); e != errc::ok && e != errc::invalid_argument)
      return e;
    older = &batch_entries_.at(c.id);  // load_entry may have added to the map: re-fetch (nodes do not move)
    batch.Delete(cfs_[cf_review], key(org, c.id));
    (*older)["review"]["resolved"] = c.keep;
    (*older)["review"]["resolvedAt"] = c.issued_at;
    (*older)["review"]["resolvedBy"] = c.issued_by;
    (*older)["updatedAt"] = c.issued_at;
    auto supersede = [&](json& loser, const std::string& winner) {
      loser["status"] = "superseded";
      loser["supersededBy"] = winner;
      loser["updatedAt"] = c.issued_at;
      if (!loser["dueAt"].is_null())
        if (auto ms = due_ms(loser["dueAt"].get<std::string>()))
          batch.Delete(cfs_[cf_due], key(org, encode_u64(static_cast<std::uint64_t>(*ms)), loser["id"].get<std::string>()));
    };
    if (c.keep == "newer") {
      supersede(*older, newer_id);
    } else {
      (*older)["status"] = "active";
      if (c.keep == "older" && newer)
        supersede(*newer, c.id);
    }
    return errc::ok;
  }

  errc reminder_sent(rocksdb::WriteBatch& batch, const schemas::knowledge_command& c, command_result& r) {
    const auto& org = c.organization_id;
    if (c.reminder_offset >= 0) {
      const auto mark = key("m", encode_u32(static_cast<std::uint32_t>(c.reminder_partition)));
      std::string v;
      std::uint64_t have = 0;
      if (db_->Get(rocksdb::ReadOptions(), cfs_[cf_meta], mark, &v).ok())
        have = decode_u64(v);
      if (static_cast<std::uint64_t>(c.reminder_offset + 1) > have)
        batch.Put(cfs_[cf_meta], mark, encode_u64(static_cast<std::uint64_t>(c.reminder_offset + 1)));
    }
    json* doc = nullptr;
    if (auto e = load_entry(org, c.id, &doc); e != errc::ok)
      return e == errc::invalid_argument ? errc::ok : e;  // removed since: the mark is all that is left to record
    if (doc->contains("reminderId"))
      return errc::ok;  // recorded before (a recovered reminder recorded twice)
    (*doc)["reminderId"] = c.reminder_id;
    (*doc)["reminderSentAt"] = c.issued_at;
    if (!(*doc)["dueAt"].is_null())
      if (auto ms = due_ms((*doc)["dueAt"].get<std::string>()))
        batch.Delete(cfs_[cf_due], key(org, encode_u64(static_cast<std::uint64_t>(*ms)), c.id));
    (void)r;
    return errc::ok;
  }

  /// Removes up to c.limit entries whose expiresAt <= issuedAt, every index row of theirs,
  /// and the saves of branches idle since before issuedAt - ttlMs.
  errc expire(rocksdb::WriteBatch& batch, const schemas::knowledge_command& c, command_result& r) {
    const auto& org = c.organization_id;
    const auto prefix = key(org, "");
    std::vector<std::string> ids;
    {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_expiry]));
      for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix) &&
                             ids.size() < static_cast<std::size_t>(c.limit);
           it->Next()) {
        auto k = it->key().ToStringView().substr(prefix.size());
        if (static_cast<std::int64_t>(decode_u64(k.substr(0, 8))) > c.issued_at_ms)
          break;
        ids.emplace_back(k.substr(9));
        batch.Delete(cfs_[cf_expiry], it->key());
      }
    }
    std::uint64_t relation_count = 0;
    for (const auto& id : ids) {
      std::uint64_t seq = 0;
      if (auto e = remove_entry(batch, org, id, &seq, &relation_count); e != errc::ok)
        return e;
      r.removed.emplace_back(id, seq);
    }
    if (!ids.empty())
      if (auto e = drop(batch, key("n", org, "entries"), ids.size()); e != errc::ok)
        return e;
    if (relation_count)
      if (auto e = drop(batch, key("n", org, "relations"), relation_count); e != errc::ok)
        return e;
    std::vector<std::string> idle;
    const auto branches = key("b", org, "");
    std::unique_ptr<rocksdb::Iterator> b(db_->NewIterator(rocksdb::ReadOptions(), cfs_[cf_meta]));
    for (b->Seek(branches); b->Valid() && b->key().starts_with(branches); b->Next())
      if (static_cast<std::int64_t>(decode_u64(b->value().ToStringView().substr(8))) + c.ttl_ms < c.issued_at_ms)
        idle.emplace_back(b->key().ToStringView().substr(branches.size()));
    for (const auto& branch : idle)
      if (auto e = drop_branch(batch, org, branch, &r.dropped_saves); e != errc::ok)
        return e;
    return errc::ok;
  }

  /// Deletes an entry and every row that indexes it; other entries' references to it go too.
  errc remove_entry(rocksdb::WriteBatch& batch, const std::string& org, const std::string& id, std::uint64_t* seq,
                    std::uint64_t* relation_count) {
    json* doc = nullptr;
    if (auto e = load_entry(org, id, &doc); e != errc::ok)
      return e == errc::invalid_argument ? errc::ok : e;  // gone already
    const json d = *doc;
    batch_entries_.erase(id);
    batch_removed_.insert(id);
    batch.Delete(cfs_[cf_entries], key(org, id));
    const auto type = d.value("entryType", "");
    batch.Delete(cfs_[cf_by_type], key(org, type, d.value("createdAt", ""), id));
    const auto& sig = d["signature"];
    const auto title_key = sig.value("key", "");
    if (!title_key.empty())
      batch.Delete(cfs_[cf_titles], key(org, type, title_key, id));
    if (!d.value("subject", "").empty() && !d.value("slot", "").empty())
      batch.Delete(cfs_[cf_by_slot], key(org, schemas::normal_form(d["subject"].get<std::string>()), d["slot"].get<std::string>(), id));
    batch.Delete(cfs_[cf_by_thread], key(org, d.value("threadId", ""), "entry", id));
    for (const auto& contact : d["contactIds"])
      batch.Delete(cfs_[cf_by_contact], key(org, contact.get<std::string>(), "entry", id));
    for (const auto& e : d["entities"])
      if (e.contains("entityId"))
        batch.Delete(cfs_[cf_links], key(org, e["entityId"].get<std::string>(), "entry", id));
    batch.Delete(cfs_[cf_review], key(org, id));
    if (!d["dueAt"].is_null())
      if (auto ms = due_ms(d["dueAt"].get<std::string>()))
        batch.Delete(cfs_[cf_due], key(org, encode_u64(static_cast<std::uint64_t>(*ms)), id));
    // Relations both ways, and the other ends' references.
    std::set<std::string> others;
    for (auto [family, reverse] : {std::pair{cf_relations, cf_relations_in}, {cf_relations_in, cf_relations}}) {
      const auto prefix = key(org, id, "");
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cfs_[family]));
      for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
        auto rest = it->key().ToStringView().substr(prefix.size());  // type \0 other
        auto sep = rest.find('\0');
        const std::string rtype(rest.substr(0, sep)), other(rest.substr(sep + 1));
        batch.Delete(cfs_[family], it->key());
        batch.Delete(cfs_[reverse], key(org, other, rtype, id));
        others.insert(other);
        ++*relation_count;
      }
    }
    for (const auto& other : others) {
      if (batch_removed_.count(other))
        continue;
      json* o = nullptr;
      if (auto e = load_entry(org, other, &o); e != errc::ok) {
        if (e == errc::invalid_argument)
          continue;
        return e;
      }
      auto& rels = (*o)["relations"];
      json kept = json::array();
      for (auto& rel : rels)
        if (rel.value("toId", "") != id && rel.value("fromId", "") != id)
          kept.push_back(rel);
      rels = kept;
    }
    // Full text: the postings, the terms' document frequencies, the organisation's totals.
    std::map<std::string, std::uint32_t> tf;
    std::uint32_t length = 0;
    const std::string indexed = title_key + " " + sig.value("words", "");  // put_text's words (views point here)
    for (auto w : schemas::split_words(indexed)) {
      ++tf[std::string(w.begin(), w.end())];
      ++length;
    }
    for (const auto& [term, n] : tf) {
      batch.Delete(cfs_[cf_text], key(org, term, id));
      if (auto e = drop(batch, key("t", org, term), 1); e != errc::ok)
        return e;
    }
    if (!tf.empty()) {
      if (auto e = drop(batch, key("n", org, "text_docs"), 1); e != errc::ok)
        return e;
      if (auto e = drop(batch, key("n", org, "text_length"), length); e != errc::ok)
        return e;
    }
    // The vector.
    std::string v;
    auto st = db_->Get(rocksdb::ReadOptions(), cfs_[cf_vectors], key(org, "e", id), &v);
    if (st.ok()) {
      *seq = decode_u64(v);
      batch.Delete(cfs_[cf_vectors], key(org, "e", id));
      batch.Delete(cfs_[cf_vectors], key(org, "q", v));
    } else if (!st.IsNotFound()) {
      return to_errc(st);
    }
    return errc::ok;
  }

  /// An RFC 3339 time or a YYYY-MM-DD date (its start, UTC) as milliseconds.
  static std::optional<std::int64_t> due_ms(const std::string& s) {
    return schemas::parse_rfc3339(s.size() == 10 ? s + "T00:00:00Z" : s);
  }

  static void merge_into(json& doc, const schemas::entry& en, const json& ents, const json& source,
                         const std::set<std::string>& contact_ids, const std::string& sent_at,
                         const std::string& reason) {
    constexpr std::size_t max_content = 4000;
    auto content = doc["content"].get<std::string>();
    if (schemas::normal_form(content).find(schemas::normal_form(en.content)) == std::string::npos &&
        content.size() + en.content.size() + 1 <= max_content)
      doc["content"] = content + "\n" + en.content;
    double a = doc["confidence"].get<double>(), b = en.confidence;
    doc["confidence"] = std::round((1.0 - (1.0 - a) * (1.0 - b)) * 1e6) / 1e6;
    std::set<std::string> contacts = doc["contactIds"].get<std::set<std::string>>();
    contacts.insert(contact_ids.begin(), contact_ids.end());
    doc["contactIds"] = std::vector<std::string>(contacts.begin(), contacts.end());
    doc["sources"].push_back(source);
    auto& have = doc["entities"];
    for (const auto& e : ents)
      if (std::none_of(have.begin(), have.end(),
                       [&](const json& h) { return h["kind"] == e["kind"] && h["value"] == e["value"]; }))
        have.push_back(e);
    if (doc["dueAt"].is_null() && !en.due_at.empty())
      doc["dueAt"] = en.due_at;
    for (const char* field : {"updatedAt", "lastValidatedAt"})
      doc[field] = std::max(doc[field].get<std::string>(), sent_at);
    doc["merges"] = doc.value("merges", 0) + 1;
    doc["lastMergeReason"] = reason;
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs_;
  rocksdb::WriteOptions write_opts_;
  /// Entities and names written by the batch being built (writer thread only).
  std::map<std::string, json> batch_entities_;
  std::map<std::string, std::string> batch_names_;
  /// Entries created or changed by the batch being built, written once at its end.
  std::map<std::string, json> batch_entries_;
  /// Counter values as of the last written batch (meta key -> value). Writer thread only.
  std::map<std::string, std::uint64_t> counters_;
  /// Counter values of the batch being built.
  std::map<std::string, std::uint64_t> pending_;
  /// Entries removed by the command being built (never written back).
  std::set<std::string> batch_removed_;
};

}  // namespace

std::string to_string(errc e) {
  switch (e) {
    case errc::ok: return "ok";
    case errc::not_found: return "not_found";
    case errc::corruption: return "corruption";
    case errc::io_error: return "io_error";
    case errc::invalid_argument: return "invalid_argument";
    case errc::busy: return "busy";
  }
  return "unknown";
}

std::unique_ptr<graph_store> open_graph_store(const open_options& opts, std::string* error) {
  if (!opts.read_only) {
    std::error_code ec;
    std::filesystem::create_directories(opts.path, ec);  // RocksDB makes only the last level
    if (ec) {
      if (error)
        *error = "cannot open store at '" + opts.path + "': " + ec.message();
      return nullptr;
    }
  }
  rocksdb::DBOptions db_opts;
  db_opts.create_if_missing = !opts.read_only;
  db_opts.create_missing_column_families = !opts.read_only;
  rocksdb::ColumnFamilyOptions cf_opts;
  // Most point lookups are for keys that do not exist yet (seen eventIds, new contacts):
  // bloom filters in the tables answer those without reading data blocks.
  rocksdb::BlockBasedTableOptions table_opts;
  table_opts.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  cf_opts.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_opts));
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto* name : cf_names)
    descs.emplace_back(name, cf_opts);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st = opts.read_only
                ? rocksdb::DB::OpenForReadOnly(db_opts, opts.path, descs, &handles, &raw)
                : rocksdb::DB::Open(db_opts, opts.path, descs, &handles, &raw);
  if (!st.ok()) {
    if (error)
      *error = "cannot open store at '" + opts.path + "': " + st.ToString();
    return nullptr;
  }
  auto store = std::make_unique<rocks_graph_store>(std::unique_ptr<rocksdb::DB>(raw), std::move(handles),
                                                   opts.sync_writes);
  if (!opts.read_only) {
    if (auto e = store->init_layout(); e != errc::ok) {
      if (error)
        *error = "store at '" + opts.path + "' has an unknown layout version (" + to_string(e) + ")";
      return nullptr;
    }
  }
  return store;
}

}  // namespace engram::storage
