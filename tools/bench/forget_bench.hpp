#pragma once
// What forgetting costs (docs/forgetting.md): a RocksDB store built directly from dense
// synthetic mail (no broker; read by the rules, without vectors), then forget commands applied
// as the store stage applies them.

#include <cstddef>

namespace engram::bench {

/// `messages` dense messages of acme (about 8 statements each) beside as many of two other
/// organisations; prints the entries stored, the median time of `runs` entry forgets (each
/// flushes and compacts acme's ranges) and the time to forget acme whole.
int forget(std::size_t messages, int runs);
/// A store of one organisation built directly from `messages` dense synthetic messages, of
/// which `theirs` were sent by one contact (the log kept in memory), then the forget of that
/// contact as the store stage applies it: prints the time to find their messages and the time
/// of the forget (the rebuild of the organisation without them, flush and compaction).
int forget_contact(std::size_t messages, std::size_t theirs);

}  // namespace engram::bench
