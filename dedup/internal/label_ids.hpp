#pragma once
// The dedup index's map from vector label (the organisation's vector sequence number) to
// entry id. Internal to knowledge/; a header so its unit test can reach it.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::dedup::detail {

/// Entry id by vector sequence number (the index label), compactly: the ids back to back
/// in one string and a vector of (label, offset, length) sorted by label (labels come in
/// increasing order, so adding is an append). A std::map node and a heap string per entry
/// cost ~120 bytes at 100k entries; this costs 16 plus the id.
class label_ids {
public:
  void emplace(std::uint64_t label, std::string_view id) {
    auto it = lower(label);
    if (it != rows_.end() && it->label == label)
      return;
    rows_.insert(it, row{label, static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(id.size())});
    text_.append(id);
  }
  /// True when the label was there.
  bool erase(std::uint64_t label) {
    auto it = lower(label);
    if (it == rows_.end() || it->label != label)
      return false;
    garbage_ += it->length;
    rows_.erase(it);
    if (garbage_ > text_.size() / 2)
      compact();
    return true;
  }
  [[nodiscard]] std::optional<std::string_view> find(std::uint64_t label) const {
    auto it =
        std::lower_bound(rows_.begin(), rows_.end(), label, [](const row& r, std::uint64_t l) { return r.label < l; });
    if (it == rows_.end() || it->label != label)
      return std::nullopt;
    return id(*it);
  }
  /// (label, id) in label order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& r : rows_)
      f(r.label, id(r));
  }
  [[nodiscard]] std::size_t size() const { return rows_.size(); }
  [[nodiscard]] std::size_t memory_bytes() const { return rows_.capacity() * sizeof(row) + text_.capacity(); }
  void clear() {
    rows_.clear();
    text_.clear();
    garbage_ = 0;
  }

private:
  struct row {
    std::uint64_t label;
    std::uint32_t at, length;
  };
  std::vector<row>::iterator lower(std::uint64_t label) {
    if (rows_.empty() || rows_.back().label < label)
      return rows_.end();
    return std::lower_bound(rows_.begin(), rows_.end(), label,
                            [](const row& r, std::uint64_t l) { return r.label < l; });
  }
  [[nodiscard]] std::string_view id(const row& r) const { return std::string_view(text_).substr(r.at, r.length); }
  void compact() {
    std::string text;
    text.reserve(text_.size() - garbage_);
    for (auto& r : rows_) {
      const auto at = static_cast<std::uint32_t>(text.size());
      text.append(id(r));
      r.at = at;
    }
    text_ = std::move(text);
    garbage_ = 0;
  }

  std::vector<row> rows_;
  std::string text_;
  std::size_t garbage_ = 0;
};

}  // namespace engram::dedup::detail
