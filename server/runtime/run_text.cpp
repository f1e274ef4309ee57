// SPDX-License-Identifier: Apache-2.0
// The shared words and buffers of both engines (see run_text.hpp).
#include "runtime/run_text.hpp"

#include <string>
#include <utility>

#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/sha2.hpp"
#include "runtime/channel.hpp"
#include "runtime/utf8.hpp"

namespace enact::runtime::sandbox::text {

std::string cut(std::string s, size_t max) {
  if (s.size() <= max)
    return s;
  s.resize(utf8::fit(s, max));
  s += "...";
  return s;
}

void append_log(outcome& out, size_t log_bytes, std::string_view line) {
  if (out.logs_truncated)
    return;
  const size_t room = log_bytes - out.logs.size();
  if (line.size() < room) {
    out.logs.append(line);
    out.logs += '\n';
    return;
  }
  out.logs.append(line.substr(0, utf8::fit(line, room)));
  out.logs += kLogTruncationMarker;
  out.logs_truncated = true;
}

bool string_bytes(const std::string& s, const char* what, bytes& out, std::string& error) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    auto decoded = codec::hex::decode(s, what);
    if (!decoded) {
      error = decoded.err().message;
      return false;
    }
    out = std::move(decoded).value();
    return true;
  }
  out.assign(s.begin(), s.end());
  return true;
}

std::string digest_hex(bool keccak, bytes_view in) {
  const hash256 digest = keccak ? crypto::keccak256(in) : crypto::sha256(in);
  return codec::hex::encode_prefixed(digest);
}

std::string expected_bytes(std::string_view what) {
  return std::string(what) + ": expected a string (0x-hex or text) or a Uint8Array";
}

std::string expected_object(std::string_view method) {
  return "Enact." + std::string(method) + ": expected an object argument";
}

std::string args_too_large(std::string_view method) {
  return "Enact." + std::string(method) + ": the argument is over " + std::to_string(channel::kMaxCallArgsBytes) +
         " bytes of JSON";
}

std::string response_too_large(size_t json_bytes, size_t limit) {
  return "Enact.setResponse: the response is " + std::to_string(json_bytes) + " bytes of JSON, over the limit of " +
         std::to_string(limit);
}

namespace {
std::string limit_text(size_t bytes) { return std::to_string(bytes) + " bytes"; }
}  // namespace

std::string timeout_message(const limits& lim) {
  return "the action ran longer than the wall-time limit of " + std::to_string(lim.wall.count()) + " ms";
}

std::string memory_message(const limits& lim) {
  return "the action needed more than the heap limit of " + limit_text(lim.heap_bytes);
}

std::string output_message(const limits& lim) {
  return "the response is over the output limit of " + limit_text(lim.output_bytes);
}

void settle(outcome& o, const limits& lim, bool timed_out, bool output_exceeded, bool memory_failed) {
  if (timed_out) {
    o.failure = failure_kind::timeout;
    o.message = timeout_message(lim);
  } else if (output_exceeded) {
    o.failure = failure_kind::output_too_large;
    o.message = output_message(lim);
    o.stack.clear();
  } else if (memory_failed) {
    o.failure = failure_kind::memory;
    o.message = memory_message(lim);
  }
  if (o.failure != failure_kind::none) {
    o.has_response = false;
    o.response_json.clear();
  }
}

}  // namespace enact::runtime::sandbox::text
