#include "actors/ingest/sealing.hpp"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

namespace engram::ingest {

namespace {

constexpr std::size_t iv_bytes = 12, tag_bytes = 16, key_bytes = 32;

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("OpenSSL RAND_bytes failed");  // no entropy: nothing can be sealed
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::string out(3 * text.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0)
    return std::nullopt;
  std::size_t pad = 0;
  for (auto it = text.rbegin(); it != text.rend() && *it == '=' && pad < 2; ++it)
    ++pad;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

std::string aad(std::string_view org, std::string_view event_id, std::string_view key_id, std::string_view kind) {
  std::string out;
  for (auto part : {org, event_id, key_id, kind}) {
    out.append(part);
    out.push_back('\0');
  }
  return out;
}

using cipher_ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

}  // namespace

data_key new_data_key() { return {hex(random_bytes(8)), random_bytes(key_bytes)}; }

std::string key_name(std::string_view org, std::string_view event_id, std::string_view key_id) {
  std::string out(org);
  out += '/';
  out += event_id;
  out += '/';
  out += key_id;
  return out;
}

std::string seal(std::string_view org, std::string_view event_id, std::string_view kind, std::string_view value,
                 const data_key& key) {
  const auto iv = random_bytes(iv_bytes);
  const auto extra = aad(org, event_id, key.id, kind);
  cipher_ctx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  std::string data(value.size() + tag_bytes, '\0');
  int n = 0, last = 0;
  auto* out = reinterpret_cast<unsigned char*>(data.data());
  if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv_bytes), nullptr) != 1 ||
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.bytes.data()),
                         reinterpret_cast<const unsigned char*>(iv.data())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &n, reinterpret_cast<const unsigned char*>(extra.data()),
                        static_cast<int>(extra.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), out, &n, reinterpret_cast<const unsigned char*>(value.data()),
                        static_cast<int>(value.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), out + n, &last) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_bytes), out + value.size()) != 1)
    throw std::runtime_error("OpenSSL AES-256-GCM failed");
  nlohmann::ordered_json j{{"sealed", 1},     {"organizationId", org}, {"eventId", event_id},
                           {"keyId", key.id}, {"kind", kind},          {"iv", base64(iv)}};
  return j.dump() + "\n" + data;
}

std::optional<sealed_envelope> read_envelope(std::string_view value, std::string* why) {
  const auto newline = value.find('\n');
  auto j = nlohmann::json::parse(value.substr(0, newline), nullptr, false);
  auto text = [&](const char* name) -> std::optional<std::string> {
    if (!j.contains(name) || !j[name].is_string() || j[name].get<std::string>().empty()) {
      *why = std::string("sealed /") + name + ": must be a non-empty string";
      return std::nullopt;
    }
    return j[name].get<std::string>();
  };
  // Types checked before values are read: json::value() throws when a key holds another type.
  if (newline == std::string_view::npos || j.is_discarded() || !j.is_object() || !j.contains("sealed") ||
      !j["sealed"].is_number_integer() || j["sealed"].get<std::int64_t>() != 1) {
    *why = "sealed: not a sealed record";
    return std::nullopt;
  }
  sealed_envelope e;
  for (auto [name, field] : {std::pair{"organizationId", &e.organization_id},
                             {"eventId", &e.event_id},
                             {"keyId", &e.key_id},
                             {"kind", &e.kind},
                             {"iv", &e.iv}}) {
    auto v = text(name);
    if (!v)
      return std::nullopt;
    *field = std::move(*v);
  }
  auto iv = unbase64(e.iv);
  e.data = std::string(value.substr(newline + 1));
  if (!iv || iv->size() != iv_bytes || e.data.size() < tag_bytes) {
    *why = "sealed /iv: not base64 of a 12-byte iv, or no ciphertext with its tag after the header";
    return std::nullopt;
  }
  e.iv = std::move(*iv);
  return e;
}

std::optional<std::string> open(const sealed_envelope& e, std::string_view key) {
  if (key.size() != key_bytes)
    return std::nullopt;
  const auto extra = aad(e.organization_id, e.event_id, e.key_id, e.kind);
  const std::size_t n_clear = e.data.size() - tag_bytes;
  std::string clear(n_clear, '\0');
  std::string tag = e.data.substr(n_clear);
  cipher_ctx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0, last = 0;
  auto* out = reinterpret_cast<unsigned char*>(clear.data());
  if (EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv_bytes), nullptr) != 1 ||
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.data()),
                         reinterpret_cast<const unsigned char*>(e.iv.data())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &n, reinterpret_cast<const unsigned char*>(extra.data()),
                        static_cast<int>(extra.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), out, &n, reinterpret_cast<const unsigned char*>(e.data.data()),
                        static_cast<int>(n_clear)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_bytes), tag.data()) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), out + n, &last) != 1)
    return std::nullopt;
  return clear;
}

}  // namespace engram::ingest
