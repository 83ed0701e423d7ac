#pragma once
// Atomic file writes: the content goes to a temporary file in the target's directory (a short
// `.fib-XXXXXX` name, so that any valid target name works), is flushed to disk, and only then takes
// the target's name; the directory is then flushed so that the new name is durable too. A kill at
// any moment leaves either the old state or the complete new file, never a partial one (at worst a
// stray `.fib-*` temporary).

#include <fib/expected.hpp>

#include <filesystem>
#include <string_view>

namespace fib {

// --- Interface ---

enum class Overwrite { allowed, forbidden };

// Writes `content` to `target` atomically, creating missing parent directories. With
// Overwrite::forbidden an existing target is left alone and the error is `report.exists`
// (checked atomically: the final step is link(2), which fails if the name exists). Other
// failures: `io.write`. The temporary file is removed on every failure path.
Expected<std::filesystem::path> write_file_atomically(const std::filesystem::path& target,
                                                      std::string_view content,
                                                      Overwrite overwrite);

} // namespace fib
