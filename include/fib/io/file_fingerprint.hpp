#pragma once
// The text that stands for a file's stat() identity where fib remembers "this file, unchanged":
// the keys of the digest memo (src/validate/dataset_cache.cpp) and the identity of the embedded
// interpreter's library and module (fib/python/lazy_runtime.hpp).

#include <fib/io/json_io.hpp>

#include <string>

namespace fib {

// --- Interface ---

// "DEVICE INODE MODE SIZE MODIFIED_NS CHANGED_NS" of `status`, in decimal: two stat()s of a file
// give the same text only when none of these changed (a rewrite changes the times, a replacement
// the inode).
std::string stat_fingerprint(const FileStatus& status);

} // namespace fib
