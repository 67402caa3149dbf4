#include "contradiction/contradiction.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <set>

namespace engram::contradiction {

namespace {

/// Stored entries of the same subject and slot compared per new entry at most: the newest.
/// A slot many entries share ("status of the project") would otherwise make every save read
/// them all, and ingest slow down as the organisation grows; an older statement the new one
/// contradicts is still found when it is among the vector neighbours (`near`).
constexpr std::size_t max_slot_candidates = 64;

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
/// qualifiers). A date-valued slot's value is its date, and any number names which one
/// ("phase 2 go-live"). Otherwise amounts and numbers are values; dates are values when
/// nothing else is ("delivery on August 17"), and periods ("Q3") always qualify.
void split(const dedup::facts& f, std::vector<std::string>& values, std::vector<std::string>& qualifiers) {
  std::set<std::string> v, q;
  if (date_valued(f.slot)) {
    v.insert(f.sig.dates.begin(), f.sig.dates.end());
    q.insert(f.sig.amounts.begin(), f.sig.amounts.end());
    q.insert(f.sig.numbers.begin(), f.sig.numbers.end());
  } else {
    v.insert(f.sig.amounts.begin(), f.sig.amounts.end());
    v.insert(f.sig.numbers.begin(), f.sig.numbers.end());
    const bool dates_are_values = v.empty();
    for (const auto& d : f.sig.dates)
      (dates_are_values && d.find('/') == std::string::npos ? v : q).insert(d);
  }
  for (const auto& e : f.sig.entities)
    if (e != f.subject)
      v.insert(e);
  values.assign(v.begin(), v.end());
  qualifiers.assign(q.begin(), q.end());
}

/// Content words minus the words of named entities (compared as values): what the wording
/// rules look at. Stems are prefixes of their words ("acme" -> "acm").
std::vector<std::string> plain_words(const dedup::facts& f) {
  std::vector<std::string_view> names;
  for (const auto& e : f.sig.entities)
    for (auto n : schemas::split_words(e))
      names.push_back(n);
  std::vector<std::string> out;
  for (auto w : schemas::split_words(f.sig.words))
    if (std::none_of(names.begin(), names.end(), [&](std::string_view n) { return n.starts_with(w); }))
      out.emplace_back(w);
  return out;
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
  // Wording: the same words (or one adds some) say "the same thing, another value"; words
  // swapped for others name another item ("Pro plan" / "Enterprise plan").
  const auto nw = plain_words(newer), ow = plain_words(older);
  auto subsequence = [](const std::vector<std::string>& small, const std::vector<std::string>& big) {
    std::size_t j = 0;
    for (const auto& w : big)
      if (j < small.size() && small[j] == w)
        ++j;
    return j == small.size();
  };
  const bool same_words = nw.size() <= ow.size() ? subsequence(nw, ow) : subsequence(ow, nw);
  std::multiset<std::string> only_new(nw.begin(), nw.end()), only_old;
  for (const auto& w : ow)
    if (auto it = only_new.find(w); it != only_new.end())
      only_new.erase(it);
    else
      only_old.insert(w);
  const std::size_t shared = nw.size() - only_new.size();
  const auto what = newer.slot.empty() ? std::string("statement") : newer.slot;
  const auto said = [](const std::multiset<std::string>& ws) {
    std::string out;
    for (const auto& w : ws)
      out += (out.empty() ? "" : " ") + w;
    return out;
  };
  if (newer.positive != older.positive) {
    // "prefers paper invoices" / "does not want paper invoices": one verb for another.
    const bool small_swap = only_new.size() <= 1 && only_old.size() <= 1 && shared >= 2;
    if ((nv == ov || nv.empty() || ov.empty()) && (same_words || small_swap)) {
      if (why)
        *why = what + " of " + newer.subject + ": " + (newer.positive ? "affirmed" : "negated") + " after being " +
               (older.positive ? "affirmed" : "negated");
      return conflict::negation;
    }
    return conflict::none;
  }
  if (!nv.empty() && !ov.empty() && nv != ov) {
    if (!same_words)
      return conflict::none;  // another value of another item
    if (why)
      *why = what + " of " + newer.subject + ": " + join(ov) + " -> " + join(nv);
    return conflict::value;
  }
  if (nv == ov && !only_new.empty() && !only_old.empty() && only_new.size() <= 3 && only_old.size() <= 3 &&
      shared >= 2) {
    if (why)
      *why = what + " of " + newer.subject + ": " + said(only_old) + " -> " + said(only_new);
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
      ids = store_->entries_with_slot(org, f.subject, f.slot, max_slot_candidates);
    for (const auto* c : earlier)
      if (c->subject == f.subject && c->slot == f.slot && !f.slot.empty())
        ids.push_back(c->id);
    std::map<std::string_view, const dedup::facts*> read;  // near ones: dedup read them
    if (i < near.size())
      for (const auto& n : near[i]) {
        ids.push_back(n.id);
        read.emplace(n.id, &n.read);
      }
    std::set<std::string> seen;
    for (const auto& id : ids) {
      if (id == f.id || !seen.insert(id).second)
        continue;
      std::optional<dedup::facts> loaded;
      const dedup::facts* c = nullptr;
      if (auto known = read.find(id); known != read.end())
        c = known->second;
      else if ((loaded = reads_ ? reads_(overlay, org, id) : dedup::load_facts(*store_, overlay, org, id)))
        c = &*loaded;
      if (!c || c->status == "superseded")
        continue;
      std::string why;
      if (compare(f, *c, &why) == conflict::none)
        continue;
      if (f.author == c->author || dedup::authority(f.source) > dedup::authority(c->source)) {
        r.relations.push_back(
            {schemas::relation_type::supersedes, c->id,
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
