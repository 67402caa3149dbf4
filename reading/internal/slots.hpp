#pragma once
// The slot vocabulary: what an entry is about (subject), which attribute of it the entry
// states (slot: price, budget, seats, payment_terms, launch_date, renewal_date, start_date,
// deadline, invoicing, support, contract, delivery, meetings, contact; "preference" for a
// preference without one) and its value. Called by the rules extractor (rules.cpp) for
// every entry it reads. Internal to reading/. Pure and thread-safe.
//
// Contract: contradiction (contradiction/contradiction.cpp) compares entries with the same subject and
// slot, found through the store's by_slot index (storage/entries.cpp), and treats
// launch_date, renewal_date, start_date and deadline as date-valued. A slot name is
// therefore part of the stored data: entries already stored keep the name they were read
// with, so a slot must not be renamed (nor a cue moved to another slot) without a note in
// the change saying what happens to stored entries and to contradiction.

#include "reading/internal/entities.hpp"
#include "reading/phrases.hpp"
#include "schemas/knowledge.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace engram::reading::detail {

/// The slot of a sentence: the first slot, in table order, whose cue occurs in `tv`; else
/// "preference" for a preference; else empty (no slot: contradiction does not compare it).
[[nodiscard]] std::string slot_of(const token_view& tv, schemas::entry_type t);

/// Fills `e.subject`, `e.slot` and `e.value` of entry `e` (its type already set), read from
/// its sentence: `spans` are the mentions found in it, `core` the sentence without the words
/// that address someone and `tv` its token view. Subject: the first organisation, else the
/// first person, else `sender_company` (from the signature; may be empty), else, for a
/// saved statement (`statement`), its capitalised first word (the word after the verb for
/// an action item). Slot: slot_of. Value: the first amount ("<value> <currency>"), else the
/// first date.
void read_subject_slot_value(schemas::entry& e, const std::vector<span_mention>& spans, std::string_view sender_company,
                             bool statement, const std::string& core, const token_view& tv);

}  // namespace engram::reading::detail
