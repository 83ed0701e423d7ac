#include "render.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fib::app {
namespace {

std::string indent_continuations(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out += c;
    if (c == '\n') {
      out += "    ";
    }
  }
  return out;
}

} // namespace

std::string render_text(const Diagnostic& d) {
  std::string location = d.file.empty() ? std::string("fib") : d.file.string();
  if (d.line > 0) {
    location += fmt::format(":{}", d.line);
  }
  std::string out = fmt::format("{}: {}[{}]", location, to_string(d.severity), d.code);
  if (!d.pointer.empty()) {
    out += ' ';
    out += d.pointer;
  }
  out += ": ";
  out += indent_continuations(d.message);
  if (!d.hint.empty()) {
    out += "\n  hint: ";
    out += indent_continuations(d.hint);
  }
  return out;
}

std::string render_json(const std::vector<Diagnostic>& diagnostics) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Diagnostic& d : diagnostics) {
    out.push_back({
        {"file", d.file.string()},
        {"line", d.line > 0 ? nlohmann::ordered_json(d.line) : nlohmann::ordered_json(nullptr)},
        {"pointer", d.pointer},
        {"severity", std::string(to_string(d.severity))},
        {"code", d.code},
        {"message", d.message},
        {"hint", d.hint},
    });
  }
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace fib::app
