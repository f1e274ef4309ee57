// SPDX-License-Identifier: Apache-2.0
// A loopback HTTP server for the client tests: records every request it receives and answers with
// whatever the current handler writes. Binds an ephemeral port on 127.0.0.1; each answer carries
// `X-Request-Id: req-<n>` (n counts from 1) unless the handler replaces it.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace enact::test {

struct recorded_request {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::multimap<std::string, std::string, httplib::detail::ci> headers;
  std::string body;
  std::string target;  // the request target as received: path and query, undecoded

  [[nodiscard]] bool has_header(const std::string& name) const { return headers.count(name) != 0; }
  [[nodiscard]] std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class fake_server {
 public:
  using handler = std::function<void(const httplib::Request&, httplib::Response&, size_t n)>;

  fake_server() {
    auto serve = [this](const httplib::Request& req, httplib::Response& res) {
      handler h;
      size_t n = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back({req.method,
                             req.path,
                             {req.params.begin(), req.params.end()},
                             {req.headers.begin(), req.headers.end()},
                             req.body,
                             req.target});
        n = requests_.size();
        h = handler_;
      }
      if (h) {
        h(req, res, n);
      } else {
        res.status = 500;
        res.set_content(R"({"error":{"code":"internal","message":"no handler"}})", "application/json");
      }
      if (!res.has_header("X-Request-Id"))
        res.set_header("X-Request-Id", "req-" + std::to_string(n));
    };
    server_.Get(".*", serve);
    server_.Post(".*", serve);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }

  ~fake_server() {
    // stop() only takes effect once the accept loop runs.
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server_.stop();
    thread_.join();
  }

  fake_server(const fake_server&) = delete;
  fake_server& operator=(const fake_server&) = delete;

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void on(handler h) {
    std::lock_guard<std::mutex> lock(mutex_);
    handler_ = std::move(h);
  }

  /// Every request so far, in arrival order; `clear` forgets them.
  [[nodiscard]] std::vector<recorded_request> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.clear();
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  handler handler_;
  std::vector<recorded_request> requests_;
};

}  // namespace enact::test
