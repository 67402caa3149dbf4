#include "actors/contradiction/contradiction.hpp"

#include <algorithm>
#include <set>

namespace engram::contradiction {

namespace {

bool date_valued(const std::string& slot) {
  return slot == "launch_date" || slot == "renewal_date" || slot == "start_date" || slot == "deadline";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

/// What a statement says (its values) and what it is about besides its subject (its
/// qualifiers: the dates of a value that is not itself a date).
void split(const dedup::facts& f, std::vector<std::string>& values, std::vector<std::string>& qualifiers) {
  std::set<std::string> v;
  if (date_valued(f.slot)) {
    v.insert(f.sig.dates.begin(), f.sig.dates.end());
  } else {
    v.insert(f.sig.amounts.begin(), f.sig.amounts.end());
    v.insert(f.sig.numbers.begin(), f.sig.numbers.end());
    qualifiers = f.sig.dates;
  }
  for (const auto& e : f.sig.entities)
    if (e != f.subject)
      v.insert(e);
  values.assign(v.begin(), v.end());
}

}  // namespace

conflict compare(const dedup::facts& newer, const dedup::facts& older, std::string* why) {
  if (newer.subject.empty() || newer.subject != older.subject || newer.slot != older.slot)
    return conflict::none;
  std::vector<std::string> nv, nq, ov, oq;
  split(newer, nv, nq);
  split(older, ov, oq);
  if (nq != oq)
    return conflict::none;  // about another period or date: both can hold
  const auto what = newer.slot.empty() ? std::string("statement") : newer.slot;
  if (newer.positive != older.positive && (nv == ov || nv.empty() || ov.empty())) {
    if (why)
      *why = what + " of " + newer.subject + ": " + (newer.positive ? "affirmed" : "negated") + " after being " +
             (older.positive ? "affirmed" : "negated");
    return conflict::negation;
  }
  if (newer.positive == older.positive && !nv.empty() && !ov.empty() && nv != ov) {
    if (why)
      *why = what + " of " + newer.subject + ": " + join(ov) + " -> " + join(nv);
    return conflict::value;
  }
  return conflict::none;
}

void contradiction_finder::resolve(const schemas::inbound_message& m, const schemas::extraction& x,
                                   std::vector<schemas::resolution>& out,
                                   const std::vector<std::vector<dedup::near_conflict>>& near,
                                   const dedup::event_overlay& overlay) const {
  const auto& org = m.organization_id;
  // Entries of this event created before the i-th: the only ones of the event it may name
  // (the store writes the event's entries in order).
  std::vector<const dedup::facts*> earlier;
  for (std::size_t i = 0; i < x.entries.size() && i < out.size(); ++i) {
    auto& r = out[i];
    if (r.outcome == schemas::save_outcome::merged)
      continue;
    const auto f = dedup::facts_of(m, x.entries[i], i);
    if (auto it = overlay.find(f.id); it != overlay.end())
      earlier.push_back(&it->second);
    if (f.subject.empty())
      continue;  // nothing to compare against without knowing what it is about
    std::vector<std::string> ids;
    if (!f.slot.empty())
      ids = store_->entries_with_slot(org, f.subject, f.slot);
    for (const auto* c : earlier)
      if (c->subject == f.subject && c->slot == f.slot && !f.slot.empty())
        ids.push_back(c->id);
    if (i < near.size())
      for (const auto& n : near[i])
        ids.push_back(n.id);
    std::set<std::string> seen;
    for (const auto& id : ids) {
      if (id == f.id || !seen.insert(id).second)
        continue;
      auto c = dedup::load_facts(*store_, overlay, org, id);
      if (!c || c->status == "superseded")
        continue;
      std::string why;
      if (compare(f, *c, &why) == conflict::none)
        continue;
      if (f.author == c->author || dedup::authority(f.source) > dedup::authority(c->source)) {
        r.relations.push_back({schemas::relation_type::supersedes, c->id,
                               (f.author == c->author ? "same source restates " : "more authoritative source: ") + why});
        r.superseded.push_back(c->id);
        r.outcome = schemas::save_outcome::superseded;
        r.reason = "supersedes " + std::to_string(r.superseded.size()) + ": " + why;
      } else {
        r.relations.push_back({schemas::relation_type::contradicts, c->id, why});
        r.flagged.push_back(c->id);
        if (r.outcome == schemas::save_outcome::created)
          r.reason = "contradicts " + std::to_string(r.flagged.size()) + ": " + why;
      }
    }
  }
}

}  // namespace engram::contradiction
