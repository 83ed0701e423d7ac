#pragma once
// What `fib run` shows while it works (docs/run.md, "Progress"): on a terminal, one status line on
// standard error rewritten in place (evaluations done of all, the current definition, solution and
// workload, a build in progress, the time spent and an estimate of the time left); elsewhere (a
// CI log, a file) one plain line per evaluation started. Result lines (stdout) are printed through
// it so that the status line never mixes with them.

#include <fib/run/run.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace fib::app {

enum class ProgressStyle { live, plain, none };

// `live` when `stream` is a terminal (and TERM is not "dumb"), else `plain`.
ProgressStyle progress_style_for(std::FILE* stream);

// "0:42", "12:05", "1:02:03".
std::string format_duration(std::chrono::seconds duration);

// The words of one progress line: "[3/86] DEF / SOL / 1a2b3c4d" plus ", building SOL (cpp)" when
// the step compiles first, then ", 0:12 elapsed" and, once an evaluation has finished,
// ", about 0:42 left" (the mean time per finished evaluation times those left).
std::string progress_text(const RunStep& step, std::chrono::seconds elapsed, std::size_t finished);

class RunProgress {
public:
  RunProgress(ProgressStyle style, std::FILE* stream);
  ~RunProgress();
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;

  void planned(const RunPlanCounts& counts);
  void starting(const RunStep& step);
  void finished();
  // Prints `line` on `out` (stdout) without tearing the status line.
  void print_result(std::FILE* out, const std::string& line);
  // Removes the status line (before the summary and the diagnostics).
  void clear();

private:
  void draw(const std::string& text);

  ProgressStyle m_style;
  std::FILE* m_stream;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::size_t m_finished = 0;
  std::string m_shown; // the live line on screen ("" when none)
};

} // namespace fib::app
