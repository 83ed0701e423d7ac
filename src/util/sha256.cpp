#include "fib/util/sha256.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace fib {
namespace {

EVP_MD_CTX* context_of(void* context) {
  return static_cast<EVP_MD_CTX*>(context);
}

// OpenSSL's digest calls fail only when memory runs out or the object is misused (finish twice):
// neither has a sensible recovery, so the process stops with a message.
void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fib: SHA-256: %s failed\n", what);
    std::abort();
  }
}

// The SHA-256 implementation, looked up once: EVP_sha256() makes every EVP_DigestInit_ex look
// it up in OpenSSL's provider tables again, which costs more than hashing a short key. (Never
// freed: it lives as long as the process.)
const EVP_MD* sha256_method() {
  static const EVP_MD* const method = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    require(fetched != nullptr, "EVP_MD_fetch");
    return fetched;
  }();
  return method;
}

} // namespace

Sha256::Sha256() : m_context(EVP_MD_CTX_new()) {
  require(m_context != nullptr, "EVP_MD_CTX_new");
  require(EVP_DigestInit_ex(context_of(m_context), sha256_method(), nullptr) == 1,
          "EVP_DigestInit_ex");
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(context_of(m_context)); // accepts nullptr (a moved-from object)
}

Sha256::Sha256(Sha256&& other) noexcept : m_context(std::exchange(other.m_context, nullptr)) {}

Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    EVP_MD_CTX_free(context_of(m_context));
    m_context = std::exchange(other.m_context, nullptr);
  }
  return *this;
}

Sha256& Sha256::update(std::string_view bytes) {
  require(m_context != nullptr, "update after finish");
  require(EVP_DigestUpdate(context_of(m_context), bytes.data(), bytes.size()) == 1,
          "EVP_DigestUpdate");
  return *this;
}

Sha256Digest Sha256::finish() {
  require(m_context != nullptr, "finish after finish");
  Sha256Digest digest{};
  unsigned int length = 0;
  require(EVP_DigestFinal_ex(context_of(m_context), digest.data(), &length) == 1 &&
              length == digest.size(),
          "EVP_DigestFinal_ex");
  EVP_MD_CTX_free(context_of(std::exchange(m_context, nullptr))); // used up: finish() is once
  return digest;
}

Sha256Digest sha256(std::string_view bytes) {
  return Sha256().update(bytes).finish();
}

std::string to_hex(const Sha256Digest& digest) {
  static constexpr std::string_view k_digits = "0123456789abcdef";
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (const std::uint8_t byte : digest) {
    hex += k_digits[byte >> 4];
    hex += k_digits[byte & 0x0f];
  }
  return hex;
}

} // namespace fib
