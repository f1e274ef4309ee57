// SPDX-License-Identifier: Apache-2.0
#include "triggers/webhook.hpp"

#include <algorithm>
#include <cctype>

#include "enact/codec/base64.hpp"
#include "enact/codec/utf8.hpp"

namespace enact::triggers {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool stripped(std::string_view name) {
  return std::find(std::begin(kStrippedHeaders), std::end(kStrippedHeaders), name) != std::end(kStrippedHeaders);
}

/// The media type of a Content-Type value, lowercased, without parameters.
std::string media_type(std::string_view content_type) {
  const auto semi = content_type.find(';');
  std::string_view t = content_type.substr(0, semi);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t'))
    t.remove_suffix(1);
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t'))
    t.remove_prefix(1);
  return lower(t);
}

}  // namespace

size_t run_request_bytes(const boost::json::object& params) {
  return boost::json::serialize(params).size() + kRunRequestOverhead;
}

boost::json::object webhook_params(std::string_view body, std::string_view content_type,
                                   const std::vector<std::pair<std::string, std::string>>& headers) {
  namespace json = boost::json;
  json::object params;
  const bool utf8 = codec::utf8::is_valid(body);
  if (!utf8) {
    params["event"] = nullptr;
    params["event_raw"] = codec::base64::encode(as_bytes(body));
    params["event_raw_encoding"] = "base64";
  } else {
    json::value event = json::string(body);
    if (!media_type(content_type).starts_with("text/") && !body.empty()) {
      json::parse_options opt;
      opt.max_depth = kMaxEventDepth;
      std::error_code ec;
      json::value parsed = json::parse(body, ec, {}, opt);
      if (!ec)
        event = std::move(parsed);
    }
    params["event"] = std::move(event);
    params["event_raw"] = json::string(body);
  }
  // Header bytes that are not UTF-8 would make the params unparseable downstream: replaced.
  const auto text = [](std::string_view v) {
    return codec::utf8::replace_invalid(v);
  };
  json::object h;
  for (const auto& [raw_name, raw_value] : headers) {
    std::string n = lower(text(raw_name));
    const std::string value = text(raw_value);
    if (stripped(n))
      continue;
    if (auto* existing = h.if_contains(n)) {
      json::string& s = existing->as_string();
      s.append(", ");
      s.append(value);
    } else {
      h[n] = value;
    }
  }
  params["headers"] = std::move(h);
  return params;
}

}  // namespace enact::triggers
