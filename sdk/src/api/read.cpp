// SPDX-License-Identifier: Apache-2.0
// Request bodies of the core service, read without exceptions (enact/api/read.hpp).
#include "enact/api/read.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::api {

namespace {

error invalid(std::string message) { return fail(api_errc::invalid_request, std::move(message)); }

std::string path(std::string_view field) { return "body." + std::string(field); }

std::string indexed(std::string_view field, size_t i) { return std::string(field) + "[" + std::to_string(i) + "]"; }

result<const json::object*> object_of(const json::value& body) {
  if (!body.is_object())
    return invalid("body: expected a JSON object");
  return &body.get_object();
}

result<const json::value*> required(const json::object& o, std::string_view field) {
  const json::value* v = o.if_contains(field);
  if (v == nullptr)
    return invalid(path(field) + ": required");
  return v;
}

/// Free text: absent (or not a string) reads as empty, as the schema allows only strings here.
std::string text(const json::object& o, std::string_view field) {
  const json::value* v = o.if_contains(field);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::optional<std::string> optional_text(const json::object& o, std::string_view field) {
  const json::value* v = o.if_contains(field);
  if (v == nullptr || !v->is_string())
    return std::nullopt;
  return std::string(v->get_string());
}

/// A set of `T` (absent: empty); an element listed twice is refused at its second position.
template <class T, class Read>
result<std::vector<T>> set_of(const json::object& o, std::string_view field, Read read_one) {
  std::vector<T> out;
  const json::value* v = o.if_contains(field);
  if (v == nullptr)
    return out;
  if (!v->is_array())
    return invalid(path(field) + ": expected an array");
  const json::array& a = v->get_array();
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ENACT_TRY(T x, read_one(a[i], indexed(field, i)));
    if (std::find(out.begin(), out.end(), x) != out.end())
      return invalid(path(indexed(field, i)) + ": listed twice");
    out.push_back(std::move(x));
  }
  return out;
}

result<std::vector<address>> addresses(const json::object& o, std::string_view field) {
  return set_of<address>(o, field, [](const json::value& v, const std::string& f) { return read_address(v, f); });
}

result<std::vector<hash256>> hashes(const json::object& o, std::string_view field) {
  return set_of<hash256>(o, field, [](const json::value& v, const std::string& f) { return read_hash(v, f); });
}

result<uint64_t> group_id_field(const json::object& o) {
  ENACT_TRY(const json::value* v, required(o, "group_id"));
  return read_group_id(*v, "group_id");
}

result<hash256> hashed_cid_field(const json::object& o) {
  ENACT_TRY(const json::value* v, required(o, "hashed_cid"));
  return read_hash(*v, "hashed_cid");
}

}  // namespace

// --- single values -------------------------------------------------------------------------------

result<uint64_t> read_group_id(const json::value& v, std::string_view field) {
  uint64_t id = 0;
  if (v.is_uint64()) {
    id = v.get_uint64();
  } else if (v.is_int64() && v.get_int64() >= 0) {
    id = static_cast<uint64_t>(v.get_int64());
  } else if (v.is_string()) {
    const json::string& t = v.get_string();
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
    if (ec != std::errc{} || end != t.data() + t.size() || t.empty())
      return invalid(std::string(field) + ": expected a group id, got '" + std::string(t) + "'");
  } else {
    return invalid(std::string(field) + ": expected a group id");
  }
  if (id == 0)
    return invalid(std::string(field) + ": 0 is the wildcard, not a group");
  return id;
}

result<address> read_address(const json::value& v, std::string_view field) {
  if (!v.is_string())
    return invalid(path(field) + ": expected an address");
  auto a = parse_address(v.get_string(), path(field));
  if (!a)
    return invalid(a.err().message);
  return *a;
}

result<hash256> read_hash(const json::value& v, std::string_view field) {
  if (!v.is_string())
    return invalid(path(field) + ": expected 0x + 64 hex digits");
  auto h = codec::hex::decode_fixed<32>(v.get_string(), path(field));
  if (!h || !v.get_string().starts_with("0x"))
    return invalid(path(field) + ": expected 0x + 64 hex digits");
  return *h;
}

result<std::string> read_cid(const json::value& v, std::string_view field) {
  if (!v.is_string())
    return invalid(path(field) + ": expected a string");
  std::string cid(v.get_string());
  auto parsed = ipfs::parse(cid);
  if (!parsed)
    return invalid(path(field) + ": " + parsed.err().message);
  return cid;
}

// --- request bodies ------------------------------------------------------------------------------

template <>
result<new_account_request> read<new_account_request>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY_VOID(required(*o, "name"));
  return new_account_request{text(*o, "name"), optional_text(*o, "description"), optional_text(*o, "email")};
}

template <>
result<usage_key_spec> read<usage_key_spec>(const json::value& body) {
  static constexpr std::string_view kMetadata[] = {"name", "description", "expiration", "usage_api_key"};
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY(scopes::permission_set permissions, scopes::permission_set_from_json(*o, kMetadata));
  usage_key_spec s;
  s.name = text(*o, "name");
  s.description = optional_text(*o, "description");
  if (const json::value* e = o->if_contains("expiration"); e != nullptr && !e->is_null()) {
    if (e->is_uint64())
      s.expiration = e->get_uint64();
    else if (e->is_int64() && e->get_int64() >= 0)
      s.expiration = static_cast<uint64_t>(e->get_int64());
    else
      return invalid(path("expiration") + ": expected a non-negative integer");
  }
  s.permissions = std::move(permissions);
  return s;
}

template <>
result<new_group> read<new_group>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY_VOID(required(*o, "name"));
  new_group g;
  g.name = text(*o, "name");
  g.description = optional_text(*o, "description");
  ENACT_TRY(g.pkp_ids_permitted, addresses(*o, "pkp_ids_permitted"));
  ENACT_TRY(g.cid_hashes_permitted, hashes(*o, "cid_hashes_permitted"));
  return g;
}

template <>
result<group> read<group>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  for (std::string_view f : {"name", "description", "pkp_ids_permitted", "cid_hashes_permitted"})
    ENACT_TRY_VOID(required(*o, f));
  group g;
  ENACT_TRY(g.group_id, group_id_field(*o));
  g.name = text(*o, "name");
  g.description = text(*o, "description");
  ENACT_TRY(g.pkp_ids_permitted, addresses(*o, "pkp_ids_permitted"));
  ENACT_TRY(g.cid_hashes_permitted, hashes(*o, "cid_hashes_permitted"));
  return g;
}

template <>
result<group_ref> read<group_ref>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY(const uint64_t id, group_id_field(*o));
  return group_ref{id};
}

template <>
result<group_pkp> read<group_pkp>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  group_pkp r;
  ENACT_TRY(r.group_id, group_id_field(*o));
  ENACT_TRY(const json::value* pkp, required(*o, "pkp_id"));
  ENACT_TRY(r.pkp_id, read_address(*pkp, "pkp_id"));
  return r;
}

template <>
result<group_action> read<group_action>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  group_action r;
  ENACT_TRY(r.group_id, group_id_field(*o));
  ENACT_TRY(const json::value* cid, required(*o, "action_ipfs_cid"));
  ENACT_TRY(r.action_ipfs_cid, read_cid(*cid, "action_ipfs_cid"));
  return r;
}

template <>
result<group_action_hash> read<group_action_hash>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  group_action_hash r;
  ENACT_TRY(r.group_id, group_id_field(*o));
  ENACT_TRY(r.hashed_cid, hashed_cid_field(*o));
  return r;
}

template <>
result<new_wallet> read<new_wallet>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY_VOID(required(*o, "name"));
  return new_wallet{text(*o, "name"), optional_text(*o, "description")};
}

template <>
result<new_action> read<new_action>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  new_action a;
  ENACT_TRY(const json::value* cid, required(*o, "action_ipfs_cid"));
  ENACT_TRY(a.action_ipfs_cid, read_cid(*cid, "action_ipfs_cid"));
  ENACT_TRY_VOID(required(*o, "name"));
  a.name = text(*o, "name");
  a.description = optional_text(*o, "description");
  return a;
}

template <>
result<action_metadata> read<action_metadata>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  action_metadata a;
  ENACT_TRY(a.hashed_cid, hashed_cid_field(*o));
  a.name = text(*o, "name");
  a.description = text(*o, "description");
  return a;
}

template <>
result<action_ref> read<action_ref>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  ENACT_TRY(const hash256 h, hashed_cid_field(*o));
  return action_ref{h};
}

template <>
result<run_action_request> read<run_action_request>(const json::value& body) {
  ENACT_TRY(const json::object* o, object_of(body));
  const json::value* code = o->if_contains("code");
  const json::value* cid = o->if_contains("action_ipfs_cid");
  if ((code == nullptr) == (cid == nullptr) || (code != nullptr && !code->is_string()) ||
      (cid != nullptr && !cid->is_string()))
    return invalid("body: give exactly one of code and action_ipfs_cid");
  run_action_request r;
  r.code = optional_text(*o, "code");
  r.action_ipfs_cid = optional_text(*o, "action_ipfs_cid");
  if (const json::value* pkp = o->if_contains("pkp_id")) {
    ENACT_TRY(r.pkp_id, read_address(*pkp, "pkp_id"));
  }
  if (const json::value* params = o->if_contains("params")) {
    if (!params->is_object())
      return invalid(path("params") + ": expected an object");
    r.params = params->get_object();
  }
  return r;
}

}  // namespace enact::api
