// Result<T>: a value or an error message a user can act on.
//
// The library never exits or prints: functions that can fail on user input
// return Result<T> (or Status, for no value). Only src/cli turns an error into
// an exit code and one line on stderr.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace oomguard {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok()
  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // REQUIRES: !ok()
  const std::string& error() const { assert(!ok()); return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

// A Result with no value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : failed_(true), message_(std::move(error.message)) {}  // NOLINT
  static Status Ok() { return Status(); }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return message_; }

 private:
  bool failed_ = false;
  std::string message_;
};

inline Error MakeError(std::string message) { return Error{std::move(message)}; }

}  // namespace oomguard
