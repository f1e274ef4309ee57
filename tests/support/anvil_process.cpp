// SPDX-License-Identifier: Apache-2.0
#include "anvil_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "enact/codec/hex.hpp"

#ifndef ENACT_ANVIL_BIN
#define ENACT_ANVIL_BIN ""
#endif

namespace enact::test {
namespace {

using steady = std::chrono::steady_clock;
constexpr auto kStartTimeout = std::chrono::seconds(30);
// SIGTERM makes anvil write its --state file before exiting; give that time before SIGKILL.
constexpr auto kStopTimeout = std::chrono::seconds(30);
constexpr auto kPollInterval = std::chrono::milliseconds(10);
constexpr std::string_view kListening = "Listening on 127.0.0.1:";

// anvil's dev accounts: mnemonic "test test test test test test test test test test test junk",
// derivation path m/44'/60'/0'/0/i (anvil --help; printed by anvil at start).
constexpr std::array<std::string_view, anvil_process::kDevAccounts> kDevKeyHex = {
    "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    "7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    "47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    "8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
    "92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
    "4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
    "dbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
    "2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
};
constexpr std::array<std::string_view, anvil_process::kDevAccounts> kDevAddressHex = {
    "f39fd6e51aad88f6f4ce6ab8827279cfffb92266", "70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "3c44cdddb6a900fa2b585dd299e03d12fa4293bc", "90f79bf6eb2c4f870365e785982e1f101e93b906",
    "15d34aaf54267db7d7c367839aaf71a00a2c6a65", "9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
    "976ea74026e726554db657fa54763abd0c3a0aa9", "14dc79964da2c08b23698b3d3cc7ca32193d9955",
    "23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f", "a0ee7a142d267c1f36714e4a8f75612f20a79720",
};

/// The N bytes of each hex text of a table above.
template <size_t N>
std::array<std::array<uint8_t, N>, anvil_process::kDevAccounts> decode_each(
    const std::array<std::string_view, anvil_process::kDevAccounts>& hex) {
  std::array<std::array<uint8_t, N>, anvil_process::kDevAccounts> out{};
  for (size_t i = 0; i < hex.size(); ++i)
    out[i] = codec::hex::decode_fixed<N>(hex[i]).value();
  return out;
}

[[nodiscard]] std::string read_whole_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

[[nodiscard]] std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/enact-anvil-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    throw std::runtime_error(std::string("anvil_process: mkdtemp: ") + std::strerror(errno));
  return templ;
}

/// Reaps `pid` if it has exited; true when it has.
[[nodiscard]] bool reaped(pid_t pid) {
  int status = 0;
  pid_t r = 0;
  do {
    r = ::waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  return r == pid || (r < 0 && errno == ECHILD);
}

/// The port of the "Listening on 127.0.0.1:<port>" line, or 0 while there is none.
[[nodiscard]] uint16_t listening_port(const std::string& log) {
  const size_t at = log.find(kListening);
  if (at == std::string::npos)
    return 0;
  size_t i = at + kListening.size();
  uint32_t port = 0;
  size_t digits = 0;
  for (; i < log.size() && log[i] >= '0' && log[i] <= '9' && digits < 6; ++i, ++digits)
    port = port * 10 + static_cast<uint32_t>(log[i] - '0');
  if (i == log.size())
    return 0;  // the line may still be being written
  if (digits == 0 || port == 0 || port > 65535)
    throw std::runtime_error("anvil_process: unreadable listening line in:\n" + log);
  return static_cast<uint16_t>(port);
}

}  // namespace

anvil_process::anvil_process(options o) : options_(std::move(o)) {
  if (options_.binary.empty())
    options_.binary = ENACT_ANVIL_BIN;
  if (options_.binary.empty() || ::access(options_.binary.c_str(), X_OK) != 0)
    throw std::runtime_error("anvil_process: no executable anvil at '" + options_.binary +
                             "' (run `npm ci --prefix tests/anvil`)");
  dir_ = make_temp_dir();
  log_path_ = dir_ + "/anvil.log";
  try {
    launch(false);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

anvil_process::anvil_process(uint64_t chain_id) : anvil_process(options{chain_id, {}, false, {}}) {}

anvil_process::~anvil_process() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void anvil_process::start() {
  if (!running())
    launch(true);
}

void anvil_process::stop() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGTERM);
  stopped_cleanly_ = true;
  const auto deadline = steady::now() + kStopTimeout;
  while (!reaped(pid_)) {
    if (steady::now() > deadline) {
      stopped_cleanly_ = false;
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  pid_ = -1;
}

std::string anvil_process::log_text() const { return read_whole_file(log_path_); }

void anvil_process::launch(bool fixed_port) {
  std::vector<std::string> args = {options_.binary,
                                   "--host",
                                   "127.0.0.1",
                                   "--port",
                                   fixed_port ? std::to_string(port_) : "0",
                                   "--chain-id",
                                   std::to_string(options_.chain_id),
                                   "--color",
                                   "never"};
  if (options_.keep_state) {
    args.emplace_back("--state");
    args.emplace_back(dir_ + "/state.json");
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // anvil keeps the states of past blocks under $HOME/.foundry/anvil/tmp and removes them only
  // when it exits cleanly; a node killed by a test would leave them behind (gigabytes over a
  // day of test runs). Its HOME is this node's own directory, removed with the fixture.
  std::vector<std::string> env_text;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::string_view(*e).rfind("HOME=", 0) != 0)
      env_text.emplace_back(*e);
  env_text.push_back("HOME=" + dir_);
  std::vector<char*> envp;
  envp.reserve(env_text.size() + 1);
  for (std::string& e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0)
    throw std::runtime_error("anvil_process: open " + log_path_ + ": " + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(log_fd);
    throw std::runtime_error(std::string("anvil_process: fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec: the test process may have threads.
    // A test process that dies without stopping its node takes the node with it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(126);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      ::dup2(devnull, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    // Nothing else of the test process (sockets, other children's pipes) leaks into the node.
    for (int fd = 3; fd < 4096; ++fd)
      ::close(fd);
    ::execve(argv[0], argv.data(), envp.data());
    static const char msg[] = "exec of anvil failed\n";
    [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = pid;

  const auto fail = [&](const std::string& why) {
    stop();
    throw std::runtime_error("anvil_process: " + why + "; its output:\n" + log_text());
  };
  const auto deadline = steady::now() + kStartTimeout;
  // One more poll while the node is not yet there: fails when it has exited or the deadline has
  // passed (the messages name what it was waited for, as a gerund and as a verb).
  const auto wait_for = [&](const std::string& gerund, const std::string& verb) {
    if (reaped(pid_)) {
      pid_ = -1;
      fail("anvil exited before " + gerund);
    }
    if (steady::now() > deadline)
      fail("anvil did not " + verb + " within 30 s");
    std::this_thread::sleep_for(kPollInterval);
  };
  uint16_t port = 0;
  while ((port = listening_port(log_text())) == 0)
    wait_for("listening", "listen");
  if (fixed_port && port != port_)
    fail("anvil listens on " + std::to_string(port) + ", expected " + std::to_string(port_));
  port_ = port;
  url_ = "http://127.0.0.1:" + std::to_string(port_);

  // Listening is not yet serving: wait for the first JSON-RPC answer.
  const std::string want = "0x" + [&] {
    std::ostringstream s;
    s << std::hex << options_.chain_id;
    return s.str();
  }();
  for (;;) {
    std::optional<boost::json::value> id;
    try {
      id = rpc("eth_chainId");
    } catch (const std::runtime_error&) {
      // not serving yet
    }
    if (id) {
      if (!id->is_string() || id->get_string() != want)
        fail("eth_chainId answered " + boost::json::serialize(*id) + ", expected \"" + want + "\"");
      return;
    }
    wait_for("answering eth_chainId", "answer eth_chainId");
  }
}

boost::json::value anvil_process::rpc(std::string_view method, boost::json::array params) const {
  httplib::Client cli("127.0.0.1", port_);
  cli.set_connection_timeout(5);
  cli.set_read_timeout(30);
  const boost::json::object request = {
      {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", std::move(params)}};
  const auto r = cli.Post("/", boost::json::serialize(request), "application/json");
  const std::string what = "anvil_process: " + std::string(method) + ": ";
  if (!r)
    throw std::runtime_error(what + "no response (" + httplib::to_string(r.error()) + ")");
  if (r->status != 200)
    throw std::runtime_error(what + "HTTP " + std::to_string(r->status) + ": " + r->body);
  boost::system::error_code ec;
  boost::json::value body = boost::json::parse(r->body, ec);
  if (ec || !body.is_object())
    throw std::runtime_error(what + "not a JSON-RPC answer: " + r->body);
  const boost::json::object& o = body.as_object();
  if (const auto* e = o.if_contains("error"))
    throw std::runtime_error(what + boost::json::serialize(*e));
  const auto* result = o.if_contains("result");
  if (result == nullptr)
    throw std::runtime_error(what + "answer without result: " + r->body);
  return *result;
}

const std::array<anvil_process::private_key, anvil_process::kDevAccounts>& anvil_process::dev_private_keys() {
  static const auto keys = decode_each<32>(kDevKeyHex);
  return keys;
}

const std::array<address, anvil_process::kDevAccounts>& anvil_process::dev_addresses() {
  static const auto addrs = decode_each<20>(kDevAddressHex);
  return addrs;
}

std::string creation_code(const std::string& bin_path) {
  std::ifstream in(bin_path);
  if (!in.good())
    throw std::runtime_error("cannot read " + bin_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

}  // namespace enact::test
