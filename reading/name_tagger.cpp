#include "reading/name_tagger.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <tuple>

namespace engram::reading {

namespace {

using score = std::int64_t;
constexpr score impossible = std::numeric_limits<std::int32_t>::min() / 4;

bool read_u32(std::string_view in, std::size_t& pos, std::uint32_t& v) {
  if (in.size() - std::min(pos, in.size()) < 4)
    return false;
  v = 0;
  for (int i = 0; i < 4; ++i)
    v |= std::uint32_t(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 4;
  return true;
}

bool read_i32s(std::string_view in, std::size_t& pos, std::size_t n, std::vector<std::int32_t>& out) {
  out.resize(n);
  for (auto& v : out) {
    std::uint32_t u = 0;
    if (!read_u32(in, pos, u))
      return false;
    v = static_cast<std::int32_t>(u);
  }
  return true;
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string_view to_string(name_type t) {
  static constexpr std::array<std::string_view, 5> n{"person", "organization", "product", "place", "identifier"};
  return n[static_cast<std::size_t>(t)];
}

std::variant<std::shared_ptr<const name_tagger>, std::string> name_tagger::parse(std::string_view bytes) {
  constexpr std::string_view magic = "ENGNAME1";
  if (bytes.substr(0, magic.size()) != magic)
    return std::string("not a name model (no ENGNAME1 at its start)");
  std::size_t pos = magic.size();
  std::uint32_t n = 0;
  if (!read_u32(bytes, pos, n) || bytes.size() - pos < n)
    return std::string("header: cut short");
  auto header = nlohmann::json::parse(bytes.substr(pos, n), nullptr, false);
  pos += n;
  if (!header.is_object() || header.value("format", 0) != 1)
    return std::string("header: not JSON of format 1");
  if (header.value("featureFormat", 0) != tagging::feature_format)
    return "header: featureFormat " + std::to_string(header.value("featureFormat", 0)) + ", this build reads " +
           std::to_string(tagging::feature_format);
  std::shared_ptr<name_tagger> t(new name_tagger());
  const auto tags = header.value("tags", nlohmann::json::array());
  t->tags_ = tags.size();
  t->buckets_ = header.value("buckets", 0u);
  t->units_per_nat_ = header.value("unitsPerNat", 0.0);
  t->threshold_ = header.value("threshold", 0);
  if (t->tags_ < 3 || t->buckets_ == 0 || t->units_per_nat_ <= 0)
    return std::string("header: tags, buckets or unitsPerNat missing");
  static const std::array<std::pair<std::string_view, name_type>, 5> types{{{"PER", name_type::person},
                                                                            {"ORG", name_type::organization},
                                                                            {"PROD", name_type::product},
                                                                            {"LOC", name_type::place},
                                                                            {"ID", name_type::identifier}}};
  for (const auto& tag : tags) {
    const auto s = tag.is_string() ? tag.get<std::string>() : std::string();
    const bool b = s.rfind("B-", 0) == 0, i = s.rfind("I-", 0) == 0;
    name_type type = name_type::person;
    if (b || i) {
      auto it = std::find_if(types.begin(), types.end(), [&](const auto& p) { return p.first == s.substr(2); });
      if (it == types.end())
        return "header: unknown tag " + s;
      type = it->second;
    } else if (s != "O") {
      return "header: unknown tag " + s;
    }
    t->tag_type_.push_back(type);
    t->tag_begins_.push_back(b);
    t->tag_inside_.push_back(i);
  }
  for (std::size_t b = 0; b < t->tags_; ++b) {
    t->inside_of_.push_back(t->tags_);
    for (std::size_t i = 0; i < t->tags_ && t->tag_begins_[b]; ++i)
      if (t->tag_inside_[i] && t->tag_type_[i] == t->tag_type_[b])
        t->inside_of_[b] = i;
    if (t->tag_begins_[b] && t->inside_of_[b] == t->tags_)
      return "header: no I- tag for " + tags[b].get<std::string>();
  }
  if (!read_u32(bytes, pos, n) || bytes.size() - pos < n)
    return std::string("lexicon: cut short");
  auto lex = tagging::lexicon::parse(bytes.substr(pos, n));
  if (!lex)
    return std::string("lexicon: malformed");
  t->lexicon_ = std::move(*lex);
  pos += n;
  const std::size_t weights = std::size_t(t->buckets_) * t->tags_;
  if (bytes.size() - pos < weights)
    return std::string("weights: cut short");
  t->weights_.resize(weights);
  std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(pos), weights, reinterpret_cast<char*>(t->weights_.data()));
  pos += weights;
  if (!read_i32s(bytes, pos, t->tags_, t->start_) || !read_i32s(bytes, pos, t->tags_ * t->tags_, t->transitions_) ||
      !read_i32s(bytes, pos, t->tags_, t->end_) || !read_u32(bytes, pos, n) || !read_i32s(bytes, pos, n, t->lse_))
    return std::string("scores: cut short");
  if (pos != bytes.size())
    return std::string("trailing bytes after the log-sum-exp table");
  t->version_ = "names-1/" + hex16(tagging::fnv1a(bytes));
  return std::shared_ptr<const name_tagger>(std::move(t));
}

std::vector<std::int32_t> name_tagger::emissions(std::string_view sentence,
                                                 const std::vector<tagging::token>& tokens) const {
  const auto rows = tagging::features(sentence, tokens, lexicon_, buckets_);
  std::vector<std::int32_t> e(tokens.size() * tags_, 0);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (auto f : rows[i]) {
      const auto* w = &weights_[std::size_t(f) * tags_];
      for (std::size_t t = 0; t < tags_; ++t)
        e[i * tags_ + t] += w[t];
    }
  return e;
}

std::vector<name_span> name_tagger::tag(std::string_view sentence) const { return tag(sentence, threshold_); }

std::vector<name_span> name_tagger::tag(std::string_view sentence, std::int32_t threshold) const {
  const auto tokens = tagging::tokenize(sentence);
  const std::size_t n = tokens.size(), k = tags_;
  if (n == 0)
    return {};
  const auto e = emissions(sentence, tokens);
  auto emit = [&](std::size_t i, std::size_t t) -> score { return e[i * k + t]; };
  auto trans = [&](std::size_t from, std::size_t to) -> score { return transitions_[from * k + to]; };
  auto lse = [&](score a, score b) -> score {
    if (a < b)
      std::swap(a, b);
    if (b <= impossible)
      return a;
    const auto d = static_cast<std::size_t>(a - b);
    return a + (d < lse_.size() ? lse_[d] : 0);
  };

  // Forward-backward in log space, for each span's probability.
  std::vector<score> alpha(n * k), beta(n * k);
  for (std::size_t t = 0; t < k; ++t)
    alpha[t] = start_[t] + emit(0, t);
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t t = 0; t < k; ++t) {
      score acc = impossible;
      for (std::size_t s = 0; s < k; ++s)
        acc = lse(acc, alpha[(i - 1) * k + s] + trans(s, t));
      alpha[i * k + t] = acc + emit(i, t);
    }
  for (std::size_t t = 0; t < k; ++t)
    beta[(n - 1) * k + t] = end_[t];
  for (std::size_t i = n - 1; i > 0; --i)
    for (std::size_t t = 0; t < k; ++t) {
      score acc = impossible;
      for (std::size_t u = 0; u < k; ++u)
        acc = lse(acc, trans(t, u) + emit(i, u) + beta[i * k + u]);
      beta[(i - 1) * k + t] = acc;
    }
  score z = impossible;
  for (std::size_t t = 0; t < k; ++t)
    z = lse(z, alpha[(n - 1) * k + t] + end_[t]);

  // Every span of up to max_span_tokens tokens (none across a line break) and its
  // probability: the paths with B at its first token, I up to its last, and no I of its type
  // after it. Kept from the most probable down, none overlapping one kept before.
  std::vector<name_span> candidates;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t b = 0; b < k; ++b) {
      if (!tag_begins_[b])
        continue;
      const std::size_t in = inside_of_[b];
      score s = alpha[i * k + b];
      std::size_t last = b;
      for (std::size_t j = i; j < n && j < i + max_span_tokens; ++j) {
        if (sentence[tokens[j].begin] == '\n')
          break;
        if (j > i) {
          s += trans(last, in) + emit(j, in);
          last = in;
        }
        score tail = impossible;
        if (j + 1 == n) {
          tail = end_[last];
        } else {
          for (std::size_t u = 0; u < k; ++u)
            if (u != in)
              tail = lse(tail, trans(last, u) + emit(j + 1, u) + beta[(j + 1) * k + u]);
        }
        const auto logp = static_cast<std::int32_t>(std::clamp<score>(s + tail - z, impossible, 0));
        if (logp >= threshold)
          candidates.push_back({tokens[i].begin, tokens[j].end, tag_type_[b], logp});
      }
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const name_span& x, const name_span& y) {
    return std::tie(y.score, x.begin, y.end, x.type) < std::tie(x.score, y.begin, x.end, y.type);
  });
  std::vector<name_span> out;
  for (const auto& c : candidates)
    if (std::none_of(out.begin(), out.end(), [&](const name_span& o) { return c.begin < o.end && o.begin < c.end; }))
      out.push_back(c);
  std::sort(out.begin(), out.end(), [](const name_span& x, const name_span& y) { return x.begin < y.begin; });
  return out;
}

}  // namespace engram::reading
