// SPDX-License-Identifier: Apache-2.0
// `enact core …`: the core service's API (docs/protocol.md §2) through enact::client::core_client,
// as docs/cli.md describes it. API keys are read from --key-file or $ENACT_API_KEY, never from the
// command line, where other users could read them in the process list.
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
#include "core_commands.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "enact/api/core.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::cli {
namespace core_cmd {
namespace {

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

/// --key-file, else $ENACT_API_KEY, else no key (the service then answers unauthenticated).
Secret api_key_of(const args& a) {
  if (auto path = a.get("key-file"))
    return read_api_key_file(*path);
  if (const char* env = std::getenv("ENACT_API_KEY"); env != nullptr) {
    std::string_view text(env);
    const auto begin = text.find_first_not_of(" \t\r\n");
    if (begin != std::string_view::npos) {
      text = text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
      return Secret(as_bytes(text));
    }
  }
  return {};
}

}  // namespace

args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags) {
  refuse_keys_in_argv(argv);
  options.insert({"url", "key-file"});
  return args(argv, std::move(options), std::move(flags));
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
    return core_client(std::move(o), with_key ? api_key_of(a) : Secret{});
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

}  // namespace core_cmd

std::vector<command> core_commands() {
  using namespace core_cmd;
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
