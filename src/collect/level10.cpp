#include "fib/collect/level10.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <system_error>
#include <utility>

namespace fib {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_metadata_file = "metadata.jsonl";
constexpr std::string_view k_inputs_file = "inputs.safetensors";
constexpr std::string_view k_outputs_file = "outputs.safetensors";
constexpr std::string_view k_graph_flushes_dir = "graph_flushes";

constexpr std::string_view k_status_completed = "completed";
constexpr std::string_view k_status_inputs_saved = "inputs_saved";

Diagnostic call_problem(std::string_view code, const fs::path& file, std::string message,
                        std::string pointer = {}) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = file;
  d.pointer = std::move(pointer);
  return d;
}

// Whether `path` itself (not what it points to) is a symbolic link.
bool is_link(const fs::path& path) {
  std::error_code ec;
  return fs::is_symlink(fs::symlink_status(path, ec));
}

// One metadata record, the fields the reader needs checked and taken out.
struct Record {
  std::string function_name;
  std::string module;
  std::string function_signature;
  std::int64_t call_sequence = 0;
  std::string timestamp;
  std::int64_t process_id = 0;
  std::optional<std::string> self_id;
  std::string status;
  std::string tensor_format;
  bool graph_capture = false;
  bool graph_flushed = false;
  std::optional<int> flush_index;
  Json input_metadata = Json::object();
  Json output_metadata = Json::object();
  std::vector<std::string> input_tensor_keys;
  std::vector<std::string> output_tensor_keys;
};

Diagnostic invalid_field(const fs::path& file, int line, std::string pointer, std::string what) {
  Diagnostic d = call_problem(codes::k_collect_metadata_invalid, file,
                              fmt::format("line {}: {}", line, what), std::move(pointer));
  d.line = line;
  return d;
}

// The tensor keys of a record's `tensor_info`, into `out`; the problem when they are not lists
// of keys.
std::optional<Diagnostic> read_tensor_info(const Json& record, const fs::path& file, int line,
                                           Record& out) {
  const auto invalid = [&](std::string pointer, std::string what) {
    return invalid_field(file, line, std::move(pointer), std::move(what));
  };
  const auto info = record.find("tensor_info");
  if (info == record.end() || !info->is_object()) {
    return invalid("/tensor_info", "`tensor_info` is missing or not an object");
  }
  for (const auto& [key, into] : {std::pair{"input_tensor_keys", &out.input_tensor_keys},
                                  std::pair{"output_tensor_keys", &out.output_tensor_keys}}) {
    const std::string pointer = pointer_append("/tensor_info", key);
    const auto it = info->find(key);
    if (it == info->end()) {
      continue; // an older record without outputs lists none
    }
    if (!it->is_array()) {
      return invalid(pointer, fmt::format("`{}` is not a list", key));
    }
    for (const Json& item : *it) {
      if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
        return invalid(pointer, fmt::format("`{}` holds something other than a key", key));
      }
      into->push_back(item.get<std::string>());
    }
  }
  return std::nullopt;
}

// Reads `record` (one parsed line of `file`) or says which field is wrong.
Expected<Record> read_record(const Json& record, const fs::path& file, int line) {
  const auto invalid = [&](std::string pointer, std::string what) {
    return unexpected(invalid_field(file, line, std::move(pointer), std::move(what)));
  };
  if (!record.is_object()) {
    return invalid("", "the record is not a JSON object");
  }
  Record out;
  const auto text = [&](std::string_view key, std::string& into, bool required) -> bool {
    const auto it = record.find(key);
    if (it == record.end()) {
      return !required;
    }
    if (!it->is_string()) {
      return false;
    }
    into = it->get<std::string>();
    return !(required && into.empty());
  };
  const auto integer = [&](std::string_view key, std::int64_t& into) -> bool {
    const auto it = record.find(key);
    if (it == record.end() || !it->is_number_integer() ||
        (it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX)) {
      return false;
    }
    into = it->get<std::int64_t>();
    return true;
  };
  if (!text("function_name", out.function_name, true)) {
    return invalid("/function_name", "`function_name` is missing, empty or not a string");
  }
  if (!text("module", out.module, false)) {
    return invalid("/module", "`module` is not a string");
  }
  if (!text("function_signature", out.function_signature, false)) {
    return invalid("/function_signature", "`function_signature` is not a string");
  }
  if (!integer("call_sequence", out.call_sequence)) {
    return invalid("/call_sequence", "`call_sequence` is missing or not an integer");
  }
  if (!integer("process_id", out.process_id)) {
    return invalid("/process_id", "`process_id` is missing or not an integer");
  }
  if (!text("timestamp", out.timestamp, false)) {
    return invalid("/timestamp", "`timestamp` is not a string");
  }
  if (!text("execution_status", out.status, true)) {
    return invalid("/execution_status", "`execution_status` is missing or not a string");
  }
  if (!text("tensor_format", out.tensor_format, true)) {
    return invalid("/tensor_format", "`tensor_format` is missing or not a string");
  }
  if (const auto it = record.find("self_id"); it != record.end() && !it->is_null()) {
    if (!it->is_number_integer()) {
      return invalid("/self_id", "`self_id` is not an integer");
    }
    out.self_id = it->is_number_unsigned() ? std::to_string(it->get<std::uint64_t>())
                                           : std::to_string(it->get<std::int64_t>());
  }
  for (const auto& [key, into] : {std::pair{"graph_capture", &out.graph_capture},
                                  std::pair{"graph_capture_flushed", &out.graph_flushed}}) {
    if (const auto it = record.find(key); it != record.end()) {
      if (!it->is_boolean()) {
        return invalid(pointer_append("", key), fmt::format("`{}` is not true or false", key));
      }
      *into = it->get<bool>();
    }
  }
  if (const auto it = record.find("graph_capture_flush_index"); it != record.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
        it->get<std::int64_t>() > 1'000'000) {
      return invalid("/graph_capture_flush_index",
                     "`graph_capture_flush_index` is not a small non-negative integer");
    }
    out.flush_index = it->get<int>();
  }
  for (const auto& [key, into] : {std::pair{"input_metadata", &out.input_metadata},
                                  std::pair{"output_metadata", &out.output_metadata}}) {
    if (const auto it = record.find(key); it != record.end()) {
      if (!it->is_object()) {
        return invalid(pointer_append("", key), fmt::format("`{}` is not an object", key));
      }
      *into = *it;
    }
  }
  if (auto problem = read_tensor_info(record, file, line, out)) {
    return unexpected(std::move(*problem));
  }
  return out;
}

// The last record of dir/metadata.jsonl, or why there is none to use.
Expected<Record> last_record(const fs::path& dir) {
  const fs::path file = dir / k_metadata_file;
  std::error_code ec;
  const auto status = fs::symlink_status(file, ec);
  if (ec || !fs::exists(status)) {
    return unexpected(call_problem(codes::k_collect_no_metadata, dir,
                                   "no metadata.jsonl: FlashInfer did not finish writing this call "
                                   "(its tensor file could not be written), or this is not a "
                                   "call's directory"));
  }
  if (fs::is_symlink(status)) {
    return unexpected(call_problem(codes::k_collect_link_not_followed, file,
                                   "metadata.jsonl is a symbolic link (not followed)"));
  }
  auto text = read_text_file(file, k_max_call_metadata_bytes);
  if (!text) {
    return unexpected(call_problem(codes::k_collect_metadata_invalid, file,
                                   fmt::format("cannot read it: {}", text.error().message)));
  }
  const auto lines = split_jsonl_lines(*text);
  if (lines.empty()) {
    return unexpected(
        call_problem(codes::k_collect_metadata_invalid, file, "metadata.jsonl is empty"));
  }
  const JsonlLine& last = lines.back();
  DiagnosticList ignored;
  auto document = parse_json(last.text, file, ignored, last.line, LineIndex::skipped);
  if (!document) {
    const bool ends_cut = !text->empty() && text->back() != '\n';
    Diagnostic d = call_problem(
        ends_cut ? codes::k_collect_metadata_cut : codes::k_collect_metadata_invalid, file,
        ends_cut ? fmt::format("line {} is cut short (the process was killed while writing it), "
                               "so the call's last state is unknown",
                               last.line)
                 : fmt::format("line {} is not JSON: {}", last.line, document.error().message));
    d.line = last.line;
    return unexpected(std::move(d));
  }
  return read_record(document->root, file, last.line);
}

// The checked header of dir/<file_name>, which must hold every key of `keys`.
Expected<DumpedTensorFile> tensor_file(const fs::path& dir, std::string_view file_name,
                                       const std::vector<std::string>& keys) {
  DumpedTensorFile out;
  out.path = dir / file_name;
  if (is_link(out.path)) {
    return unexpected(call_problem(codes::k_collect_link_not_followed, out.path,
                                   fmt::format("{} is a symbolic link (not followed)", file_name)));
  }
  auto header = read_safetensors_header(out.path);
  if (!header) {
    return unexpected(call_problem(codes::k_collect_tensor_file, out.path,
                                   fmt::format("{}: {}", file_name, header.error().message),
                                   header.error().pointer));
  }
  for (const std::string& key : keys) {
    if (!header->tensors.contains(key)) {
      return unexpected(call_problem(
          codes::k_collect_tensor_file, out.path,
          fmt::format("{} has no tensor \"{}\", which metadata.jsonl lists", file_name, key)));
    }
  }
  out.header = std::move(*header);
  return out;
}

// The call of `record`, whose tensors are in `dir`, or why it cannot be used.
Expected<DumpedCall> completed_call(const fs::path& dir, std::string name, Record record) {
  if (record.tensor_format != "safetensors") {
    return unexpected(call_problem(
        record.tensor_format == "torch" ? codes::k_collect_torch_format
                                        : codes::k_collect_metadata_invalid,
        dir / k_metadata_file,
        record.tensor_format == "torch"
            ? std::string("the tensors were saved with torch.save (.pt), which fib does not read: "
                          "dump again with FLASHINFER_DUMP_SAFETENSORS=1 (fib dump --workloads "
                          "sets it)")
            : fmt::format("unknown tensor_format \"{}\"", text_excerpt(record.tensor_format)),
        "/tensor_format"));
  }
  DumpedCall call;
  call.dir = dir;
  call.name = std::move(name);
  call.function_name = std::move(record.function_name);
  call.module = std::move(record.module);
  call.function_signature = std::move(record.function_signature);
  call.call_sequence = record.call_sequence;
  call.timestamp = std::move(record.timestamp);
  call.process_id = record.process_id;
  call.self_id = std::move(record.self_id);
  call.input_metadata = std::move(record.input_metadata);
  call.output_metadata = std::move(record.output_metadata);
  call.input_tensor_keys = std::move(record.input_tensor_keys);
  call.output_tensor_keys = std::move(record.output_tensor_keys);
  if (!call.input_tensor_keys.empty()) {
    auto inputs = tensor_file(dir, k_inputs_file, call.input_tensor_keys);
    if (!inputs) {
      return unexpected(std::move(inputs.error()));
    }
    call.inputs = std::move(*inputs);
  }
  if (!call.output_tensor_keys.empty()) {
    auto outputs = tensor_file(dir, k_outputs_file, call.output_tensor_keys);
    if (!outputs) {
      return unexpected(std::move(outputs.error()));
    }
    call.outputs = std::move(*outputs);
  }
  return call;
}

// The subdirectories of `dir`, by name (links included, so that they are reported).
Expected<std::vector<fs::path>> subdirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    if (ec) {
      break;
    }
    if (fs::is_directory(status) || fs::is_symlink(status)) {
      out.push_back(it->path());
    }
  }
  if (ec) {
    return unexpected(call_problem(codes::k_collect_not_a_dump, dir,
                                   fmt::format("cannot list it: {}", ec.message())));
  }
  std::sort(out.begin(), out.end());
  return out;
}

class DumpReader {
public:
  explicit DumpReader(const fs::path& root) : m_root(root) {}

  // A directory found below the root: a link is reported, not followed.
  void read_listed_call(const fs::path& dir) {
    if (!rejected_as_link(dir, "")) {
      read_call(dir);
    }
  }

  void read_call(const fs::path& dir) {
    const std::string name = relative_name(dir);
    auto record = last_record(dir);
    if (!record) {
      reject(name, "", std::move(record.error()));
      return;
    }
    if (record->graph_capture) {
      read_graph_call(dir, name, std::move(*record));
      return;
    }
    if (record->status == k_status_inputs_saved) {
      reject(name, record->function_name,
             call_problem(codes::k_collect_call_incomplete, dir / k_metadata_file,
                          "only the inputs were recorded (`inputs_saved`): the call raised, its "
                          "process died in it, or it is still running",
                          "/execution_status"));
      return;
    }
    if (record->status != k_status_completed) {
      reject(name, record->function_name,
             call_problem(codes::k_collect_metadata_invalid, dir / k_metadata_file,
                          fmt::format("unknown execution_status \"{}\" outside a graph capture",
                                      text_excerpt(record->status)),
                          "/execution_status"));
      return;
    }
    keep(name, completed_call(dir, name, std::move(*record)));
  }

  Level10Dump take() { return std::move(m_dump); }

private:
  // A captured call: its flushes are the calls; without any, it is pending.
  void read_graph_call(const fs::path& dir, const std::string& name, Record record) {
    if (!record.graph_flushed) {
      reject(name, record.function_name,
             call_problem(codes::k_collect_graph_pending, dir / k_metadata_file,
                          "captured in a CUDA graph and never replayed (or the process ended "
                          "before the flush): no tensor of it was written",
                          "/execution_status"));
      return;
    }
    if (record.tensor_format == "torch") {
      keep(name, completed_call(dir, name, std::move(record))); // rejected, with the reason
      return;
    }
    const fs::path flushes = dir / k_graph_flushes_dir;
    std::error_code ec;
    if (is_link(flushes) || !fs::is_directory(fs::symlink_status(flushes, ec))) {
      reject(name, record.function_name,
             call_problem(is_link(flushes) ? codes::k_collect_link_not_followed
                                           : codes::k_collect_tensor_file,
                          flushes,
                          "the capture was flushed, but graph_flushes/ is missing or a link"));
      return;
    }
    auto snapshots = subdirectories(flushes);
    if (!snapshots) {
      reject(name, record.function_name, std::move(snapshots.error()));
      return;
    }
    for (const fs::path& snapshot : *snapshots) {
      const std::string snapshot_name = relative_name(snapshot);
      if (rejected_as_link(snapshot, record.function_name)) {
        continue;
      }
      auto flushed = last_record(snapshot);
      if (!flushed) {
        reject(snapshot_name, record.function_name, std::move(flushed.error()));
        continue;
      }
      if (flushed->status != k_status_completed) {
        reject(snapshot_name, flushed->function_name,
               call_problem(codes::k_collect_call_incomplete, snapshot / k_metadata_file,
                            "the flush recorded only the inputs (`inputs_saved`)",
                            "/execution_status"));
        continue;
      }
      if (!flushed->flush_index) {
        flushed->flush_index = flush_index_of(snapshot.filename().string());
      }
      const std::optional<int> index = flushed->flush_index;
      auto call = completed_call(snapshot, snapshot_name, std::move(*flushed));
      if (call) {
        call->graph_flush_index = index;
      }
      keep(snapshot_name, std::move(call));
    }
  }

  // Rejects `dir` when it is a symbolic link (never followed); true when it did.
  bool rejected_as_link(const fs::path& dir, const std::string& function_name) {
    if (!is_link(dir)) {
      return false;
    }
    reject(relative_name(dir), function_name,
           call_problem(codes::k_collect_link_not_followed, dir, "a symbolic link (not followed)"));
    return true;
  }

  static std::optional<int> flush_index_of(const std::string& dir_name) {
    constexpr std::string_view k_prefix = "flush_";
    if (!dir_name.starts_with(k_prefix) || dir_name.size() > k_prefix.size() + 7) {
      return std::nullopt;
    }
    int index = 0;
    for (std::size_t i = k_prefix.size(); i < dir_name.size(); ++i) {
      if (dir_name[i] < '0' || dir_name[i] > '9') {
        return std::nullopt;
      }
      index = index * 10 + (dir_name[i] - '0');
    }
    return dir_name.size() > k_prefix.size() ? std::optional<int>(index) : std::nullopt;
  }

  std::string relative_name(const fs::path& dir) const {
    const fs::path relative = dir.lexically_relative(m_root);
    return relative.empty() || relative == "." ? std::string(".") : relative.generic_string();
  }

  void keep(const std::string& name, Expected<DumpedCall> call) {
    if (call) {
      m_dump.calls.push_back(std::move(*call));
    } else {
      reject(name, "", std::move(call.error()));
    }
  }

  void reject(const std::string& name, std::string function_name, Diagnostic reason) {
    m_dump.rejected.push_back(RejectedCall{name, std::move(function_name), std::move(reason)});
  }

  fs::path m_root;
  Level10Dump m_dump;
};

} // namespace

Expected<Level10Dump> read_level10_dump(const fs::path& root) {
  std::error_code ec;
  const auto status = fs::status(root, ec);
  if (ec || !fs::is_directory(status)) {
    return unexpected(call_problem(codes::k_collect_not_a_dump, root,
                                   fs::exists(status) ? "not a directory" : "no such directory"));
  }
  DumpReader reader(root);
  if (fs::exists(fs::symlink_status(root / k_metadata_file, ec))) {
    reader.read_call(root);
    return reader.take();
  }
  FIB_TRY_ASSIGN(const std::vector<fs::path> dirs, subdirectories(root));
  for (const fs::path& dir : dirs) {
    reader.read_listed_call(dir);
  }
  Level10Dump dump = reader.take();
  if (dump.calls.empty() && dump.rejected.empty()) {
    return unexpected(call_problem(codes::k_collect_not_a_dump, root,
                                   "holds no call directory (is it FLASHINFER_DUMP_DIR?)"));
  }
  return dump;
}

} // namespace fib
