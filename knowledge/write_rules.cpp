#include "knowledge/write_rules.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>

namespace engram::knowledge {

namespace {

double round6(double x) { return std::round(x * 1e6) / 1e6; }

void keep_later(std::string& field, const std::string& at) { field = std::max(field, at); }

void mark_superseded(stored_entry& loser, const std::string& winner) {
  loser.status = entry_status::superseded;
  loser.superseded_by = winner;
}

}  // namespace

source_ref source_of(const schemas::inbound_message& m) {
  return {std::string(schemas::to_string(m.source)), m.source_id.empty() ? m.event_id : m.source_id, m.event_id,
          lower_ascii(m.from.address), m.sent_at};
}

std::set<std::string> contacts_of(const schemas::inbound_message& m) {
  std::set<std::string> out(m.contact_ids.begin(), m.contact_ids.end());
  if (!m.from.contact_id.empty())
    out.insert(m.from.contact_id);
  return out;
}

stored_entry new_entry(const std::string& id, const schemas::inbound_message& m, const schemas::entry& en,
                       std::vector<mention_ref> mentions, const std::string& extractor, const schemas::resolution* r) {
  const auto source = source_of(m);
  const auto contacts = contacts_of(m);
  stored_entry e;
  e.id = id;
  e.organization_id = m.organization_id;
  e.type = en.type;
  e.title = en.title;
  e.content = en.content;
  e.source_type = source.source_type;
  e.source_id = source.source_id;
  e.event_id = m.event_id;
  e.author = source.author;
  e.sources = {source};
  e.contact_ids.assign(contacts.begin(), contacts.end());
  e.thread_id = m.thread_or_event();
  e.confidence = en.confidence;
  e.last_validated_at = m.sent_at;
  e.expires_at = en.expires_at;
  e.due_at = en.due_at;
  e.tags = en.tags;
  e.entities = std::move(mentions);
  e.suspicious = en.suspicious;
  e.subject = en.subject;
  e.slot = en.slot;
  e.value = en.value;
  e.positive = en.positive;
  e.sig = en.sig;
  e.extractor = extractor;
  e.outcome = schemas::to_string(r ? r->outcome : schemas::save_outcome::created);
  if (r)
    e.outcome_reason = r->reason;
  e.created_at = m.sent_at;
  e.updated_at = m.sent_at;
  return e;
}

void merge_into(stored_entry& e, const schemas::entry& duplicate, const std::vector<mention_ref>& mentions,
                const source_ref& source, const std::set<std::string>& contacts, const std::string& sent_at,
                const std::string& reason) {
  if (schemas::normal_form(e.content).find(schemas::normal_form(duplicate.content)) == std::string::npos &&
      e.content.size() + duplicate.content.size() + 1 <= max_merged_content)
    e.content += "\n" + duplicate.content;
  e.confidence = round6(1.0 - (1.0 - e.confidence) * (1.0 - duplicate.confidence));
  std::set<std::string> all(e.contact_ids.begin(), e.contact_ids.end());
  all.insert(contacts.begin(), contacts.end());
  e.contact_ids.assign(all.begin(), all.end());
  e.sources.push_back(source);
  for (const auto& m : mentions)
    if (std::none_of(e.entities.begin(), e.entities.end(),
                     [&](const mention_ref& h) { return h.kind == m.kind && h.value == m.value; }))
      e.entities.push_back(m);
  if (e.due_at.empty())
    e.due_at = duplicate.due_at;
  keep_later(e.updated_at, sent_at);
  keep_later(e.last_validated_at, sent_at);
  ++e.merges;
  e.last_merge_reason = reason;
}

std::vector<source_ref> shed_sources(stored_entry& e) {
  if (e.sources.size() <= kept_sources)
    return {};
  const auto n = e.sources.size() - kept_sources;
  std::vector<source_ref> moved(std::make_move_iterator(e.sources.begin() + 1),
                                std::make_move_iterator(e.sources.begin() + 1 + static_cast<std::ptrdiff_t>(n)));
  e.sources.erase(e.sources.begin() + 1, e.sources.begin() + 1 + static_cast<std::ptrdiff_t>(n));
  e.sources_moved += n;
  return moved;
}

void relate(stored_entry& from, stored_entry& to, schemas::relation_type type, const std::string& reason) {
  const std::string t(schemas::to_string(type));
  from.relations.push_back({t, to.id, "", reason});
  to.relations.push_back({t, "", from.id, reason});
}

void forget_relations_with(stored_entry& e, const std::string& other) {
  std::erase_if(e.relations, [&](const relation_ref& r) { return r.to_id == other || r.from_id == other; });
}

void supersede(stored_entry& loser, const std::string& winner, const std::string& at) {
  mark_superseded(loser, winner);
  keep_later(loser.updated_at, at);
}

bool flag(stored_entry& older, const std::string& newer, const std::string& reason) {
  if (older.status == entry_status::active)
    older.status = entry_status::flagged;
  older.review = review_note{newer, reason, "", "", ""};
  return older.status == entry_status::flagged;
}

void validate(stored_entry& e, const std::string& outcome, const std::string& at, const std::string& by) {
  const double before = e.confidence;
  double after = before;
  if (outcome == "approved") {
    after = before + (1.0 - before) * validation_boost;
    e.last_validated_at = at;
  } else {
    after = before * (1.0 - validation_penalty);
  }
  e.confidence = round6(after);
  keep_later(e.updated_at, at);
  e.validations.push_back({at, outcome, by});
}

std::optional<std::string> awaiting_review(const stored_entry& e) {
  if (e.status != entry_status::flagged || !e.review)
    return std::nullopt;
  return e.review->contradicted_by;
}

review_outcome resolve_review(stored_entry& older, stored_entry* newer, const std::string& keep, const std::string& at,
                              const std::string& by) {
  const auto newer_id = awaiting_review(older);
  if (!newer_id)
    return {"id: entry '" + older.id + "' is not awaiting review", nullptr};
  older.review->resolved = keep;
  older.review->resolved_at = at;
  older.review->resolved_by = by;
  older.updated_at = at;
  // A resolution is the reviewer's act at `at`: the superseded entry's updatedAt is that time.
  if (keep == "newer") {
    mark_superseded(older, *newer_id);
    return {std::nullopt, &older};
  }
  older.status = entry_status::active;
  if (keep == "older" && newer) {
    mark_superseded(*newer, older.id);
    newer->updated_at = at;
    return {std::nullopt, newer};
  }
  return {};
}

bool record_reminder(stored_entry& e, const std::string& reminder_id, const std::string& at) {
  if (!e.reminder_id.empty())
    return false;
  e.reminder_id = reminder_id;
  e.reminder_sent_at = at;
  return true;
}

std::string person_id(const std::string& address) { return "person:" + lower_ascii(address); }

stored_entity new_entity(const std::string& id, const char* kind, const std::string& name,
                         const std::string& first_seen) {
  stored_entity e;
  e.id = id;
  e.kind = kind;
  e.name = name;
  e.first_seen_at = first_seen;
  return e;
}

}  // namespace engram::knowledge
