// Beast sync client behind tests/mockapi/http_client.h.
#include "http_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>

namespace bp::test {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct HttpClient::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
  beast::flat_buffer buffer;
  bool connected = false;

  HttpReply Read() {
    HttpReply reply;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec) {
      reply.error = ec.message();
      return reply;
    }
    const auto& res = parser.get();
    reply.status = static_cast<int>(res.result_int());
    for (const auto& field : res) {
      std::string name(field.name_string());
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      reply.headers[name] = std::string(field.value());
    }
    reply.body = res.body();
    reply.keep_alive = res.keep_alive();
    return reply;
  }
};

HttpClient::HttpClient(int port) : impl_(std::make_unique<Impl>()) {
  beast::error_code ec;
  impl_->socket.connect(
      tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), ec);
  if (ec) return;
  timeval tv{10, 0};
  setsockopt(impl_->socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  impl_->connected = true;
}

HttpClient::~HttpClient() {
  beast::error_code ec;
  impl_->socket.shutdown(tcp::socket::shutdown_both, ec);
}

bool HttpClient::connected() const { return impl_->connected; }

HttpReply HttpClient::Send(const std::string& method, const std::string& target,
                           const std::string& body,
                           const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  beast::error_code ec;
  http::write(impl_->socket, req, ec);
  if (ec) {
    HttpReply reply;
    reply.error = ec.message();
    return reply;
  }
  return impl_->Read();
}

HttpReply HttpClient::SendRaw(const std::string& bytes) {
  beast::error_code ec;
  net::write(impl_->socket, net::buffer(bytes), ec);
  if (ec) {
    HttpReply reply;
    reply.error = ec.message();
    return reply;
  }
  return impl_->Read();
}

HttpReply HttpClient::ReadReply() { return impl_->Read(); }

bool HttpClient::ServerClosed() {
  char byte;
  beast::error_code ec;
  impl_->socket.read_some(net::buffer(&byte, 1), ec);
  return ec == net::error::eof || ec == net::error::connection_reset;
}

}  // namespace bp::test
