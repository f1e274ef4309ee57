// SPDX-License-Identifier: Apache-2.0
// The forms a secret can leak in, and a search for all of them at once; shared by the single-flow
// scan (secret_scan_test.cpp) and the suite-wide scan (suite_scan_test.cpp).
//
// A secret's forms: its text (API keys, tokens), its raw bytes, lower and upper hex, base64 and
// base64url of the bytes; each printable form is also searched by its first 16 characters (a
// truncated key is still a leak), raw bytes only whole.
#pragma once

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/secret.hpp"
#include "enact/pkp/pkp.hpp"

namespace enact::itest {

/// A whole file's bytes ("" when it cannot be read): logs, transcripts, data files.
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// One secret and every form it could leak in. `what` names its kind, never its value.
struct secret {
  std::string what;
  std::vector<std::string> forms;
};

inline void add_byte_forms(std::vector<std::string>& out, bytes_view raw) {
  const std::string hx = codec::hex::encode(raw);
  std::string upper = hx;
  for (char& ch : upper)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  out.push_back(std::string(reinterpret_cast<const char*>(raw.data()), raw.size()));
  out.push_back(hx);
  out.push_back(upper);
  out.push_back(codec::base64::encode(raw));
  out.push_back(codec::base64::encode_url(raw));
}

/// A secret held as bytes (root key, PKP private key).
inline secret of_bytes(std::string what, bytes_view raw) {
  secret s{std::move(what), {}};
  add_byte_forms(s.forms, raw);
  return s;
}

/// A secret held as text (API keys: base64 of a secp256k1 key; the bearer token: base64url of
/// 32 bytes): the text, and the forms of the bytes it encodes. Throws std::invalid_argument when
/// the text is not of that encoding.
inline secret of_text(std::string what, const std::string& text, bool url) {
  secret s{std::move(what), {text}};
  auto raw = url ? codec::base64::decode_url(text, "token") : codec::base64::decode(text, "key");
  if (!raw)
    throw std::invalid_argument(s.what + ": not " + (url ? "base64url" : "base64"));
  add_byte_forms(s.forms, *raw);
  return s;
}

/// The forms and their 16-character prefixes; raw-byte forms are kept whole.
inline std::vector<std::string> needles(const secret& s) {
  std::vector<std::string> out;
  for (const std::string& f : s.forms) {
    out.push_back(f);
    const bool printable = std::all_of(f.begin(), f.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
    if (printable && f.size() > 16)
      out.push_back(f.substr(0, 16));
  }
  return out;
}

/// "keccak 0x1234abcd": names one secret in a failure message without revealing it.
inline std::string fingerprint(const secret& s) {
  const hash256 h = crypto::keccak256(std::string_view(s.forms.front()));
  return "keccak " + codec::hex::encode_prefixed(bytes_view(h.data(), 4));
}

/// The PKP private key of an API-mode wallet: account `index` of the key whose keccak256 is
/// `api_key_hash`, under `root` (docs/protocol.md §1).
[[nodiscard]] inline result<Secret> api_mode_signing_key(const Secret& root, const hash256& api_key_hash,
                                                         uint64_t index) {
  return pkp::signing_key(root, api_key_hash, pkp::api_mode_path(api_key_hash, index));
}

/// Every needle of many secrets, searched in one pass over a text: a window of 16 bytes at each
/// position is looked up by its first 8 bytes (a bitmap rejects almost every position), then
/// the candidates are compared whole. Costs one pass per text however many secrets there are.
class secret_index {
 public:
  explicit secret_index(const std::vector<secret>& secrets) {
    bits_ = std::make_unique<std::bitset<kBits>>();
    for (size_t i = 0; i < secrets.size(); ++i)
      for (std::string& n : needles(secrets[i])) {
        if (n.size() < kWindow) {
          short_.push_back({std::move(n), i});
          continue;
        }
        const uint64_t k = load(n.data());
        bits_->set(slot(k));
        by_prefix_[k].push_back({std::move(n), i});
      }
  }

  /// The indices (into the secrets given at construction) of the secrets `text` shows, each
  /// once, in ascending order.
  [[nodiscard]] std::vector<size_t> find(std::string_view text) const {
    std::vector<size_t> hits;
    const auto add = [&hits](size_t i) {
      if (std::find(hits.begin(), hits.end(), i) == hits.end())
        hits.push_back(i);
    };
    if (text.size() >= kWindow) {
      const char* p = text.data();
      const size_t last = text.size() - kWindow;
      for (size_t at = 0; at <= last; ++at) {
        const uint64_t k = load(p + at);
        if (!bits_->test(slot(k)))
          continue;
        const auto it = by_prefix_.find(k);
        if (it == by_prefix_.end())
          continue;
        for (const entry& e : it->second)
          if (text.substr(at, e.needle.size()) == e.needle)
            add(e.secret);
      }
    }
    for (const entry& e : short_)
      if (text.find(e.needle) != std::string_view::npos)
        add(e.secret);
    std::sort(hits.begin(), hits.end());
    return hits;
  }

 private:
  static constexpr size_t kWindow = 16;
  static constexpr size_t kBits = size_t{1} << 22;
  struct entry {
    std::string needle;
    size_t secret;
  };
  static uint64_t load(const char* p) {
    uint64_t k;
    std::memcpy(&k, p, sizeof k);
    return k;
  }
  static size_t slot(uint64_t k) { return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 42); }

  std::unique_ptr<std::bitset<kBits>> bits_;
  std::unordered_map<uint64_t, std::vector<entry>> by_prefix_;
  std::vector<entry> short_;
};

}  // namespace enact::itest
