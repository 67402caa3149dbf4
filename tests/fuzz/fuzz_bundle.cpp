// libFuzzer: the bundle loader (kg/bundle.hpp): the manifest (YAML), an entity type's JSON
// Schema and an entity file (YAML), split from the input at NUL bytes and written as
// manifest.yaml, schemas/a.schema.json and entities/a.yaml of a bundle directory (a seed's
// manifest names those two). Every refusal names a file and a reason.
#include "kg/bundle.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <variant>

namespace {

void write(const std::filesystem::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = "/dev/shm/engram-fuzz-bundle-" + std::to_string(::getpid());
  static const bool made = [] {
    std::filesystem::create_directories(dir / "schemas");
    std::filesystem::create_directories(dir / "entities");
    return true;
  }();
  (void)made;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const char* files[] = {"manifest.yaml", "schemas/a.schema.json", "entities/a.yaml"};
  for (const char* f : files) {
    const auto nul = input.find('\0');
    write(dir / f, input.substr(0, nul));
    input = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  }
  auto loaded = engram::kg::load_bundle(dir);
  if (auto* errors = std::get_if<std::vector<engram::kg::bundle_error>>(&loaded)) {
    if (errors->empty())
      std::abort();
    for (const auto& e : *errors)
      if (e.reason.empty() || e.to_string().empty())
        std::abort();
  }
  return 0;
}
