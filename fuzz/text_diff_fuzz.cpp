// libFuzzer target: util/text_diff.hpp. The input is split at its first NUL byte into `before`
// and `after`. Property: applying the unified diff to `before` yields `after` exactly (the
// header's promise that `patch` reproduces it), and equal texts give no diff.
#include <fib/util/text_diff.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

// Lines with their '\n' kept (the last one may lack it).
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    out.push_back(text.substr(0, end));
    text.remove_prefix(end);
  }
  return out;
}

long number_at(std::string_view text, std::size_t& pos) {
  long value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    value = value * 10 + (text[pos++] - '0');
  }
  return value;
}

// Applies a unified diff as fib writes it to `before`.
std::string apply(std::string_view before, std::string_view diff) {
  const auto source = lines_of(before);
  const auto patch = lines_of(diff);
  std::string out;
  std::size_t next = 0; // the next source line to copy
  for (std::size_t i = 2; i < patch.size();) {
    const std::string_view hunk = patch[i++];
    std::size_t pos = 4; // past "@@ -"
    const long start = number_at(hunk, pos);
    long length = 1;
    if (pos < hunk.size() && hunk[pos] == ',') {
      ++pos;
      length = number_at(hunk, pos);
    }
    const auto first = static_cast<std::size_t>(length == 0 ? start : start - 1);
    while (next < first && next < source.size()) {
      out += source[next++];
    }
    bool wrote_last = false; // whether the line before a "\ No newline" went to the output
    while (i < patch.size() && !patch[i].starts_with("@@")) {
      const std::string_view line = patch[i++];
      if (line.starts_with("\\")) {
        if (wrote_last && !out.empty() && out.back() == '\n') {
          out.pop_back();
        }
        continue;
      }
      const char kind = line.empty() ? ' ' : line[0];
      if (kind == '-' || kind == ' ') {
        ++next;
      }
      wrote_last = kind != '-';
      if (wrote_last) {
        out += line.substr(1);
      }
    }
  }
  while (next < source.size()) {
    out += source[next++];
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto split = input.find('\0');
  const std::string_view before = input.substr(0, split);
  const std::string_view after =
      split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  const std::string diff = fib::unified_diff(before, after, "a", "b");
  if (before == after) {
    if (!diff.empty()) {
      std::abort();
    }
    return 0;
  }
  if (apply(before, diff) != after) {
    std::abort();
  }
  return 0;
}
