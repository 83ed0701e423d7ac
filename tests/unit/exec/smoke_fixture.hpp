#pragma once
// What the smoke planner's tests share: a definition parsed from JSON text, and a planned input
// looked up by name.

#include "test_support.hpp"

#include <fib/exec/smoke.hpp>
#include <fib/model/definition.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace fib::testing {

// The definition of `json`; a parse or model error fails the test.
inline Definition definition_of(const std::string& json) {
  DiagnosticList sink;
  Definition d = parse_definition(parse_or_die(json), sink);
  EXPECT_FALSE(sink.has_errors()) << describe(sink);
  return d;
}

// The planned input called `name`; a missing one fails the test (and gives the first input).
inline const PlannedInput& input_named(const SmokePlan& plan, std::string_view name) {
  for (const auto& input : plan.inputs) {
    if (input.name == name) {
      return input;
    }
  }
  ADD_FAILURE() << "no input " << name;
  return plan.inputs.front();
}

} // namespace fib::testing
