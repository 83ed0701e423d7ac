// SARIF 2.1.0 output (see ci_formats.hpp).

#include <fib/validate/ci_formats.hpp>

#include <fib/base/codes.hpp>
#include <fib/util/sha256.hpp>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <map>

namespace fib {
namespace {

using Json = nlohmann::ordered_json;

// A path as a URI reference: every byte but unreserved characters and '/' percent-encoded.
std::string uri_escape(std::string_view path) {
  std::string out;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                            (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~' || c == '/';
    out += unreserved ? std::string(1, c) : fmt::format("%{:02X}", byte);
  }
  return out;
}

// The workspace as a file: URI ending with '/', as SARIF's originalUriBaseIds want it.
std::string base_uri(const std::filesystem::path& workspace) {
  std::error_code ec;
  std::string path = std::filesystem::absolute(workspace, ec).lexically_normal().generic_string();
  if (path.empty() || path.back() != '/') {
    path += '/';
  }
  return "file://" + uri_escape(path);
}

Json rule_of(std::string_view code) {
  Json rule = {{"id", std::string(code)}};
  const CodeInfo* info = find_code(code);
  if (info == nullptr) {
    rule["shortDescription"] = {{"text", "a code this fib does not know"}};
    return rule;
  }
  rule["shortDescription"] = {{"text", std::string(info->summary)}};
  rule["defaultConfiguration"] = {{"level", std::string(to_string(info->severity))}};
  rule["properties"] = {{"origin", info->origin == CheckOrigin::legacy ? "legacy" : "fib"}};
  return rule;
}

// `text` without the spellings of `base` (as given and absolute): a message that names the dataset
// root fingerprints the same wherever the repository is checked out.
std::string without_base(std::string text, const std::filesystem::path& base) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(base, ec).lexically_normal().string();
  for (const std::string& spelling : {base.string(), absolute}) {
    if (spelling.empty() || spelling == "." || spelling == "/") {
      continue;
    }
    for (std::size_t at = text.find(spelling); at != std::string::npos;
         at = text.find(spelling, at)) {
      text.erase(at, spelling.size());
    }
  }
  return text;
}

std::string fingerprint(const Diagnostic& d, const std::string& path, const CiPaths& paths) {
  Sha256 hash;
  hash.update(d.code).update(std::string_view("\0", 1)).update(path);
  hash.update(std::string_view("\0", 1)).update(d.pointer).update(std::string_view("\0", 1));
  hash.update(without_base(d.message, paths.base));
  return to_hex(hash.finish()).substr(0, 32);
}

} // namespace

std::string render_sarif(const std::vector<Diagnostic>& findings, const CiPaths& paths) {
  // Rules in code order, so that ruleIndex is stable for a given set of codes.
  std::map<std::string, std::size_t> rule_index;
  for (const Diagnostic& d : findings) {
    rule_index.emplace(d.code, 0);
  }
  Json rules = Json::array();
  for (auto& [code, index] : rule_index) {
    index = rules.size();
    rules.push_back(rule_of(code));
  }
  Json results = Json::array();
  for (const Diagnostic& d : findings) {
    Json result = {
        {"ruleId", d.code},
        {"ruleIndex", rule_index.at(d.code)},
        {"level", std::string(to_string(d.severity))}, // SARIF's names too
        {"message", {{"text", d.hint.empty() ? d.message : d.message + "\nhint: " + d.hint}}}};
    const std::string path = ci_path(d.file, paths);
    if (!path.empty()) {
      Json artifact = path.starts_with('/')
                          ? Json{{"uri", "file://" + uri_escape(path)}}
                          : Json{{"uri", uri_escape(path)}, {"uriBaseId", "SRCROOT"}};
      Json physical = {{"artifactLocation", std::move(artifact)}};
      if (d.line > 0) {
        physical["region"] = {{"startLine", d.line}};
      }
      Json location = {{"physicalLocation", std::move(physical)}};
      if (!d.pointer.empty()) {
        location["logicalLocations"] =
            Json::array({{{"fullyQualifiedName", d.pointer}, {"kind", "member"}}});
      }
      result["locations"] = Json::array({std::move(location)});
    }
    result["partialFingerprints"] = {{"fib/v1", fingerprint(d, path, paths)}};
    results.push_back(std::move(result));
  }
  Json driver = {{"name", "fib"},
                 {"version", FIB_VERSION},
                 {"semanticVersion", FIB_VERSION},
                 {"rules", std::move(rules)}};
  Json run = {{"tool", {{"driver", std::move(driver)}}},
              {"originalUriBaseIds", {{"SRCROOT", {{"uri", base_uri(paths.workspace)}}}}},
              {"columnKind", "unicodeCodePoints"},
              {"results", std::move(results)}};
  Json log = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", Json::array({std::move(run)})}};
  return log.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace fib
