#include "fib/validate/report.hpp"

#include "io/schema_reader.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace fib {
namespace {

CheckStatus worse(CheckStatus a, CheckStatus b) {
  return a > b ? a : b;
}

// The level of a message of `code`: its default severity in the codes table (make_diagnostic
// aborts on a code that is not in it).
CheckLevel default_level(std::string_view code) {
  return level_of(make_diagnostic(code, {}).severity);
}

CheckStatus status_of(CheckLevel level) {
  switch (level) {
  case CheckLevel::error:
    return CheckStatus::error;
  case CheckLevel::warning:
    return CheckStatus::warning;
  case CheckLevel::info:
    return CheckStatus::ok;
  }
  return CheckStatus::ok;
}

Json result_to_json(const CheckResult& result) {
  Json out = Json::object();
  out["status"] = std::string(to_string(result.status));
  Json messages = Json::array();
  for (const CheckMessage& m : result.messages) {
    Json item = Json::object();
    item["level"] = std::string(to_string(m.level));
    item["message"] = m.message;
    if (!m.code.empty()) {
      item["code"] = std::string(m.code);
    }
    messages.push_back(std::move(item));
  }
  out["messages"] = std::move(messages);
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

void render_result(std::string& out, std::string_view name, const std::optional<CheckResult>& r) {
  const std::string label = fmt::format("{}:", name);
  if (!r) {
    out += fmt::format("  {:<12} None (skipped)\n", label);
    return;
  }
  out += fmt::format("  {:<12} {}\n", label, to_string(r->status));
  for (const CheckMessage& m : r->messages) {
    out += fmt::format("    - {}\n", m.message);
  }
}

std::string joined_or_all(const std::vector<std::string>& items) {
  return items.empty() ? std::string("(all)") : fmt::format("{}", fmt::join(items, ", "));
}

// Reads "ok" / "warning" / "error"; anything else is reported and read as ok.
CheckStatus read_status(detail::Reader& reader, const Json& value, const std::string& pointer) {
  const std::string text = value.is_string() ? value.get<std::string>() : std::string{};
  if (const auto status = parse_enum<CheckStatus>(text)) {
    return *status;
  }
  reader.report(
      codes::k_report_invalid, pointer,
      fmt::format("Input should be 'ok', 'warning' or 'error', got {}", json_excerpt(value)));
  return CheckStatus::ok;
}

// Reads one {level, message, code?} object (`code` is fib's; reports without it read as "").
CheckMessage parse_message(detail::Reader& reader, const Json& item,
                           const std::string& item_pointer) {
  CheckMessage message;
  if (const Json* level = reader.member(item, item_pointer, "level", detail::Presence::required)) {
    const std::string text = level->is_string() ? level->get<std::string>() : std::string{};
    if (const auto parsed = parse_enum<CheckLevel>(text)) {
      message.level = *parsed;
    } else {
      reader.report(codes::k_report_invalid, pointer_append(item_pointer, "level"),
                    fmt::format("Input should be 'info', 'warning' or 'error', got {}",
                                json_excerpt(*level)));
    }
  }
  if (const Json* text = reader.member(item, item_pointer, "message", detail::Presence::required)) {
    message.message =
        reader.string(*text, pointer_append(item_pointer, "message"), detail::EmptyString::allowed)
            .value_or("");
  }
  if (const Json* code = reader.member(item, item_pointer, "code", detail::Presence::optional)) {
    message.code = table_code(
        reader.string(*code, pointer_append(item_pointer, "code"), detail::EmptyString::allowed)
            .value_or(""));
  }
  return message;
}

// Reads a CheckResult; reports problems through `reader`.
std::optional<CheckResult> parse_result(detail::Reader& reader, const Json& value,
                                        const std::string& pointer) {
  if (!reader.expect_object(value, pointer)) {
    return std::nullopt;
  }
  CheckResult result;
  if (const Json* status = reader.member(value, pointer, "status", detail::Presence::required)) {
    result.status = read_status(reader, *status, pointer_append(pointer, "status"));
  }
  if (const Json* messages =
          reader.member(value, pointer, "messages", detail::Presence::optional)) {
    const std::string list_pointer = pointer_append(pointer, "messages");
    if (!messages->is_array()) {
      reader.report(codes::k_report_invalid, list_pointer, "Input should be a valid list");
      return result;
    }
    for (std::size_t i = 0; i < messages->size(); ++i) {
      const std::string item_pointer = pointer_append(list_pointer, i);
      const Json& item = (*messages)[i];
      if (!reader.expect_object(item, item_pointer)) {
        continue;
      }
      result.messages.push_back(parse_message(reader, item, item_pointer));
    }
  }
  return result;
}

std::vector<std::string> parse_string_list(detail::Reader& reader, const Json& object,
                                           const std::string& key) {
  if (const Json* value = reader.member(object, "/config", key, detail::Presence::required)) {
    return reader.string_list(*value, pointer_append("/config", key), detail::EmptyString::allowed)
        .value_or(std::vector<std::string>{});
  }
  return {};
}

} // namespace

CheckLevel level_of(Severity severity) {
  switch (severity) {
  case Severity::error:
    return CheckLevel::error;
  case Severity::warning:
    return CheckLevel::warning;
  case Severity::note:
    return CheckLevel::info;
  }
  return CheckLevel::info;
}

void CheckResult::add(std::string_view code, std::string message) {
  add(default_level(code), code, std::move(message));
}

void CheckResult::add(CheckLevel level, std::string_view code, std::string message) {
  add(CheckMessage{level, std::move(message), table_code(code)});
}

void CheckResult::add(CheckMessage message) {
  status = worse(status, status_of(message.level));
  messages.push_back(std::move(message));
}

void CheckResult::add_front(std::string_view code, std::string message) {
  const CheckLevel level = default_level(code);
  status = worse(status, status_of(level));
  messages.insert(messages.begin(), CheckMessage{level, std::move(message), table_code(code)});
}

void DefinitionReport::update_status() {
  status = CheckStatus::ok;
  for (const auto& result : categories) {
    if (result) {
      status = worse(status, result->status);
    }
  }
}

DiagnosticCounts count_findings(const DatasetReport& report) {
  DiagnosticCounts counts;
  const auto count = [&](const CheckResult& result) {
    for (const CheckMessage& m : result.messages) {
      ++(m.level == CheckLevel::error     ? counts.errors
         : m.level == CheckLevel::warning ? counts.warnings
                                          : counts.notes);
    }
  };
  for (const auto& [name, definition] : report.definitions) {
    for (const auto& result : definition.categories) {
      if (result) {
        count(*result);
      }
    }
  }
  if (report.dataset) {
    count(*report.dataset);
  }
  return counts;
}

StatusCounts count_statuses(const DatasetReport& report) {
  StatusCounts counts;
  for (const auto& [name, definition] : report.definitions) {
    switch (definition.status) {
    case CheckStatus::ok:
      ++counts.ok;
      break;
    case CheckStatus::warning:
      ++counts.warning;
      break;
    case CheckStatus::error:
      ++counts.error;
      break;
    }
  }
  return counts;
}

std::string render_report_json(const DatasetReport& report) {
  Json out = Json::object();
  Json config = Json::object();
  config["dataset"] = report.config.dataset;
  config["checks"] = report.config.checks;
  config["disable_gpu"] = report.config.disable_gpu;
  config["op_types"] = report.config.op_types;
  config["definitions"] = report.config.definitions;
  out["config"] = std::move(config);
  // Members are appended, not looked up: the names are unique (map keys, category names), and
  // ordered_json's operator[] scans every key, quadratic in the number of definitions.
  Json definitions = Json::object();
  auto& definition_members = definitions.get_ref<Json::object_t&>();
  definition_members.reserve(report.definitions.size());
  for (const auto& [name, definition] : report.definitions) {
    Json entry = Json::object();
    auto& entry_members = entry.get_ref<Json::object_t&>();
    entry_members.reserve(1 + k_category_order.size());
    entry_members.emplace_back("status", std::string(to_string(definition.status)));
    for (const Category category : k_category_order) {
      const auto& result = definition[category];
      entry_members.emplace_back(std::string(to_string(category)),
                                 result ? result_to_json(*result) : Json(nullptr));
    }
    definition_members.emplace_back(name, std::move(entry));
  }
  out["definitions"] = std::move(definitions);
  if (report.dataset && !report.dataset->messages.empty()) {
    out["fib_dataset"] = result_to_json(*report.dataset);
  }
  return out.dump(2, ' ', false, Json::error_handler_t::replace);
}

std::string render_report_text(const DatasetReport& report) {
  const StatusCounts counts = count_statuses(report);
  std::string out = "=== Dataset Validation Report ===\n";
  out += fmt::format("dataset:       {}\n", report.config.dataset);
  out += fmt::format("checks:        {}\n", fmt::join(report.config.checks, ", "));
  out += fmt::format("disable_gpu:   {}\n", report.config.disable_gpu ? "True" : "False");
  out += fmt::format("op_types:      {}\n", joined_or_all(report.config.op_types));
  out += fmt::format("definitions:   {}\n", joined_or_all(report.config.definitions));
  out += "\n";
  out += fmt::format("{} definitions: {} ok, {} warning, {} error\n", report.definitions.size(),
                     counts.ok, counts.warning, counts.error);
  out += "\n";
  for (const auto& [name, definition] : report.definitions) {
    out += fmt::format("--- {} [{}] ---\n", name, upper(to_string(definition.status)));
    for (const Category category : k_category_order) {
      render_result(out, to_string(category), definition[category]);
    }
    out += "\n";
  }
  if (report.dataset && !report.dataset->messages.empty()) {
    out += fmt::format("--- dataset (fib: files outside any definition's report) [{}] ---\n",
                       upper(to_string(report.dataset->status)));
    for (const CheckMessage& m : report.dataset->messages) {
      out += fmt::format("    - {}\n", m.message);
    }
    out += "\n";
  }
  // The old tool joins lines with "\n" and ends with an empty line: exactly one trailing "\n".
  out.pop_back();
  return out;
}

Expected<DatasetReport> parse_report_json(std::string_view text,
                                          const std::filesystem::path& file) {
  DiagnosticList sink;
  auto document = parse_json(text, file, sink);
  if (!document) {
    return unexpected(document.error());
  }
  DatasetReport report;
  detail::Reader reader(*document, sink);
  const Json& root = document->root;
  if (reader.expect_object(root, "")) {
    if (const Json* config = reader.member(root, "", "config", detail::Presence::required);
        config != nullptr && reader.expect_object(*config, "/config")) {
      if (const Json* dataset =
              reader.member(*config, "/config", "dataset", detail::Presence::required)) {
        report.config.dataset =
            reader.string(*dataset, "/config/dataset", detail::EmptyString::allowed).value_or("");
      }
      report.config.checks = parse_string_list(reader, *config, "checks");
      if (const Json* gpu =
              reader.member(*config, "/config", "disable_gpu", detail::Presence::required)) {
        report.config.disable_gpu = reader.boolean(*gpu, "/config/disable_gpu").value_or(false);
      }
      report.config.op_types = parse_string_list(reader, *config, "op_types");
      report.config.definitions = parse_string_list(reader, *config, "definitions");
    }
    if (const Json* definitions =
            reader.member(root, "", "definitions", detail::Presence::required);
        definitions != nullptr && reader.expect_object(*definitions, "/definitions")) {
      for (const auto& [name, value] : definitions->items()) {
        const std::string pointer = pointer_append("/definitions", name);
        if (!reader.expect_object(value, pointer)) {
          continue;
        }
        DefinitionReport entry;
        for (const Category category : k_category_order) {
          const std::string key(to_string(category));
          const auto it = value.find(key);
          if (it != value.end() && !it->is_null()) {
            entry[category] = parse_result(reader, *it, pointer_append(pointer, key));
          }
        }
        entry.update_status();
        if (const auto it = value.find("status"); it != value.end()) {
          entry.status = read_status(reader, *it, pointer_append(pointer, "status"));
        }
        report.definitions.emplace(name, std::move(entry));
      }
    }
    if (const auto it = root.find("fib_dataset"); it != root.end() && !it->is_null()) {
      report.dataset = parse_result(reader, *it, "/fib_dataset");
    }
  }
  for (const Diagnostic& d : sink.items()) {
    if (d.severity == Severity::error) {
      Diagnostic error = d;
      error.code = codes::k_report_invalid;
      return unexpected(std::move(error));
    }
  }
  return report;
}

Expected<ReportTargets> parse_report_targets(std::string_view csv) {
  if (csv.empty()) {
    return ReportTargets{};
  }
  ReportTargets targets{false, false, false};
  std::size_t start = 0;
  while (start <= csv.size()) {
    const std::size_t end = std::min(csv.find(',', start), csv.size());
    const std::string_view item = csv.substr(start, end - start);
    if (item == "stdout") {
      targets.stdout_text = true;
    } else if (item == "json") {
      targets.json_file = true;
    } else if (item == "text") {
      targets.text_file = true;
    } else {
      return unexpected(make_diagnostic(
          codes::k_usage,
          fmt::format("unknown output target '{}', valid: stdout, json, text", item)));
    }
    start = end + 1;
  }
  return targets;
}

ReportFiles report_files(const std::filesystem::path& folder, std::string_view timestamp) {
  return {folder / fmt::format("report-{}.json", timestamp),
          folder / fmt::format("report-{}.txt", timestamp)};
}

std::optional<Diagnostic> check_report_files_free(const ReportFiles& files,
                                                  const ReportTargets& targets) {
  for (const auto& [enabled, path] :
       {std::pair{targets.json_file, &files.json}, std::pair{targets.text_file, &files.text}}) {
    std::error_code ec;
    if (enabled && std::filesystem::exists(*path, ec)) {
      Diagnostic d = make_diagnostic(codes::k_report_exists,
                                     fmt::format("report file already exists: {}", path->string()));
      d.file = *path;
      return d;
    }
  }
  return std::nullopt;
}

std::optional<Diagnostic> write_report_files(const DatasetReport& report, const ReportFiles& files,
                                             const ReportTargets& targets) {
  // A validation killed while writing its report left its temporary in the reports directory.
  StaleTemporarySweeper sweeper;
  if (targets.json_file) {
    sweeper.remove_stale_beside(files.json);
    if (auto written =
            write_file_atomically(files.json, render_report_json(report), Overwrite::forbidden);
        !written) {
      return written.error();
    }
  }
  if (targets.text_file) {
    sweeper.remove_stale_beside(files.text);
    if (auto written =
            write_file_atomically(files.text, render_report_text(report), Overwrite::forbidden);
        !written) {
      return written.error();
    }
  }
  return std::nullopt;
}

} // namespace fib
