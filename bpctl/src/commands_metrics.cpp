// bpctl metrics: the Prometheus exposition of every gate target of the
// database (metrics.h renders it), served over HTTP on --listen or printed
// once. One io thread: a scrape reads each target's state (state.lua, one
// script call per target: O(classes), or O(active queues) with per-tenant
// series) while the next request waits,
// so scrapes never overlap. Connections are kept per target across scrapes.
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <map>
#include <memory>

#include "bp/bpctl/metrics.h"
#include "bp/bpctl/values.h"
#include "bp/decimal.h"
#include "bp/valkey.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// One scrape: the targets found (or --target alone), each state read
// through a GateAdmin kept in `admins` by target.
class Scraper {
 public:
  Scraper(const Env& env, MetricsOptions options) : env_(env), options_(std::move(options)) {}

  // The exposition; a failed scan is a scrape with no targets and the error on err.
  std::string Scrape() {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<TargetOnNode> found;
    if (env_.target_given) {
      found.push_back({env_.url, env_.target});
    } else {
      auto scanned = ScanTargets(env_.url);
      if (!scanned.ok()) {
        env_.err << "bpctl metrics: " << scanned.status().message() << "\n";
      } else {
        found = std::move(*scanned);
      }
    }
    std::vector<TargetMetrics> out;
    for (const TargetOnNode& t : found) {
      auto& admin = admins_[t.target];
      if (!admin) {
        GateOptions o;
        o.url = t.node_url;
        o.target = t.target;
        o.connect_timeout_ms = 1000;
        o.command_timeout_ms = 5000;
        admin = std::make_unique<GateAdmin>(o);
      }
      TargetMetrics m;
      m.target = t.target;
      // The queue list (O(queues) on the server) only for per-tenant series.
      const bool per_tenant = options_.tenants_top > 0 || !options_.tenants.empty();
      auto st = per_tenant ? admin->State() : admin->StateSummary();
      if (st.ok()) {
        m.up = true;
        m.state = std::move(*st);
      } else {
        admins_.erase(t.target);  // a fresh connection next time
      }
      out.push_back(std::move(m));
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return RenderMetrics(out, options_, s);
  }

 private:
  const Env& env_;
  MetricsOptions options_;
  std::map<std::string, std::unique_ptr<GateAdmin>> admins_;
};

// The response to one request: GET /metrics is the exposition, GET / a
// pointer to it, anything else 404 / 405.
http::response<http::string_body> Route(const http::request<http::string_body>& req,
                                        Scraper& scraper) {
  http::response<http::string_body> res;
  res.version(req.version());
  res.keep_alive(false);
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  const std::string path(req.target().substr(0, req.target().find('?')));
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    res.result(http::status::method_not_allowed);
    res.body() = "GET only\n";
  } else if (path == "/metrics") {
    res.result(http::status::ok);
    res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.body() = scraper.Scrape();
  } else if (path == "/") {
    res.result(http::status::ok);
    res.body() = "bpctl metrics: GET /metrics (Prometheus text format)\n";
  } else {
    res.result(http::status::not_found);
    res.body() = "not found; GET /metrics\n";
  }
  res.prepare_payload();
  return res;
}

// One connection: read a request (10 s limit, 64 KiB body limit), answer, close.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Scraper& scraper) : stream_(std::move(socket)), scraper_(scraper) {}
  void Start() { DoRead(); }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(64 * 1024);
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }
  void OnRead(beast::error_code ec) {
    if (ec) return;
    response_ = Route(parser_->release(), scraper_);
    stream_.expires_after(std::chrono::seconds(10));
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code, size_t) {
                        beast::error_code ignored;
                        self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  Scraper& scraper_;
};

void DoAccept(tcp::acceptor& acceptor, Scraper& scraper) {
  acceptor.async_accept([&acceptor, &scraper](beast::error_code ec, tcp::socket socket) {
    if (!ec) std::make_shared<Session>(std::move(socket), scraper)->Start();
    if (acceptor.is_open()) DoAccept(acceptor, scraper);
  });
}

// "HOST:PORT" (an IPv6 host in brackets) into an endpoint.
Result<tcp::endpoint> ParseListen(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::InvalidArgument("--listen must be HOST:PORT, e.g. 127.0.0.1:9464, got '" +
                                   text + "'");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto port = ParseDecimalInt(text.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) {
    return Status::InvalidArgument("--listen port must be an integer in [0, 65535], got '" +
                                   text.substr(colon + 1) + "'");
  }
  beast::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return Status::InvalidArgument("--listen host must be an IP address, got '" + host + "'");
  return tcp::endpoint(address, static_cast<unsigned short>(*port));
}

int MetricsCmd(const Invocation& in) {
  MetricsOptions options;
  if (in.Has("tenants-top")) {
    auto n = ParseInteger(in.Flag("tenants-top"), "--tenants-top", 0, 100'000);
    if (!n.ok()) return in.env.Fail(n.status());
    options.tenants_top = static_cast<size_t>(*n);
  }
  if (in.Has("tenants")) {
    std::string list = in.Flag("tenants");
    for (size_t start = 0; start <= list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string name = list.substr(start, comma - start);
      if (!ValidTenantName(name)) {
        return in.env.Fail(kExitBadValue, "--tenants: '" + name + "' is not a tenant name (" +
                                              "1-128 bytes of [A-Za-z0-9_.-])");
      }
      options.tenants.push_back(name);
      start = comma + 1;
    }
  }
  if (in.Has("once") == in.Has("listen")) {
    return in.env.Fail(kExitUsage, "metrics: give exactly one of --listen HOST:PORT or --once");
  }
  Scraper scraper(in.env, options);
  if (in.Has("once")) {
    in.env.out << scraper.Scrape() << std::flush;
    return kExitOk;
  }
  auto endpoint = ParseListen(in.Flag("listen"));
  if (!endpoint.ok()) return in.env.Fail(endpoint.status());
  asio::io_context ioc;
  tcp::acceptor acceptor(ioc);
  beast::error_code ec;
  acceptor.open(endpoint->protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(*endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return in.env.Fail(kExitServer, "metrics: cannot listen on " + in.Flag("listen") + ": " +
                                              ec.message());
  const tcp::endpoint bound = acceptor.local_endpoint();
  in.env.err << "bpctl metrics: serving http://" << bound.address().to_string() << ":"
             << bound.port() << "/metrics for " << RedactValkeyUrl(in.env.url) << std::endl;
  DoAccept(acceptor, scraper);
  while (!(in.env.context.stop && in.env.context.stop->load())) {
    ioc.run_for(std::chrono::milliseconds(100));
    if (ioc.stopped()) ioc.restart();
  }
  acceptor.close(ec);
  return kExitOk;
}

void MetricsFlags(po::options_description& d) {
  d.add_options()("listen", po::value<std::string>()->value_name("HOST:PORT"),
                  "serve GET /metrics on this address until SIGINT/SIGTERM (port 0: any free)")(
      "once", "print the exposition once and exit")(
      "tenants-top", po::value<std::string>()->value_name("N"),
      "per-tenant series for the N queues with the most admits per target (default 0)")(
      "tenants", po::value<std::string>()->value_name("T1,T2"),
      "per-tenant series for these tenants' queues");
}

}  // namespace

std::vector<Command> MetricsCommands() {
  return {
      {"metrics",
       "(--listen HOST:PORT | --once) [--tenants-top N] [--tenants T1,T2]",
       "Prometheus metrics of every target (counters per class, caps, L1, backlog)",
       "Serves the Prometheus text exposition of every gate target of the database\n"
       "(a cluster URL: every primary), or of --target alone when given before the\n"
       "command. Series per target and class by default; per-tenant series only for\n"
       "the --tenants-top N queues with the most admits and the --tenants listed.\n"
       "Names and labels: docs/bpctl.md (metrics).\n\n"
       "Examples:\n"
       "  bpctl metrics --listen 127.0.0.1:9464\n"
       "  bpctl --target chat metrics --once --tenants-top 10\n",
       {},
       MetricsFlags,
       MetricsCmd},
  };
}

}  // namespace bp::bpctl
