// source_diff: unified diffs of definitions with `reference` and `init` decoded.

#include "fib/model/source_diff.hpp"

#include "util/strings.hpp"

#include <fib/io/json_io.hpp>
#include <fib/util/text_diff.hpp>

#include <fmt/format.h>

#include <array>
#include <optional>

namespace fib {
namespace {

constexpr std::array<std::string_view, 2> k_source_fields = {"reference", "init"};

struct SourceMember {
  std::string_view indent;
  std::string_view field;
  std::string source; // decoded
};

// The member a line holds, when it is exactly `"reference": "<string>"` (or init), else nullopt.
std::optional<SourceMember> source_member(std::string_view line) {
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view rest = line.substr(start);
  for (const std::string_view field : k_source_fields) {
    const std::string key = fmt::format("\"{}\":", field);
    if (!rest.starts_with(key)) {
      continue;
    }
    std::string_view value = rest.substr(key.size());
    while (!value.empty() && (value.back() == ',' || value.back() == ' ' || value.back() == '\r' ||
                              value.back() == '\t')) {
      value.remove_suffix(1);
    }
    const std::size_t quote = value.find_first_not_of(" \t");
    if (quote == std::string_view::npos || value[quote] != '"') {
      return std::nullopt;
    }
    DiagnosticList ignored;
    auto parsed = parse_json(value.substr(quote), {}, ignored);
    if (!parsed || !parsed->root.is_string()) {
      return std::nullopt;
    }
    return SourceMember{line.substr(0, start), field, parsed->root.get<std::string>()};
  }
  return std::nullopt;
}

// One decoded source line as it is shown: control characters other than tab escaped.
std::string shown(std::string_view source_line) {
  std::string out;
  for (const char c : source_line) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7F) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

void append_member(const SourceMember& member, std::string& out) {
  out += fmt::format("{}\"{}\": (decoded Python: the lines marked \"{}|\")\n", member.indent,
                     member.field, member.field);
  std::string_view source = member.source;
  if (source.ends_with('\n')) {
    source.remove_suffix(1);
  }
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = source.find('\n', begin);
    const std::string_view line =
        source.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    out += fmt::format("{}{}| {}\n", member.indent, member.field, shown(line));
    if (end == std::string_view::npos) {
      break;
    }
    begin = end + 1;
  }
}

} // namespace

std::string definition_display_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const std::string_view line : detail::split_lines_keeping_ends(text)) {
    std::string_view body = line;
    if (body.ends_with('\n')) {
      body.remove_suffix(1);
    }
    if (auto member = source_member(body)) {
      append_member(*member, out);
    } else {
      out += line;
    }
  }
  return out;
}

std::string definition_unified_diff(std::string_view before, std::string_view after,
                                    std::string_view before_label, std::string_view after_label) {
  if (before == after) {
    return {};
  }
  return unified_diff(definition_display_text(before), definition_display_text(after), before_label,
                      after_label);
}

} // namespace fib
