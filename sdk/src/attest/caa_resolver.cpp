// SPDX-License-Identifier: Apache-2.0
// CAA lookups through the system resolver (resolv.conf) and the parsing of the DNS answer
// (RFC 1035 §4.1, CAA RDATA per RFC 8659 §4.1). res_nquery lives in glibc's libc since 2.34;
// the answer is parsed here rather than with libresolv's ns_parserr, so the SDK needs no extra
// library and the parser is testable without a network.
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>

#include <cstring>

#include "enact/attest/network.hpp"

namespace enact::attest {

namespace {

constexpr int kTypeCaa = 257;

/// Skips a (possibly compressed) domain name at `pos`.
result<size_t> skip_name(bytes_view m, size_t pos) {
  for (size_t labels = 0; labels < 128; ++labels) {
    if (pos >= m.size())
      return fail(attest_errc::truncated, "DNS answer: name runs past the end");
    const uint8_t len = m[pos];
    if ((len & 0xc0) == 0xc0) {  // pointer: the name ends here
      if (pos + 2 > m.size())
        return fail(attest_errc::truncated, "DNS answer: name pointer runs past the end");
      return pos + 2;
    }
    if ((len & 0xc0) != 0)
      return fail(attest_errc::bad_field, "DNS answer: unknown label type");
    if (len == 0)
      return pos + 1;
    pos += 1 + len;
  }
  return fail(attest_errc::bad_field, "DNS answer: name has too many labels");
}

uint16_t be16(bytes_view m, size_t at) { return static_cast<uint16_t>(m[at] << 8 | m[at + 1]); }

class system_resolver final : public caa_resolver {
 public:
  result<std::vector<caa_record>> caa(std::string_view domain) override {
    std::string name(domain);
    if (name.rfind("*.", 0) == 0)  // the records of a wildcard name are those of its parent
      name.erase(0, 2);
    while (!name.empty() && name.back() == '.')
      name.pop_back();
    // RFC 8659 §3: climb from the name to its parents until a CAA set is found; the root is
    // never queried.
    while (!name.empty()) {
      ENACT_TRY(std::vector<caa_record> records, query(name));
      if (!records.empty())
        return records;
      const size_t dot = name.find('.');
      if (dot == std::string::npos)
        break;
      name.erase(0, dot + 1);
    }
    return std::vector<caa_record>{};
  }

 private:
  static result<std::vector<caa_record>> query(const std::string& name) {
    struct state {
      struct __res_state res;
      bool ok = false;
      state() {
        std::memset(&res, 0, sizeof res);
        ok = res_ninit(&res) == 0;
      }
      ~state() {
        if (ok)
          res_nclose(&res);
      }
    } st;
    if (!st.ok)
      return fail(attest_errc::lookup_failed, "CAA " + name + ": resolver initialisation failed");
    bytes answer(65535);
    const int n = res_nquery(&st.res, name.c_str(), ns_c_in, kTypeCaa, answer.data(), static_cast<int>(answer.size()));
    if (n < 0) {
      // NXDOMAIN and NODATA: no records at this name.
      if (st.res.res_h_errno == HOST_NOT_FOUND || st.res.res_h_errno == NO_DATA)
        return std::vector<caa_record>{};
      return fail(attest_errc::lookup_failed,
                  "CAA " + name + ": lookup failed (h_errno " + std::to_string(st.res.res_h_errno) + ")");
    }
    answer.resize(static_cast<size_t>(n));
    return parse_caa_answer(answer);
  }
};

}  // namespace

std::unique_ptr<caa_resolver> system_caa_resolver() { return std::make_unique<system_resolver>(); }

result<std::vector<caa_record>> parse_caa_answer(bytes_view m) {
  if (m.size() < 12)
    return fail(attest_errc::truncated, "DNS answer: shorter than its 12-byte header");
  const uint16_t qdcount = be16(m, 4);
  const uint16_t ancount = be16(m, 6);
  size_t pos = 12;
  for (uint16_t i = 0; i < qdcount; ++i) {
    ENACT_TRY(pos, skip_name(m, pos));
    if (pos + 4 > m.size())
      return fail(attest_errc::truncated, "DNS answer: question runs past the end");
    pos += 4;  // QTYPE, QCLASS
  }
  std::vector<caa_record> out;
  for (uint16_t i = 0; i < ancount; ++i) {
    ENACT_TRY(pos, skip_name(m, pos));
    if (pos + 10 > m.size())
      return fail(attest_errc::truncated, "DNS answer: record header runs past the end");
    const uint16_t type = be16(m, pos);
    const uint16_t rdlength = be16(m, pos + 8);
    pos += 10;
    if (pos + rdlength > m.size())
      return fail(attest_errc::truncated, "DNS answer: RDATA runs past the end");
    const bytes_view rdata = m.subspan(pos, rdlength);
    pos += rdlength;
    if (type != kTypeCaa)  // CNAMEs on the way to the records
      continue;
    // flags (1), tag length (1), tag, value (the rest).
    if (rdata.size() < 2 || rdata[1] == 0 || 2u + rdata[1] > rdata.size())
      return fail(attest_errc::bad_field, "DNS answer: malformed CAA RDATA");
    caa_record rec;
    rec.flags = rdata[0];
    rec.tag.assign(reinterpret_cast<const char*>(rdata.data() + 2), rdata[1]);
    rec.value.assign(reinterpret_cast<const char*>(rdata.data() + 2 + rdata[1]), rdata.size() - 2 - rdata[1]);
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace enact::attest
