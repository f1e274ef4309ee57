// SPDX-License-Identifier: Apache-2.0
// enact-server's configuration: a TOML or JSON file, flags overriding it, and a clear refusal
// (exit 2, the offending setting named on stderr) of anything it cannot use.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <string>

#include "server_process.hpp"

using namespace enact::itest;

namespace {

std::string write_file(const temp_dir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("a TOML config file sets the chain and limits; flags override it") {
  temp_dir dir;
  const std::string toml = write_file(dir, "enact.toml",
                                      "# settings\n"
                                      "log_level = \"info\"\n"
                                      "[chain]\n"
                                      "chain_id = 8453   # base\n"
                                      "chain_name = \"base\"\n"
                                      "[billing]\n"
                                      "provider = \"none\"\n");
  server_process server({"--config", toml, "--chain-name", "base-mainnet"});
  const auto r = server.client().get("/get_node_chain_config");
  REQUIRE(r.status == 200);
  CHECK(r.obj().at("chain_id").to_number<uint64_t>() == 8453);
  CHECK(r.obj().at("chain_name").as_string() == "base-mainnet");       // the flag wins
  CHECK(server.client().get("/billing/stripe_config").status == 503);  // provider none
  CHECK(server.stop().clean());
}

TEST_CASE("a JSON config file works the same way") {
  temp_dir dir;
  const std::string json = write_file(dir, "enact.json",
                                      R"({"chain": {"chain_id": 10, "chain_name": "optimism"},)"
                                      R"( "dev": true})");
  server_process server({"--config", json});
  const auto r = server.client().get("/get_node_chain_config");
  REQUIRE(r.status == 200);
  CHECK(r.obj().at("chain_id").to_number<uint64_t>() == 10);
  const auto billing = server.client().get("/billing/stripe_config");
  REQUIRE(billing.status == 200);
  CHECK(billing.obj().at("mode").as_string() == "dev");  // dev = true in the file
  CHECK(server.stop().clean());
}

TEST_CASE("settings the server cannot use are refused before it starts") {
  temp_dir dir;
  struct case_ {
    std::string file;
    std::string text;
    std::string named;  // what stderr must mention
  };
  const case_ cases[] = {
      {"bad-type.toml", "[chain]\nchain_id = \"eight\"\n", "chain.chain_id"},
      {"unknown.toml", "[chain]\nchian_id = 1\n", "chain.chian_id"},
      {"bad-line.toml", "listen 127.0.0.1:1\n", "expected key = value"},
      {"bad.json", "{\"chain\": ", "not a JSON object"},
      {"bad-listen.json", R"({"listen": "localhost"})", "HOST:PORT"},
      // An origin is scheme://host[:port]; a path, a bare host or another scheme is a mistake
      // that would silently grant nothing, so it is refused.
      {"cors-path.toml", "cors_origins = [\"https://app.example.org/\"]\n", "is not an origin"},
      {"cors-host.toml", "cors_origins = [\"app.example.org\"]\n", "is not an origin"},
      {"cors-scheme.json", R"({"cors_origins": "ftp://app.example.org"})", "is not an origin"},
      // A PostgreSQL metering store's pool and lock wait: a pool of none would wait forever, a lock
      // wait of none would fail every write that meets another server's.
      {"metering-pool.toml", "[billing]\nmetering_store_pool = 0\n", "billing.metering_store_pool: expected 1 to 1024"},
      {"metering-lock.json", R"({"billing": {"metering_lock_timeout_seconds": 0}})",
       "billing.metering_lock_timeout_seconds: expected 1 to 3600"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const auto path = write_file(dir, c.file, c.text);
    const auto run = run_to_exit({"--config", path, "--data-dir", dir.path() + "/data"});
    CHECK(run.status.exited);
    CHECK(run.status.code == 2);
    CHECK(run.stderr_text.find(c.named) != std::string::npos);
  }
  const auto missing = run_to_exit({"--config", dir.path() + "/nope.toml"});
  CHECK(missing.status.code == 2);
  CHECK(missing.stderr_text.find("cannot read") != std::string::npos);
  const auto unknown_flag = run_to_exit({"--listne", "127.0.0.1:1"});
  CHECK(unknown_flag.status.code == 2);
  CHECK(unknown_flag.stderr_text.find("--listne") != std::string::npos);
  const auto help = run_to_exit({"--help"});
  CHECK(help.status.clean());
  CHECK(help.stdout_text.find("--data-dir") != std::string::npos);
  CHECK(help.stdout_text.find("--config") != std::string::npos);
}

TEST_CASE("TOML files take literal strings, escapes and arrays") {
  temp_dir dir;
  const std::string toml = write_file(dir, "full.toml",
                                      "[chain]\n"
                                      "chain_name = 'C:\\no\\escapes'  # a literal string keeps backslashes\n"
                                      "[billing]\n"
                                      "provider = \"n\\u006Fne\"          # an escape in a basic string\n"
                                      "[triggers]\n"
                                      "workers = 2\n");
  server_process server({"--config", toml});
  const auto r = server.client().get("/get_node_chain_config");
  REQUIRE(r.status == 200);
  CHECK(r.obj().at("chain_name").as_string() == "C:\\no\\escapes");
  CHECK(server.client().get("/billing/stripe_config").status == 503);  // "none", unescaped
  CHECK(server.stop().clean());

  // cors_origins takes an array in a file (the flag and ENACT_CORS_ORIGINS take a comma list).
  const std::string cors =
      write_file(dir, "cors.toml", "cors_origins = [\"https://a.example\", \"http://127.0.0.1:9\"]\n");
  server_process cors_server({"--config", cors});
  for (const char* origin : {"https://a.example", "http://127.0.0.1:9", "https://b.example"}) {
    CAPTURE(origin);
    const auto res = cors_server.client().get("/get_node_chain_config", {{"Origin", origin}});
    REQUIRE(res.status == 200);
    CHECK(res.header("Access-Control-Allow-Origin") ==
          (std::string_view(origin) == "https://b.example" ? std::string() : std::string(origin)));
  }
  CHECK(cors_server.stop().clean());

  // A repeatable flag's key takes an array: every element is applied (the second is refused here,
  // so the refusal shows it was read), in TOML and in JSON alike.
  const auto arrays = write_file(dir, "arrays.toml",
                                 "chain_rpc = [\"ethereum=http://127.0.0.1:1\",\n"
                                 "             \"nochain=http://127.0.0.1:2\"]\n");
  const auto toml_run = run_to_exit({"--config", arrays, "--data-dir", dir.path() + "/data"});
  CHECK(toml_run.status.code == 2);
  CHECK(toml_run.stderr_text.find("arrays.toml:1: chain_rpc: chain 'nochain'") != std::string::npos);
  const auto json_arrays = write_file(dir, "arrays.json", R"({"chain_confirmations": ["ethereum=3", "polygon=x"]})");
  const auto json_run = run_to_exit({"--config", json_arrays, "--data-dir", dir.path() + "/data"});
  CHECK(json_run.status.code == 2);
  CHECK(json_run.stderr_text.find("arrays.json: chain_confirmations: expected a non-negative integer") !=
        std::string::npos);
}

TEST_CASE("a wrong type names the file, the line and the key") {
  temp_dir dir;
  struct case_ {
    std::string text;
    std::string message;
  };
  const case_ cases[] = {
      {"# chain\n[chain]\nchain_id = \"eight\"\n", "typed.toml:3: chain.chain_id: expected a non-negative integer"},
      {"[sandbox]\n\nworkers = 1.5\n", "typed.toml:3: sandbox.workers: expected a non-negative integer"},
      {"listen = [\"127.0.0.1:1\"]\n", "typed.toml:1: listen: expected a string"},
      {"dev = 1979-05-27\n", "typed.toml:1: dev: expected a string, an integer, true, false or an array"},
      {"[chain]\nchain_id = 1\n[ledger]\nbackend = 'evm'\nnot_a_key = true\n",
       "typed.toml:5: ledger.not_a_key: unknown"},
      {"a = \"unterminated\n", "typed.toml:1:"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const auto path = write_file(dir, "typed.toml", c.text);
    const auto run = run_to_exit({"--config", path, "--data-dir", dir.path() + "/data"});
    CHECK(run.status.code == 2);
    CHECK(run.stderr_text.find(dir.path() + "/" + c.message) != std::string::npos);
  }
}

TEST_CASE("ENACT_<FLAG> variables stand in for flags: flag > environment > config file > default") {
  temp_dir dir;
  const std::string toml = write_file(dir, "enact.toml", "[chain]\nchain_name = \"from-file\"\nchain_id = 7\n");
  {
    scoped_env name("ENACT_CHAIN_NAME", "from-env");
    scoped_env dev("ENACT_DEV", "1");
    server_process server({"--config", toml});
    const auto r = server.client().get("/get_node_chain_config");
    REQUIRE(r.status == 200);
    CHECK(r.obj().at("chain_name").as_string() == "from-env");  // the variable over the file
    CHECK(r.obj().at("chain_id").to_number<uint64_t>() == 7);   // the file over the default
    const auto billing = server.client().get("/billing/stripe_config");
    REQUIRE(billing.status == 200);
    CHECK(billing.obj().at("mode").as_string() == "dev");  // ENACT_DEV=1 is --dev
    CHECK(server.stop().clean());

    server_process flagged({"--config", toml, "--chain-name=from-flag"});
    const auto f = flagged.client().get("/get_node_chain_config");
    REQUIRE(f.status == 200);
    CHECK(f.obj().at("chain_name").as_string() == "from-flag");  // the flag over the variable
    CHECK(flagged.stop().clean());
  }
  {
    // The config file itself may come from ENACT_CONFIG; a bad value names the variable.
    scoped_env config("ENACT_CONFIG", toml);
    scoped_env id("ENACT_CHAIN_ID", "seven");
    const auto run = run_to_exit({"--data-dir", dir.path() + "/data"});
    CHECK(run.status.code == 2);
    CHECK(run.stderr_text.find("ENACT_CHAIN_ID: expected a non-negative integer") != std::string::npos);
  }
  {
    scoped_env empty("ENACT_CHAIN_NAME", "");  // empty: as if unset
    server_process server({"--config", toml});
    const auto r = server.client().get("/get_node_chain_config");
    REQUIRE(r.status == 200);
    CHECK(r.obj().at("chain_name").as_string() == "from-file");
    CHECK(server.stop().clean());
  }
}

TEST_CASE("a flag is named after its config key; the older name and its variable stay accepted") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  // chain.contract_address is --chain-contract-address (older: --registry-address); a bad value
  // is refused naming the spelling that carried it, so each spelling is shown to reach the setting.
  for (const char* flag : {"--chain-contract-address", "--registry-address"}) {
    const auto run = run_to_exit({"--data-dir", data, flag, "not-an-address"});
    CHECK(run.status.code == 2);
    CHECK_MESSAGE(run.stderr_text.find(flag) != std::string::npos, run.stderr_text);
  }
  // billing.run_price_credits: --billing-run-price-credits, ENACT_BILLING_RUN_PRICE_CREDITS, and
  // the older --run-price / ENACT_RUN_PRICE.
  for (const char* flag : {"--billing-run-price-credits", "--run-price"}) {
    const auto run = run_to_exit({"--data-dir", data, flag, "many"});
    CHECK(run.status.code == 2);
    CHECK_MESSAGE(run.stderr_text.find(std::string(flag) + ": expected a non-negative integer") != std::string::npos,
                  run.stderr_text);
  }
  for (const char* var : {"ENACT_BILLING_RUN_PRICE_CREDITS", "ENACT_RUN_PRICE"}) {
    scoped_env bad(var, "many");
    const auto run = run_to_exit({"--data-dir", data});
    CHECK(run.status.code == 2);
    CHECK_MESSAGE(run.stderr_text.find(std::string(var) + ": expected a non-negative integer") != std::string::npos,
                  run.stderr_text);
  }
  {
    // The key's variable wins over the older name's.
    scoped_env key("ENACT_LEDGER_BACKEND", "embedded");
    scoped_env old("ENACT_LEDGER", "nonsense");  // the key's variable is given: the older is not read
    server_process server({"--data-dir", data});
    CHECK(server.client().get("/get_node_chain_config").status == 200);
    CHECK(server.stop().clean());
  }
  // --help shows both names.
  const auto help = run_to_exit({"--help"});
  CHECK(help.stdout_text.find("--chain-contract-address") != std::string::npos);
  CHECK(help.stdout_text.find("(also --registry-address)") != std::string::npos);
}

TEST_CASE("--version prints the project version; --help lists every flag") {
  const auto version = run_to_exit({"--version"});
  CHECK(version.status.clean());
  // The project version from CMake: MAJOR.MINOR.PATCH.
  CHECK(std::regex_match(version.stdout_text, std::regex("enact-server [0-9]+\\.[0-9]+\\.[0-9]+\n")));
  const auto help = run_to_exit({"--help"});
  CHECK(help.status.clean());
  for (const char* flag : {"--listen", "--chain-rpc", "--no-triggers", "--unsafe-allow-weak-sandbox", "--version",
                           "--trigger-store", "ENACT_"})
    CHECK_MESSAGE(help.stdout_text.find(flag) != std::string::npos, flag);
}
