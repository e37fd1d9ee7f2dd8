// bp::Status and bp::Result<T>: the one error type at library boundaries.
//
// A Status is ok or carries a code and a human-readable message. Result<T>
// holds either a value or a non-ok Status. Neither throws. Both are plain
// values: copyable, and safe to use from any thread (no shared state).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace bp {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad flag, bad config value, malformed request
  kNotFound,         // unknown name, missing file
  kUnavailable,      // server unreachable, connection lost
  kTimeout,          // a command did not answer within its deadline
  kInternal,         // a bug or an unexpected reply
};

const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: weight must be a positive finite number, got -1"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}                // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}        // NOLINT: must not be ok
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_ = Status::Internal("empty result");
};

}  // namespace bp
