#pragma once
// What identifies this build of fib, for keys of results computed by it (the result cache): two
// builds with different code never share an identity.

#include <string>

namespace fib {

// --- Interface ---

// "fib <version> build <id>": the id is the GNU build ID of the running executable (a hash the
// linker computes over its contents), else the SHA-256 of the executable file, else "unknown"
// (then only the version tells builds apart). Computed once per process.
const std::string& build_identity();

} // namespace fib
