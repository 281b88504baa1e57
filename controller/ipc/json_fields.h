// One definition per JSON document: a struct's Definition lists its fields
// once (key, member, presence, codec), and write() and read() both walk that
// list, so the writer and the reader cannot disagree on a key or forget a
// field the other has. Every member of a defined struct must be listed:
// kComplete<T> counts the struct's members against its fields, and write()
// and read() refuse to compile a definition that misses one.
//
// Reading refuses what is not the document, naming the field by its path
// ("signals[2].target", "classes.normal.inflight_cap"); keys it does not
// know are ignored, so that an older reader takes a newer file.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/result.h"

namespace edgeshed::ipc::fields {

using Json = nlohmann::ordered_json;

enum class Presence {
  kRequired,   // written always; refused when missing (an optional member: null when empty)
  kDefaulted,  // written always; missing when read (an older file): the member's default
  kOmitEmpty,  // written only when not empty (nullopt, "", []); missing when read: empty
  kKey,        // the key of this object in its parent (an object of objects); first if any
  kInline,     // a struct whose fields are written into this object (optional: when set)
};

template <Presence P, class S, class M, class Codec>
struct Field {
  static constexpr Presence kPresence = P;
  const char* key;
  M S::*member;
  Codec codec;
};

// A key written with the same text always, for the document's readers; not read.
struct Constant {
  const char* key;
  const char* text;
};

// Specialise with `static constexpr auto kFields = std::tuple{field(...), ...};`.
template <class T>
struct Definition;

template <class T>
concept Defined = requires {
  Definition<T>::kFields;
};

// "\"signals[2].target\" is not a number"
Error field_error(const std::string& path, const std::string& what);
// The path of key inside the object at path.
std::string path_of(const std::string& path, const std::string& key);

// ---- Counting a struct's members (an aggregate's, by brace initialisation).

struct AnyMember {
  template <class T>
  operator T() const;  // NOLINT(google-explicit-constructor): converts to every member, unevaluated
};

template <class T, class... A>
consteval size_t member_count() {
  if constexpr (requires { T{std::declval<A>()..., AnyMember{}}; }) {
    return member_count<T, A..., AnyMember>();
  } else {
    return sizeof...(A);
  }
}

template <class F>
inline constexpr bool kIsField = !std::is_same_v<std::remove_cvref_t<F>, Constant>;

// Whether f (a Field) is one of presence p.
template <Presence p, class F>
consteval bool is_presence() {
  if constexpr (kIsField<F>) {
    return std::remove_cvref_t<F>::kPresence == p;
  } else {
    return false;
  }
}
template <Presence p, class F>
inline constexpr bool kIs = is_presence<p, F>();

template <Defined T>
consteval size_t field_count() {
  return std::apply(
      [](const auto&... f) { return (size_t{0} + ... + (kIsField<decltype(f)> ? 1 : 0)); },
      Definition<T>::kFields);
}

template <Defined T>
inline constexpr bool kComplete = member_count<T>() == field_count<T>();

// ---- Codecs: how one member's value is written and read.

template <class T>
struct Value;

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

template <class T>
constexpr bool is_empty(const T& v) {
  if constexpr (IsOptional<T>::value) {
    return !v.has_value();
  } else {
    return v.empty();
  }
}

// Whether T's objects are written keyed by one of its members: the first
// field of its definition is then a key_field.
template <class T>
consteval bool has_key_field() {
  if constexpr (Defined<T>) {
    using First = std::tuple_element_t<0, std::remove_cvref_t<decltype(Definition<T>::kFields)>>;
    return kIs<Presence::kKey, First>;
  } else {
    return false;
  }
}

template <class T>
auto& key_of(T& e) {
  return e.*(std::get<0>(Definition<std::remove_const_t<T>>::kFields).member);
}

template <class S, class Fields>
void write_fields(const Fields& fields, const S& s, Json& j);
template <class S, class Fields>
Status read_fields(const Fields& fields, const Json& j, const std::string& path, S& s);

template <Defined S>
Json write(const S& s) {
  static_assert(kComplete<S>, "a member of this struct is missing from its Definition");
  Json j = Json::object();
  write_fields(Definition<S>::kFields, s, j);
  return j;
}

// Reads the object at path into out.
template <Defined S>
Status read(const Json& j, const std::string& path, S& out) {
  static_assert(kComplete<S>, "a member of this struct is missing from its Definition");
  if (!j.is_object()) return field_error(path, "is not an object");
  return read_fields(Definition<S>::kFields, j, path, out);
}

// Scalars, optionals (null when empty), lists and defined structs.
template <class T>
struct Value {
  // What a list of T must hold, for "is not a list of ...".
  static constexpr const char* plural() {
    if constexpr (std::is_same_v<T, bool>) {
      return "true or false";
    } else if constexpr (std::is_same_v<T, std::string>) {
      return "strings";
    } else if constexpr (std::is_floating_point_v<T>) {
      return "numbers";
    } else {
      return "integers in range";
    }
  }

  Json write(const T& v) const {
    if constexpr (IsOptional<T>::value) {
      using Inner = typename T::value_type;
      // JSON has no NaN or infinity: a broken number is null, like a missing one.
      if constexpr (std::is_floating_point_v<Inner>) {
        if (v && !std::isfinite(*v)) return Json(nullptr);
      }
      return v ? Value<Inner>{}.write(*v) : Json(nullptr);
    } else if constexpr (Defined<T>) {
      return fields::write(v);
    } else if constexpr (IsVector<T>::value) {
      using Element = typename T::value_type;
      if constexpr (has_key_field<Element>()) {
        Json j = Json::object();
        for (const auto& e : v) j[key_of(e)] = Value<Element>{}.write(e);
        return j;
      } else {
        Json j = Json::array();
        for (const auto& e : v) j.push_back(Value<Element>{}.write(e));
        return j;
      }
    } else {
      return Json(v);
    }
  }

  Status read(const Json& j, const std::string& path, T& out) const {
    if constexpr (IsOptional<T>::value) {
      if (j.is_null()) {
        out.reset();
        return {};
      }
      typename T::value_type v{};
      if (auto s = Value<typename T::value_type>{}.read(j, path, v); !s) return s;
      out = std::move(v);
      return {};
    } else if constexpr (Defined<T>) {
      return fields::read(j, path, out);
    } else if constexpr (IsVector<T>::value) {
      return read_list(j, path, out);
    } else {
      return read_scalar(j, path, out);
    }
  }

  // A list written as an array is refused missing as "not a list", as the
  // state file always said of its signals.
  static constexpr const char* missing() {
    if constexpr (IsVector<T>::value) {
      if constexpr (!has_key_field<typename T::value_type>()) return "is not a list";
    }
    return "is missing";
  }

 private:
  static Status read_list(const Json& j, const std::string& path, T& out) {
    using Element = typename T::value_type;
    out.clear();
    if constexpr (has_key_field<Element>()) {
      if (!j.is_object()) return field_error(path, "is not an object");
      for (const auto& [key, v] : j.items()) {
        Element e{};
        key_of(e) = key;
        if (auto s = Value<Element>{}.read(v, path_of(path, key), e); !s) return s;
        out.push_back(std::move(e));
      }
    } else {
      if (!j.is_array()) return field_error(path, "is not a list");
      for (size_t i = 0; i < j.size(); ++i) {
        Element e{};
        if constexpr (Defined<Element>) {
          if (auto s = Value<Element>{}.read(j[i], path + "[" + std::to_string(i) + "]", e); !s) {
            return s;
          }
        } else if (!Value<Element>{}.read(j[i], path, e)) {
          return field_error(path, std::string("is not a list of ") + Value<Element>::plural());
        }
        out.push_back(std::move(e));
      }
    }
    return {};
  }

  static Status read_scalar(const Json& v, const std::string& path, T& out) {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) return field_error(path, "is not true or false");
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) return field_error(path, "is not a string");
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) return field_error(path, "is not a number");
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) return field_error(path, "is not an integer");
      if constexpr (std::is_unsigned_v<T>) {
        if (!v.is_number_unsigned() || v.get<uint64_t>() > std::numeric_limits<T>::max()) {
          return field_error(path, "is out of range");
        }
      } else {
        const auto n = v.get<int64_t>();
        if (n < std::numeric_limits<T>::min() || n > std::numeric_limits<T>::max()) {
          return field_error(path, "is out of range");
        }
      }
    } else {
      static_assert(!sizeof(T), "no codec for this type: give the field one");
    }
    out = v.get<T>();
    return {};
  }
};

// A fixed row (std::array, or anything indexed 0..N-1) as an object keyed by
// a names table (names::kClasses, names::kCounters), in the table's order.
// ByName's default element codec: Value of the row's element type.
struct ElementValue {};

template <const auto& kNames, class Element = ElementValue>
struct ByName {
  Element element{};

  template <class Row>
  Json write(const Row& row) const {
    Json j = Json::object();
    for (size_t i = 0; i < kNames.size(); ++i) j[std::string(kNames[i])] = codec(row).write(row[i]);
    return j;
  }

  template <class Row>
  Status read(const Json& j, const std::string& path, Row& row) const {
    if (!j.is_object()) return field_error(path, "is not an object");
    for (size_t i = 0; i < kNames.size(); ++i) {
      const std::string key(kNames[i]);
      auto it = j.find(key);
      if (it == j.end()) return field_error(path_of(path, key), "is missing");
      if (auto s = codec(row).read(*it, path_of(path, key), row[i]); !s) return s;
    }
    return {};
  }

 private:
  template <class Row>
  auto codec(const Row& row) const {
    if constexpr (std::is_same_v<Element, ElementValue>) {
      return Value<std::remove_cvref_t<decltype(row[0])>>{};
    } else {
      return element;
    }
  }
};

// A value inside an object of one key: {"counters": {...}}.
template <class Inner>
struct Wrapped {
  const char* key;
  Inner inner{};

  template <class T>
  Json write(const T& v) const {
    return Json{{key, inner.write(v)}};
  }
  template <class T>
  Status read(const Json& j, const std::string& path, T& out) const {
    if (!j.is_object()) return field_error(path, "is not an object");
    auto it = j.find(key);
    if (it == j.end()) return field_error(path_of(path, key), "is missing");
    return inner.read(*it, path_of(path, key), out);
  }
};

// ---- Fields.

template <class S, class M, class Codec = Value<M>>
constexpr Field<Presence::kRequired, S, M, Codec> field(const char* key, M S::*member,
                                                        Codec codec = {}) {
  return {key, member, codec};
}

template <class S, class M, class Codec = Value<M>>
constexpr Field<Presence::kDefaulted, S, M, Codec> defaulted(const char* key, M S::*member,
                                                             Codec codec = {}) {
  return {key, member, codec};
}

template <class S, class M, class Codec = Value<M>>
constexpr Field<Presence::kOmitEmpty, S, M, Codec> omit_empty(const char* key, M S::*member,
                                                              Codec codec = {}) {
  return {key, member, codec};
}

template <class S, class M>
constexpr Field<Presence::kKey, S, M, Value<M>> key_field(M S::*member) {
  return {"", member, {}};
}

template <class S, class M>
constexpr Field<Presence::kInline, S, M, Value<M>> inline_field(M S::*member) {
  return {"", member, {}};
}

constexpr Constant constant(const char* key, const char* text) { return {key, text}; }

template <class M>
constexpr const auto& inline_definition() {
  if constexpr (IsOptional<M>::value) {
    return Definition<typename M::value_type>::kFields;
  } else {
    return Definition<M>::kFields;
  }
}

template <class S, class Fields>
void write_fields(const Fields& fields, const S& s, Json& j) {
  std::apply(
      [&](const auto&... f) {
        (
            [&] {
              using F = decltype(f);
              if constexpr (!kIsField<F>) {
                j[f.key] = f.text;
              } else if constexpr (!kIs<Presence::kKey, F>) {
                const auto& v = s.*(f.member);
                using M = std::remove_cvref_t<decltype(v)>;
                if constexpr (kIs<Presence::kInline, F>) {
                  if constexpr (IsOptional<M>::value) {
                    if (v) write_fields(inline_definition<M>(), *v, j);
                  } else {
                    write_fields(inline_definition<M>(), v, j);
                  }
                } else {
                  if constexpr (kIs<Presence::kOmitEmpty, F>) {
                    if (is_empty(v)) return;
                  }
                  j[f.key] = f.codec.write(v);
                }
              }
            }(),
            ...);
      },
      fields);
}

template <class Codec>
constexpr const char* missing(const Codec& /*codec*/) {
  if constexpr (requires { Codec::missing(); }) {
    return Codec::missing();
  } else {
    return "is missing";
  }
}

template <class Fields>
bool has_any_key(const Fields& fields, const Json& j) {
  return std::apply([&](const auto&... f) { return (false || ... || j.contains(f.key)); }, fields);
}

template <class S, class Fields>
Status read_fields(const Fields& fields, const Json& j, const std::string& path, S& s) {
  Status status;
  std::apply(
      [&](const auto&... f) {
        // In order, stopping at the first refusal.
        (
            [&] {
              using F = decltype(f);
              if constexpr (kIsField<F> && !kIs<Presence::kKey, F>) {
                if (!status) return;
                auto& v = s.*(f.member);
                using M = std::remove_cvref_t<decltype(v)>;
                if constexpr (kIs<Presence::kInline, F>) {
                  if constexpr (IsOptional<M>::value) {
                    if (!has_any_key(inline_definition<M>(), j)) return;
                    typename M::value_type inner{};
                    status = read_fields(inline_definition<M>(), j, path, inner);
                    if (status) v = std::move(inner);
                  } else {
                    status = read_fields(inline_definition<M>(), j, path, v);
                  }
                } else {
                  auto it = j.find(f.key);
                  if (it != j.end()) {
                    status = f.codec.read(*it, path_of(path, f.key), v);
                  } else if constexpr (kIs<Presence::kRequired, F>) {
                    status = field_error(path_of(path, f.key), missing(f.codec));
                  }
                }
              }
            }(),
            ...);
      },
      fields);
  return status;
}

}  // namespace edgeshed::ipc::fields
