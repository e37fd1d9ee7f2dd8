// The JSON field reader of the workload and scenario parsers (workload.cpp,
// scenario.cpp), not a public header: reads fields of one object, checks
// type and range, and keeps the first error in the form "PATH.FIELD: what is
// wrong" (a typo must not silently use a default). Not thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace bp::loadgen::internal {

class FieldReader {
 public:
  // The first error goes to *error (kept if already set).
  FieldReader(const nlohmann::json& obj, std::string path, std::string* error)
      : obj_(obj), path_(std::move(path)), error_(error) {}
  // The first error is kept here (error()).
  FieldReader(const nlohmann::json& obj, std::string path)
      : obj_(obj), path_(std::move(path)), error_(&own_error_) {}
  FieldReader(const FieldReader&) = delete;
  FieldReader& operator=(const FieldReader&) = delete;

  bool ok() const { return error_->empty(); }
  const std::string& error() const { return *error_; }
  bool Has(const char* key) const { return obj_.contains(key); }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  void Fail(const std::string& key, const std::string& what) {
    if (error_->empty()) *error_ = Path(key) + ": " + what;
  }

  // Rejects keys not in `allowed`, naming them "unknown field" + `context`
  // (e.g. " for type join").
  void OnlyKeys(const std::set<std::string>& allowed, const std::string& context = "") {
    for (const auto& [key, value] : obj_.items()) {
      if (!allowed.count(key)) Fail(key, "unknown field" + context);
    }
  }

  // An integer in [min, max].
  void Int(const char* key, int64_t min, int64_t max, int64_t* out, bool required) {
    if (!Has(key)) {
      if (required) Fail(key, "missing (required)");
      return;
    }
    const nlohmann::json& v = obj_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max) {
      Fail(key, "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                    "], got " + v.dump());
      return;
    }
    *out = v.get<int64_t>();
  }
  void Int(const char* key, int min, int max, int* out, bool required) {
    int64_t v = *out;
    Int(key, min, max, &v, required);
    *out = static_cast<int>(v);
  }

  // A finite number > min (or >= min when inclusive).
  void Number(const char* key, double min, bool inclusive, double* out, bool required) {
    if (!Has(key)) {
      if (required) Fail(key, "missing (required)");
      return;
    }
    const nlohmann::json& v = obj_.at(key);
    const bool ok = v.is_number() && std::isfinite(v.get<double>()) &&
                    (inclusive ? v.get<double>() >= min : v.get<double>() > min);
    if (!ok) {
      char shown[32];  // "%g": 0, not std::to_string's 0.000000
      std::snprintf(shown, sizeof shown, "%g", min);
      Fail(key, std::string("must be a finite number ") + (inclusive ? ">= " : "> ") + shown +
                    ", got " + v.dump());
      return;
    }
    *out = v.get<double>();
  }

  // A finite number in [min, max] ("%g" in the message: [1e-06, 1e+06]).
  void NumberIn(const char* key, double min, double max, double* out, bool required) {
    if (!Has(key)) {
      if (required) Fail(key, "missing (required)");
      return;
    }
    const nlohmann::json& v = obj_.at(key);
    if (!v.is_number() || !(v.get<double>() >= min && v.get<double>() <= max)) {
      Fail(key, RangeText(min, max) + ", got " + v.dump());
      return;
    }
    *out = v.get<double>();
  }
  // "must be a number in [1e-06, 1e+06]".
  static std::string RangeText(double min, double max) {
    char text[80];
    std::snprintf(text, sizeof text, "must be a number in [%g, %g]", min, max);
    return text;
  }

  void Bool(const char* key, bool* out) {
    if (!Has(key)) return;
    if (!obj_.at(key).is_boolean()) return Fail(key, "must be true or false");
    *out = obj_.at(key).get<bool>();
  }

  void String(const char* key, std::string* out, bool required) {
    if (!Has(key)) {
      if (required) Fail(key, "missing (required)");
      return;
    }
    if (!obj_.at(key).is_string()) {
      Fail(key, "must be a string");
      return;
    }
    *out = obj_.at(key).get<std::string>();
  }

 private:
  const nlohmann::json& obj_;
  std::string path_;
  std::string own_error_;
  std::string* error_;
};

}  // namespace bp::loadgen::internal
