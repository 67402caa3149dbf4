#include "actors/extractor/lexicon.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_set>

namespace engram::extractor::lexicon {
namespace {

const std::unordered_set<std::string_view>& first_names() {
  static const std::unordered_set<std::string_view> names{
      "aaron", "adam", "adrian", "ahmed", "aisha", "alan", "albert", "alex", "alexander", "alexandra", "alice", "alicia",
      "alison", "amanda", "amelia", "amir", "amy", "ana", "andrea", "andreas", "andrew", "andy", "angela", "anita", "ann",
      "anna", "anne", "anthony", "antonio", "arjun", "arthur", "ashley", "barbara", "ben", "benjamin", "beth", "bill",
      "bob", "brandon", "brian", "bruce", "carl", "carla", "carlos", "carmen", "carol", "caroline", "catherine", "charles",
      "charlie", "chen", "chloe", "chris", "christian", "christina", "christine", "christopher", "claire", "clara",
      "daniel", "daniela", "dana", "david", "deborah", "dennis", "diana", "diego", "dmitri", "dominic", "donna", "doug",
      "douglas", "dylan", "ed", "edward", "elena", "eli", "elias", "elizabeth", "ella", "ellen", "emily", "emma", "eric",
      "erik", "eva", "evan", "fatima", "felix", "fernando", "fiona", "frank", "franz", "fred", "gabriel", "gary", "george",
      "georgia", "gina", "grace", "greg", "gregory", "hannah", "hans", "harry", "heather", "helen", "henry", "hiro",
      "hiroshi", "hugo", "ian", "ines", "ingrid", "isaac", "isabel", "isabella", "ivan", "jack", "jacob", "james", "jamie",
      "jan", "jane", "janet", "jason", "javier", "jay", "jean", "jeff", "jennifer", "jenny", "jeremy", "jessica", "jim",
      "joan", "joe", "joel", "johan", "john", "jon", "jonas", "jonathan", "jorge", "jose", "joseph", "josh", "joshua",
      "juan", "judy", "julia", "julian", "julie", "justin", "karen", "karin", "kate", "katherine", "kathy", "katie",
      "kelly", "ken", "kenji", "kevin", "kim", "klaus", "kyle", "lars", "laura", "lauren", "lea", "leah", "lena", "leo",
      "leon", "lily", "linda", "lisa", "liam", "lucas", "lucia", "lucy", "luis", "luka", "luke", "maria", "marie", "mark",
      "marco", "marcus", "margaret", "maria", "marina", "mario", "marta", "martin", "mary", "mateo", "matt", "matthew",
      "max", "maya", "megan", "mei", "melissa", "mia", "michael", "michelle", "miguel", "mike", "mila", "mohammed",
      "monica", "nadia", "nancy", "naomi", "natalie", "nathan", "neha", "nick", "nicole", "nina", "noah", "nora", "olga",
      "oliver", "olivia", "omar", "oscar", "pablo", "pam", "patricia", "patrick", "paul", "paula", "pedro", "peter",
      "philip", "pierre", "priya", "rachel", "rafael", "rahul", "raj", "ravi", "rebecca", "richard", "rick", "rita",
      "rob", "robert", "roberto", "robin", "roger", "ron", "rosa", "ruth", "ryan", "sam", "samantha", "samuel", "sandra",
      "sara", "sarah", "scott", "sean", "sebastian", "sergei", "shannon", "sofia", "sophia", "sophie", "stefan",
      "stephanie", "stephen", "steve", "steven", "susan", "sven", "tanya", "tara", "ted", "theo", "thomas", "tim",
      "timothy", "tina", "tom", "tony", "tyler", "valerie", "vanessa", "victor", "victoria", "vikram", "vincent",
      "walter", "wei", "will", "william", "yuki", "yusuf", "zara", "zoe", "lina", "noor", "omar", "priyanka", "aditya",
      "ananya", "rohan", "sunil", "anil", "deepak", "kavya", "lucia", "giulia", "matteo", "luca", "francesca", "tobias",
      "lukas", "jonah", "hana", "yara", "kai", "ines", "nils", "frida", "astrid", "bjorn", "mateus", "joao", "aleksandr"};
  return names;
}

}  // namespace

bool is_first_name(std::string_view lowered) { return first_names().count(lowered) != 0; }

bool is_stop_capital(std::string_view w) {
  static const std::unordered_set<std::string_view> stops{
      "i", "we", "you", "he", "she", "they", "it", "the", "a", "an", "our", "my", "your", "their", "this", "that",
      "these", "those", "there", "here", "hi", "hello", "hey", "dear", "thanks", "thank", "please", "regards", "best",
      "cheers", "ok", "okay", "yes", "no", "also", "and", "but", "or", "so", "if", "when", "then", "as", "for", "from",
      "to", "at", "on", "in", "by", "with", "of", "re", "fw", "fwd", "monday", "tuesday", "wednesday", "thursday",
      "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august",
      "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
      "oct", "nov", "dec", "q1", "q2", "q3", "q4", "h1", "h2", "eod", "eow", "cob", "asap", "fyi", "cet", "cest", "pst",
      "pdt", "est", "edt", "utc", "gmt", "bst", "us", "uk", "eu", "usa", "ceo", "cto", "cfo", "coo", "vp", "hr", "it",
      "ai", "api", "sla", "sow", "nda", "msa", "po", "rfp", "rfq", "kpi", "okr", "faq", "pdf", "crm", "erp", "qa", "ui",
      "ux", "usd", "eur", "gbp", "mr", "mrs", "ms", "dr", "team", "all", "everyone", "today", "tomorrow", "yesterday",
      "let", "let's", "just", "great", "good", "sounds", "looking", "sorry", "happy", "sure", "what", "why", "how",
      "who", "where", "which", "can", "could", "would", "will", "should", "did", "does", "do", "is", "are", "was",
      "were", "has", "have", "had", "not", "any", "each", "every", "some", "new", "next", "last", "per", "via",
      "after", "before", "since", "until", "about", "meeting", "call", "invoice", "contract", "project", "update",
      "note", "action", "todo", "subject", "attached", "see", "sent", "signed", "approved", "confirmed", "legal",
      "finance", "sales", "support", "marketing", "engineering", "ops", "operations", "procurement", "customer",
      "success", "account", "accounts", "board", "management", "product", "warehouse", "office", "internet", "email",
      "slack", "zoom", "teams", "google", "excel", "word", "monday's", "friday's", "christmas", "easter", "gate",
      "dock", "truck", "route", "north", "south", "east", "west", "phase", "version", "release", "plan", "pro",
      "enterprise", "premium", "standard", "basic", "gold", "silver", "platinum", "annual", "monthly"};
  return stops.count(w) != 0;
}

bool is_generic_domain(std::string_view l) {
  static constexpr std::array<std::string_view, 16> generic{
      "gmail", "googlemail", "yahoo", "hotmail", "outlook", "live", "msn", "aol", "icloud", "me", "mac", "proton",
      "protonmail", "gmx", "mail", "example"};
  return std::find(generic.begin(), generic.end(), l) != generic.end();
}

}  // namespace engram::extractor::lexicon
