// Entity resolution's pure rules (knowledge/resolve.hpp).
#include "knowledge/resolve.hpp"

#include <gtest/gtest.h>

namespace {

using namespace engram::knowledge;

resolution_candidate person(const std::string& id, std::vector<std::string> names, bool in_message = false,
                            bool in_thread = false) {
  resolution_candidate c;
  c.id = id;
  for (const auto& n : names)
    c.names.push_back(person_words(fold_name(n)));
  c.in_message = in_message;
  c.in_thread = in_thread;
  c.has_address = true;
  return c;
}

TEST(Resolve, FoldsDiacriticsCasePunctuationAndSpaces) {
  EXPECT_EQ(fold_name("  José   Álvarez "), "jose alvarez");
  EXPECT_EQ(fold_name("Søren Lindqvist"), "soren lindqvist");
  EXPECT_EQ(fold_name("Björn Eriksson"), "bjorn eriksson");
  EXPECT_EQ(fold_name("Nguyễn Thị Lan"), "nguyen thi lan");
  EXPECT_EQ(fold_name("Mateus Gonçalves"), "mateus goncalves");
  EXPECT_EQ(fold_name("Straße"), "strasse");
  EXPECT_EQ(fold_name("Łukasz Żółć"), "lukasz zolc");
  EXPECT_EQ(fold_name("Pipewell, Inc."), "pipewell inc");
  EXPECT_EQ(fold_name("Jose\xCC\x81"), "jose") << "a combining accent (decomposed text) is dropped";
  EXPECT_EQ(fold_name("田中 愛子"), "田中 愛子") << "other scripts as written";
  EXPECT_EQ(fold_name("\xC3"), "\xC3") << "a malformed byte is kept, never read past";
}

TEST(Resolve, OrganisationKeysDropTheLegalForm) {
  EXPECT_EQ(organisation_key("Acme Corporation"), "acme");
  EXPECT_EQ(organisation_key("ACME corp"), "acme");
  EXPECT_EQ(organisation_key("Northwind Logistics S.A."), "northwind logistics");
  EXPECT_EQ(organisation_key("Northwind Traders AS"), "northwind traders");
  EXPECT_EQ(organisation_key("Pipewell, Inc."), "pipewell");
  EXPECT_EQ(organisation_key("Globex Software GmbH"), "globex software");
  EXPECT_EQ(organisation_key("Ltd"), "ltd") << "a name that is only a legal form stays";
}

TEST(Resolve, IdentifiersAreRecognised) {
  for (const char* id : {"CT-88213", "JIRA-4411", "INV-2026-0042", "PO#77812", "PO 7731", "SR 102334", "LF-INS-PRO",
                         "GX-CASE-22817", "QA-1187"})
    EXPECT_TRUE(is_identifier(id)) << id;
  for (const char* name : {"Acme Corporation", "3M", "7-Eleven", "Marcus Chen", "Coca-Cola", "AT&T", "Web3 Labs"})
    EXPECT_FALSE(is_identifier(name)) << name;
}

TEST(Resolve, AShortFormJoinsTheOnlyPersonWithItsWords) {
  const std::vector<resolution_candidate> one{person("p1", {"Marcus Chen"}), person("p2", {"Wei Chen"})};
  ASSERT_TRUE(resolve_person("Marcus", one));
  EXPECT_EQ(resolve_person("marcus", one)->id, "p1");
  EXPECT_TRUE(resolve_person("Marcus", one)->short_form);
  EXPECT_EQ(resolve_person("Mr. Chen", one), std::nullopt) << "two people named Chen, neither in the message";
  EXPECT_EQ(resolve_person("wei c", one)->id, "p2") << "an initial matches a word's first letter";
  EXPECT_EQ(resolve_person("c", one), std::nullopt) << "initials alone join nobody";
  EXPECT_EQ(resolve_person("Mateus", one), std::nullopt);
  const std::vector<resolution_candidate> lan{person("p3", {"Nguyễn Thị Lan"})};
  EXPECT_EQ(resolve_person("Lan Nguyen", lan)->id, "p3") << "words in another order";
}

TEST(Resolve, AmbiguityIsSettledByTheMessageThenTheThreadElseNotAtAll) {
  std::vector<resolution_candidate> two{person("d", {"Priya Desai"}), person("r", {"Priya Raghunathan"})};
  EXPECT_EQ(resolve_person("Priya", two), std::nullopt);
  two[1].in_thread = true;
  EXPECT_EQ(resolve_person("Priya", two)->id, "r");
  two[0].in_message = true;
  EXPECT_EQ(resolve_person("Priya", two)->id, "d");
  EXPECT_NE(resolve_person("Priya", two)->reason.find("in the message"), std::string::npos);
  EXPECT_EQ(resolve_person("priya r", two)->id, "r") << "the initial decides, whoever is in the message";
}

TEST(Resolve, ThePersonTheParticipantsKnowSettlesWhatTheMessageAndThreadDoNot) {
  std::vector<resolution_candidate> two{person("d", {"Priya Desai"}), person("r", {"Priya Raghunathan"})};
  two[1].acquainted = true;
  auto r = resolve_person("Priya", two);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, "r");
  EXPECT_NE(r->reason.find("known to the message's participants"), std::string::npos) << r->reason;
  two[0].in_thread = true;
  EXPECT_EQ(resolve_person("Priya", two)->id, "d") << "the thread comes first";
  two[0].in_thread = false;
  two[0].acquainted = true;
  EXPECT_EQ(resolve_person("Priya", two), std::nullopt) << "both known to the participants";
}

TEST(Resolve, APersonKnownOnlyFromTextIsNoSecondCandidateBesideAFullerOne) {
  auto contact = person("p1", {"Wei Chen"});
  resolution_candidate read_wei_chen, read_wei;
  read_wei_chen.id = "p~wei chen";  // read in text before Wei Chen wrote
  read_wei_chen.names = {{"wei", "chen"}};
  read_wei.id = "p~wei";  // a first name read while nobody of that name was known
  read_wei.names = {{"wei"}};
  EXPECT_EQ(resolve_person("Wei", {contact, read_wei_chen, read_wei})->id, "p1");
  EXPECT_EQ(resolve_person("Wei", {read_wei_chen, read_wei})->id, "p~wei chen");
  auto other = person("p2", {"Wei Zhang"});
  EXPECT_EQ(resolve_person("Wei", {contact, other, read_wei}), std::nullopt) << "two fuller ones: still ambiguous";
}

TEST(Resolve, AMailAddressGivesItsOwnerTheWordsOfItsLocalPart) {
  EXPECT_EQ(address_words("seun.adeyemi@lumenfield.example"), (std::vector<std::string>{"seun", "adeyemi"}));
  EXPECT_EQ(address_words("Mary-Jane_Watson@x.example"), (std::vector<std::string>{"mary", "jane", "watson"}));
  for (const char* none :
       {"info@x.example", "jsmith@x.example", "j.smith@x.example", "ops2.team@x.example", "no-at-sign", ""})
    EXPECT_TRUE(address_words(none).empty()) << none;
  auto seun = person("s", {"Oluwaseun Adeyemi"});
  EXPECT_EQ(resolve_person("Seun", {seun}), std::nullopt) << "a nickname is no word of the name";
  seun.names.push_back(address_words("seun.adeyemi@lumenfield.example"));
  EXPECT_EQ(resolve_person("Seun", {seun})->id, "s") << "but a word of the address";
}

TEST(Resolve, AFullNameJoinsAPersonKnownOnlyByAWordOfIt) {
  resolution_candidate marcus;
  marcus.id = "p~marcus";
  marcus.names = {{"marcus"}};
  auto r = resolve_person("Marcus Chen", {marcus});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, "p~marcus");
  EXPECT_FALSE(r->short_form);
  marcus.has_address = true;  // a contact's one-word display name is not a name read in text
  EXPECT_EQ(resolve_person("Marcus Chen", {marcus}), std::nullopt);
}

TEST(Resolve, AOneWordCompanyJoinsTheOnlyCompanyItStarts) {
  resolution_candidate bank, insurer;
  bank.id = "o1";
  bank.names = {person_words(organisation_key("Brightmoor Bank plc"))};
  insurer.id = "o2";
  insurer.names = {person_words(organisation_key("Lumenfield Partners"))};
  EXPECT_EQ(resolve_organisation("Brightmoor", {bank, insurer})->id, "o1");
  EXPECT_EQ(resolve_organisation("Brightmoore", {bank, insurer}), std::nullopt);
  EXPECT_EQ(resolve_organisation("Brightmoor Insurance", {bank}), std::nullopt) << "only one-word short forms";
  auto other = insurer;
  other.id = "o3";
  EXPECT_EQ(resolve_organisation("Lumenfield", {insurer, other}), std::nullopt) << "two companies start with it";
}

}  // namespace
