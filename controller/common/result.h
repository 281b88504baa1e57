// Errors as values: every fallible call returns Result<T>, whose Error says
// what went wrong in words an operator can act on.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace edgeshed {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  // Implicit by design: a function returns its value or its error as it is.
  // cppcheck-suppress noExplicitConstructor
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // cppcheck-suppress noExplicitConstructor
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  // cppcheck-suppress noExplicitConstructor ; implicit by design, as above
  Result(Error error)  // NOLINT(google-explicit-constructor)
      : error_(std::move(error)), ok_(false) {}

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace edgeshed
