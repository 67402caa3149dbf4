#include "knowledge/entry.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <initializer_list>

namespace engram::knowledge {

namespace {

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

/// Reads fields of one JSON object, remembering which keys it consumed; the first type
/// mismatch is the error ("field: reason").
class reader {
public:
  reader(const json& j, std::string prefix) : j_(j), prefix_(std::move(prefix)) {}

  void str(const char* k, std::string& out, bool nullable = false) {
    if (const json* v = take(k)) {
      if (v->is_string())
        out = v->get<std::string>();
      else if (!(nullable && v->is_null()))
        fail(k, nullable ? "must be a string or null" : "must be a string");
    }
  }
  void strings(const char* k, std::vector<std::string>& out) {
    if (const json* v = take(k)) {
      if (!v->is_array() || !std::all_of(v->begin(), v->end(), [](const json& x) { return x.is_string(); }))
        return fail(k, "must be an array of strings");
      out = v->get<std::vector<std::string>>();
    }
  }
  void number(const char* k, double& out) {
    if (const json* v = take(k)) {
      if (!v->is_number())
        return fail(k, "must be a number");
      out = v->get<double>();
    }
  }
  template <class Int>
  void integer(const char* k, Int& out) {
    if (const json* v = take(k)) {
      if (!v->is_number_integer() || (v->is_number_unsigned() ? false : v->get<std::int64_t>() < 0))
        return fail(k, "must be a non-negative integer");
      out = v->get<Int>();
    }
  }
  void boolean(const char* k, bool& out) {
    if (const json* v = take(k)) {
      if (!v->is_boolean())
        return fail(k, "must be a boolean");
      out = v->get<bool>();
    }
  }
  /// The value of `k` when it is an array of objects (else an error), for the caller to read.
  const json* objects(const char* k) {
    const json* v = take(k);
    if (v && (!v->is_array() || !std::all_of(v->begin(), v->end(), [](const json& x) { return x.is_object(); }))) {
      fail(k, "must be an array of objects");
      return nullptr;
    }
    return v;
  }
  const json* object(const char* k) {
    const json* v = take(k);
    if (v && !v->is_object()) {
      fail(k, "must be an object");
      return nullptr;
    }
    return v;
  }
  void fail(const std::string& k, const std::string& reason) {
    if (!error_)
      error_ = prefix_ + k + ": " + reason;
  }
  void adopt(const std::optional<std::string>& e) {
    if (e && !error_)
      error_ = *e;
  }
  /// The keys not consumed.
  json rest() const {
    json out = json::object();
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end())
        out[it.key()] = it.value();
    return out;
  }
  const std::optional<std::string>& error() const { return error_; }
  const std::string& prefix() const { return prefix_; }

private:
  const json* take(const char* k) {
    seen_.emplace_back(k);
    auto it = j_.find(k);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& j_;
  std::string prefix_;
  std::vector<std::string> seen_;
  std::optional<std::string> error_;
};

/// The storage codec's primitives: lengths and counts as LEB128 varints, strings as a
/// length and its bytes, doubles as their 8 bytes little-endian.
class bin_writer {
public:
  void u(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  void s(std::string_view v) {
    u(v.size());
    out_.append(v);
  }
  void d(double v) {
    const auto bits = std::bit_cast<std::uint64_t>(v);
    for (int i = 0; i < 8; ++i)
      out_ += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  void strings(const std::vector<std::string>& xs) {
    u(xs.size());
    for (const auto& x : xs)
      s(x);
  }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

/// Reads what bin_writer wrote; past the end (a truncated or foreign record) every read
/// gives a zero value and ok() turns false.
class bin_reader {
public:
  explicit bin_reader(std::string_view in) : in_(in) {}
  std::uint64_t u() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size())
        return fail();
      const auto b = static_cast<unsigned char>(in_[pos_++]);
      v |= std::uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        return v;
    }
    return fail();
  }
  void s(std::string& out) {
    const auto n = u();
    if (n > in_.size() - pos_) {
      fail();
      return;
    }
    out.assign(in_.substr(pos_, n));
    pos_ += n;
  }
  double d() {
    if (in_.size() - pos_ < 8)
      return double(fail());
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i)
      bits |= std::uint64_t(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return std::bit_cast<double>(bits);
  }
  /// A count of items that each take at least one byte: never more than the bytes left.
  std::size_t count() {
    const auto n = u();
    return n <= in_.size() - pos_ ? std::size_t(n) : std::size_t(fail());
  }
  void strings(std::vector<std::string>& out) {
    out.resize(count());
    for (auto& x : out)
      s(x);
  }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] bool at_end() const { return pos_ == in_.size(); }

private:
  std::uint64_t fail() {
    ok_ = false;
    pos_ = in_.size();
    return 0;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

void put_extra(json& j, const json& extra) {
  for (auto it = extra.begin(); it != extra.end(); ++it)
    j[it.key()] = it.value();
}

/// The string fields of a struct: written always (`always`), or only when not empty
/// (`when_set`). One list per struct serves both directions of the codec.
template <class T>
struct string_fields {
  std::vector<std::pair<const char*, std::string T::*>> always, when_set;

  void write(json& j, const T& x) const {
    for (auto [k, m] : always)
      j[k] = x.*m;
    for (auto [k, m] : when_set)
      if (!(x.*m).empty())
        j[k] = x.*m;
  }
  void read(reader& r, T& x) const {
    for (const auto* list : {&always, &when_set})
      for (auto [k, m] : *list)
        r.str(k, x.*m);
  }
  /// Reads a list of such objects under `field`.
  void read_list(reader& r, const char* field, std::vector<T>& out) const;
  /// The storage codec: every field, in list order.
  void put(bin_writer& w, const T& x) const {
    for (const auto* list : {&always, &when_set})
      for (auto [k, m] : *list)
        w.s(x.*m);
  }
  void get(bin_reader& r, T& x) const {
    for (const auto* list : {&always, &when_set})
      for (auto [k, m] : *list)
        r.s(x.*m);
  }
  void put_list(bin_writer& w, const std::vector<T>& xs) const {
    w.u(xs.size());
    for (const auto& x : xs)
      put(w, x);
  }
  void get_list(bin_reader& r, std::vector<T>& xs) const {
    xs.resize(r.count());
    for (auto& x : xs)
      get(r, x);
  }
  [[nodiscard]] json to_json(const std::vector<T>& xs) const {
    json a = json::array();
    for (const auto& x : xs) {
      json j = json::object();
      write(j, x);
      a.push_back(std::move(j));
    }
    return a;
  }
};

const string_fields<source_ref> source_fields{{{"sourceType", &source_ref::source_type},
                                               {"sourceId", &source_ref::source_id},
                                               {"eventId", &source_ref::event_id},
                                               {"author", &source_ref::author}},
                                              {{"sentAt", &source_ref::sent_at}}};
/// Sources as format 1 of the storage codec wrote them (before sentAt was kept).
const string_fields<source_ref> source_fields_1{source_fields.always, {}};
const string_fields<mention_ref> mention_fields{
    {{"kind", &mention_ref::kind}, {"text", &mention_ref::text}, {"value", &mention_ref::value}},
    {{"currency", &mention_ref::currency}, {"entityId", &mention_ref::entity_id}}};
const string_fields<relation_ref> relation_fields{
    {{"relationType", &relation_ref::type}, {"reason", &relation_ref::reason}},
    {{"toId", &relation_ref::to_id}, {"fromId", &relation_ref::from_id}}};
const string_fields<validation_ref> validation_fields{
    {{"at", &validation_ref::at}, {"outcome", &validation_ref::outcome}, {"by", &validation_ref::by}}, {}};
const string_fields<review_note> review_open_fields{
    {{"contradictedBy", &review_note::contradicted_by}, {"reason", &review_note::reason}}, {}};
/// Written together once the review is resolved.
const string_fields<review_note> review_resolved_fields{{{"resolved", &review_note::resolved},
                                                         {"resolvedAt", &review_note::resolved_at},
                                                         {"resolvedBy", &review_note::resolved_by}},
                                                        {}};
const string_fields<stored_entry> entry_fields{{{"id", &stored_entry::id},
                                                {"organizationId", &stored_entry::organization_id},
                                                {"title", &stored_entry::title},
                                                {"content", &stored_entry::content},
                                                {"sourceType", &stored_entry::source_type},
                                                {"sourceId", &stored_entry::source_id},
                                                {"eventId", &stored_entry::event_id},
                                                {"author", &stored_entry::author},
                                                {"threadId", &stored_entry::thread_id},
                                                {"lastValidatedAt", &stored_entry::last_validated_at},
                                                {"subject", &stored_entry::subject},
                                                {"slot", &stored_entry::slot},
                                                {"value", &stored_entry::value},
                                                {"extractor", &stored_entry::extractor},
                                                {"outcome", &stored_entry::outcome},
                                                {"createdAt", &stored_entry::created_at},
                                                {"updatedAt", &stored_entry::updated_at}},
                                               {{"outcomeReason", &stored_entry::outcome_reason},
                                                {"supersededBy", &stored_entry::superseded_by},
                                                {"branchId", &stored_entry::branch_id}}};
/// Written together: a sent reminder's id and time.
const string_fields<stored_entry> reminder_fields{
    {{"reminderId", &stored_entry::reminder_id}, {"reminderSentAt", &stored_entry::reminder_sent_at}}, {}};
// clang-format off
const string_fields<stored_entity> entity_fields{
    {{"id", &stored_entity::id}, {"kind", &stored_entity::kind}, {"name", &stored_entity::name},
     {"firstSeenAt", &stored_entity::first_seen_at}},
    {{"address", &stored_entity::address}, {"contactId", &stored_entity::contact_id},
     {"lastSeenAt", &stored_entity::last_seen_at}, {"role", &stored_entity::role},
     {"company", &stored_entity::company}, {"phone", &stored_entity::phone},
     {"entityType", &stored_entity::entity_type}}};
// clang-format on

json to_json(const schemas::signature& s) {
  return {{"numbers", s.numbers},   {"dates", s.dates}, {"amounts", s.amounts},
          {"entities", s.entities}, {"words", s.words}, {"key", s.key}};
}

template <class T>
void string_fields<T>::read_list(reader& r, const char* field, std::vector<T>& out) const {
  const json* a = r.objects(field);
  if (!a)
    return;
  out.clear();
  for (std::size_t i = 0; i < a->size(); ++i) {
    reader item((*a)[i], r.prefix() + field + "[" + std::to_string(i) + "].");
    T x;
    read(item, x);
    out.push_back(std::move(x));
    r.adopt(item.error());
  }
}

}  // namespace

std::string_view to_string(entry_status s) {
  static constexpr std::array<std::string_view, 3> names{"active", "flagged", "superseded"};
  return names[static_cast<std::size_t>(s)];
}

json to_json(const std::vector<source_ref>& sources) { return source_fields.to_json(sources); }

json to_json(const stored_entry& e) {
  json j = json::object();
  put_extra(j, e.extra);
  entry_fields.write(j, e);
  j.update({{"entryType", schemas::to_string(e.type)},
            {"sources", to_json(e.sources)},
            {"contactIds", e.contact_ids},
            {"confidence", e.confidence},
            {"expiresAt", or_null(e.expires_at)},
            {"dueAt", or_null(e.due_at)},
            {"tags", e.tags},
            {"entities", mention_fields.to_json(e.entities)},
            {"relations", relation_fields.to_json(e.relations)},
            {"status", to_string(e.status)},
            {"suspicious", e.suspicious},
            {"polarity", e.positive ? "positive" : "negative"},
            {"signature", to_json(e.sig)}});
  if (e.sources_moved > 0)
    j["sourcesMoved"] = e.sources_moved;
  if (e.merges > 0) {
    j["merges"] = e.merges;
    j["lastMergeReason"] = e.last_merge_reason;
  }
  if (e.review) {
    json r = json::object();
    review_open_fields.write(r, *e.review);
    if (!e.review->resolved.empty())
      review_resolved_fields.write(r, *e.review);
    j["review"] = std::move(r);
  }
  if (!e.validations.empty())
    j["validations"] = validation_fields.to_json(e.validations);
  if (!e.reminder_id.empty())
    reminder_fields.write(j, e);
  return j;
}

std::optional<std::string> from_json(const json& j, stored_entry& out) {
  if (!j.is_object())
    return std::string("entry: must be a JSON object");
  stored_entry e;
  reader r(j, "");
  entry_fields.read(r, e);
  reminder_fields.read(r, e);
  if (e.id.empty())
    r.fail("id", "is required");
  std::string type;
  r.str("entryType", type);
  if (auto t = schemas::parse_entry_type(type))
    e.type = *t;
  else
    r.fail("entryType", "unknown type '" + type + "'");
  source_fields.read_list(r, "sources", e.sources);
  r.integer("sourcesMoved", e.sources_moved);
  r.strings("contactIds", e.contact_ids);
  r.number("confidence", e.confidence);
  r.str("expiresAt", e.expires_at, true);
  r.str("dueAt", e.due_at, true);
  r.strings("tags", e.tags);
  mention_fields.read_list(r, "entities", e.entities);
  relation_fields.read_list(r, "relations", e.relations);
  std::string status = "active";
  r.str("status", status);
  if (status == "active")
    e.status = entry_status::active;
  else if (status == "flagged")
    e.status = entry_status::flagged;
  else if (status == "superseded")
    e.status = entry_status::superseded;
  else
    r.fail("status", "unknown status '" + status + "'");
  r.boolean("suspicious", e.suspicious);
  std::string polarity = "positive";
  r.str("polarity", polarity);
  e.positive = polarity != "negative";
  if (const json* s = r.object("signature")) {
    reader sr(*s, "signature.");
    sr.strings("numbers", e.sig.numbers);
    sr.strings("dates", e.sig.dates);
    sr.strings("amounts", e.sig.amounts);
    sr.strings("entities", e.sig.entities);
    sr.str("words", e.sig.words);
    sr.str("key", e.sig.key);
    r.adopt(sr.error());
  }
  r.integer("merges", e.merges);
  r.str("lastMergeReason", e.last_merge_reason);
  if (const json* v = r.object("review")) {
    reader rr(*v, "review.");
    review_note n;
    review_open_fields.read(rr, n);
    review_resolved_fields.read(rr, n);
    r.adopt(rr.error());
    e.review = std::move(n);
  }
  validation_fields.read_list(r, "validations", e.validations);
  if (r.error())
    return r.error();
  e.extra = r.rest();
  out = std::move(e);
  return std::nullopt;
}

json to_json(const stored_entity& e) {
  json j = json::object();
  put_extra(j, e.extra);
  entity_fields.write(j, e);
  j["aliases"] = e.aliases;
  j["messages"] = e.messages;
  if (!e.attributes.empty())
    j["attributes"] = e.attributes;
  if (!e.observations.empty())
    j["observations"] = e.observations;
  if (!e.resolutions.empty()) {
    auto& notes = j["resolutions"] = json::array();
    for (const auto& n : e.resolutions)
      notes.push_back({{"mention", n.mention}, {"eventId", n.event_id}, {"reason", n.reason}});
  }
  return j;
}

namespace {

/// The first byte of a stored entry in the storage codec (a JSON entry starts with '{').
/// Format 2 keeps each source's sentAt; format 1 (read still) did not. Format 3 is format 2
/// with sources_moved (u64) after the sources, written only when it is not 0, so an entry that
/// never moved a source keeps format 2's bytes.
constexpr char entry_format_1 = '\x01';
constexpr char entry_format_2 = '\x02';
constexpr char entry_format_3 = '\x03';
/// The record of one source (encode(source_ref)).
constexpr char source_format_1 = '\x01';

}  // namespace

std::string encode(const stored_entry& e) {
  bin_writer w;
  w.u(static_cast<unsigned char>(e.sources_moved ? entry_format_3 : entry_format_2));
  entry_fields.put(w, e);
  reminder_fields.put(w, e);
  w.s(schemas::to_string(e.type));  // by name: the enum's order is not a storage contract
  source_fields.put_list(w, e.sources);
  if (e.sources_moved)
    w.u(e.sources_moved);
  w.strings(e.contact_ids);
  w.d(e.confidence);
  w.s(e.expires_at);
  w.s(e.due_at);
  w.strings(e.tags);
  mention_fields.put_list(w, e.entities);
  relation_fields.put_list(w, e.relations);
  w.u(static_cast<std::uint64_t>(e.status));
  w.u(e.suspicious);
  w.u(e.positive);
  for (const auto* list : {&e.sig.numbers, &e.sig.dates, &e.sig.amounts, &e.sig.entities})
    w.strings(*list);
  w.s(e.sig.words);
  w.s(e.sig.key);
  w.u(static_cast<std::uint64_t>(e.merges));
  w.s(e.last_merge_reason);
  w.u(e.review.has_value());
  if (e.review) {
    review_open_fields.put(w, *e.review);
    review_resolved_fields.put(w, *e.review);
  }
  validation_fields.put_list(w, e.validations);
  w.s(e.extra.empty() ? std::string() : e.extra.dump());
  return w.take();
}

std::string encode(const stored_entity& e) { return to_json(e).dump(); }

std::string encode(const source_ref& s) {
  bin_writer w;
  w.u(static_cast<unsigned char>(source_format_1));
  source_fields.put(w, s);
  return w.take();
}

std::optional<std::string> decode(std::string_view bytes, source_ref& out) {
  if (bytes.empty() || bytes[0] != source_format_1)
    return std::string("source: not a stored source");
  bin_reader r(bytes);
  r.u();
  source_ref s;
  source_fields.get(r, s);
  if (!r.ok() || !r.at_end())
    return std::string("source: truncated or corrupt record");
  out = std::move(s);
  return std::nullopt;
}

std::optional<std::string> decode(std::string_view bytes, stored_entry& out) {
  if (bytes.empty() || (bytes[0] != entry_format_1 && bytes[0] != entry_format_2 && bytes[0] != entry_format_3)) {
    auto j = json::parse(bytes, nullptr, false);
    if (j.is_discarded())
      return std::string("entry: neither a stored entry nor valid JSON");
    return from_json(j, out);
  }
  bin_reader r(bytes);
  r.u();
  stored_entry e;
  entry_fields.get(r, e);
  reminder_fields.get(r, e);
  std::string type;
  r.s(type);
  if (auto t = schemas::parse_entry_type(type))
    e.type = *t;
  else if (r.ok())
    return "entryType: unknown type '" + type + "'";
  (bytes[0] == entry_format_1 ? source_fields_1 : source_fields).get_list(r, e.sources);
  if (bytes[0] == entry_format_3 && (e.sources_moved = r.u()) == 0 && r.ok())
    return std::string("sourcesMoved: 0 in a record of format 3");
  r.strings(e.contact_ids);
  e.confidence = r.d();
  r.s(e.expires_at);
  r.s(e.due_at);
  r.strings(e.tags);
  mention_fields.get_list(r, e.entities);
  relation_fields.get_list(r, e.relations);
  const auto status = r.u();
  if (r.ok() && status > static_cast<std::uint64_t>(entry_status::superseded))
    return "status: unknown status number " + std::to_string(status);
  e.status = static_cast<entry_status>(status);
  e.suspicious = r.u() != 0;
  e.positive = r.u() != 0;
  for (auto* list : {&e.sig.numbers, &e.sig.dates, &e.sig.amounts, &e.sig.entities})
    r.strings(*list);
  r.s(e.sig.words);
  r.s(e.sig.key);
  e.merges = static_cast<std::int64_t>(r.u());
  r.s(e.last_merge_reason);
  if (r.u()) {
    review_note n;
    review_open_fields.get(r, n);
    review_resolved_fields.get(r, n);
    e.review = std::move(n);
  }
  validation_fields.get_list(r, e.validations);
  std::string extra;
  r.s(extra);
  if (!r.ok() || !r.at_end())
    return std::string("entry: truncated or corrupt record");
  if (!extra.empty()) {
    e.extra = json::parse(extra, nullptr, false);
    if (!e.extra.is_object())
      return std::string("entry: unknown keys are not a JSON object");
  }
  if (e.id.empty())
    return std::string("id: is required");
  out = std::move(e);
  return std::nullopt;
}

std::optional<std::string> decode(std::string_view bytes, stored_entity& out) {
  auto j = json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::string("entity: not a JSON object");
  stored_entity e;
  reader r(j, "");
  entity_fields.read(r, e);
  if (e.id.empty())
    r.fail("id", "is required");
  r.strings("aliases", e.aliases);
  r.integer("messages", e.messages);
  if (const json* a = r.object("attributes")) {
    for (auto it = a->begin(); it != a->end(); ++it) {
      if (!it.value().is_string()) {
        r.fail("attributes." + it.key(), "must be a string");
        break;
      }
      e.attributes[it.key()] = it.value().get<std::string>();
    }
  }
  r.strings("observations", e.observations);
  if (const json* notes = r.objects("resolutions")) {
    for (std::size_t i = 0; i < notes->size(); ++i) {
      reader n((*notes)[i], "resolutions[" + std::to_string(i) + "].");
      auto& note = e.resolutions.emplace_back();
      n.str("mention", note.mention);
      n.str("eventId", note.event_id);
      n.str("reason", note.reason);
      r.adopt(n.error());
    }
  }
  if (r.error())
    return r.error();
  e.extra = r.rest();
  out = std::move(e);
  return std::nullopt;
}

json entry_json(std::string_view stored) {
  stored_entry e;
  return decode(stored, e) ? json(nullptr) : to_json(e);
}

}  // namespace engram::knowledge
