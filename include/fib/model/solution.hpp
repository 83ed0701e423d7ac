#pragma once
// Solution, BuildSpec and SourceFile: a kernel implementation of one definition, its language,
// entry point and source files.

#include <fib/base/enum_names.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

enum class Language { python, triton, cpp, cuda, tilelang };

template <> struct EnumNames<Language> {
  static constexpr std::array k_table = std::to_array<EnumName<Language>>({
      {Language::python, "python"},
      {Language::triton, "triton"},
      {Language::cpp, "cpp"},
      {Language::cuda, "cuda"},
      {Language::tilelang, "tilelang"},
  });
};

inline std::string_view to_string(Language language) {
  return enum_name(language);
}
// Exact, case-sensitive.
inline std::optional<Language> parse_language(std::string_view name) {
  return parse_enum<Language>(name);
}

enum class Binding { tvm_ffi, torch };

template <> struct EnumNames<Binding> {
  static constexpr std::array k_table = std::to_array<EnumName<Binding>>({
      {Binding::tvm_ffi, "tvm-ffi"},
      {Binding::torch, "torch"},
  });
};

// "tvm-ffi", "torch".
inline std::string_view to_string(Binding binding) {
  return enum_name(binding);
}
inline std::optional<Binding> parse_binding(std::string_view name) {
  return parse_enum<Binding>(name);
}

enum class DestinationPassing { yes, no };

struct BuildSpec {
  Language language = Language::python;
  std::vector<std::string> target_hardware; // at least one item
  std::string entry_point;                  // "<file>::<symbol>"
  std::vector<std::string> dependencies;
  DestinationPassing destination_passing_style = DestinationPassing::yes;
  std::optional<Binding> binding;

  // Text before the first "::" of the entry point.
  std::string entry_file() const;
  // Text after the last "::".
  std::string entry_symbol() const;
};

struct SourceFile {
  std::string path;
  std::string content;
};

struct Solution {
  std::string name;
  std::string definition;
  std::string author;
  BuildSpec spec;
  std::vector<SourceFile> sources;
  std::optional<std::string> description;

  // The source named by the entry point; nullptr when absent.
  const SourceFile* entry_source() const;
  // Hex SHA-1 over definition, language, entry point, binding, dependencies and every source's
  // path and content (the name is excluded), as the old tool computes it.
  std::string content_hash() const;
  // "{name}_{first 8 hex digits of content_hash()}".
  std::string unique_name() const;
};

// Builds a Solution from a parsed document, reporting every field problem (types, languages, entry
// point format, absolute or `..` source paths, duplicate source paths, the entry file missing from
// the sources) to `sink` with its pointer. The value holds what could be read; it is meaningful
// when `sink` got no error for this document.
Solution parse_solution(const JsonDocument& document, DiagnosticSink& sink);

// The solution as JSON in the old tool's field order; `description`, `dependencies` and `binding`
// are left out when unset or empty.
Json to_json(const Solution& solution);

} // namespace fib
