#include "mcp/auth.hpp"

#include "base/hex.hpp"
#include "mcp/jsonrpc.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cctype>
#include <memory>

namespace engram::mcp {

std::string token_digest(std::string_view token) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(token.data(), token.size(), md, &len, EVP_sha256(), nullptr);
  return to_hex(md, len);
}

engram::result<std::string> dev_token(const std::string& dir) {
  namespace fs = std::filesystem;
  const auto path = fs::path(dir) / "dev-token";
  std::string token;
  if (std::ifstream in(path); in >> token && token.size() >= 32)
    return token;
  unsigned char bytes[20];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    return engram::fail("cannot make the dev token: no random bytes from OpenSSL");
  token = to_hex(bytes, sizeof bytes);
  // Created empty, made readable by its owner alone, then written: the token is never in a
  // file others may read. Renamed into place, so a reader sees the whole token or none.
  const auto tmp = fs::path(path.string() + ".tmp");
  std::error_code ec;
  {
    std::ofstream(tmp, std::ios::trunc);
    fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
  }
  if (!ec) {
    std::ofstream out(tmp, std::ios::trunc);
    out << token;
    out.close();
    if (!out)
      ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec)
    fs::rename(tmp, path, ec);
  if (ec)
    return engram::fail("cannot write the dev token to " + tmp.string() + ": " + ec.message());
  return token;
}

bool local_origin(const std::string& origin) {
  for (const char* prefix : {"http://localhost", "http://127.0.0.1", "http://[::1]", "https://localhost",
                             "https://127.0.0.1", "https://[::1]"}) {
    std::string p(prefix);
    if (origin.rfind(p, 0) == 0 && (origin.size() == p.size() || origin[p.size()] == ':' || origin[p.size()] == '/'))
      return true;
  }
  return false;
}

std::variant<grant, net::response> authenticate(const net::request& req, const auth_options& opts) {
  auto header = [&](const char* k) {
    auto it = req.headers.find(k);
    return it == req.headers.end() ? std::string() : it->second;
  };
  if (auto origin = header("origin"); !origin.empty() && !local_origin(origin))
    return error_response(failure::forbidden, nullptr, "origin not allowed: " + origin);
  auto auth = header("authorization");
  if (auth.empty() && !opts.anonymous_organization.empty())
    return grant{opts.anonymous_organization, {"read", "write"}, "anonymous", {}};
  const std::string bearer = "Bearer ";
  if (auth.size() > bearer.size() && std::equal(bearer.begin(), bearer.end(), auth.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
      })) {
    // The digest of what was sent against every known digest, each compared in constant time
    // and none skipped: how long this takes says nothing about how close a guess was.
    const auto sent = token_digest(std::string_view(auth).substr(bearer.size()));
    const grant* found = nullptr;
    for (const auto& [digest, g] : opts.tokens)
      if (digest.size() == sent.size() && CRYPTO_memcmp(digest.data(), sent.data(), sent.size()) == 0)
        found = &g;
    if (found)
      return *found;
  }
  return error_response(failure::unauthorized, nullptr, auth.empty() ? "authorization required" : "invalid token",
                        {{"WWW-Authenticate", auth.empty() ? "Bearer realm=\"engram\""
                                                           : "Bearer realm=\"engram\", error=\"invalid_token\""}});
}

}  // namespace engram::mcp
