// SPDX-License-Identifier: Apache-2.0
// The egress policy of Enact.fetch (see egress.hpp).
#include "runtime/egress.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace enact::runtime::egress {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'f'); }

// One part of a WHATWG IPv4 address: decimal, 0x-hex (digits may be absent: 0) or 0-octal.
bool ipv4_number(std::string_view s, uint64_t& out) {
  if (s.empty())
    return false;
  unsigned radix = 10;
  if (s.size() >= 2 && s[0] == '0' && lower(s[1]) == 'x') {
    radix = 16;
    s.remove_prefix(2);
  } else if (s.size() >= 2 && s[0] == '0') {
    radix = 8;
    s.remove_prefix(1);
  }
  out = 0;
  for (const char c : s) {
    unsigned d;
    if (is_digit(c))
      d = static_cast<unsigned>(c - '0');
    else if (radix == 16 && is_hex(c))
      d = static_cast<unsigned>(lower(c) - 'a' + 10);
    else
      return false;
    if (d >= radix)
      return false;
    out = out * radix + d;
    if (out > 0xFFFFFFFFull)
      out = 0x100000000ull;  // too large whatever follows; kept from overflowing
  }
  return true;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t dot = s.find('.', at);
    parts.push_back(s.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at));
    if (dot == std::string_view::npos)
      return parts;
    at = dot + 1;
  }
}

// The URL standard's "ends in a number": the host is then an IPv4 address or invalid.
bool ends_in_number(std::string_view s) {
  std::vector<std::string_view> parts = split_dots(s);
  if (parts.back().empty()) {
    if (parts.size() == 1)
      return false;
    parts.pop_back();
  }
  const std::string_view last = parts.back();
  if (!last.empty() && std::all_of(last.begin(), last.end(), is_digit))
    return true;
  return last.size() >= 2 && last[0] == '0' && lower(last[1]) == 'x' &&
         std::all_of(last.begin() + 2, last.end(), is_hex);
}

bool parse_ipv4(std::string_view s, ip_address& out) {
  std::vector<std::string_view> parts = split_dots(s);
  if (parts.back().empty() && parts.size() > 1)
    parts.pop_back();
  if (parts.size() > 4)
    return false;
  std::vector<uint64_t> n(parts.size());
  for (size_t i = 0; i < parts.size(); ++i)
    if (!ipv4_number(parts[i], n[i]))
      return false;
  for (size_t i = 0; i + 1 < n.size(); ++i)
    if (n[i] > 255)
      return false;
  if (n.back() >= (uint64_t{1} << (8 * (5 - n.size()))))
    return false;
  uint64_t v = n.back();
  for (size_t i = 0; i + 1 < n.size(); ++i)
    v += n[i] << (8 * (3 - i));
  out = ipv4(static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8),
             static_cast<uint8_t>(v));
  return true;
}

bool prefix_is(const ip_address& a, std::initializer_list<uint8_t> head, unsigned bits) {
  unsigned i = 0;
  for (const uint8_t b : head) {
    const unsigned left = bits > 8 * i ? bits - 8 * i : 0;
    if (left == 0)
      break;
    const uint8_t mask = left >= 8 ? 0xFF : static_cast<uint8_t>(0xFF << (8 - left));
    if ((a.bytes[i] & mask) != (b & mask))
      return false;
    ++i;
  }
  return true;
}

address_class classify_v4(const ip_address& a) {
  const auto in = [&](std::initializer_list<uint8_t> head, unsigned bits) {
    return prefix_is(a, head, bits);
  };
  if (in({169, 254, 169, 254}, 32))
    return address_class::metadata;
  if (in({0}, 8))
    return address_class::unspecified;
  if (in({127}, 8))
    return address_class::loopback;
  if (in({10}, 8) || in({172, 16}, 12) || in({192, 168}, 16))
    return address_class::private_use;
  if (in({100, 64}, 10))
    return address_class::cgnat;
  if (in({169, 254}, 16))
    return address_class::link_local;
  if (in({255, 255, 255, 255}, 32))
    return address_class::broadcast;
  if (in({224}, 4))
    return address_class::multicast;
  if (in({192, 0, 2}, 24) || in({198, 51, 100}, 24) || in({203, 0, 113}, 24))
    return address_class::documentation;
  if (in({240}, 4) || in({192, 0, 0}, 24) || in({198, 18}, 15) || in({192, 88, 99}, 24))
    return address_class::reserved;
  return address_class::global;
}

address_class classify_v6(const ip_address& a) {
  const auto in = [&](std::initializer_list<uint8_t> head, unsigned bits) {
    return prefix_is(a, head, bits);
  };
  static constexpr std::array<uint8_t, 16> kMetadata = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0,    0,
                                                        0,    0,    0,    0,    0, 0, 0x02, 0x54};
  if (a.bytes == kMetadata)
    return address_class::metadata;
  const bool first_80_zero = std::all_of(a.bytes.begin(), a.bytes.begin() + 10, [](uint8_t b) { return b == 0; });
  if (first_80_zero && a.bytes[10] == 0xff && a.bytes[11] == 0xff)
    return address_class::ipv4_mapped;
  if (first_80_zero && a.bytes[10] == 0 && a.bytes[11] == 0) {
    const bool low_zero = a.bytes[12] == 0 && a.bytes[13] == 0 && a.bytes[14] == 0;
    if (low_zero && a.bytes[15] == 0)
      return address_class::unspecified;
    if (low_zero && a.bytes[15] == 1)
      return address_class::loopback;
    return address_class::ipv4_mapped;  // ::a.b.c.d, IPv4-compatible
  }
  if (in({0x00, 0x64, 0xff, 0x9b}, 96) || in({0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48) || in({0x20, 0x02}, 16))
    return address_class::ipv4_mapped;
  if (in({0xfc}, 7))
    return address_class::private_use;
  if (in({0xfe, 0x80}, 10))
    return address_class::link_local;
  if (in({0xff}, 8))
    return address_class::multicast;
  if (in({0x20, 0x01, 0x0d, 0xb8}, 32) || in({0x3f, 0xff}, 20))
    return address_class::documentation;
  // Global unicast is 2000::/3; of it, 2001::/23 holds the IETF's special-purpose blocks (Teredo
  // among them). Everything else (fec0::/10, 100::/64, unassigned space) is reserved.
  if (!in({0x20}, 3) || in({0x20, 0x01, 0x00}, 23))
    return address_class::reserved;
  return address_class::global;
}

bool valid_label_char(char c) { return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'z') || c == '-' || c == '_'; }

uint16_t default_port(std::string_view scheme) { return scheme == "https" ? 443 : 80; }

// Percent-encodes what may not stand in a request target as is; refuses control characters.
bool encode_target(std::string_view in, std::string& out, std::string& error) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out.clear();
  for (const char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      error = "the URL holds a control character";
      return false;
    }
    if (c == ' ' || c >= 0x80 || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' || c == '}' || c == '|' ||
        c == '\\' || c == '^') {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += ch;
    }
  }
  if (out.empty() || out[0] != '/')
    out.insert(out.begin(), '/');
  return true;
}

// Sets host and port from an authority ("host[:port]"); `scheme` must be set.
bool parse_authority(std::string_view auth, url& out, std::string& error) {
  if (auth.find('@') != std::string_view::npos) {
    error = "the URL holds a user name or password";
    return false;
  }
  std::string_view host_part = auth;
  std::string_view port_part;
  bool has_port = false;
  if (!auth.empty() && auth[0] == '[') {
    const size_t close = auth.find(']');
    if (close == std::string_view::npos) {
      error = "the URL's IPv6 address has no closing ']'";
      return false;
    }
    host_part = auth.substr(0, close + 1);
    if (close + 1 < auth.size()) {
      if (auth[close + 1] != ':') {
        error = "the URL's authority is malformed";
        return false;
      }
      has_port = true;
      port_part = auth.substr(close + 2);
    }
  } else if (const size_t colon = auth.rfind(':'); colon != std::string_view::npos) {
    host_part = auth.substr(0, colon);
    port_part = auth.substr(colon + 1);
    has_port = true;
  }
  out.h = parse_host(host_part);
  if (out.h.type == host::kind::invalid) {
    error = out.h.error;
    return false;
  }
  out.port = default_port(out.scheme);
  if (has_port && !port_part.empty()) {
    uint32_t port = 0;
    for (const char c : port_part) {
      if (!is_digit(c) || port > 65535) {
        error = "the URL's port is not a number from 1 to 65535";
        return false;
      }
      port = port * 10 + static_cast<uint32_t>(c - '0');
    }
    if (port == 0 || port > 65535) {
      error = "the URL's port is not a number from 1 to 65535";
      return false;
    }
    out.port = static_cast<uint16_t>(port);
  }
  return true;
}

std::string without_fragment(std::string_view s) { return std::string(s.substr(0, s.find('#'))); }

}  // namespace

ip_address ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  ip_address out;
  out.bytes[0] = a;
  out.bytes[1] = b;
  out.bytes[2] = c;
  out.bytes[3] = d;
  return out;
}

std::string ip_address::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buf, sizeof buf);
  return buf;
}

std::string_view to_string(address_class c) noexcept {
  switch (c) {
    case address_class::global:
      return "global";
    case address_class::unspecified:
      return "unspecified";
    case address_class::loopback:
      return "loopback";
    case address_class::private_use:
      return "private";
    case address_class::cgnat:
      return "carrier-grade NAT";
    case address_class::link_local:
      return "link-local";
    case address_class::metadata:
      return "cloud metadata";
    case address_class::multicast:
      return "multicast";
    case address_class::broadcast:
      return "broadcast";
    case address_class::reserved:
      return "reserved";
    case address_class::documentation:
      return "documentation";
    case address_class::ipv4_mapped:
      return "IPv4-mapped or -translated IPv6";
  }
  return "reserved";
}

address_class classify(const ip_address& a) noexcept { return a.v6 ? classify_v6(a) : classify_v4(a); }

bool permitted(const ip_address& a, bool allow_loopback) noexcept {
  const address_class c = classify(a);
  return c == address_class::global || (allow_loopback && c == address_class::loopback);
}

host parse_host(std::string_view text) {
  host out;
  const auto invalid = [&](std::string why) {
    out.type = host::kind::invalid;
    out.error = std::move(why);
    return out;
  };
  if (text.empty())
    return invalid("the URL has no host");
  if (text.front() == '[') {
    if (text.size() < 3 || text.back() != ']')
      return invalid("the URL's IPv6 address is malformed");
    const std::string inner(text.substr(1, text.size() - 2));
    if (inner.find('%') != std::string::npos)
      return invalid("IPv6 zone ids are not allowed in a fetched URL");
    if (::inet_pton(AF_INET6, inner.c_str(), out.ip.bytes.data()) != 1)
      return invalid("the URL's IPv6 address is malformed");
    out.ip.v6 = true;
    out.type = host::kind::ipv6;
    return out;
  }
  for (const char c : text) {
    if (c == '.' || valid_label_char(c))
      continue;
    if (static_cast<unsigned char>(c) >= 0x80)
      return invalid("the URL's host is not ASCII (give an internationalised name in its xn-- form)");
    return invalid("the URL's host holds a character a host name cannot have");
  }
  const std::string name = lowered(text);
  if (ends_in_number(name)) {
    if (!parse_ipv4(name, out.ip))
      return invalid("the URL's host is not a valid IPv4 address");
    out.type = host::kind::ipv4;
    return out;
  }
  std::string_view bare = name;
  if (bare.back() == '.')
    bare.remove_suffix(1);
  if (bare.empty() || bare.size() > 253)
    return invalid("the URL's host is not a valid host name");
  for (const std::string_view label : split_dots(bare)) {
    if (label.empty() || label.size() > 63)
      return invalid("the URL's host is not a valid host name");
  }
  out.type = host::kind::name;
  out.name = std::string(bare);
  return out;
}

std::string url::host_text() const { return h.type == host::kind::name ? h.name : h.ip.to_string(); }

std::string url::origin() const {
  std::string out = scheme + "://";
  out += h.type == host::kind::ipv6 ? "[" + host_text() + "]" : host_text();
  if (port != default_port(scheme))
    out += ":" + std::to_string(port);
  return out;
}

std::string url::loggable() const { return origin() + target.substr(0, target.find('?')); }

std::string url::text() const { return origin() + target; }

bool parse_url(std::string_view text, url& out, std::string& error) {
  out = url{};
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    error = "not an absolute URL";
    return false;
  }
  out.scheme = lowered(text.substr(0, colon));
  if (out.scheme != "https" && out.scheme != "http") {
    error = "only https URLs may be fetched (not " + out.scheme.substr(0, 16) + ":)";
    return false;
  }
  std::string_view rest = text.substr(colon + 1);
  if (!rest.starts_with("//")) {
    error = "not an absolute URL (expected " + out.scheme + "://host/...)";
    return false;
  }
  rest.remove_prefix(2);
  const size_t end = rest.find_first_of("/?#\\");
  if (end != std::string_view::npos && rest[end] == '\\') {
    error = "the URL holds a backslash";
    return false;
  }
  if (!parse_authority(rest.substr(0, end), out, error))
    return false;
  const std::string target = end == std::string_view::npos ? std::string("/") : without_fragment(rest.substr(end));
  return encode_target(target, out.target, error);
}

bool resolve_location(const url& base, std::string_view location, url& out, std::string& error) {
  const size_t colon = location.find(':');
  const size_t first_sep = location.find_first_of("/?#");
  if (colon != std::string_view::npos && (first_sep == std::string_view::npos || colon < first_sep))
    return parse_url(location, out, error);
  if (location.starts_with("//"))
    return parse_url(base.scheme + ":" + std::string(location), out, error);
  out = base;
  std::string target;
  if (location.starts_with("/")) {
    target = without_fragment(location);
  } else if (location.starts_with("?")) {
    target = base.target.substr(0, base.target.find('?')) + without_fragment(location);
  } else if (location.empty() || location.starts_with("#")) {
    target = base.target;
  } else {
    const std::string path = base.target.substr(0, base.target.find('?'));
    target = path.substr(0, path.rfind('/') + 1) + without_fragment(location);
  }
  return encode_target(target, out.target, error);
}

bool host_allowed(const policy& p, const url& u) {
  if (p.allow_hosts.empty())
    return true;
  const std::string name = u.host_text();
  for (const std::string& entry : p.allow_hosts) {
    std::string e = lowered(entry);
    while (!e.empty() && e.back() == '.')
      e.pop_back();
    if (e.starts_with("*.")) {
      const std::string suffix = e.substr(1);
      if (u.h.type == host::kind::name && name.size() > suffix.size() && name.ends_with(suffix))
        return true;
      continue;
    }
    if (u.h.type == host::kind::name) {
      if (e == name)
        return true;
    } else if (const host literal = parse_host(e.find(':') != std::string::npos ? "[" + e + "]" : e);
               literal.type != host::kind::invalid && literal.type != host::kind::name && literal.ip == u.h.ip) {
      return true;
    }
  }
  return false;
}

std::string check_url(const policy& p, const url& u) {
  if (u.h.type == host::kind::invalid)
    return u.h.error;
  if (!host_allowed(p, u))
    return "host " + u.host_text() + " is not on this server's fetch allow-list";
  if (u.h.type != host::kind::name)
    return check_addresses(p, u, {u.h.ip});
  if (u.scheme == "http" && !p.allow_loopback)
    return "only https URLs may be fetched (not http:)";
  return {};
}

std::string check_addresses(const policy& p, const url& u, const std::vector<ip_address>& addresses) {
  if (addresses.empty())
    return "host " + u.host_text() + " has no address";
  for (const ip_address& a : addresses) {
    if (!permitted(a, p.allow_loopback)) {
      return "host " + u.host_text() + " resolves to " + a.to_string() + " (" + std::string(to_string(classify(a))) +
             "), which actions may not reach";
    }
    if (u.scheme == "http" && classify(a) != address_class::loopback)
      return "only https URLs may be fetched (not http:)";
  }
  return {};
}

namespace {

class getaddrinfo_resolver final : public resolver {
 public:
  std::vector<ip_address> resolve(const std::string& name, std::chrono::steady_clock::time_point until,
                                  std::string& error) override {
    // getaddrinfo_a writes into the request until it is done or cancelled: a lookup that can be
    // neither waited for nor cancelled keeps its (small) request alive forever, deliberately.
    struct lookup {
      std::string name;
      addrinfo hints{};
      gaicb cb{};
    };
    auto* q = new lookup{name, {}, {}};
    q->hints.ai_family = AF_UNSPEC;
    q->hints.ai_socktype = SOCK_STREAM;
    q->cb.ar_name = q->name.c_str();
    q->cb.ar_request = &q->hints;
    gaicb* list[1] = {&q->cb};
    if (const int rc = ::getaddrinfo_a(GAI_NOWAIT, list, 1, nullptr); rc != 0) {
      error = std::string("name resolution failed: ") + ::gai_strerror(rc);
      delete q;
      return {};
    }
    for (;;) {
      const auto left = until - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero())
        break;
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      const timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
      const int rc = ::gai_suspend(list, 1, &ts);
      if (rc == EAI_INTR)
        continue;
      if (rc == EAI_AGAIN || ::gai_error(&q->cb) == EAI_INPROGRESS)
        continue;  // timed out: the loop's deadline check decides
      break;
    }
    const int status = ::gai_error(&q->cb);
    if (status == EAI_INPROGRESS) {
      if (::gai_cancel(&q->cb) == EAI_NOTCANCELED)
        (void)q;  // still running: left to finish on its own (see above)
      else
        delete q;
      error = "name resolution of " + name + " did not finish in time";
      return {};
    }
    std::vector<ip_address> out;
    if (status != 0) {
      error = "name resolution of " + name + " failed: " + ::gai_strerror(status);
    } else {
      for (const addrinfo* ai = q->cb.ar_result; ai != nullptr; ai = ai->ai_next) {
        ip_address a;
        if (ai->ai_family == AF_INET) {
          std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr, 4);
        } else if (ai->ai_family == AF_INET6) {
          a.v6 = true;
          std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr, 16);
        } else {
          continue;
        }
        if (std::find(out.begin(), out.end(), a) == out.end())
          out.push_back(a);
      }
      ::freeaddrinfo(q->cb.ar_result);
    }
    delete q;
    return out;
  }
};

}  // namespace

resolver& system_resolver() {
  static getaddrinfo_resolver r;
  return r;
}

}  // namespace enact::runtime::egress
