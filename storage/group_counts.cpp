#include "storage/internal/group_counts.hpp"
#include "storage/internal/keys.hpp"

namespace engram::storage::detail {

std::string_view group_of(std::size_t family, std::string_view row_key) {
  return row_key.substr(0, parts_length(row_key, group_parts(family)));
}

std::string group_counts::name(std::size_t family, std::string_view group) {
  std::string out(1, static_cast<char>(family));
  out.append(group);
  return out;
}

std::optional<std::uint64_t> group_counts::find(std::size_t family, std::string_view group) const {
  std::lock_guard lock(mutex_);
  if (auto it = rows_.find(name(family, group)); it != rows_.end())
    return it->second;
  return std::nullopt;
}

void group_counts::remember(std::size_t family, std::string_view group, std::uint64_t rows) {
  std::lock_guard lock(mutex_);
  if (rows_.size() >= capacity_)
    rows_.clear();
  rows_[name(family, group)] = rows;
}

void group_counts::apply(const std::vector<group_delta>& deltas) {
  std::lock_guard lock(mutex_);
  for (const auto& d : deltas) {
    auto it = rows_.find(name(d.family, d.group));
    if (it == rows_.end())
      continue;
    if (d.delta < 0 && it->second == 0)
      rows_.erase(it);  // a count gone wrong is dropped, never used
    else
      it->second += static_cast<std::uint64_t>(static_cast<std::int64_t>(d.delta));
  }
}

void group_counts::drop_organization(std::string_view org) {
  std::lock_guard lock(mutex_);
  std::erase_if(rows_, [&](const auto& r) {
    const std::string_view group = std::string_view(r.first).substr(1);
    return group.size() > org.size() && group.starts_with(org) && group[org.size()] == '\0';
  });
}

void group_counts::clear() {
  std::lock_guard lock(mutex_);
  rows_.clear();
}

std::size_t group_counts::size() const {
  std::lock_guard lock(mutex_);
  return rows_.size();
}

}  // namespace engram::storage::detail
