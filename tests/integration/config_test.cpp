// enact-server's configuration: a TOML or JSON file, flags overriding it, and a clear refusal
// (exit 2, the offending setting named on stderr) of anything it cannot use.
#include <doctest/doctest.h>

#include <fstream>
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
