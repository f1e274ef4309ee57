// SPDX-License-Identifier: Apache-2.0
// The egress policy of Enact.fetch (docs/architecture.md §4 "Action runtime"; docs/security.md
// "Egress policy"): which URLs an action may have the server fetch, and which addresses the
// server may connect to for it. Everything here is a pure function of its arguments (the
// resolver aside), so the rules are unit-tested exhaustively without touching a network.
//
// The rules: https only (http only to loopback under the development setting); no credentials in
// the URL; the host, when the operator gave an allow-list, on it; the host resolved once, every
// address it resolves to a global unicast address (never unspecified, loopback, private,
// carrier-grade NAT, link-local, the cloud metadata addresses, multicast, broadcast, reserved,
// documentation, IPv4-mapped or IPv4-translating IPv6), and the connection made to the checked
// address; the same again for every redirect. Hosts are read as the WHATWG URL standard reads
// them, so `127.1`, `0x7f000001`, `2130706433` and `0177.0.0.1` are the IPv4 address they spell,
// not names to look up.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace enact::runtime::egress {

/// An IPv4 or IPv6 address.
struct ip_address {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4: the first 4

  /// Dotted quad, or RFC 5952 text (inet_ntop) for IPv6.
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const ip_address&, const ip_address&) = default;
};

[[nodiscard]] ip_address ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d);

/// What an address is, as far as the policy cares; only `global` may be fetched from (and
/// `loopback` under the development setting).
enum class address_class {
  global,
  unspecified,    // 0.0.0.0/8, ::
  loopback,       // 127.0.0.0/8, ::1
  private_use,    // 10/8, 172.16/12, 192.168/16, fc00::/7
  cgnat,          // 100.64.0.0/10 (carrier-grade NAT, RFC 6598)
  link_local,     // 169.254.0.0/16, fe80::/10
  metadata,       // 169.254.169.254, fd00:ec2::254 (cloud instance metadata)
  multicast,      // 224.0.0.0/4, ff00::/8
  broadcast,      // 255.255.255.255
  reserved,       // 240.0.0.0/4, 192.0.0.0/24, 198.18.0.0/15, fec0::/10, 100::/64, 2001::/23, outside 2000::/3
  documentation,  // 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 3fff::/20
  ipv4_mapped,    // ::ffff:0:0/96, ::/96 (IPv4-compatible), 64:ff9b::/96 and 64:ff9b:1::/48 (NAT64), 2002::/16 (6to4)
};

/// The class's name as messages and logs give it ("loopback", "private", "metadata", ...).
[[nodiscard]] std::string_view to_string(address_class c) noexcept;

[[nodiscard]] address_class classify(const ip_address& a) noexcept;

/// Whether a fetch may connect to `a`: a global address, or loopback when `allow_loopback`.
[[nodiscard]] bool permitted(const ip_address& a, bool allow_loopback) noexcept;

/// A URL's host as the WHATWG URL standard reads it.
struct host {
  enum class kind { name, ipv4, ipv6, invalid } type = kind::invalid;
  ip_address ip;      // ipv4, ipv6
  std::string name;   // name: lower case, without its trailing dot
  std::string error;  // invalid: why
};

/// Parses the host part of a URL's authority: `[v6]` (no zone id), an IPv4 address in any of
/// the forms the URL standard accepts (1 to 4 parts, each decimal, 0x-hex or 0-octal, a trailing
/// dot allowed), or an ASCII domain name (letters, digits, '-' and '_' in labels of at most 63).
[[nodiscard]] host parse_host(std::string_view text);

/// An absolute http(s) URL, parsed for a request.
struct url {
  std::string scheme;  // "http" or "https"
  host h;
  uint16_t port = 0;   // the default port when none is written
  std::string target;  // path and query, starting with '/'; non-ASCII and spaces percent-encoded

  /// The host as a request names it: the name, the dotted quad, or the IPv6 address (no brackets).
  [[nodiscard]] std::string host_text() const;
  /// scheme://host[:port] with the port only when it is not the scheme's default.
  [[nodiscard]] std::string origin() const;
  /// origin() and the path, without the query: what logs show (a query may carry a secret).
  [[nodiscard]] std::string loggable() const;
  /// origin() and the target.
  [[nodiscard]] std::string text() const;
};

/// Parses `text` (http or https only; no user name or password; no fragment kept). False and
/// the reason in `error`.
[[nodiscard]] bool parse_url(std::string_view text, url& out, std::string& error);

/// A redirect's Location resolved against the URL that answered it (absolute, scheme-relative,
/// absolute-path, relative-path and query-only references).
[[nodiscard]] bool resolve_location(const url& base, std::string_view location, url& out, std::string& error);

/// The operator's rules for one server (docs/configuration.md "--fetch-*").
struct policy {
  /// Development only: loopback addresses may be fetched from, over http too.
  bool allow_loopback = false;
  /// Hosts an action may fetch from; empty: any host that passes the address checks. An entry
  /// is a name ("api.example.org", exactly that host), "*.example.org" (its subdomains, not the
  /// name itself), or an IP address literal.
  std::vector<std::string> allow_hosts;
};

/// Whether the operator's allow-list admits `u`'s host.
[[nodiscard]] bool host_allowed(const policy& p, const url& u);

/// The checks that need no name resolution: the scheme and the allow-list; for an IP literal host
/// its address too. Empty when they pass, else why not.
[[nodiscard]] std::string check_url(const policy& p, const url& u);

/// The checks of the addresses `u`'s host resolved to: there is one, and every one is permitted
/// (one forbidden address refuses the host: a name that also points inside is not fetched from),
/// and http only to loopback. Empty when they pass, else why not.
[[nodiscard]] std::string check_addresses(const policy& p, const url& u, const std::vector<ip_address>& addresses);

/// Name resolution, injected so tests can answer with any address without a network.
class resolver {
 public:
  virtual ~resolver() = default;
  /// The addresses of `name` (IPv4 and IPv6), or an empty list and `error`; gives up at `until`.
  [[nodiscard]] virtual std::vector<ip_address> resolve(const std::string& name,
                                                        std::chrono::steady_clock::time_point until,
                                                        std::string& error) = 0;
};

/// The system's resolver (getaddrinfo_a, abandoned at the deadline).
[[nodiscard]] resolver& system_resolver();

}  // namespace enact::runtime::egress
