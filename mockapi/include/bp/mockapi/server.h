// bp::mockapi::Server - the HTTP/1.1 front of a Service, on Boost.Beast/Asio.
//
// One io_context run by `threads` threads; one strand per connection;
// keep-alive; a fresh parser per request with the service's body_limit_bytes
// (413 past it); idle_timeout_ms to wait for a request's first byte, then
// read_timeout_ms for the whole request (a slow client is closed). Simulated
// latency is an Asio timer per response, never a blocking sleep; a paced
// stream's later events wait on one timer per io thread (stream_tick_ms).
//
// Thread-safety: Start/Stop/Wait from one controlling thread.
#pragma once

#include <memory>
#include <string>

#include "bp/mockapi/service.h"
#include "bp/status.h"

namespace bp::mockapi {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: an ephemeral port, see port()
  int threads = 2;
  bool handle_signals = false;  // SIGINT/SIGTERM stop the server (the binary sets this)
};

class Server {
 public:
  // `service` must outlive the server.
  Server(Service& service, ServerOptions options);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the io threads. Unavailable if the address
  // cannot be bound, InvalidArgument if the host is not an IP address.
  Status Start();
  // The bound port (after Start).
  int port() const;
  // Blocks until Stop() or, with handle_signals, SIGINT/SIGTERM; joins the threads.
  void Wait();
  // Stops accepting and serving, closes every connection, joins the threads.
  // Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bp::mockapi
