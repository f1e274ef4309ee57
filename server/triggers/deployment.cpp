// SPDX-License-Identifier: Apache-2.0
#include "triggers/deployment.hpp"

#include <httplib.h>

#include "http/log.hpp"
#include "dashboard/dashboard.hpp"
#include "enact/api/errc.hpp"
#include "triggers/handshake.hpp"
#include "triggers/pg_store.hpp"
#include "triggers/webhook.hpp"

namespace enact::triggers {

namespace {
/// A URL host for a listen address: wildcard addresses are reached on loopback.
std::string reachable(const std::string& host) {
  if (host == "0.0.0.0" || host.empty())
    return "127.0.0.1";
  if (host == "::" || host == "[::]")
    return "[::1]";
  if (host.find(':') != std::string::npos && host.front() != '[')
    return "[" + host + "]";
  return host;
}
}  // namespace

result<std::unique_ptr<deployment>> deployment::start(const settings& s, const tee::tee& t, http::logger& log,
                                                      const options& o) {
  if (!o.main_serves_core && s.core_url.empty())
    return fail(api_errc::invalid_request,
                "--no-core: the trigger workers need the core service's URL (--core-url URL)");
  // Where the trigger routes listen: their own listener, or the main one.
  std::string listen_host = o.listen_host;
  int listen_port = o.listen_port;
  if (!s.listen.empty()) {
    const auto hp = split_listen(s.listen);
    if (!hp)
      return fail(api_errc::invalid_request, "--triggers-listen: expected HOST:PORT");
    listen_host = hp->first;
    listen_port = hp->second;
  }
  if (s.public_url.empty() && loopback_authorities(listen_host, listen_port == 0 ? 1 : listen_port).empty())
    return fail(api_errc::invalid_request,
                "the trigger service would listen on " + listen_host +
                    ", which is not a loopback address, "
                    "without a public URL: set --triggers-public-url (triggers.public_url) to the URL its users "
                    "reach it at (the only domain its wallet sign-in accepts), or serve it on 127.0.0.1, or "
                    "start with --no-triggers");
  std::unique_ptr<deployment> d(new deployment());
  // A PostgreSQL store is shared with other instances; triggers.sqlite belongs to this one alone.
  const bool shared_store = is_postgres_url(s.store);
  if (shared_store) {
    auto db = pg_store::open(s.store, pg_options{s.store_pool});
    if (!db)
      return error{db.code(), "triggers: " + db.err().message};
    d->store_ = std::move(*db);
  } else {
    sqlite_options so;
    so.synchronous_full = s.sync != "normal";
    auto db = sqlite_store::open(o.data_dir + "/triggers.sqlite", so);
    if (!db)
      return error{db.code(), "triggers: " + db.err().message};
    d->store_ = std::move(*db);
  }

  service_config cfg;
  cfg.workers.core_url = s.core_url.empty() ? o.own_url : s.core_url;
  cfg.workers.threads = s.workers;
  cfg.workers.retry_base = std::chrono::milliseconds(s.retry_base_ms);
  cfg.workers.lease = std::chrono::milliseconds(s.lease_ms);
  cfg.workers.disable_after_credit_failures = static_cast<uint32_t>(s.disable_after_credit_failures);
  cfg.run_retention = std::chrono::hours(24 * s.run_retention_days);
  cfg.max_triggers_per_user = s.max_triggers_per_user;
  cfg.creations_per_minute = s.creations_per_minute;
  cfg.core_max_body = s.core_max_body_bytes != 0 ? static_cast<size_t>(s.core_max_body_bytes) : kCoreRunRequestLimit;
  cfg.rules.chain_rpc = s.chain_rpc;
  cfg.public_url = s.public_url;
  // On a listener of its own the service is another origin than the dashboard's page, served on
  // the main listener at own_url: that origin alone may call it from a browser
  // (docs/dashboard.md "The trigger service on its own listener").
  if (!s.listen.empty() && o.main_serves_core)
    cfg.page_origins = {dashboard::origin_of(o.own_url)};
  cfg.webhook_requests_per_second = s.webhook_requests_per_second;
  cfg.webhook_burst = s.webhook_burst;
  // Only a store this process serves alone may take back every lease at start: on a shared one
  // the other instances' workers hold theirs, and expired ones are leased again anyway.
  cfg.release_leases_at_start = !shared_store;
  d->core_url_ = cfg.workers.core_url;
  ENACT_TRY(d->service_, service::start(*d->store_, t, log, d->clock_, std::move(cfg)));
  if (!s.chain_rpc.empty()) {
    // One polling thread per chain with an RPC endpoint (docs/triggers.md "Chain events").
    std::vector<chain_watch_config> chains;
    for (const auto& [name, url] : s.chain_rpc) {
      chain_watch_config c;
      c.chain = name;
      c.rpc_url = url;
      if (const auto it = s.chain_confirmations.find(name); it != s.chain_confirmations.end())
        c.confirmations = it->second;
      c.poll_interval = std::chrono::milliseconds(s.chain_poll_ms);
      chains.push_back(std::move(c));
    }
    event_sink sink = [&log](severity level, std::string_view msg, json::object fields) {
      log.log(level == severity::error  ? http::logger::level::error
              : level == severity::warn ? http::logger::level::warn
              : level == severity::info ? http::logger::level::info
                                        : http::logger::level::debug,
              msg, std::move(fields));
    };
    service* svc = d->service_.get();
    d->watcher_ = std::make_unique<chain_watcher>(
        *d->store_, d->clock_, std::move(chains), [svc] { svc->workers().notify(); }, std::move(sink));
    d->watcher_->start();
  }

  if (s.listen.empty()) {
    d->service_->mount(*o.main_server, !o.main_serves_core, loopback_authorities(listen_host, listen_port));
    d->url_ = o.own_url;
    return d;
  }
  d->own_ = std::make_unique<http::bounded_server>(o.http_limits);
  const size_t threads = o.http_threads;
  d->own_->new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  d->own_->set_keep_alive_max_count(1000);
  int port = listen_port;
  if (port == 0)
    port = d->own_->bind_to_any_port(listen_host);
  else if (!d->own_->bind_to_port(listen_host, port))
    port = -1;
  if (port <= 0)
    return fail(api_errc::invalid_request,
                "--triggers-listen: cannot listen on " + s.listen + " (in use, or not an address of this machine)");
  // Mounted once bound: sign-in on loopback needs the port actually bound (port 0 picks one).
  d->service_->mount(*d->own_, true, loopback_authorities(listen_host, port));
  d->url_ = "http://" + reachable(listen_host) + ":" + std::to_string(port);
  // The dashboard reaches the routes where their users do: the public URL when one is set.
  if (o.main_serves_core)
    dashboard::set_triggers_url(s.public_url.empty() ? d->url_ : s.public_url);
  deployment* self = d.get();
  d->own_thread_ = std::thread([self] {
    self->own_->listen_after_bind();
    self->own_done_ = true;
  });
  return d;
}

deployment::~deployment() { stop(); }

void deployment::stop() {
  if (watcher_)
    watcher_->stop();
  if (service_)
    service_->stop();
  if (own_) {
    // stop() does nothing before the accept loop runs; wait for it (or its end) first.
    while (!own_->is_running() && !own_done_)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    own_->stop();
  }
  if (own_thread_.joinable())
    own_thread_.join();
}

std::string deployment::banner() const {
  return "  triggers " + url_ + "/api (webhooks " + url_ + "/webhook/<id>; runs call " + core_url_ + ")\n";
}

}  // namespace enact::triggers
