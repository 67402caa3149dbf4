#pragma once
// The input of engramctl produce and extract: a file, or stdin for "-".

#include <fstream>
#include <iostream>
#include <string>

namespace engram::ctl {

/// stdin for "-", else `file` opened into `f`; null (reported) when it cannot be read.
inline std::istream* open_input(const std::string& file, std::ifstream& f, const char* who) {
  if (file == "-")
    return &std::cin;
  f.open(file);
  if (!f) {
    std::cerr << std::string(who) + ": cannot read " + file + "\n";  // one write: other threads may log
    return nullptr;
  }
  return &f;
}

}  // namespace engram::ctl
