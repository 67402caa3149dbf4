#include "reading/internal/slots.hpp"

#include "reading/lexicon.hpp"
#include "reading/text.hpp"

#include <algorithm>
#include <utility>

namespace engram::reading::detail {

using schemas::entity_kind;
using schemas::entry_type;

namespace {

/// Attribute slots by cue word, first match wins. Built at static initialisation (the
/// phrase index is not written after that). The names are stored data: see slots.hpp.
const std::vector<std::pair<phrase_set, const char*>> slots = [] {
  std::vector<std::pair<phrase_set, const char*>> v;
  v.emplace_back(phrase_set{"price", "pricing", "cost", "costs", "fee", "fees", "rate", "quote", "quoted", "discount"},
                 "price");
  v.emplace_back(phrase_set{"budget"}, "budget");
  v.emplace_back(phrase_set{"seats", "licenses", "licences", "users", "headcount"}, "seats");
  v.emplace_back(phrase_set{"payment terms", "net 30", "net 45", "net 60", "net 90"}, "payment_terms");
  v.emplace_back(phrase_set{"launch", "go-live", "go live"}, "launch_date");
  v.emplace_back(phrase_set{"renewal", "renews", "renew"}, "renewal_date");
  v.emplace_back(phrase_set{"start date", "starts", "start on", "begins"}, "start_date");
  v.emplace_back(phrase_set{"deadline", "due"}, "deadline");
  v.emplace_back(phrase_set{"invoice", "invoices", "invoicing", "billing"}, "invoicing");
  v.emplace_back(phrase_set{"support", "helpdesk", "support line"}, "support");
  v.emplace_back(phrase_set{"contract", "agreement", "sow", "msa"}, "contract");
  v.emplace_back(phrase_set{"delivery", "deliveries", "shipment", "shipments"}, "delivery");
  v.emplace_back(phrase_set{"meeting", "call", "calls"}, "meetings");
  v.emplace_back(phrase_set{"account manager", "point of contact", "contact"}, "contact");
  return v;
}();

}  // namespace

std::string slot_of(const token_view& tv, entry_type t) {
  for (const auto& [phrases, slot] : slots)
    if (phrases.any(tv))
      return slot;
  return t == entry_type::preference ? "preference" : "";
}

void read_subject_slot_value(schemas::entry& e, const std::vector<span_mention>& spans, std::string_view sender_company,
                             bool statement, const std::string& core, const token_view& tv) {
  // Subject: the first organisation, else the first person, else the sender's company.
  for (auto kind : {entity_kind::organization, entity_kind::person})
    for (const auto& sp : spans)
      if (e.subject.empty() && sp.m.kind == kind)
        e.subject = sp.m.value;
  if (e.subject.empty() && !sender_company.empty())
    e.subject = std::string(sender_company);
  // A saved statement names what it is about first: "Contoso has 150 seats". An action
  // item starts with its verb ("Send Borex the contract"): its subject is the capitalised
  // name right after the verb, never the verb.
  if (e.subject.empty() && statement) {
    auto ws = text::words(core);
    const std::size_t at = e.type == entry_type::action_item ? 1 : 0;  // the statement's type
    if (ws.size() > at) {
      auto w = text::strip_punct(ws[at]);
      auto lw = lower_ascii(w);
      if (w.size() >= 3 && is_capitalised(w) && !lexicon::is_stop_capital(lw) && !lexicon::is_first_name(lw) &&
          std::all_of(w.begin(), w.end(), [](char c) { return text::is_alpha(c) || c == '-'; }))
        e.subject = std::string(w);
    }
  }
  e.slot = slot_of(tv, e.type);
  for (auto kind : {entity_kind::amount, entity_kind::date})
    for (const auto& sp : spans)
      if (e.value.empty() && sp.m.kind == kind)
        e.value = sp.m.kind == entity_kind::amount ? sp.m.value + " " + sp.m.currency : sp.m.value;
}

}  // namespace engram::reading::detail
