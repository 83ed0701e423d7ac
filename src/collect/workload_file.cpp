#include "fib/collect/workload_file.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/model/workload.hpp>
#include <fib/util/file_lock.hpp>
#include <fib/util/path_safety.hpp>
#include <fib/util/sha256.hpp>

#include <fmt/format.h>

#include <array>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace fib {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_journal_name = ".fib-collect-pending.json";
constexpr std::uint64_t k_max_existing_blob_bytes = 1ull << 30;

// A line of the existing file: its text as it was, and what fib could read of it.
struct ExistingLine {
  std::string text;
  bool mine = false; // a workload line of this definition (others are kept as they are)
  std::optional<Workload> workload;
  std::vector<fs::path> blobs; // relative to the root, as resolved
};

std::string uuid_hex(std::string_view uuid) {
  std::string out;
  for (const char c : uuid) {
    if (c != '-') {
      out.push_back(c);
    }
  }
  return out;
}

fs::path blob_directory(const Definition& definition) {
  return fs::path("blob") / "workloads" / definition.op_type / definition.name;
}

fs::path workloads_relative(const Definition& definition) {
  return fs::path("workloads") / definition.op_type / (definition.name + ".jsonl");
}

Diagnostic unsafe_name(const Definition& definition, std::string_view what, std::string_view value,
                       std::string_view reason) {
  return make_diagnostic(codes::k_io_unsafe_path,
                         fmt::format("definition \"{}\": its {} \"{}\" cannot name a directory of "
                                     "the dataset ({})",
                                     text_excerpt(definition.name), what, text_excerpt(value),
                                     reason));
}

// The relative path below the root that `path` (a line's `path`) names, or nullopt when it is
// absolute, holds `..` or does not start with blob/.
std::optional<fs::path> relative_blob_path(std::string_view path) {
  std::string_view text = path;
  while (text.starts_with("./")) {
    text.remove_prefix(2);
  }
  const fs::path relative(text);
  if (text.empty() || relative.is_absolute() || text.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  for (const fs::path& part : relative) {
    if (part == ".." || part == ".") {
      return std::nullopt;
    }
  }
  if (relative.begin() == relative.end() || *relative.begin() != "blob") {
    return std::nullopt;
  }
  return relative;
}

bool is_plain_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(path, ec));
}

// What one input of an existing workload holds (InputContent text), reading its blob.
std::string existing_content(const fs::path& root, const Definition& definition,
                             const std::string& input, const InputSpec& spec,
                             std::vector<fs::path>& blobs) {
  if (std::holds_alternative<RandomInput>(spec)) {
    return "random";
  }
  if (const auto* scalar = std::get_if<ScalarInput>(&spec)) {
    return "scalar:" + std::visit([](const auto& v) { return Json(v); }, scalar->value).dump();
  }
  const auto& blob = std::get<SafetensorsInput>(spec);
  const auto file = resolve_workload_blob(root, definition, blob.path);
  if (!file) {
    return "missing:" + blob.path;
  }
  blobs.push_back(file->lexically_relative(root));
  auto header = read_safetensors_header(*file);
  if (!header) {
    return "unreadable:" + blob.path;
  }
  const auto entry = header->tensors.find(blob.tensor_key);
  auto bytes =
      read_tensor_bytes(*file, *header, blob.tensor_key, std::nullopt, k_max_existing_blob_bytes);
  if (entry == header->tensors.end() || !bytes) {
    return "unreadable:" + blob.path;
  }
  (void)input;
  return fmt::format("blob:{}:{}:{}", entry->second.dtype, Json(entry->second.shape).dump(),
                     to_hex(sha256(*bytes)));
}

std::vector<ExistingLine> read_existing(const fs::path& root, const Definition& definition,
                                        const std::string& text, const fs::path& file,
                                        std::vector<ExistingWorkload>& fingerprints) {
  std::vector<ExistingLine> out;
  const std::vector<std::string> var_axes = definition.var_axes();
  for (const JsonlLine& line : split_jsonl_lines(text)) {
    ExistingLine existing{std::string(line.text), false, std::nullopt, {}};
    DiagnosticList ignored;
    auto document = parse_json(line.text, file, ignored, line.line, LineIndex::skipped);
    if (document && document->root.is_object()) {
      const auto workload = document->root.find("workload");
      const auto owner = document->root.find("definition");
      if (workload != document->root.end() && workload->is_object()) {
        existing.workload = parse_workload(*document, *workload, "/workload", ignored);
        existing.mine = owner != document->root.end() && *owner == definition.name;
      }
    }
    if (existing.mine) {
      OrderedMap<std::int64_t> axes;
      for (const std::string& axis : var_axes) {
        if (const std::int64_t* value = find_entry(existing.workload->axes, axis)) {
          axes.emplace_back(axis, *value);
        }
      }
      std::vector<InputContent> contents;
      for (const auto& [input, spec] : existing.workload->inputs) {
        contents.push_back(
            {input, existing_content(root, definition, input, spec, existing.blobs)});
      }
      fingerprints.push_back(ExistingWorkload{axes, workload_fingerprint(axes, contents)});
    }
    out.push_back(std::move(existing));
  }
  return out;
}

// Removes the blob `relative` (below root) without following links; a failure goes to `notes`.
bool remove_blob(const fs::path& root, const fs::path& relative, std::vector<Diagnostic>& notes) {
  auto directory = open_parent_directory_below(root, relative, CreateMissing::no);
  if (!directory) {
    if (directory.error().code != codes::k_io_write) {
      notes.push_back(directory.error());
    }
    return false;
  }
  auto removed = remove_file_in(*directory, relative.filename().string());
  if (!removed) {
    notes.push_back(removed.error());
    return false;
  }
  return *removed;
}

// The names in the text of a file's lines (paths the lines hold, by their relative form).
std::set<fs::path> named_blobs(const std::vector<ExistingLine>& lines) {
  std::set<fs::path> out;
  for (const ExistingLine& line : lines) {
    for (const fs::path& blob : line.blobs) {
      out.insert(blob);
    }
    if (!line.workload) {
      continue;
    }
    for (const auto& [input, spec] : line.workload->inputs) {
      if (const auto* blob = std::get_if<SafetensorsInput>(&spec)) {
        if (auto relative = relative_blob_path(blob->path)) {
          out.insert(*relative);
        }
      }
    }
  }
  return out;
}

// Whether `name` is a blob file name fib writes for `definition`: `<name>_<32 hex>.safetensors`.
bool is_written_name(const Definition& definition, const std::string& name) {
  const std::string prefix = definition.name + "_";
  const std::string suffix = ".safetensors";
  if (name.size() != prefix.size() + 32 + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix)) {
    return false;
  }
  return name.substr(prefix.size(), 32).find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Whether `blob` (relative to the root) is the definition's own: in its nested directory, or a
// flat `blob/workloads/<op_type>/<name>_….safetensors`. A replaced line's blob anywhere else may
// be another definition's too, so it is left alone.
bool owned_by(const Definition& definition, const fs::path& blob) {
  const fs::path parent = blob.parent_path();
  if (parent == blob_directory(definition)) {
    return true;
  }
  return parent == fs::path("blob") / "workloads" / definition.op_type &&
         is_written_name(definition, blob.filename().string());
}

// Finishes what an interrupted run left: every blob its journal lists that no line names goes.
std::optional<Diagnostic> recover(const fs::path& root, const Definition& definition,
                                  const std::vector<ExistingLine>& lines,
                                  std::vector<Diagnostic>& notes) {
  auto directory =
      open_parent_directory_below(root, blob_directory(definition) / "x", CreateMissing::no);
  if (!directory) {
    return directory.error().code == codes::k_io_write ? std::nullopt
                                                       : std::optional(directory.error());
  }
  auto journal = read_file_in(*directory, k_journal_name, 16u << 20);
  if (!journal) {
    return journal.error();
  }
  if (!*journal) {
    return std::nullopt;
  }
  const std::set<fs::path> named = named_blobs(lines);
  std::size_t removed = 0;
  const Json listed = Json::parse(**journal, nullptr, false);
  for (const char* key : {"written", "remove"}) {
    if (!listed.is_object() || !listed.contains(key) || !listed[key].is_array()) {
      continue;
    }
    for (const Json& entry : listed[key]) {
      if (!entry.is_string()) {
        continue;
      }
      // Only what this writer could have listed: a blob it writes, or a replaced one it owns.
      const auto relative = relative_blob_path(entry.get<std::string>());
      const bool listable =
          relative && (std::string_view(key) == "written"
                           ? relative->parent_path() == blob_directory(definition) &&
                                 is_written_name(definition, relative->filename().string())
                           : owned_by(definition, *relative));
      if (listable && !named.contains(*relative) && remove_blob(root, *relative, notes)) {
        ++removed;
      }
    }
  }
  auto gone = remove_file_in(*directory, k_journal_name);
  if (!gone) {
    return gone.error();
  }
  if (removed > 0) {
    Diagnostic note = make_diagnostic(
        codes::k_collect_recovered,
        fmt::format("removed {} blob(s) of definition \"{}\" that an interrupted fib collect wrote "
                    "but never listed",
                    removed, definition.name));
    note.file = root / blob_directory(definition);
    notes.push_back(std::move(note));
  }
  return std::nullopt;
}

// The bytes of a new workload's blob, its tensors re-read and checked against the candidate.
Expected<std::string> blob_bytes(const Candidate& candidate) {
  std::vector<SafetensorsTensor> tensors;
  for (const BlobTensorSource& source : candidate.blobs) {
    const auto fail = [&](std::string why) {
      Diagnostic d = make_diagnostic(
          codes::k_collect_tensor_file,
          fmt::format("input \"{}\" of call {}: {}", source.input, candidate.call, why));
      d.file = source.file;
      return unexpected(std::move(d));
    };
    auto header = read_safetensors_header(source.file);
    if (!header) {
      return fail(header.error().message);
    }
    auto bytes = read_tensor_bytes(source.file, *header, source.key, source.bytes, source.bytes);
    if (!bytes) {
      return fail(bytes.error().message);
    }
    if (to_hex(sha256(*bytes)) != source.sha256) {
      return fail("the tensor changed since fib read it (is the dump still being written?)");
    }
    tensors.push_back(
        SafetensorsTensor{source.input, source.dtype, source.shape, std::move(*bytes)});
  }
  return encode_safetensors(tensors);
}

std::string workload_line(const Definition& definition, const Candidate& candidate,
                          const std::string& uuid, const std::string& blob_path) {
  Workload workload;
  workload.axes = candidate.axes;
  workload.inputs = candidate.inputs;
  workload.uuid = uuid;
  for (auto& [input, spec] : workload.inputs) {
    if (auto* blob = std::get_if<SafetensorsInput>(&spec)) {
      blob->path = blob_path;
    }
  }
  const Json encoded = to_json(workload);
  Json inner = Json::object();
  inner["uuid"] = uuid;
  inner["axes"] = encoded["axes"];
  inner["inputs"] = encoded["inputs"];
  Json line = Json::object();
  line["definition"] = definition.name;
  line["solution"] = nullptr;
  line["workload"] = std::move(inner);
  line["evaluation"] = nullptr;
  return line.dump();
}

// What a run is about to write: the new lines, their blobs, and the blobs it replaces.
struct PendingWrite {
  std::vector<std::string> lines;
  std::vector<std::pair<fs::path, std::string>> blobs; // relative path, bytes
  std::vector<fs::path> to_remove;                     // relative paths
};

Expected<PendingWrite> prepare_write(const fs::path& root, const Definition& definition,
                                     const std::vector<Candidate>& candidates,
                                     const std::vector<ExistingLine>& lines,
                                     const WorkloadWriteOptions& options,
                                     WorkloadWriteResult& result) {
  PendingWrite pending;
  std::set<fs::path> new_names;
  for (const std::size_t index : result.selection.selected) {
    const Candidate& candidate = candidates[index];
    const std::string uuid = options.uuid();
    std::string blob_path;
    if (!candidate.blobs.empty()) {
      const fs::path blob_relative =
          blob_directory(definition) /
          fmt::format("{}_{}.safetensors", definition.name, uuid_hex(uuid));
      blob_path = "./" + blob_relative.generic_string();
      FIB_TRY_ASSIGN(std::string bytes, blob_bytes(candidate));
      new_names.insert(blob_relative);
      pending.blobs.emplace_back(blob_relative, std::move(bytes));
    }
    pending.lines.push_back(workload_line(definition, candidate, uuid, blob_path));
    result.uuids.push_back(uuid);
  }
  if (options.replace == ReplaceMode::replace) {
    std::vector<ExistingLine> replaced;
    std::vector<ExistingLine> kept;
    for (const ExistingLine& line : lines) {
      (line.mine ? replaced : kept).push_back(line);
    }
    result.removed = replaced.size();
    const std::set<fs::path> still_named = named_blobs(kept);
    for (const fs::path& blob : named_blobs(replaced)) {
      if (!new_names.contains(blob) && !still_named.contains(blob) && owned_by(definition, blob) &&
          is_plain_file(root / blob)) {
        pending.to_remove.push_back(blob);
      }
    }
  }
  return pending;
}

// Journal, blobs, the file in one rename, the replaced blobs, the journal gone: in that order, so
// that a kill at any point leaves at worst blobs the journal lists and no line names.
std::optional<Diagnostic>
commit_write(const fs::path& root, const Definition& definition, const DirectoryHandle& directory,
             const std::vector<ExistingLine>& lines, const PendingWrite& pending,
             ReplaceMode replace, WorkloadWriteResult& result, std::vector<Diagnostic>& notes) {
  const bool journaled = !pending.blobs.empty() || !pending.to_remove.empty();
  if (journaled) {
    Json journal = Json::object();
    journal["written"] = Json::array();
    journal["remove"] = Json::array();
    for (const auto& [blob, bytes] : pending.blobs) {
      journal["written"].push_back(blob.generic_string());
    }
    for (const fs::path& blob : pending.to_remove) {
      journal["remove"].push_back(blob.generic_string());
    }
    auto written =
        write_file_atomically_below(root, blob_directory(definition) / k_journal_name,
                                    journal.dump(), Overwrite::allowed, CreateMissing::yes);
    if (!written) {
      return written.error();
    }
  }
  for (const auto& [blob, bytes] : pending.blobs) {
    auto written =
        write_file_atomically_below(root, blob, bytes, Overwrite::forbidden, CreateMissing::yes);
    if (!written) {
      return written.error();
    }
    ++result.blobs_written;
  }
  std::string content;
  for (const ExistingLine& line : lines) {
    if (replace == ReplaceMode::append || !line.mine) { // --replace keeps others' lines
      content += line.text;
      content += '\n';
    }
  }
  for (const std::string& line : pending.lines) {
    content += line;
    content += '\n';
  }
  // A rewritten file keeps its permission bits (a group-writable dataset stays so).
  const std::string file_name = result.file.filename().string();
  auto written = write_file_atomically_in(directory, file_name, content, Overwrite::allowed,
                                          file_mode_in(directory, file_name));
  if (!written) {
    return written.error();
  }
  bool removals_done = true;
  for (const fs::path& blob : pending.to_remove) {
    const std::size_t before = notes.size();
    if (remove_blob(root, blob, notes)) {
      ++result.blobs_removed;
    }
    removals_done = removals_done && notes.size() == before;
  }
  if (journaled && removals_done) { // a failed removal is retried by the next run's recovery
    auto blob_dir =
        open_parent_directory_below(root, blob_directory(definition) / "x", CreateMissing::no);
    if (blob_dir) {
      std::ignore = remove_file_in(*blob_dir, k_journal_name);
    }
  }
  return std::nullopt;
}

} // namespace

std::string random_uuid() {
  std::random_device device;
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    const std::uint32_t word = device();
    for (std::size_t j = 0; j < 4; ++j) {
      bytes[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
    }
  }
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0f) | 0x40);
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3f) | 0x80);
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out.push_back('-');
    }
    out += fmt::format("{:02x}", bytes[i]);
  }
  return out;
}

std::optional<fs::path> resolve_workload_blob(const fs::path& root, const Definition& definition,
                                              std::string_view path) {
  const auto relative = relative_blob_path(path);
  if (!relative) {
    return std::nullopt;
  }
  if (is_plain_file(root / *relative)) {
    return root / *relative;
  }
  const fs::path flat = fs::path("blob") / "workloads" / definition.op_type;
  const fs::path nested = blob_directory(definition);
  const fs::path parent = relative->parent_path();
  const fs::path other = parent == nested ? flat / relative->filename()
                         : parent == flat ? nested / relative->filename()
                                          : fs::path();
  if (!other.empty() && is_plain_file(root / other)) {
    return root / other;
  }
  return std::nullopt;
}

Expected<WorkloadWriteResult> write_workloads(const fs::path& root, const Definition& definition,
                                              const std::vector<Candidate>& candidates,
                                              const WorkloadWriteOptions& options,
                                              StaleTemporarySweeper& sweeper,
                                              std::vector<Diagnostic>& notes) {
  for (const auto& [what, value] :
       {std::pair<std::string_view, const std::string&>{"op_type", definition.op_type},
        {"name", definition.name}}) {
    if (const std::string reason = unsafe_segment_reason(value); !reason.empty()) {
      return unexpected(unsafe_name(definition, what, value, reason));
    }
  }
  WorkloadWriteResult result;
  const fs::path relative = workloads_relative(definition);
  result.file = root / relative;
  // Directories are created only when something may be written: a definition whose calls were
  // all refused leaves no trace in the dataset.
  const CreateMissing create =
      options.dry_run == DryRun::yes || candidates.empty() ? CreateMissing::no : CreateMissing::yes;
  auto directory = open_parent_directory_below(root, relative, create);
  if (!directory && candidates.empty() && directory.error().code == codes::k_io_write) {
    return result; // no directory, so no lines, no journal and nothing to select
  }
  std::optional<DirectoryLock> lock;
  std::string text;
  if (directory) {
    if (options.dry_run == DryRun::no) {
      FIB_TRY_ASSIGN(lock, lock_directory(*directory, options.lock_timeout));
    }
    FIB_TRY_ASSIGN(const auto existing_text, read_file_in(*directory, relative.filename().string(),
                                                          k_default_max_file_bytes));
    text = existing_text.value_or(std::string());
  } else if (options.dry_run == DryRun::no || directory.error().code != codes::k_io_write) {
    return unexpected(std::move(directory.error()));
  }
  std::vector<ExistingWorkload> fingerprints;
  const std::vector<ExistingLine> lines =
      read_existing(root, definition, text, result.file, fingerprints);
  result.existing = lines.size();
  if (options.dry_run == DryRun::no) {
    sweeper.remove_stale_in(*directory);
    sweeper.remove_stale_below(root, blob_directory(definition) / k_journal_name);
    if (auto problem = recover(root, definition, lines, notes)) {
      return unexpected(std::move(*problem));
    }
  }
  const bool replacing = options.replace == ReplaceMode::replace;
  result.selection =
      select_workloads(definition, candidates,
                       replacing ? std::vector<ExistingWorkload>{} : fingerprints, options.policy);
  if (result.selection.selected.empty()) {
    return result; // nothing new: the file and its blobs stay as they are
  }
  FIB_TRY_ASSIGN(PendingWrite pending,
                 prepare_write(root, definition, candidates, lines, options, result));
  if (options.dry_run == DryRun::yes) {
    result.blobs_written = pending.blobs.size();
    result.blobs_removed = pending.to_remove.size();
    return result;
  }
  if (auto problem = commit_write(root, definition, *directory, lines, pending, options.replace,
                                  result, notes)) {
    return unexpected(std::move(*problem));
  }
  return result;
}

} // namespace fib
