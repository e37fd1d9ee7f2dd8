// The one reader of JSON a user wrote: mockapi's config (file and PUT body),
// loadgen's workload, scenario and records files, the declared gate
// configuration (bpctl import, loadgen --gate-config) and the `limits` list.
// Every refusal has one shape:
//
//   FILE: PATH: what was expected, got VALUE
//   workload.json: tenants[2].weight: must be a number in [1e-06, 1e+06], got 0
//   mockapi.json: listen.port: must be an integer in [0, 65535], got "80"
//   mock.json: limits[0].foo: unknown field
//   gate.json: not valid JSON at line 3, column 1: syntax error while parsing ...
//
// FILE comes from ReadJsonFile (or the caller, for a body), PATH from the
// reader of each object ("" for the document, "tenants[2]", "limits[0]"),
// the rest from the checks below; numbers in ranges are written by
// bp::FormatNumber (decimal.h), values as JSON (dump()). A typo must not
// silently take a default: OnlyKeys refuses unknown fields.
//
// Thread-safety: the free functions are pure; a JsonFields is used by one
// thread. No exceptions: every value is type-checked before it is read.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "bp/decimal.h"
#include "bp/status.h"

namespace bp {

// For `text` that does not parse as JSON (RFC 8259, as nlohmann::json reads
// it): "not valid JSON at line L, column C: REASON", with L and C 1-based
// (the column counts bytes from the start of line L) and REASON the parser's
// own ("syntax error while parsing object key - unexpected end of input;
// expected string literal"). For text that parses: "".
std::string JsonSyntaxError(std::string_view text);

// Whether a key repeated within one object is an error ("duplicate key
// \"caps\" (each field may appear once)") or the last value wins.
enum class JsonDuplicates { kAllow, kRefuse };

// `text` as JSON. InvalidArgument: JsonSyntaxError's message; "empty
// document" for an empty or all-whitespace text; a duplicate key when
// refused. Json is nlohmann::json or nlohmann::ordered_json.
template <typename Json = nlohmann::json>
Result<Json> ParseJsonText(std::string_view text,
                           JsonDuplicates duplicates = JsonDuplicates::kAllow);

// The file at `path` as JSON; `what` names its kind in messages ("workload",
// "config"). NotFound: "PATH: cannot read the WHAT file", "PATH: is a
// directory, not a WHAT file"; InvalidArgument: "PATH: " + ParseJsonText's
// message.
template <typename Json = nlohmann::json>
Result<Json> ReadJsonFile(const std::string& path, const std::string& what,
                          JsonDuplicates duplicates = JsonDuplicates::kAllow);

// Status `s` with "PREFIX: " in front of its message (the file of a field).
Status WithPrefix(const Status& s, const std::string& prefix);

// The checks' wording, for values that are not fields of an object (rows of
// the records file, items of an array): "must be an integer in [1, 5]".
std::string IntRangeText(int64_t min, int64_t max);
// "must be a number in [1e-06, 1e+06]", "must be a finite number > 0".
std::string NumberRangeText(const NumberRange& range);

// Whether `v` is an integer in [min, max]; unsigned values beyond INT64_MAX
// and 1.5 are not (nlohmann's get<int64_t>() would wrap or truncate them).
template <typename Json>
bool JsonIntIn(const Json& v, int64_t min, int64_t max) {
  if (v.is_number_unsigned()) {
    const auto u = v.template get<uint64_t>();
    return u <= static_cast<uint64_t>(INT64_MAX) && static_cast<int64_t>(u) >= min &&
           static_cast<int64_t>(u) <= max;
  }
  return v.is_number_integer() && v.template get<int64_t>() >= min &&
         v.template get<int64_t>() <= max;
}

// Whether a field must be present.
enum class Need { kOptional, kRequired };

// Reads typed fields of one JSON object at `path`, checking type and range,
// and keeps the first error ("PATH.FIELD: what"). A field that fails leaves
// its output unchanged; later checks after a failure record nothing.
template <typename Json>
class BasicJsonFields {
 public:
  // The first error goes to *error (kept if already set); "PATH: must be an
  // object" ("document: must be a JSON object" at the top) when `obj` is not.
  BasicJsonFields(const Json& obj, std::string path, std::string* error)
      : obj_(obj), path_(std::move(path)), error_(error) {
    if (!obj_.is_object()) {
      FailHere(path_.empty() ? "must be a JSON object" : "must be an object");
    }
  }
  // The first error is kept here (error(), status()).
  BasicJsonFields(const Json& obj, std::string path)
      : BasicJsonFields(obj, std::move(path), &own_error_) {}
  BasicJsonFields(const BasicJsonFields&) = delete;
  BasicJsonFields& operator=(const BasicJsonFields&) = delete;

  bool ok() const { return error_->empty(); }
  const std::string& error() const { return *error_; }
  Status status() const { return ok() ? Status::Ok() : Status::InvalidArgument(*error_); }
  bool Has(const char* key) const { return obj_.is_object() && obj_.contains(key); }
  // The field's value; Has(key) first.
  const Json& at(const char* key) const { return obj_.at(key); }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  // "PATH.KEY: what", kept if it is the first error.
  void Fail(const std::string& key, const std::string& what) {
    if (error_->empty()) *error_ = Path(key) + ": " + what;
  }
  // "PATH: what" ("document: what" at the top).
  void FailHere(const std::string& what) {
    if (error_->empty()) *error_ = (path_.empty() ? "document" : path_) + ": " + what;
  }

  // Refuses keys not in `allowed`: "PATH.KEY: unknown field" + `context`
  // (e.g. " for type join").
  void OnlyKeys(const std::set<std::string>& allowed, const std::string& context = "") {
    if (!obj_.is_object()) return;
    for (const auto& [key, value] : obj_.items()) {
      if (!allowed.count(key)) Fail(key, "unknown field" + context);
    }
  }

  // An integer in [min, max].
  template <typename T>
  void Int(const char* key, int64_t min, int64_t max, T* out, Need need = Need::kOptional) {
    if (!Present(key, need)) return;
    const Json& v = obj_.at(key);
    if (!JsonIntIn(v, min, max)) return Fail(key, IntRangeText(min, max) + ", got " + v.dump());
    *out = static_cast<T>(v.template get<int64_t>());
  }

  // Any integer that fits int64_t ("must be an integer, got V"), for fields
  // whose range a validator checks later with its own message.
  template <typename T>
  void Int(const char* key, T* out, Need need = Need::kOptional) {
    if (!Present(key, need)) return;
    const Json& v = obj_.at(key);
    if (!JsonIntIn(v, INT64_MIN, INT64_MAX))
      return Fail(key, "must be an integer, got " + v.dump());
    *out = static_cast<T>(v.template get<int64_t>());
  }

  // Any number ("must be a number, got V"), for fields whose range a
  // validator checks later with its own message.
  void Number(const char* key, double* out, Need need = Need::kOptional) {
    if (!Present(key, need)) return;
    const Json& v = obj_.at(key);
    if (!v.is_number()) return Fail(key, "must be a number, got " + v.dump());
    *out = v.template get<double>();
  }

  // A finite number inside `range`.
  void Number(const char* key, const NumberRange& range, double* out, Need need = Need::kOptional) {
    if (!Present(key, need)) return;
    const Json& v = obj_.at(key);
    if (!v.is_number() || !InRange(v.template get<double>(), range)) {
      return Fail(key, NumberRangeText(range) + ", got " + v.dump());
    }
    *out = v.template get<double>();
  }
  // A finite number in the closed range [min, max].
  void NumberIn(const char* key, double min, double max, double* out, Need need = Need::kOptional) {
    Number(key, NumberRange{min, max}, out, need);
  }

  // A string; "must be a non-empty string" when `non_empty` and it is "".
  void String(const char* key, std::string* out, Need need = Need::kOptional,
              bool non_empty = false) {
    if (!Present(key, need)) return;
    const Json& v = obj_.at(key);
    if (!v.is_string() || (non_empty && v.template get<std::string>().empty())) {
      return Fail(key, std::string(non_empty ? "must be a non-empty string" : "must be a string") +
                           ", got " + v.dump());
    }
    *out = v.template get<std::string>();
  }

  void Bool(const char* key, bool* out, Need need = Need::kOptional) {
    if (!Present(key, need)) return;
    const Json& v = obj_.at(key);
    if (!v.is_boolean()) return Fail(key, "must be true or false, got " + v.dump());
    *out = v.template get<bool>();
  }

  // One of `names`; *out becomes its index: "must be a | b, got \"c\"".
  template <typename E>
  void Enum(const char* key, E* out, std::initializer_list<const char*> names,
            Need need = Need::kOptional) {
    if (!Present(key, need)) return;
    const Json& v = obj_.at(key);
    std::string list;
    int i = 0;
    for (const char* name : names) {
      if (v.is_string() && v.template get<std::string>() == name) {
        *out = static_cast<E>(i);
        return;
      }
      list += (i++ ? " | " : "") + std::string(name);
    }
    Fail(key, "must be " + list + ", got " + v.dump());
  }

 private:
  // Whether `key` is there to read (and no error yet); "missing (required)"
  // when it must be and is not.
  bool Present(const char* key, Need need) {
    if (!ok() || !obj_.is_object()) return false;
    if (obj_.contains(key)) return true;
    if (need == Need::kRequired) Fail(key, "missing (required)");
    return false;
  }

  const Json& obj_;
  std::string path_;
  std::string own_error_;
  std::string* error_;
};

using JsonFields = BasicJsonFields<nlohmann::json>;
using OrderedJsonFields = BasicJsonFields<nlohmann::ordered_json>;

}  // namespace bp
