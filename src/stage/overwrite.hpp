#pragma once
// What `fib stage --on-conflict overwrite` does before it replaces a staged definition: keep the
// curated fields the incoming copy lacks, and find what the replacement breaks. Private to
// src/stage.

#include <fib/io/json_io.hpp>
#include <fib/validate/dependents.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace fib::stage_detail {

// --- Interface ---

// Copies into `incoming` what `staged` has and `incoming` lacks (a missing or empty string): the
// definition's `description`, the `description` of each axis, input and output both have, and
// the tags of `staged` that `incoming` does not carry (appended). Returns what was kept, in
// document order: "/description", "/axes/<axis>/description", …, "tag <tag>".
std::vector<std::string> keep_curated_fields(const Json& staged, Json& incoming);

// check_dependents for two definition documents (parsed leniently: a document that does not
// parse well enough checks what it can).
DependentsCheck dependents_of_overwrite(const std::filesystem::path& dataset,
                                        const std::filesystem::path& staged_file,
                                        const Json& staged, const Json& incoming);

// "47 of 47 workloads, 0 of 2 solutions, 3 of 10 trace lines would no longer validate:" and the
// first `first_few` breakages as "FILE:LINE: message" lines ("and N more" after them).
std::string describe_breakages(const DependentsCheck& check, std::size_t first_few);

// "N workloads, M solutions and K trace lines name it; none breaks", or "" when nothing does.
std::string describe_dependents(const DependentCounts& total);

} // namespace fib::stage_detail
