// A minimal synchronous HTTP/1.1 client over loopback for the mockapi
// integration tests (Beast's sync API; the only test TU that includes Beast).
// One keep-alive connection per client; every socket read times out after
// 10 s so a broken server fails a test instead of hanging it.
// Not thread-safe: one client per thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bp::test {

struct HttpReply {
  int status = 0;                              // 0 when the exchange failed; see error
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool keep_alive = false;
  std::string error;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "<absent>" : it->second;
  }
};

class HttpClient {
 public:
  explicit HttpClient(int port);  // connects to 127.0.0.1:port
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  bool connected() const;
  HttpReply Send(const std::string& method, const std::string& target, const std::string& body = "",
                 const std::vector<std::pair<std::string, std::string>>& headers = {});
  // Writes raw bytes, then reads one response (for malformed requests).
  HttpReply SendRaw(const std::string& bytes);
  // Reads one more response (after pipelined requests).
  HttpReply ReadReply();
  // True if the server closed the connection (a read sees EOF or a reset).
  bool ServerClosed();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bp::test
