// SPDX-License-Identifier: Apache-2.0
// `enact core …`: the core service's API (docs/protocol.md §2) from the command line, through
// enact::client::core_client. Every command prints its result through output.hpp: text, or
// one JSON line with --json. Where the service is: --url, else
// $ENACT_URL, else http://127.0.0.1:8080. The API key comes from --key-file FILE, else from
// $ENACT_API_KEY — never from the command line, where other users could read it in the process
// list and it would stay in the shell history; `--key` is refused with that reason. Key values the
// service returns (new_account, keys add) are printed once, or written 0600 with --key-out.
// A failed call prints `enact core …: <code>: <message>` and exits 1.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "enact/api/core.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::cli {
namespace {

namespace json = boost::json;
using client::core_client;

constexpr std::string_view kDefaultUrl = "http://127.0.0.1:8080";
constexpr std::string_view kKeyHelp = "set ENACT_API_KEY or pass --key-file FILE";

// --- arguments ---------------------------------------------------------------------------------

/// Options that would put a key value on the command line. Refused before anything else is parsed,
/// so that the reason is given rather than "unknown option".
void refuse_keys_in_argv(const std::vector<std::string>& argv) {
  struct refused {
    std::string_view option;
    std::string_view instead;
  };
  static constexpr refused kRefused[] = {
      {"--key", "set ENACT_API_KEY or pass --key-file FILE"},
      {"--api-key", "set ENACT_API_KEY or pass --key-file FILE"},
      {"--usage-key", "pass --usage-key-file FILE"},
      {"--usage-api-key", "pass --usage-key-file FILE"},
  };
  for (const std::string& a : argv) {
    for (const refused& r : kRefused) {
      if (a == r.option || a.rfind(std::string(r.option) + "=", 0) == 0)
        throw usage_error(std::string(r.option) +
                          ": API keys are not accepted on the command line (other users can read "
                          "them in the process list, and they stay in the shell history); " +
                          std::string(r.instead));
    }
  }
}

/// Parses a core command's arguments: its own options and flags, plus --url and --key-file.
args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags = {}) {
  refuse_keys_in_argv(argv);
  options.insert({"url", "key-file"});
  return args(argv, std::move(options), std::move(flags));
}

/// The text of a key file (the key's base64 text, surrounding whitespace ignored), as a Secret.
secret read_api_key_file(const std::string& path) {
  std::string text = read_input(path);
  const auto begin = text.find_first_not_of(" \t\r\n");
  const auto end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    detail::secure_wipe(text.data(), text.size());
    throw input_error(path + ": empty key file");
  }
  secret key(as_bytes(std::string_view(text).substr(begin, end - begin + 1)));
  detail::secure_wipe(text.data(), text.size());
  return key;
}

/// --key-file, else $ENACT_API_KEY, else no key (the service then answers unauthenticated).
secret api_key_of(const args& a) {
  if (auto path = a.get("key-file"))
    return read_api_key_file(*path);
  if (const char* env = std::getenv("ENACT_API_KEY"); env != nullptr) {
    std::string_view text(env);
    const auto begin = text.find_first_not_of(" \t\r\n");
    if (begin != std::string_view::npos) {
      text = text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
      return secret(as_bytes(text));
    }
  }
  return {};
}

core_client connect(const args& a, bool with_key) {
  client::client_options o;
  if (auto url = a.get("url"))
    o.base_url = *url;
  else if (const char* env = std::getenv("ENACT_URL"); env != nullptr && *env != '\0')
    o.base_url = env;
  else
    o.base_url = std::string(kDefaultUrl);
  try {
    return core_client(std::move(o), with_key ? api_key_of(a) : secret{});
  } catch (const api_error& e) {
    throw usage_error("--url: " + e.message());
  }
}

api::page_request page_of(const args& a) {
  api::page_request p;
  if (auto n = a.get("page"))
    p.number = parse_u64(*n, "--page");
  if (auto s = a.get("page-size"))
    p.size = parse_u64(*s, "--page-size");
  return p;
}

uint64_t id_arg(const args& a, size_t i, std::string_view what) { return parse_u64(a.at(i, what), what); }

address address_arg(const std::string& text, std::string_view what) {
  auto r = parse_address_strict(text, what);
  if (!r)
    throw usage_error(r.err().message);
  return *r;
}

/// A hashed CID given as 0x + 64 hex, or a CID (hashed as written, docs/protocol.md §1 `hashed_cid`).
hash256 hashed_cid_arg(const std::string& text, std::string_view what) {
  if (codec::hex::detail::has_prefix(text)) {
    auto h = codec::hex::decode_fixed<32>(text, what);
    if (!h)
      throw usage_error(h.err().message);
    return *h;
  }
  if (auto c = ipfs::parse(text); !c)
    throw usage_error(std::string(what) + ": expected 0x + 64 hex digits or a CID (" + c.err().message + ")");
  return ipfs::hashed_cid(text);
}

std::vector<address> address_list(const std::string& text, std::string_view what) {
  return parse_list(text, [&](const std::string& item) { return address_arg(item, what); });
}

std::vector<hash256> hashed_cid_list(const std::string& text, std::string_view what) {
  return parse_list(text, [&](const std::string& item) { return hashed_cid_arg(item, what); });
}

// --- accounts and keys -------------------------------------------------------------------------

int new_account(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description", "email", "key-out"});
  a.at_most(0);
  api::new_account_request r;
  r.name = a.require("name");
  r.description = a.get("description");
  r.email = a.get("email");
  core_client c = connect(a, false);
  std::optional<key_file> out;
  if (auto path = a.get("key-out"))
    out.emplace(*path, "the key is lost, remove it on the service");
  api::new_account_response created = c.new_account(r);
  json::object o;
  o["wallet_address"] = to_checksum_address(created.wallet_address);
  o["api_key_hash"] = codec::hex::encode_prefixed(created.api_key_hash);
  if (out) {
    out->write(created.api_key);
    o["key_file"] = *a.get("key-out");
    emit(o);
  } else {
    emit_with_key(std::move(o), "api_key", created.api_key);
  }
  return 0;
}

int account(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  emit(json::value_from(connect(a, true).account()));
  return 0;
}

const std::set<std::string> kSpecOptions = {"name",
                                            "description",
                                            "expiration",
                                            "manage-ipfs-ids-in-groups",
                                            "add-pkp-to-groups",
                                            "remove-pkp-from-groups",
                                            "execute-in-groups"};
const std::set<std::string> kSpecFlags = {"can-create-groups", "can-delete-groups", "can-create-pkps"};

std::set<std::string> plus(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

api::usage_key_spec spec_of(const args& a) {
  api::usage_key_spec s;
  s.name = a.require("name");
  s.description = a.get("description");
  if (auto e = a.get("expiration"))
    s.expiration = parse_u64(*e, "--expiration");
  s.permissions = permissions_of(a);
  return s;
}

int keys_add(const std::vector<std::string>& argv) {
  args a = parse_args(argv, plus(kSpecOptions, {"key-out"}), kSpecFlags);
  a.at_most(0);
  const api::usage_key_spec spec = spec_of(a);
  core_client c = connect(a, true);
  std::optional<key_file> out;
  if (auto path = a.get("key-out"))
    out.emplace(*path, "the key is lost, remove it on the service");
  api::new_usage_key k = c.add_usage_api_key(spec);
  json::object o;
  o["hash"] = codec::hex::encode_prefixed(k.hash);
  o["wallet_address"] = to_checksum_address(k.wallet_address);
  if (out) {
    out->write(k.usage_api_key);
    o["key_file"] = *a.get("key-out");
    emit(o);
  } else {
    emit_with_key(std::move(o), "usage_api_key", k.usage_api_key);
  }
  return 0;
}

int keys_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(0);
  emit(json::value_from(connect(a, true).list_api_keys(page_of(a))));
  return 0;
}

json::object hash_line(const hash256& h) {
  json::object o;
  o["hash"] = codec::hex::encode_prefixed(h);
  return o;
}

int keys_update(const std::vector<std::string>& argv) {
  args a = parse_args(argv, plus(kSpecOptions, {"usage-key-file"}), kSpecFlags);
  a.at_most(0);
  const secret usage = read_api_key_file(a.require("usage-key-file"));
  const api::usage_key_spec spec = spec_of(a);
  emit(hash_line(connect(a, true).update_usage_api_key(usage, spec)));
  return 0;
}

int keys_update_metadata(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"usage-key-file", "name", "description"});
  a.at_most(0);
  const secret usage = read_api_key_file(a.require("usage-key-file"));
  const std::string name = a.require("name");
  const std::string description = a.get("description").value_or("");
  emit(hash_line(connect(a, true).update_usage_api_key_metadata(usage, name, description)));
  return 0;
}

int keys_remove(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"usage-key-file"});
  a.at_most(0);
  const secret usage = read_api_key_file(a.require("usage-key-file"));
  emit(hash_line(connect(a, true).remove_usage_api_key(usage)));
  return 0;
}

// --- groups ------------------------------------------------------------------------------------

int groups_add(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description", "pkps", "cid-hashes"});
  a.at_most(0);
  api::new_group g;
  g.name = a.require("name");
  g.description = a.get("description");
  if (auto v = a.get("pkps"))
    g.pkp_ids_permitted = address_list(*v, "--pkps");
  if (auto v = a.get("cid-hashes"))
    g.cid_hashes_permitted = hashed_cid_list(*v, "--cid-hashes");
  emit(json::value_from(connect(a, true).add_group(g)));
  return 0;
}

int groups_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(0);
  emit(json::value_from(connect(a, true).list_groups(page_of(a))));
  return 0;
}

/// Walks the pages of a listing (100 items each) for the first item `match` accepts.
template <class T>
std::optional<T> find_listed(const std::function<api::page<T>(api::page_request)>& list,
                             const std::function<bool(const T&)>& match) {
  for (api::page_request p{1, 100};; ++p.number) {
    api::page<T> page = list(p);
    for (T& item : page.items)
      if (match(item))
        return std::move(item);
    if (page.items.empty() || p.number * p.size >= page.total)
      return std::nullopt;
  }
}

int groups_update(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description", "pkps", "cid-hashes"});
  a.at_most(1);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  std::optional<std::vector<address>> pkps;
  std::optional<std::vector<hash256>> cids;
  if (auto v = a.get("pkps"))
    pkps = address_list(*v, "--pkps");
  if (auto v = a.get("cid-hashes"))
    cids = hashed_cid_list(*v, "--cid-hashes");
  core_client c = connect(a, true);
  // update_group replaces every field; what is not given keeps its current value.
  api::group g;
  if (!a.get("name") || !a.get("description") || !pkps || !cids) {
    auto current = find_listed<api::group>([&](api::page_request p) { return c.list_groups(p); },
                                           [&](const api::group& x) { return x.group_id == id; });
    if (!current)
      throw input_error("GROUP_ID: no group " + std::to_string(id) + " in the account");
    g = std::move(*current);
  }
  g.group_id = id;
  if (auto v = a.get("name"))
    g.name = *v;
  if (auto v = a.get("description"))
    g.description = *v;
  if (pkps)
    g.pkp_ids_permitted = std::move(*pkps);
  if (cids)
    g.cid_hashes_permitted = std::move(*cids);
  emit(json::value_from(c.update_group(g)));
  return 0;
}

int groups_remove(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  emit(json::value_from(api::group_ref{connect(a, true).remove_group(id)}));
  return 0;
}

int groups_add_pkp(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const address pkp = address_arg(a.at(1, "PKP_ID"), "PKP_ID");
  emit(json::value_from(connect(a, true).add_pkp_to_group(id, pkp)));
  return 0;
}

int groups_remove_pkp(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const address pkp = address_arg(a.at(1, "PKP_ID"), "PKP_ID");
  emit(json::value_from(connect(a, true).remove_pkp_from_group(id, pkp)));
  return 0;
}

int groups_add_action(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const std::string& cid = a.at(1, "CID");
  if (auto c = ipfs::parse(cid); !c)
    throw usage_error("CID: " + c.err().message);
  emit(json::value_from(connect(a, true).add_action_to_group(id, cid)));
  return 0;
}

int groups_remove_action(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const hash256 h = hashed_cid_arg(a.at(1, "HASHED_CID|CID"), "HASHED_CID");
  emit(json::value_from(connect(a, true).remove_action_from_group(id, h)));
  return 0;
}

// --- wallets -----------------------------------------------------------------------------------

int wallets_create(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description"});
  a.at_most(0);
  api::new_wallet w{a.require("name"), a.get("description")};
  emit(json::value_from(connect(a, true).create_wallet(w)));
  return 0;
}

int wallets_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(0);
  emit(json::value_from(connect(a, true).list_wallets(page_of(a))));
  return 0;
}

int wallets_list_in_group(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(1);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  emit(json::value_from(connect(a, true).list_wallets_in_group(id, page_of(a))));
  return 0;
}

// --- actions -----------------------------------------------------------------------------------

int actions_add(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description"});
  a.at_most(1);
  api::new_action n;
  n.action_ipfs_cid = a.at(0, "CID");
  if (auto c = ipfs::parse(n.action_ipfs_cid); !c)
    throw usage_error("CID: " + c.err().message);
  n.name = a.require("name");
  n.description = a.get("description");
  emit(json::value_from(connect(a, true).add_action(n)));
  return 0;
}

int actions_upload(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string code = read_input(a.at(0, "FILE"));
  emit(json::value_from(connect(a, true).upload_action(code)));
  return 0;
}

int actions_code(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string cid = a.at(0, "CID");
  if (auto c = ipfs::parse(cid); !c)
    throw usage_error("CID: " + c.err().message);
  const api::action_code code = connect(a, true).get_action_code(cid);
  emit_document(json::value_from(code), code.code);
  return 0;
}

int actions_update(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description"});
  a.at_most(1);
  api::action_metadata m;
  m.hashed_cid = hashed_cid_arg(a.at(0, "HASHED_CID|CID"), "HASHED_CID");
  core_client c = connect(a, true);
  // update_action_metadata replaces both fields; one not given keeps its current value.
  if (!a.get("name") || !a.get("description")) {
    if (!a.get("name") && !a.get("description"))
      throw usage_error("nothing to update: give --name and/or --description");
    auto current = find_listed<api::action>([&](api::page_request p) { return c.list_actions(std::nullopt, p); },
                                            [&](const api::action& x) { return x.hashed_cid == m.hashed_cid; });
    if (!current)
      throw input_error("HASHED_CID: no such action in the account");
    m.name = current->name;
    m.description = current->description;
  }
  if (auto v = a.get("name"))
    m.name = *v;
  if (auto v = a.get("description"))
    m.description = *v;
  emit(json::value_from(c.update_action_metadata(m)));
  return 0;
}

int actions_delete(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const hash256 h = hashed_cid_arg(a.at(0, "HASHED_CID|CID"), "HASHED_CID");
  emit(json::value_from(api::action_ref{connect(a, true).delete_action(h)}));
  return 0;
}

int actions_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"group", "page", "page-size"});
  a.at_most(0);
  std::optional<uint64_t> group;
  if (auto g = a.get("group"))
    group = parse_u64(*g, "--group");
  emit(json::value_from(connect(a, true).list_actions(group, page_of(a))));
  return 0;
}

int run(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"cid", "code-file", "pkp", "params"});
  a.at_most(0);
  api::run_action_request r;
  if (a.get("cid").has_value() == a.get("code-file").has_value())
    throw usage_error("give exactly one of --cid CID and --code-file FILE");
  if (auto cid = a.get("cid"))
    r.action_ipfs_cid = *cid;
  if (auto file = a.get("code-file"))
    r.code = read_input(*file);
  if (auto pkp = a.get("pkp")) {
    auto addr = parse_address(*pkp, "--pkp");
    if (!addr)
      throw usage_error(addr.err().message);
    r.pkp_id = *addr;
  }
  if (auto params = a.get("params")) {
    std::error_code ec;
    auto v = json::parse(*params, ec);
    if (ec || !v.is_object())
      throw usage_error("--params: expected a JSON object, e.g. '{\"x\": 1}'");
    r.params = std::move(v.as_object());
  }
  const auto out = connect(a, true).run_action(r);
  json::object sigs;
  for (const auto& [name, sig] : out.signatures)
    sigs[name] = json::object{{"signature", codec::hex::encode_prefixed(sig.signature)},
                              {"r", codec::hex::encode_prefixed(sig.r)},
                              {"s", codec::hex::encode_prefixed(sig.s)},
                              {"v", sig.v},
                              {"public_key", codec::hex::encode_prefixed(sig.public_key)},
                              {"digest", codec::hex::encode_prefixed(sig.digest)}};
  emit(json::object{{"response", out.response},
                    {"logs", out.logs},
                    {"signatures", std::move(sigs)},
                    {"run_ms", out.run_ms},
                    {"charged_credits", out.charged_credits}});
  return 0;
}

// --- billing -----------------------------------------------------------------------------------

/// The admin wallet's key of --wallet-key-file: each billing request is then sent with a version 2
/// BillingAuth the client signs for exactly that request (docs/protocol.md §2), instead of the API key.
std::optional<secret> wallet_key(const args& a) {
  auto path = a.get("wallet-key-file");
  if (!path)
    return std::nullopt;
  return read_key_file(*path);
}

int billing_balance(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"wallet-key-file"});
  a.at_most(0);
  const auto key = wallet_key(a);
  core_client c = connect(a, !key);
  emit(json::value_from(key ? c.balance(*key) : c.balance()));
  return 0;
}

int billing_create_intent(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"amount-cents", "wallet-key-file"});
  a.at_most(0);
  const uint64_t amount = parse_u64(a.require("amount-cents"), "--amount-cents");
  const auto key = wallet_key(a);
  core_client c = connect(a, !key);
  const auto intent = key ? c.create_payment_intent(amount, *key) : c.create_payment_intent(amount);
  // What a person pays with (docs/cli.md): Stripe.js takes the client secret together with the
  // publishable key; the payment is credited by Stripe's webhook, or by `billing confirm`.
  const auto provider = c.get_stripe_config();
  json::object o = json::value_from(intent).as_object();
  o["publishable_key"] = provider.publishable_key;
  const std::string confirm = "enact core billing confirm " + intent.payment_intent_id +
                              (key ? " --wallet-key-file " + *a.get("wallet-key-file") : std::string());
  if (provider.mode == "dev")
    o["next"] = "The dev provider takes no card: run " + confirm + " to credit it.";
  else
    o["next"] =
        "Pay it with Stripe.js: mount the Payment Element with this client_secret and publishable_key and call "
        "stripe.confirmPayment (the dashboard's Account page does so for the intents it creates). Once Stripe "
        "reports it succeeded the webhook credits it; to credit it at once, run " +
        confirm;
  emit(o);
  return 0;
}

int billing_confirm(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"wallet-key-file"});
  a.at_most(1);
  const std::string& id = a.at(0, "PAYMENT_INTENT_ID");
  const auto key = wallet_key(a);
  core_client c = connect(a, !key);
  json::object o;
  o["balance_credits"] = key ? c.confirm_payment(id, *key) : c.confirm_payment(id);
  emit(o);
  return 0;
}

int billing_stripe_config(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  emit(json::value_from(connect(a, false).get_stripe_config()));
  return 0;
}

// --- public utility ----------------------------------------------------------------------------

int chain_config(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  emit(json::value_from(connect(a, false).get_node_chain_config()));
  return 0;
}

int api_payers(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  core_client c = connect(a, false);
  json::array list;
  for (const address& p : c.get_api_payers())
    list.emplace_back(to_checksum_address(p));
  json::object o;
  o["api_payers"] = std::move(list);
  o["admin_api_payer"] = to_checksum_address(c.get_admin_api_payer());
  emit(o);
  return 0;
}

int server_cid(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string code = read_input(a.at(0, "FILE"));
  json::object o;
  o["action_ipfs_cid"] = connect(a, false).get_svc_action_ipfs_id(code);
  emit(o);
  return 0;
}

/// Adds the hint about where keys come from to an unauthenticated answer when no key was given.
std::function<int(const std::vector<std::string>&)> with_key_hint(int (*run)(const std::vector<std::string>&)) {
  return [run](const std::vector<std::string>& argv) {
    try {
      return run(argv);
    } catch (const api_error& e) {
      const char* env = std::getenv("ENACT_API_KEY");
      const bool keyless =
          (env == nullptr || *env == '\0') && std::find_if(argv.begin(), argv.end(), [](const std::string& w) {
                                                return w == "--key-file" || w.rfind("--key-file=", 0) == 0;
                                              }) == argv.end();
      if (e.errc() == api_errc::unauthenticated && keyless)
        throw input_error(std::string(e.what()) + " (no API key given: " + std::string(kKeyHelp) + ")");
      throw;
    }
  };
}

}  // namespace

std::vector<command> core_commands() {
  const std::string g = " [--url URL] [--key-file FILE]";
  const std::string pages = " [--page N] [--page-size S]";
  const std::string spec =
      " --name N [--description D] [--expiration UNIX] [--can-create-groups] "
      "[--can-delete-groups] [--can-create-pkps] [--manage-ipfs-ids-in-groups IDS] "
      "[--add-pkp-to-groups IDS] [--remove-pkp-from-groups IDS] [--execute-in-groups IDS]";
  const std::string url = " [--url URL]";
  return {
      {"core new-account", "--name N [--description D] [--email E] [--key-out FILE]" + url,
       "create an account; prints its API key once (or writes it 0600 to --key-out)", with_key_hint(new_account)},
      {"core account", g.substr(1), "the account and key the API key belongs to", with_key_hint(account)},
      {"core keys add", spec.substr(1) + " [--key-out FILE]" + g,
       "add a usage key (IDS: comma-separated group ids, 'all' = 0); prints its value once", with_key_hint(keys_add)},
      {"core keys list", pages.substr(1) + g, "usage keys of the account (hashes, never values)",
       with_key_hint(keys_list)},
      {"core keys update", "--usage-key-file F" + spec + g,
       "replace every permission of a usage key (omitted ones reset)", with_key_hint(keys_update)},
      {"core keys update-metadata", "--usage-key-file F --name N [--description D]" + g, "rename a usage key",
       with_key_hint(keys_update_metadata)},
      {"core keys remove", "--usage-key-file F" + g, "delete a usage key", with_key_hint(keys_remove)},
      {"core groups add", "--name N [--description D] [--pkps A,B] [--cid-hashes H|CID,...]" + g, "create a group",
       with_key_hint(groups_add)},
      {"core groups list", pages.substr(1) + g, "groups of the account", with_key_hint(groups_list)},
      {"core groups update", "GROUP_ID [--name N] [--description D] [--pkps A,B] [--cid-hashes H|CID,...]" + g,
       "change a group; fields not given keep their current value", with_key_hint(groups_update)},
      {"core groups remove", "GROUP_ID" + g, "delete a group", with_key_hint(groups_remove)},
      {"core groups add-pkp", "GROUP_ID PKP_ID" + g, "permit a PKP in a group", with_key_hint(groups_add_pkp)},
      {"core groups remove-pkp", "GROUP_ID PKP_ID" + g, "withdraw a PKP from a group",
       with_key_hint(groups_remove_pkp)},
      {"core groups add-action", "GROUP_ID CID" + g, "permit an action in a group", with_key_hint(groups_add_action)},
      {"core groups remove-action", "GROUP_ID HASHED_CID|CID" + g, "withdraw an action from a group",
       with_key_hint(groups_remove_action)},
      {"core wallets create", "--name N [--description D]" + g, "create a PKP wallet", with_key_hint(wallets_create)},
      {"core wallets list", pages.substr(1) + g,
       "wallets of the account; usage_key_wallet marks a usage key's wallet (no PKP)", with_key_hint(wallets_list)},
      {"core wallets list-in-group", "GROUP_ID" + pages + g, "PKP wallets permitted in a group",
       with_key_hint(wallets_list_in_group)},
      {"core actions add", "CID --name N [--description D]" + g, "register action metadata",
       with_key_hint(actions_add)},
      {"core actions upload", "FILE" + g, "store action code on the service; prints its CID",
       with_key_hint(actions_upload)},
      {"core actions code", "CID" + g, "an action's code as the service stores it (byte for byte; JSON with --json)",
       with_key_hint(actions_code)},
      {"core actions update", "HASHED_CID|CID [--name N] [--description D]" + g,
       "change an action's name or description", with_key_hint(actions_update)},
      {"core actions delete", "HASHED_CID|CID" + g, "delete an action's metadata", with_key_hint(actions_delete)},
      {"core actions list", "[--group ID]" + pages + g, "actions of the account or of a group",
       with_key_hint(actions_list)},
      {"core run", "--cid CID | --code-file FILE [--pkp PKP_ID] [--params JSON]" + g,
       "run an action; prints response, logs, signatures, run_ms and charged credits", with_key_hint(run)},
      {"core billing balance", "[--wallet-key-file K]" + g,
       "credit balance (by API key, or by a wallet proof signed with K)", with_key_hint(billing_balance)},
      {"core billing create-intent", "--amount-cents N [--wallet-key-file K]" + g,
       "start a payment of N cents (at least 500); prints its client secret, the publishable key and the next step",
       with_key_hint(billing_create_intent)},
      {"core billing confirm", "PAYMENT_INTENT_ID [--wallet-key-file K]" + g,
       "credit a completed payment; prints the new balance", with_key_hint(billing_confirm)},
      {"core billing stripe-config", url.substr(1), "the payment provider's publishable key",
       with_key_hint(billing_stripe_config)},
      {"core chain-config", url.substr(1), "chain id, registry contract and chain name of the service",
       with_key_hint(chain_config)},
      {"core api-payers", url.substr(1), "addresses that relay API-mode writes, and the admin payer",
       with_key_hint(api_payers)},
      {"core cid", "FILE" + url, "CID of a file as the service computes it", with_key_hint(server_cid)},
  };
}

}  // namespace enact::cli
