#include "reading/lexicon.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_set>

namespace engram::reading::lexicon {
namespace {

// clang-format off
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
  // clang-format on
  return names;
}

/// First names beyond the English-speaking world, written without diacritics (is_first_name
/// folds them away): Irish, German and Nordic, Dutch, French, Italian, Spanish and Portuguese,
/// Polish and Czech, Greek, Turkish, Arabic and Persian, Indian, Chinese, Japanese, Korean,
/// Vietnamese, Nigerian and other African names.
const std::unordered_set<std::string_view>& world_first_names() {
  static const std::unordered_set<std::string_view> names{
      // Irish and Scottish
      "aoife", "aisling", "caoimhe", "ciara", "ciaran", "cian", "clodagh", "darragh", "declan", "deirdre", "donal",
      "eamon", "eamonn", "eimear", "eoin", "fionn", "grainne", "niamh", "oisin", "orla", "padraig", "roisin", "ronan",
      "saoirse", "seamus", "siobhan", "sinead", "aine", "brendan", "colm", "cormac", "diarmuid", "eilis", "fergus",
      "laoise", "muireann", "nuala", "tadhg", "catriona", "eilidh", "isla", "kirsty", "lachlan", "morag", "hamish",
      // German, Austrian, Swiss, Nordic, Dutch
      "jurgen", "jorg", "gunter", "gunther", "dieter", "wolfgang", "helmut", "uwe", "ulrich", "ute", "birgit", "sabine",
      "heike", "silke", "katrin", "anke", "jens", "lars", "matthias", "maximilian", "moritz", "niklas", "florian",
      "sebastian", "stefanie", "annika", "lennart", "leonie", "finn", "jannik", "henrik", "soren", "bjorn", "sigrid",
      "solveig", "ingrid", "kari", "liv", "maja", "mette", "nils", "ole", "pernille", "rasmus", "signe", "tove",
      "anneke", "bram", "daan", "femke", "joost", "lotte", "maarten", "sanne", "sander", "wouter", "pieter", "ruud",
      "anouk", "ilse", "jesper", "mikael", "oskar", "elin", "linnea", "annelie",
      // French, Italian, Spanish, Portuguese, Brazilian
      "amelie", "antoine", "aurelie", "benoit", "camille", "celine", "chloe", "clement", "elodie", "etienne",
      "francois", "helene", "jerome", "julien", "laetitia", "mathieu", "nathalie", "remi", "sebastien", "severine",
      "theo", "thibault", "valentin", "yann", "yves", "alessandro", "alessia", "chiara", "davide", "federica",
      "federico", "gianluca", "giorgio", "giovanni", "lorenzo", "marco", "paolo", "riccardo", "simona", "stefano",
      "alejandro", "alvaro", "beatriz", "carmen", "consuelo", "dolores", "esteban", "guillermo", "ignacio", "jaime",
      "lucia", "marisol", "mercedes", "nicolas", "pilar", "ramon", "raul", "rocio", "santiago", "sergio", "ximena",
      "joao", "goncalo", "rui", "tiago", "vasco", "duarte", "afonso", "leonor", "mariana", "beatriz", "ines", "rita",
      "catarina", "thiago", "rodrigo", "felipe", "gustavo", "larissa", "leticia", "fernanda", "juliana", "camila",
      "bruna", "caio", "otavio", "vitor", "luana", "renata", "sebastiao", "conceicao", "graca",
      // Polish, Czech, Slovak, Hungarian, Greek, Turkish
      "agnieszka", "bartosz", "dorota", "ewa", "grzegorz", "jakub", "kasia", "katarzyna", "krzysztof", "lukasz",
      "magda", "malgorzata", "marek", "michal", "monika", "pawel", "piotr", "tomasz", "wojciech", "zofia", "jiri",
      "petr", "tereza", "zuzana", "ondrej", "lenka", "bence", "zsofia", "laszlo", "gabor", "eszter", "dimitris",
      "eleni", "giorgos", "katerina", "nikos", "sofia", "yannis", "ayse", "ahmet", "burak", "cem", "deniz", "elif",
      "emre", "fatma", "kemal", "mehmet", "mustafa", "ozge", "selin", "zeynep", "hakan", "serkan",
      // Arabic, Persian, Hebrew
      "abdullah", "ali", "amira", "faisal", "farah", "hassan", "hussein", "ibrahim", "karim", "khalid", "layla",
      "leila", "mariam", "mohamed", "muhammad", "nour", "rania", "salma", "samir", "tariq", "youssef", "yasmin",
      "zainab", "darius", "farhad", "parisa", "reza", "shirin", "avi", "noa", "tamar", "yael", "yosef", "eitan",
      // Indian and Pakistani
      "aarav", "abhishek", "akash", "amit", "anjali", "arun", "deepa", "divya", "gaurav", "harish", "ishaan", "kiran",
      "krishna", "lakshmi", "manish", "meera", "nikhil", "pooja", "pradeep", "prakash", "rajesh", "ramesh", "sanjay",
      "shreya", "siddharth", "sneha", "suresh", "swati", "varun", "vijay", "vivek", "anand", "aparna", "ashwin",
      "bhavna", "dev", "kavita", "madhu", "nandini", "preeti", "rekha", "sachin", "sunita", "tanvi", "usha", "imran",
      "bilal", "ayesha", "hamza", "sana", "zubair",
      // Chinese, Japanese, Korean, Vietnamese
      "bo", "fang", "hao", "hui", "jian", "jing", "jun", "lei", "li", "lin", "ling", "ming", "ning", "qiang", "xiu",
      "xin", "yan", "yang", "yi", "ying", "yu", "zhen", "zhi", "xiaoming", "xiaoli", "jia", "haruto", "hiroko", "kaito",
      "kazuki", "keiko", "kenta", "koji", "makoto", "mariko", "megumi", "naoko", "ren", "riku", "sakura", "satoshi",
      "sora", "takashi", "takeshi", "yoko", "yuka", "yumi", "yusuke", "akira", "daiki", "emi", "haruka", "hina",
      "kenichi", "misaki", "nanami", "rin", "shota", "taro", "tomoko", "aiko", "daisuke", "ryo", "ji-ho", "jihoon",
      "minjun", "seojun", "soyeon", "jiwoo", "hyun", "minji", "jisoo", "eunji", "sungmin", "anh", "bao", "hieu",
      "huong", "khanh", "linh", "minh", "ngoc", "nguyen", "phuong", "quang", "thanh", "thao", "trang", "tuan",
      // Nigerian and other African
      "adaeze", "adebayo", "adewale", "ayodele", "babajide", "chidi", "chiamaka", "chinedu", "chioma", "emeka",
      "folake", "funmilayo", "ifeoma", "ngozi", "nkechi", "obinna", "oluwaseun", "seun", "tobi", "tunde", "uche",
      "yetunde", "kwame", "kofi", "ama", "akosua", "abena", "kwabena", "thabo", "sipho", "lerato", "nomvula", "zanele",
      "tendai", "wanjiru", "njeri", "kamau", "otieno", "amani", "baraka", "zuri", "amara", "femi", "kemi"};
  return names;
}

/// Lower-case ASCII for the Latin letters with diacritics of Latin-1 and Latin Extended-A
/// ("João" -> "joao", "Siobhán" -> "siobhan", "Łukasz" -> "lukasz"); other bytes kept.
std::string fold(std::string_view w) {
  static constexpr std::string_view latin1 =  // U+00C0..U+00FF
      "aaaaaaaceeeeiiiidnooooo*ouuuuyts"
      "aaaaaaaceeeeiiiidnooooo/ouuuuyty";
  static constexpr std::string_view extended_a =  // U+0100..U+017F
      "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiiijjkkklllllll"
      "lllnnnnnnnnnoooooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";
  std::string out;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(w[i]);
    if (b0 < 0x80) {
      out += static_cast<char>(b0 >= 'A' && b0 <= 'Z' ? b0 - 'A' + 'a' : b0);
      continue;
    }
    if ((b0 & 0xE0) == 0xC0 && i + 1 < w.size()) {
      const unsigned cp = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(w[i + 1]) & 0x3Fu);
      if (cp >= 0xC0 && cp <= 0xFF) {
        out += latin1[cp - 0xC0];
        ++i;
        continue;
      }
      if (cp >= 0x100 && cp <= 0x17F) {
        out += extended_a[cp - 0x100];
        ++i;
        continue;
      }
    }
    out += static_cast<char>(b0);
  }
  return out;
}

}  // namespace

bool is_first_name(std::string_view lowered) {
  if (first_names().count(lowered) || world_first_names().count(lowered))
    return true;
  const auto folded = fold(lowered);
  return folded != lowered && (first_names().count(folded) || world_first_names().count(folded));
}

bool is_stop_capital(std::string_view w) {
  // clang-format off
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
  // clang-format on
  return stops.count(w) != 0;
}

bool is_generic_domain(std::string_view l) {
  static constexpr std::array<std::string_view, 16> generic{
      "gmail",  "googlemail", "yahoo", "hotmail", "outlook",    "live", "msn",  "aol",
      "icloud", "me",         "mac",   "proton",  "protonmail", "gmx",  "mail", "example"};
  return std::find(generic.begin(), generic.end(), l) != generic.end();
}

}  // namespace engram::reading::lexicon
