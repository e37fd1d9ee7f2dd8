// One accepted connection of the mockapi server: reads requests (keep-alive,
// a fresh parser per request with the service's body limit), answers them
// from Service::Handle after the simulated latency, and writes paced streams
// through its thread's StreamPacer.
//
// Thread-safety: a connection's handlers all run on the one thread that runs
// its socket's io_context, which is also its pacer's.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace bp::mockapi {
class Service;
}

namespace bp::mockapi::internal {

class StreamPacer;

// A socket bound to one io_context's own executor (no type-erased executor
// per handler).
using ServerSocket =
    boost::asio::basic_stream_socket<boost::asio::ip::tcp, boost::asio::io_context::executor_type>;

// Serves `socket` until it closes; the session keeps itself alive through its
// pending handlers. `service` and `pacer` must outlive it; `pacer` belongs to
// the socket's io_context.
void ServeConnection(ServerSocket&& socket, Service& service, StreamPacer& pacer);

}  // namespace bp::mockapi::internal
