#pragma once
// Reader: typed access to a parsed JSON document with pydantic-compatible lax coercion. Every
// problem is reported to the sink with the pointer of the offending value (or, for a missing key,
// the pointer the key would have) and the line it is on; nothing is thrown.

#include <fib/base/codes.hpp>
#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

enum class EmptyString { allowed, forbidden };
enum class Presence { required, optional };
enum class NanValue { allowed, rejected };

class Reader {
public:
  Reader(const JsonDocument& document, DiagnosticSink& sink) : m_doc(document), m_sink(sink) {}

  const JsonDocument& document() const { return m_doc; }

  // Reports `code` at `pointer` with the document's file and line.
  void report(std::string_view code, const std::string& pointer, std::string message,
              std::string hint = {});

  // Number of errors this reader has reported.
  int error_count() const { return m_errors; }

  // Requires an object; otherwise reports schema.type ("Input should be a valid dictionary").
  bool expect_object(const Json& value, const std::string& pointer);

  // The member `key` of `object`, or nullptr. A missing required key is reported as
  // schema.required at pointer/key.
  const Json* member(const Json& object, const std::string& pointer, std::string_view key,
                     Presence presence);

  // A string; numbers are not accepted (as in pydantic). Empty strings are reported when forbidden.
  std::optional<std::string> string(const Json& value, const std::string& pointer,
                                    EmptyString empty);

  // A string or null (nullopt for null, and for errors).
  std::optional<std::string> nullable_string(const Json& value, const std::string& pointer);

  // An integer, with the lax coercions of pydantic (4.0, "7", " 7 ", "7.0", 1e3, true/false), each
  // accepted one reported as schema.coerced. `minimum` is checked (schema.range).
  std::optional<std::int64_t> integer(const Json& value, const std::string& pointer,
                                      std::optional<std::int64_t> minimum);

  // A float: numbers, numeric strings ("nan", "Infinity", " 1.5 ") and bools (coerced, warned).
  std::optional<double> number(const Json& value, const std::string& pointer);

  // A bool: true/false, 0/1 and the usual strings ("yes", "off", …; coerced, warned).
  std::optional<bool> boolean(const Json& value, const std::string& pointer);

  // A list of strings (each non-empty when `empty` is forbidden). null is rejected.
  std::optional<std::vector<std::string>> string_list(const Json& value, const std::string& pointer,
                                                      EmptyString empty);

  // Notes every key of `object` that is neither in `known` nor one of the dumper's extras
  // (init, check, optional, param, dtype_from).
  void note_unknown_keys(const Json& object, const std::string& pointer,
                         std::initializer_list<std::string_view> known);

private:
  const JsonDocument& m_doc;
  DiagnosticSink& m_sink;
  int m_errors = 0;
};

// A short JSON type name for messages ("string", "integer", "null", …).
std::string_view json_type_name(const Json& value);

} // namespace fib::detail
