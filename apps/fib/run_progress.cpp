#include "run_progress.hpp"

#include "render.hpp"

#include <fmt/format.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace fib::app {
namespace {

// The terminal's width, 80 when it cannot be asked.
std::size_t terminal_width(std::FILE* stream) {
  winsize size{};
  if (ioctl(fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return 80;
}

// `text` cut to `width` bytes, never inside a UTF-8 sequence.
std::string fit(std::string text, std::size_t width) {
  if (text.size() <= width) {
    return text;
  }
  std::size_t cut = width;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  text.resize(cut);
  return text;
}

} // namespace

ProgressStyle progress_style_for(std::FILE* stream) {
  const char* term = std::getenv("TERM");
  if (isatty(fileno(stream)) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0)) {
    return ProgressStyle::live;
  }
  return ProgressStyle::plain;
}

std::string format_duration(std::chrono::seconds duration) {
  const long long total = std::max<long long>(0, duration.count());
  const long long hours = total / 3600;
  const long long minutes = total / 60 % 60;
  const long long seconds = total % 60;
  if (hours > 0) {
    return fmt::format("{}:{:02}:{:02}", hours, minutes, seconds);
  }
  return fmt::format("{}:{:02}", minutes, seconds);
}

std::string progress_text(const RunStep& step, std::chrono::seconds elapsed, std::size_t finished) {
  std::string text = fmt::format("[{}/{}] {} / {} / {}", step.number, step.total, step.definition,
                                 step.solution, step.workload_uuid.substr(0, 8));
  if (step.builds == BuildsFirst::yes) {
    text += fmt::format(", building {} ({})", step.solution, to_string(step.language));
  }
  text += fmt::format(", {} elapsed", format_duration(elapsed));
  if (finished > 0) {
    const std::size_t left = step.total - finished;
    const auto estimate = std::chrono::seconds(
        static_cast<long long>(static_cast<double>(elapsed.count()) /
                               static_cast<double>(finished) * static_cast<double>(left)));
    text += fmt::format(", about {} left", format_duration(estimate));
  }
  return text;
}

RunProgress::RunProgress(ProgressStyle style, std::FILE* stream)
    : m_style(style), m_stream(stream) {}

RunProgress::~RunProgress() {
  clear();
}

void RunProgress::planned(const RunPlanCounts& counts) {
  if (m_style == ProgressStyle::none ||
      (counts.to_run == 0 && counts.resumed == 0 && counts.other_shards == 0)) {
    return;
  }
  std::string text =
      fmt::format("fib run: {} evaluation{} to run", counts.to_run, counts.to_run == 1 ? "" : "s");
  if (counts.resumed > 0) {
    text += fmt::format(", {} already traced (--resume)", counts.resumed);
  }
  if (counts.other_shards > 0) {
    text += fmt::format(", {} left to other shards", counts.other_shards);
  }
  write_line(m_stream, text);
}

void RunProgress::starting(const RunStep& step) {
  if (m_style == ProgressStyle::none) {
    return;
  }
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - m_start);
  const std::string text = progress_text(step, elapsed, m_finished);
  if (m_style == ProgressStyle::plain) {
    write_line(m_stream, "fib run: " + text);
    return;
  }
  draw(fit(text, terminal_width(m_stream) - 1));
}

void RunProgress::finished() {
  ++m_finished;
}

void RunProgress::print_result(std::FILE* out, const std::string& line) {
  const std::string shown = m_shown;
  clear();
  write_line(out, line);
  std::fflush(out);
  if (!shown.empty()) {
    draw(shown);
  }
}

void RunProgress::clear() {
  if (m_style != ProgressStyle::live || m_shown.empty()) {
    return;
  }
  std::fputs("\r\x1b[K", m_stream);
  std::fflush(m_stream);
  m_shown.clear();
}

void RunProgress::draw(const std::string& text) {
  std::fputs("\r\x1b[K", m_stream);
  std::fputs(text.c_str(), m_stream);
  std::fflush(m_stream);
  m_shown = text;
}

} // namespace fib::app
