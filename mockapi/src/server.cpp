// The HTTP server around a Service: the acceptor, one io_context and one
// StreamPacer per thread; each connection is a session (session.h).
#include "bp/mockapi/server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "session.h"
#include "stream_pacer.h"

namespace bp::mockapi {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

}  // namespace

// One io_context per thread, each run by one thread (no cross-thread wakeups
// on the hot path); connections are dealt to them round-robin by the
// acceptor on context 0. A connection's handlers all run on its context's one
// thread, so they never run concurrently.
struct Server::Impl {
  Impl(Service& s, ServerOptions o) : service(s), options(std::move(o)) {
    for (int i = 0; i < std::max(1, options.threads); ++i) {
      contexts.push_back(std::make_unique<net::io_context>(1));
      pacers.push_back(std::make_unique<internal::StreamPacer>(contexts.back()->get_executor()));
    }
    acceptor.emplace(*contexts[0]);
    signals.emplace(*contexts[0]);
  }

  void StopAll() {
    for (auto& c : contexts) c->stop();
  }

  void DoAccept() {
    const size_t i = next_context++ % contexts.size();
    acceptor->async_accept(*contexts[i], [this, i](error_code ec, internal::ServerSocket socket) {
      if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        internal::ServeConnection(std::move(socket), service, *pacers[i]);
      }
      DoAccept();
    });
  }

  Service& service;
  ServerOptions options;
  std::vector<std::unique_ptr<net::io_context>> contexts;
  // One per context, destroyed before them (they hold the streams waiting).
  std::vector<std::unique_ptr<internal::StreamPacer>> pacers;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::signal_set> signals;
  size_t next_context = 0;  // used on context 0's thread only
  std::vector<std::thread> threads;
  int port = 0;
};

Server::Server(Service& service, ServerOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options))) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  error_code ec;
  const auto address = net::ip::make_address(impl_->options.host, ec);
  if (ec)
    return Status::InvalidArgument("listen.host is not an IP address: " + impl_->options.host);
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(impl_->options.port));
  auto& a = *impl_->acceptor;
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("cannot listen on " + impl_->options.host + ":" +
                               std::to_string(impl_->options.port) + ": " + ec.message());
  }
  impl_->port = a.local_endpoint().port();
  if (impl_->options.handle_signals) {
    impl_->signals->add(SIGINT);
    impl_->signals->add(SIGTERM);
    impl_->signals->async_wait([this](error_code signal_ec, int) {
      if (!signal_ec) impl_->StopAll();
    });
  }
  impl_->DoAccept();
  for (auto& context : impl_->contexts) {
    net::io_context* c = context.get();
    impl_->threads.emplace_back([c] {
      auto guard = net::make_work_guard(*c);  // an idle context waits for connections
      c->run();
    });
  }
  return Status::Ok();
}

int Server::port() const { return impl_->port; }

void Server::Wait() {
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

void Server::Stop() {
  impl_->StopAll();
  Wait();
}

}  // namespace bp::mockapi
