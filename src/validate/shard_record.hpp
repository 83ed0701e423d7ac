#pragma once
// Reading a report's "fib_shard" record (report.cpp writes it).

#include "io/schema_reader.hpp"

#include <fib/validate/report.hpp>

#include <optional>

namespace fib {

// The record at "/fib_shard"; its problems go through `reader` as `report.invalid` (a count or
// index that is not a positive integer, K > N, a fingerprint or version that is not a string).
std::optional<ShardRecord> parse_shard_record(detail::Reader& reader, const Json& value);

} // namespace fib
