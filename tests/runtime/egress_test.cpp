// SPDX-License-Identifier: Apache-2.0
// The egress policy of Enact.fetch as pure functions (server/runtime/egress.hpp): hosts in every
// form the URL standard reads, each address class, URLs and redirect locations, the allow-list,
// and the checks of a resolver's answers. A resolver fixture answers with private, link-local and
// metadata addresses; nothing here connects anywhere, and a fetch the policy refuses is refused
// before any connection (the fixture's answers are the only way those addresses come in).
#include <doctest/doctest.h>

#include <boost/json/object.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/egress.hpp"
#include "runtime/fetch.hpp"

namespace eg = enact::runtime::egress;
namespace json = boost::json;

namespace {

eg::ip_address v6(std::string_view text) {
  const eg::host h = eg::parse_host("[" + std::string(text) + "]");
  REQUIRE_MESSAGE(h.type == eg::host::kind::ipv6, text);
  return h.ip;
}

eg::ip_address v4(std::string_view text) {
  const eg::host h = eg::parse_host(text);
  REQUIRE_MESSAGE(h.type == eg::host::kind::ipv4, text);
  return h.ip;
}

eg::url parsed(std::string_view text) {
  eg::url u;
  std::string error;
  REQUIRE_MESSAGE(eg::parse_url(text, u, error), text, ": ", error);
  return u;
}

// Answers from a table; counts the questions.
struct fixture_resolver : eg::resolver {
  std::map<std::string, std::vector<eg::ip_address>> answers;
  std::vector<std::string> asked;
  std::vector<eg::ip_address> resolve(const std::string& name, std::chrono::steady_clock::time_point,
                                      std::string& error) override {
    asked.push_back(name);
    const auto it = answers.find(name);
    if (it == answers.end()) {
      error = "name resolution of " + name + " failed: unknown name";
      return {};
    }
    return it->second;
  }
};

}  // namespace

TEST_CASE("egress: IPv4 hosts in every form the URL standard reads") {
  struct case_ {
    std::string_view host;
    std::string_view address;
  };
  const case_ cases[] = {
      {"127.0.0.1", "127.0.0.1"},
      {"127.1", "127.0.0.1"},
      {"127.0.1", "127.0.0.1"},
      {"0x7f000001", "127.0.0.1"},
      {"0X7F000001", "127.0.0.1"},
      {"2130706433", "127.0.0.1"},
      {"0177.0.0.1", "127.0.0.1"},
      {"0x7f.1", "127.0.0.1"},
      {"127.0.0.1.", "127.0.0.1"},
      {"0", "0.0.0.0"},
      {"0.0.0.0", "0.0.0.0"},
      {"0x", "0.0.0.0"},
      {"169.254.169.254", "169.254.169.254"},
      {"0xa9fea9fe", "169.254.169.254"},
      {"2852039166", "169.254.169.254"},
      {"0251.0376.0251.0376", "169.254.169.254"},
      {"10.1", "10.0.0.1"},
      {"4294967295", "255.255.255.255"},
      {"8.8.8.8", "8.8.8.8"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.host);
    const eg::host h = eg::parse_host(c.host);
    REQUIRE(h.type == eg::host::kind::ipv4);
    CHECK(h.ip.to_string() == c.address);
  }
  // Ends in a number but is no address: invalid, never a name to look up.
  for (const std::string_view bad : {"4294967296", "256.0.0.1", "1.2.3.4.5", "1.2.3.256", "0x1g.1", "09.1.1.1",
                                     "1.2.65536", "example.123", "1..2", "0x100000000"}) {
    CAPTURE(bad);
    CHECK(eg::parse_host(bad).type == eg::host::kind::invalid);
  }
}

TEST_CASE("egress: IPv6 hosts, zone ids, names and what no host may hold") {
  CHECK(v6("::1").to_string() == "::1");
  CHECK(v6("::ffff:127.0.0.1").to_string() == "::ffff:127.0.0.1");
  CHECK(v6("0:0:0:0:0:0:0:1") == v6("::1"));
  for (const std::string_view zoned : {"[fe80::1%25eth0]", "[fe80::1%eth0]", "[::1%1]"}) {
    const eg::host h = eg::parse_host(zoned);
    CHECK(h.type == eg::host::kind::invalid);
    CHECK(h.error.find("zone") != std::string::npos);
  }
  for (const std::string_view bad : {"[::1", "[]", "[127.0.0.1]", "[:::1]", "", "exa mple.org", "ex%41mple.org",
                                     "exämple.org", "a..b", "foo@bar", ".", "-.."}) {
    CAPTURE(bad);
    CHECK(eg::parse_host(bad).type == eg::host::kind::invalid);
  }
  const eg::host name = eg::parse_host("API.Example.ORG.");
  REQUIRE(name.type == eg::host::kind::name);
  CHECK(name.name == "api.example.org");                            // lower case, trailing dot dropped
  CHECK(eg::parse_host("localhost").type == eg::host::kind::name);  // a name: its addresses decide
  CHECK(eg::parse_host("1.2.3.example").type == eg::host::kind::name);
}

TEST_CASE("egress: every address class, and which ones a fetch may reach") {
  using ac = eg::address_class;
  struct case_ {
    eg::ip_address a;
    ac expected;
  };
  const case_ cases[] = {
      {v4("0.0.0.0"), ac::unspecified},
      {v4("0.1.2.3"), ac::unspecified},
      {v4("127.0.0.1"), ac::loopback},
      {v4("127.255.255.254"), ac::loopback},
      {v4("10.0.0.1"), ac::private_use},
      {v4("172.16.0.1"), ac::private_use},
      {v4("172.31.255.255"), ac::private_use},
      {v4("192.168.1.1"), ac::private_use},
      {v4("100.64.0.1"), ac::cgnat},
      {v4("100.127.255.255"), ac::cgnat},
      {v4("169.254.0.1"), ac::link_local},
      {v4("169.254.169.254"), ac::metadata},
      {v4("224.0.0.1"), ac::multicast},
      {v4("239.255.255.255"), ac::multicast},
      {v4("255.255.255.255"), ac::broadcast},
      {v4("240.0.0.1"), ac::reserved},
      {v4("192.0.0.8"), ac::reserved},
      {v4("198.18.0.1"), ac::reserved},
      {v4("192.0.2.1"), ac::documentation},
      {v4("198.51.100.1"), ac::documentation},
      {v4("203.0.113.1"), ac::documentation},
      {v4("8.8.8.8"), ac::global},
      {v4("172.15.255.255"), ac::global},
      {v4("172.32.0.0"), ac::global},
      {v4("100.63.255.255"), ac::global},
      {v4("100.128.0.0"), ac::global},
      {v4("169.253.255.255"), ac::global},
      {v6("::"), ac::unspecified},
      {v6("::1"), ac::loopback},
      {v6("::ffff:127.0.0.1"), ac::ipv4_mapped},
      {v6("::ffff:8.8.8.8"), ac::ipv4_mapped},
      {v6("::ffff:169.254.169.254"), ac::ipv4_mapped},
      {v6("::127.0.0.1"), ac::ipv4_mapped},
      {v6("64:ff9b::a9fe:a9fe"), ac::ipv4_mapped},
      {v6("64:ff9b:1::1"), ac::ipv4_mapped},
      {v6("2002:7f00:1::1"), ac::ipv4_mapped},
      {v6("fc00::1"), ac::private_use},
      {v6("fd12:3456::1"), ac::private_use},
      {v6("fd00:ec2::254"), ac::metadata},
      {v6("fe80::1"), ac::link_local},
      {v6("febf::1"), ac::link_local},
      {v6("fec0::1"), ac::reserved},
      {v6("ff02::1"), ac::multicast},
      {v6("100::1"), ac::reserved},
      {v6("2001::1"), ac::reserved},  // Teredo
      {v6("2001:db8::1"), ac::documentation},
      {v6("3fff::1"), ac::documentation},
      {v6("4000::1"), ac::reserved},
      {v6("2606:4700::1111"), ac::global},
      {v6("2a00:1450:4001::1"), ac::global},
  };
  for (const auto& c : cases) {
    CAPTURE(c.a.to_string());
    CHECK(eg::classify(c.a) == c.expected);
    CHECK(eg::permitted(c.a, false) == (c.expected == ac::global));
    CHECK(eg::permitted(c.a, true) == (c.expected == ac::global || c.expected == ac::loopback));
  }
}

TEST_CASE("egress: URLs, and the checks that need no lookup") {
  const eg::url u = parsed("HTTPS://API.example.org:8443/v1/price?ids=eth&key=s3cret#frag");
  CHECK(u.scheme == "https");
  CHECK(u.host_text() == "api.example.org");
  CHECK(u.port == 8443);
  CHECK(u.target == "/v1/price?ids=eth&key=s3cret");
  CHECK(u.loggable() == "https://api.example.org:8443/v1/price");
  CHECK(parsed("https://example.org").target == "/");
  CHECK(parsed("https://example.org?q=1").target == "/?q=1");
  CHECK(parsed("https://example.org/a b/é").target == "/a%20b/%C3%A9");
  CHECK(parsed("https://[::1]:8080/x").origin() == "https://[::1]:8080");
  CHECK(parsed("https://example.org:443/").origin() == "https://example.org");
  CHECK(parsed("https://127.1/").host_text() == "127.0.0.1");

  for (const std::string_view bad :
       {"ftp://example.org/", "file:///etc/passwd", "javascript:alert(1)", "example.org/x", "https:example.org",
        "https://user:pw@example.org/", "https://example.org@127.0.0.1/", "https://example.org:0/",
        "https://example.org:65536/", "https://example.org:x/", "https://exa\\mple.org/", "https:///x",
        "https://example.org/\r\nHost: evil", "https://[fe80::1%25eth0]/", "https://256.1.1.1/"}) {
    CAPTURE(bad);
    eg::url out;
    std::string error;
    CHECK_FALSE(eg::parse_url(bad, out, error));
    CHECK_FALSE(error.empty());
  }

  eg::policy off;
  eg::policy dev;
  dev.allow_loopback = true;
  CHECK(eg::check_url(off, parsed("https://example.org/")).empty());
  CHECK(eg::check_url(off, parsed("http://example.org/")).find("only https") != std::string::npos);
  // http is for loopback under the development setting only; https to loopback needs it too.
  CHECK(eg::check_url(dev, parsed("http://example.org/")).empty());  // decided by its addresses
  CHECK(eg::check_addresses(dev, parsed("http://example.org/"), {v4("8.8.8.8")}).find("only https") !=
        std::string::npos);
  for (const std::string_view literal :
       {"https://127.0.0.1/", "https://127.1/", "https://0x7f000001/", "https://2130706433/", "https://0/",
        "https://0.0.0.0/", "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://[::]/",
        "https://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/", "https://10.0.0.1/",
        "https://100.64.1.1/", "https://[fe80::1]/", "https://224.0.0.1/", "https://127.0.0.1./"}) {
    CAPTURE(literal);
    CHECK(eg::check_url(off, parsed(literal)).find("actions may not reach") != std::string::npos);
  }
  CHECK(eg::check_url(dev, parsed("http://127.0.0.1:9/")).empty());
  CHECK(eg::check_url(dev, parsed("https://[::1]:9/")).empty());
  CHECK_FALSE(eg::check_url(dev, parsed("http://[::ffff:127.0.0.1]/")).empty());  // mapped: never
  CHECK_FALSE(eg::check_url(dev, parsed("http://169.254.169.254/")).empty());
  CHECK(eg::check_url(off, parsed("https://8.8.8.8/")).empty());
}

TEST_CASE("egress: the operator's allow-list") {
  eg::policy p;
  p.allow_hosts = {"api.example.org", "*.prices.example", "8.8.8.8", "2606:4700::1111", "Trailing.Example."};
  CHECK(eg::host_allowed(p, parsed("https://api.example.org/")));
  CHECK(eg::host_allowed(p, parsed("https://API.EXAMPLE.ORG./")));
  CHECK_FALSE(eg::host_allowed(p, parsed("https://example.org/")));
  CHECK_FALSE(eg::host_allowed(p, parsed("https://evil-api.example.org/")));
  CHECK_FALSE(eg::host_allowed(p, parsed("https://api.example.org.evil.test/")));
  CHECK(eg::host_allowed(p, parsed("https://eth.prices.example/")));
  CHECK(eg::host_allowed(p, parsed("https://a.b.prices.example/")));
  CHECK_FALSE(eg::host_allowed(p, parsed("https://prices.example/")));
  CHECK_FALSE(eg::host_allowed(p, parsed("https://xprices.example/")));
  CHECK(eg::host_allowed(p, parsed("https://8.8.8.8/")));
  CHECK(eg::host_allowed(p, parsed("https://134744072/")));  // 8.8.8.8 spelled as a number
  CHECK_FALSE(eg::host_allowed(p, parsed("https://8.8.4.4/")));
  CHECK(eg::host_allowed(p, parsed("https://[2606:4700:0::1111]/")));
  CHECK(eg::host_allowed(p, parsed("https://trailing.example/")));
  CHECK(eg::check_url(p, parsed("https://example.org/")).find("allow-list") != std::string::npos);
  // The allow-list never admits a forbidden address.
  p.allow_hosts = {"127.0.0.1", "internal.example"};
  CHECK(eg::check_url(p, parsed("https://127.0.0.1/")).find("actions may not reach") != std::string::npos);
  CHECK_FALSE(eg::check_addresses(p, parsed("https://internal.example/"), {v4("10.0.0.5")}).empty());
}

TEST_CASE("egress: a resolver's answers, every one checked") {
  eg::policy p;
  const eg::url u = parsed("https://feed.example/");
  CHECK(eg::check_addresses(p, u, {v4("93.184.216.34")}).empty());
  CHECK(eg::check_addresses(p, u, {v4("93.184.216.34"), v6("2606:2800:220:1::1")}).empty());
  CHECK(eg::check_addresses(p, u, {}).find("no address") != std::string::npos);
  // One forbidden answer among good ones refuses the host: no connection picks among them.
  for (const std::string_view bad : {"127.0.0.1", "10.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "192.168.0.1",
                                     "172.16.5.5", "224.0.0.251"}) {
    CAPTURE(bad);
    const std::string why = eg::check_addresses(p, u, {v4("93.184.216.34"), v4(bad)});
    CHECK(why.find("feed.example resolves to " + std::string(bad)) != std::string::npos);
  }
  for (const std::string_view bad : {"::1", "fd00:ec2::254", "fe80::1", "::ffff:10.0.0.1", "fc00::2", "::"}) {
    CAPTURE(bad);
    CHECK_FALSE(eg::check_addresses(p, u, {v6("2606:2800:220:1::1"), v6(bad)}).empty());
  }
  CHECK(eg::check_addresses(p, u, {v4("169.254.169.254")}).find("cloud metadata") != std::string::npos);
}

TEST_CASE("egress: redirect locations") {
  const eg::url base = parsed("https://a.example/v1/price?x=1");
  const auto resolved = [&](std::string_view location) {
    eg::url out;
    std::string error;
    REQUIRE_MESSAGE(eg::resolve_location(base, location, out, error), location, ": ", error);
    return out.text();
  };
  CHECK(resolved("https://b.example/z") == "https://b.example/z");
  CHECK(resolved("//c.example/y") == "https://c.example/y");
  CHECK(resolved("/abs?q=2") == "https://a.example/abs?q=2");
  CHECK(resolved("rel") == "https://a.example/v1/rel");
  CHECK(resolved("?y=2") == "https://a.example/v1/price?y=2");
  CHECK(resolved("/p#frag") == "https://a.example/p");
  eg::url out;
  std::string error;
  CHECK_FALSE(eg::resolve_location(base, "ftp://x/", out, error));
  CHECK_FALSE(eg::resolve_location(base, "https://user@x/", out, error));
  // A redirect to a forbidden place fails the same checks as a first URL.
  eg::policy p;
  REQUIRE(eg::resolve_location(base, "http://169.254.169.254/latest/meta-data/", out, error));
  CHECK_FALSE(eg::check_url(p, out).empty());
  REQUIRE(eg::resolve_location(base, "https://0x7f000001:8080/", out, error));
  CHECK(eg::check_url(p, out).find("loopback") != std::string::npos);
}

TEST_CASE("egress: fetches the resolver fixture points inside are refused before any connection") {
  fixture_resolver r;
  r.answers["metadata.test"] = {v4("169.254.169.254")};
  r.answers["private.test"] = {v4("10.20.30.40")};
  r.answers["v6private.test"] = {v6("fd00:ec2::254")};
  r.answers["mixed.test"] = {v4("93.184.216.34"), v4("192.168.1.1")};
  r.answers["mapped.test"] = {v6("::ffff:127.0.0.1")};
  r.answers["cgnat.test"] = {v4("100.100.100.100")};
  r.answers["linklocal.test"] = {v6("fe80::1")};
  r.answers["loop.test"] = {v4("127.0.0.1")};
  enact::runtime::fetch_settings s;
  std::vector<json::object> logged;
  enact::runtime::fetch_session session(s, r, [&](std::string_view, json::object f) { logged.push_back(f); });
  for (const std::string_view host : {"metadata.test", "private.test", "v6private.test", "mixed.test", "mapped.test",
                                      "cgnat.test", "linklocal.test", "loop.test"}) {
    CAPTURE(host);
    const auto out = session.fetch(json::object{{"url", "https://" + std::string(host) + "/x?token=abc"}});
    REQUIRE_FALSE(out.has_value());
    CHECK(out.err().message.rfind("fetch: host " + std::string(host) + " resolves to ", 0) == 0);
    CHECK(out.err().message.find("actions may not reach") != std::string::npos);
    REQUIRE_FALSE(logged.empty());
    CHECK(logged.back().at("url").as_string() == "https://" + std::string(host) + "/x");  // no query
    CHECK(std::string(logged.back().at("outcome").as_string()).rfind("refused: ", 0) == 0);
  }
  CHECK(session.made() == 0);  // nothing went out, so nothing is charged
  CHECK(r.asked.size() == 8);
  // Names it cannot resolve, and literals, refused the same way; literals are not looked up.
  CHECK(session.fetch(json::object{{"url", "https://unknown.test/"}}).err().message.find("unknown name") !=
        std::string::npos);
  CHECK_FALSE(session.fetch(json::object{{"url", "https://[::ffff:169.254.169.254]/"}}).has_value());
  CHECK(r.asked.size() == 9);
}

TEST_CASE("egress: the request options the server accepts") {
  fixture_resolver r;  // knows no name: every check below comes first
  enact::runtime::fetch_settings s;
  enact::runtime::fetch_session session(s, r, nullptr);
  const auto refusal = [&](json::value init) {
    const auto out = session.fetch(json::object{{"url", "https://unknown.test/"}, {"init", init}});
    REQUIRE_FALSE(out.has_value());
    return out.err().message;
  };
  CHECK(refusal("GET").find("options must be an object") != std::string::npos);
  CHECK(refusal(json::object{{"method", "TRACE"}}).find("method must be one of") != std::string::npos);
  CHECK(refusal(json::object{{"method", "CONNECT"}}).find("method must be one of") != std::string::npos);
  CHECK(refusal(json::object{{"headers", json::object{{"Host", "evil"}}}}).find("set by the server") !=
        std::string::npos);
  CHECK(refusal(json::object{{"headers", json::object{{"Content-Length", "1"}}}}).find("set by the server") !=
        std::string::npos);
  CHECK(refusal(json::object{{"headers", json::object{{"X-A", "a\r\nX-B: b"}}}}).find("line break") !=
        std::string::npos);
  CHECK(refusal(json::object{{"headers", json::object{{"bad name", "x"}}}}).find("not a valid name") !=
        std::string::npos);
  CHECK(refusal(json::object{{"headers", json::object{{"x", json::object{}}}}}).find("string value") !=
        std::string::npos);
  CHECK(refusal(json::object{{"body", "x"}}).find("GET request has no body") != std::string::npos);
  CHECK(refusal(json::object{{"method", "POST"}, {"body", 1}}).find("body must be a string") != std::string::npos);
  CHECK(session.fetch(json::object{{"url", 5}}).err().message == "fetch: the URL must be a string");
  // Well-formed options reach the lookup (which fails here: no name is known).
  CHECK(refusal(
            json::object{{"method", "post"}, {"headers", json::object{{"X-Api-Key", "k"}, {"X-N", 1}}}, {"body", "{}"}})
            .find("unknown name") != std::string::npos);
}

TEST_CASE("egress: the per-run count") {
  fixture_resolver r;
  enact::runtime::fetch_settings s;
  s.max_fetches = 2;
  enact::runtime::fetch_session session(s, r, nullptr);
  for (int i = 0; i < 2; ++i)
    CHECK(session.fetch(json::object{{"url", "https://unknown.test/"}}).err().message.find("unknown name") !=
          std::string::npos);
  CHECK(session.fetch(json::object{{"url", "https://unknown.test/"}}).err().message ==
        "fetch: a run may make at most 2 fetches");
  s.max_fetches = 0;
  enact::runtime::fetch_session none(s, r, nullptr);
  CHECK(none.fetch(json::object{{"url", "https://unknown.test/"}}).err().message ==
        "fetch: this server does not let actions fetch");
}
