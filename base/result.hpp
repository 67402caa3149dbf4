#pragma once
// A value or the reason there is none: how fallible calls return.
//
// Engram's error conventions, the only ones:
// - result<T> (E = std::string, "what: why"): opening, starting, loading, embedding,
//   sending: a value or a message for a person. result<void> when there is no value.
// - storage::result<T> (E = storage::errc) and a bare storage::errc for writes: the store's
//   codes, which callers branch on (not_found is not corruption).
// - Codecs and validators return std::optional<std::string> ("field: reason") and fill a
//   typed value in place: decoding never allocates a result for a value it then moves.
// A refusal that is itself recorded (a knowledge command naming an unknown entry is marked
// seen with its reason) is an outcome, not an error: it travels in the outcome's struct.
// No exceptions for failures we expect; [[nodiscard]] everywhere a result is returned.

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace engram {

/// The error side, to construct a failed result unambiguously: `return fail("x: y");`.
template <class E>
struct failure {
  E error;
};

template <class E>
failure(E) -> failure<E>;
inline failure<std::string> fail(std::string message) { return {std::move(message)}; }

template <class T, class E = std::string>
class [[nodiscard]] result {
public:
  template <class U = T, class = std::enable_if_t<std::is_convertible_v<U&&, T>>>
  result(U&& value) : v_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT: implicit by design
  template <class F, class = std::enable_if_t<std::is_constructible_v<E, F>>>
  result(failure<F> f) : v_(std::in_place_index<1>, E(std::move(f.error))) {}  // NOLINT

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  [[nodiscard]] const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  [[nodiscard]] T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  [[nodiscard]] const E& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

private:
  std::variant<T, E> v_;
};

template <class E>
class [[nodiscard]] result<void, E> {
public:
  result() = default;
  template <class F, class = std::enable_if_t<std::is_constructible_v<E, F>>>
  result(failure<F> f) : error_(E(std::move(f.error))) {}  // NOLINT

  [[nodiscard]] bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const E& error() const {
    assert(!ok());
    return *error_;
  }

private:
  std::optional<E> error_;
};

}  // namespace engram
