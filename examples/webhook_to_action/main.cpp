// SPDX-License-Identifier: Apache-2.0
// webhook_to_action: an HTTP POST runs an action. With the SDK's core client it creates an
// account, buys credits (the dev payment provider of `enact-server --dev`), uploads an action
// that answers with the webhook's body, puts it in a group and makes a usage key allowed to run
// it there. Then, through the trigger service's management API (`/api/triggers`, docs/triggers.md,
// authenticated by a bearer token from `enact-server issue-token`), it creates a webhook trigger
// with that usage key, POSTs an event to the trigger's webhook URL, and polls the run until it
// finished. Prints one JSON line per step; the last one is the finished run.
//
//   webhook_to_action --url http://127.0.0.1:8080 --token-file token.txt [--triggers-url URL]
//
// The trigger service is on the core's listener unless --triggers-url names another. Plain
// HTTP with cpp-httplib is all the trigger API needs: JSON in, JSON out.
#include <httplib.h>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>

#include "enact/client/core_client.hpp"

namespace {

using namespace enact;
namespace json = boost::json;

// The action: immutable JavaScript, identified by its CID. A webhook run's params hold the body
// as `event` (parsed JSON when it is JSON), `event_raw` and the request's `headers`.
constexpr std::string_view kActionCode =
    "Enact.setResponse({echo: params.event, content_type: params.headers['content-type']});\n";

constexpr const char* kUsage = "usage: webhook_to_action --url CORE_URL --token-file FILE [--triggers-url URL]\n";

int usage(const char* why) {
  std::fprintf(stderr, "webhook_to_action: %s\n%s", why, kUsage);
  return 2;
}

struct failure {
  std::string what;
};

/// Sends one request to the trigger service and returns its JSON answer; any status but the
/// expected one is a failure carrying the server's `{"error": {code, message}}`.
json::value call(httplib::Client& http, const std::string& method, const std::string& path,
                 const httplib::Headers& headers, const std::string& body, int expected) {
  const httplib::Result r =
      method == "GET" ? http.Get(path, headers) : http.Post(path, headers, body, "application/json");
  if (!r)
    throw failure{method + " " + path + ": " + httplib::to_string(r.error())};
  if (r->status != expected)
    throw failure{method + " " + path + ": HTTP " + std::to_string(r->status) + " " + r->body};
  return json::parse(r->body);
}

std::string text_of(const Secret& s) { return {reinterpret_cast<const char*>(s.view().data()), s.size()}; }

void print(std::string_view step, const json::value& v) {
  std::printf("{\"step\":\"%.*s\",\"value\":%s}\n", static_cast<int>(step.size()), step.data(),
              json::serialize(v).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string core_url, triggers_url, token_file;
  if (argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--url")
      core_url = argv[i + 1];
    else if (flag == "--triggers-url")
      triggers_url = argv[i + 1];
    else if (flag == "--token-file")
      token_file = argv[i + 1];
    else
      return usage("unknown option");
  }
  if (argc % 2 == 0 || core_url.empty() || token_file.empty())
    return usage("--url and --token-file are required");
  if (triggers_url.empty())
    triggers_url = core_url;
  std::ifstream tf(token_file);
  std::string token;
  if (!(tf >> token))
    return usage("--token-file: cannot read a token");

  try {
    // 1. The core: an account, credits, the action in a group, a usage key that may run it.
    client::client_options options;
    options.base_url = core_url;
    client::core_client core(options);
    client::new_account_response account = core.new_account({"webhook example", {}, {}});
    core.set_api_key(std::move(account.api_key));
    const client::payment_intent intent = core.create_payment_intent(500);
    print("credits", core.confirm_payment(intent.payment_intent_id));

    const client::uploaded_action up = core.upload_action(kActionCode);
    (void)core.add_action({up.action_ipfs_cid, "echo the webhook event", std::nullopt});
    const client::group g = core.add_group({"webhooks", "actions fired by webhooks", {}, {}});
    (void)core.add_action_to_group(g.group_id, up.action_ipfs_cid);
    client::usage_key_spec spec;
    spec.name = "webhook runner";
    spec.permissions.execute_in_groups = {g.group_id};
    const client::new_usage_key usage_key = core.add_usage_api_key(spec);
    print("action", json::object{{"action_ipfs_cid", up.action_ipfs_cid}, {"group_id", g.group_id}});

    // 2. The trigger: the usage key travels once, in the create request, and is stored sealed.
    httplib::Client http(triggers_url);
    http.set_connection_timeout(5);
    http.set_read_timeout(30);
    const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
    std::string key_text = text_of(usage_key.usage_api_key);
    const json::object create = {{"type", "webhook"},
                                 {"name", "echo"},
                                 {"action_ipfs_cid", up.action_ipfs_cid},
                                 {"usage_api_key", key_text},
                                 {"config", json::object{}}};
    std::string body = json::serialize(create);
    detail::secure_wipe(key_text.data(), key_text.size());
    const json::value trigger = call(http, "POST", "/api/triggers", auth, body, 201);
    detail::secure_wipe(body.data(), body.size());
    const std::string id(trigger.at("id").as_string());
    print("trigger", json::object{{"id", id}, {"webhook_url", trigger.at("webhook_url")}});

    // 3. Fire it: anyone who knows the URL may; the answer comes once the run is stored.
    const json::value queued = call(http, "POST", "/webhook/" + id, {}, R"({"order": 42, "status": "paid"})", 202);
    const std::string run_id(queued.at("run_id").as_string());
    print("fired", queued);

    // 4. Wait for the run worker to call the core and record the result.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto pause = std::chrono::milliseconds(50);
    for (;;) {
      const json::value run = call(http, "GET", "/api/runs/" + run_id, auth, "", 200);
      const json::string& status = run.at("status").as_string();
      if (status == "success" || status == "failed") {
        print("run", run);
        return status == "success" ? 0 : 1;
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw failure{"run " + run_id + " still " + std::string(status) + " after 30 s"};
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    }
  } catch (const enact::Error& e) {  // the core client's api_error: "<code>: <message>"
    std::fprintf(stderr, "webhook_to_action: %s\n", e.what());
  } catch (const failure& f) {
    std::fprintf(stderr, "webhook_to_action: %s\n", f.what.c_str());
  } catch (const std::exception& e) {  // an answer that is not the JSON documented
    std::fprintf(stderr, "webhook_to_action: unexpected answer: %s\n", e.what());
  }
  return 1;
}
