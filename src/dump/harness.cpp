// The SGLang harness `fib dump --sglang` generates: one script per pass and page size, every user
// value written as a pure-ASCII Python literal.

#include "fib/dump/dump.hpp"

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace fib {
namespace {

// Decodes one UTF-8 sequence at `i` (validated by utf8_sequence_length) and moves past it;
// nullopt when invalid.
std::optional<char32_t> next_code_point(std::string_view text, std::size_t& i) {
  const std::size_t length = detail::utf8_sequence_length(text, i);
  if (length == 0) {
    return std::nullopt;
  }
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  // The lead byte's payload: all 7 bits of ASCII, else what its length prefix leaves.
  char32_t value = length == 1 ? byte(i) : byte(i) & (0xFFu >> (length + 1));
  for (std::size_t k = 1; k < length; ++k) {
    value = (value << 6) | (byte(i + k) & 0x3Fu);
  }
  i += length;
  return value;
}

// A Python string literal of `text` in pure ASCII: printable ASCII as is, the rest as escapes.
// Invalid UTF-8 bytes are replaced by U+FFFD (`fib dump` refuses such values before this).
std::string python_literal(std::string_view text) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < text.size()) {
    const auto code = next_code_point(text, i);
    if (!code) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    const char32_t c = *code;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (c <= 0xFFFF) {
      out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(c));
    } else {
      out += fmt::format("\\U{:08x}", static_cast<std::uint32_t>(c));
    }
  }
  out += '"';
  return out;
}

// The body of the serve pass's `try:`: one greedy generate, or (workloads) the batches and the
// sampling passes.
std::string serve_generate_calls(const SglangHarness& harness, const std::string& sizes) {
  const std::string prompt = python_literal(harness.prompt);
  if (!harness.workloads) {
    return fmt::format(
        "        outputs = engine.generate(\n"
        "            [{}],\n"
        "            {{\"temperature\": 0.0, \"max_new_tokens\": {}}},\n"
        "        )\n"
        "        for output in outputs:\n"
        "            print(\"generated:\", repr(output.get(\"text\", \"\")), flush=True)\n",
        prompt, harness.max_new_tokens);
  }
  return fmt::format(
      "        # Distinct prompts of several lengths, so each batch has its own shapes.\n"
      "        def prompts(n):\n"
      "            return [{0} + \" (request %d)\" % i + \" and more\" * (i % 7) for i in "
      "range(n)]\n"
      "        passes = [(n, {{\"temperature\": 0.0}}) for n in ({1},)]\n"
      "        # Sampling passes reach the top-k / top-p sampling kernels.\n"
      "        passes += [(8, {{\"temperature\": 0.7, \"top_k\": 50, \"top_p\": 0.9}}),\n"
      "                   (8, {{\"temperature\": 0.7, \"top_k\": 50, \"top_p\": 1.0}}),\n"
      "                   (8, {{\"temperature\": 0.7, \"top_k\": -1, \"top_p\": 0.9}})]\n"
      "        for n, sampling in passes:\n"
      "            outputs = engine.generate(prompts(n), {{**sampling, \"max_new_tokens\": {2}}})\n"
      "            print(\"generated: batch\", n, sampling, len(outputs), \"outputs\", "
      "flush=True)\n",
      prompt, sizes, harness.max_new_tokens);
}

// How many times the paged-prefill pass repeats the prompt to make its shared prefixes: at least
// two pages' worth of tokens (a prompt is a few tokens; the radix cache matches whole pages), a
// short and a long one with workloads.
std::string prefix_repeats(const SglangHarness& harness) {
  const int shortest = std::max(8, 2 * harness.page_size.value_or(1));
  return harness.workloads ? fmt::format("{}, {}", shortest, 4 * shortest)
                           : fmt::format("{},", shortest);
}

// The body of the paged-prefill pass's `try:`: a cached prefix, then requests that extend it.
std::string paged_prefill_generate_calls(const SglangHarness& harness, const std::string& sizes) {
  return fmt::format(
      "        # Deterministic inference turns the ragged path off, so every prefill goes through\n"
      "        # the paged KV cache. The prefix is generated once first, so that where the radix\n"
      "        # cache stays on the requests that extend it are prefix hits (it matches whole "
      "pages:\n"
      "        # the prefix spans several).\n"
      "        greedy = {{\"temperature\": 0.0, \"max_new_tokens\": 1}}\n"
      "        for repeats in ({1}):\n"
      "            prefix = \" \".join([{0}] * repeats)\n"
      "            engine.generate([prefix], greedy)\n"
      "            for n in ({2},):\n"
      "                requests = [prefix + \" (request %d)\" % i + \" and more\" * (i % 7)\n"
      "                            for i in range(n)]\n"
      "                outputs = engine.generate(requests, greedy)\n"
      "                print(\"generated: prefix\", repeats, \"batch\", n, len(outputs), "
      "\"outputs\", flush=True)\n",
      python_literal(harness.prompt), prefix_repeats(harness),
      harness.workloads ? sizes : std::string("4"));
}

// The Engine's keyword arguments, one `name=value,` line each, for the harness's pass.
std::string engine_arguments(const SglangHarness& harness) {
  const bool paged = harness.pass == HarnessPass::paged_prefill;
  std::string out = fmt::format(
      "    model_path={},\n"
      "    attention_backend=\"flashinfer\",  # other backends bypass FlashInfer's APIs\n"
      "    disable_cuda_graph=True,  # replayed graphs skip the Python path and the dumper\n"
      "    mem_fraction_static={},\n"
      "    tp_size={},\n",
      python_literal(harness.model), harness.mem_fraction, harness.tp);
  if (paged) {
    out += "    # Prefix hits extend through the paged KV cache; deterministic inference turns\n"
           "    # the ragged prefill path off.\n"
           "    disable_radix_cache=False,\n"
           "    enable_deterministic_inference=True,\n";
  } else {
    out += "    disable_radix_cache=True,\n"
           "    # A piecewise graph capture would force the paged path for every prefill.\n"
           "    disable_piecewise_cuda_graph=True,\n";
  }
  if (harness.ep) {
    out += fmt::format("    ep_size={},\n", *harness.ep);
  }
  if (harness.page_size) {
    out += fmt::format("    page_size={},\n", *harness.page_size);
  }
  if (harness.workloads) {
    out += "    sampling_backend=\"flashinfer\",  # the sampling kernels' calls\n";
  }
  out += "    log_level=\"warning\",\n";
  return out;
}

} // namespace

std::string render_sglang_harness(const SglangHarness& harness) {
  std::string sizes;
  for (const int size : harness.batch_sizes) {
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
  }
  const bool paged = harness.pass == HarnessPass::paged_prefill;
  const std::string label = describe_run(SglangRun{harness.pass, harness.page_size});
  return fmt::format(
      "# Generated by `fib dump --sglang` ({3}): one short SGLang pass with FlashInfer's trace\n"
      "# dumper on. The dumper writes one definition JSON per unique (op, shape) into the\n"
      "# directory below, before each kernel runs.\n"
      "import dataclasses\n"
      "import os\n"
      "import sys\n"
      "\n"
      "# Before any flashinfer / sglang import.\n"
      "os.environ[\"FLASHINFER_TRACE_DUMP\"] = \"1\"\n"
      "os.environ[\"FLASHINFER_TRACE_DUMP_DIR\"] = {0}\n"
      "os.environ.setdefault(\"SGLANG_SKIP_CUBIN_DOWNLOAD\", \"1\")\n"
      "os.environ.setdefault(\"FLASHINFER_DISABLE_VERSION_CHECK\", \"1\")\n"
      "os.environ.setdefault(\"SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK\", \"1\")\n"
      "os.environ.setdefault(\"SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK\", \"0\")\n"
      "os.environ.setdefault(\"FLASHINFER_USE_CUDA_NORM\", \"1\")  # CuTe-DSL norms need CUDA "
      "13.1+\n"
      "{4}"
      "\n"
      "from sglang.srt.entrypoints.engine import Engine\n"
      "from sglang.srt.server_args import ServerArgs\n"
      "\n"
      "ENGINE_ARGUMENTS = dict(\n"
      "{1}"
      ")\n"
      "\n"
      "\n"
      "def known_arguments(arguments):\n"
      "    \"\"\"The arguments this SGLang's ServerArgs has; the others are named on "
      "stderr.\"\"\"\n"
      "    known = {{field.name for field in dataclasses.fields(ServerArgs) if field.init}}\n"
      "    unknown = sorted(name for name in arguments if name not in known)\n"
      "    if unknown:\n"
      "        print(\"fib harness: this SGLang has no\", \", \".join(unknown), \"- running "
      "without them\",\n"
      "              file=sys.stderr, flush=True)\n"
      "    return {{name: value for name, value in arguments.items() if name in known}}\n"
      "\n"
      "\n"
      "def main():\n"
      "    print(\"fib harness: pass {3}\", flush=True)\n"
      "    engine = Engine(**known_arguments(ENGINE_ARGUMENTS))\n"
      "    try:\n"
      "{2}"
      "    finally:\n"
      "        engine.shutdown()\n"
      "\n"
      "\n"
      "if __name__ == \"__main__\":  # SGLang starts worker processes that re-import this file\n"
      "    main()\n",
      python_literal(harness.dump_directory.string()), engine_arguments(harness),
      paged ? paged_prefill_generate_calls(harness, sizes) : serve_generate_calls(harness, sizes),
      label, paged ? "os.environ.setdefault(\"SGLANG_FLASHINFER_USE_PAGED\", \"1\")\n" : "");
}

std::optional<std::string_view> harness_value_not_utf8(const SglangHarness& harness) {
  if (!detail::is_valid_utf8(harness.model)) {
    return "--model";
  }
  if (!detail::is_valid_utf8(harness.prompt)) {
    return "--prompt";
  }
  if (!detail::is_valid_utf8(harness.dump_directory.native())) {
    return "--out";
  }
  return std::nullopt;
}

std::vector<SglangRun> plan_sglang_runs(const std::vector<HarnessPass>& passes,
                                        const std::vector<int>& page_sizes) {
  std::vector<std::optional<int>> sizes(page_sizes.begin(), page_sizes.end());
  if (sizes.empty()) {
    sizes.emplace_back(std::nullopt);
  }
  std::vector<SglangRun> out;
  for (const std::optional<int>& size : sizes) {
    for (const HarnessPass pass : passes) {
      const SglangRun run{pass, size};
      if (std::find(out.begin(), out.end(), run) == out.end()) {
        out.push_back(run);
      }
    }
  }
  return out;
}

std::string describe_run(const SglangRun& run) {
  return run.page_size ? fmt::format("{}, page size {}", to_string(run.pass), *run.page_size)
                       : fmt::format("{}, default page size", to_string(run.pass));
}

std::string model_slug(std::string_view model) {
  while (!model.empty() && model.back() == '/') {
    model.remove_suffix(1);
  }
  if (const auto slash = model.rfind('/'); slash != std::string_view::npos) {
    model.remove_prefix(slash + 1);
  }
  std::string slug;
  bool pending_dash = false;
  for (const char c : model) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    const bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') ||
                      lower == '.' || lower == '_' || lower == '-';
    if (!keep) {
      pending_dash = true;
      continue;
    }
    if (pending_dash && !slug.empty()) {
      slug += '-';
    }
    pending_dash = false;
    slug += lower;
  }
  // A slug is [a-z0-9]+ parts joined by single separators: trim and squeeze the separators.
  std::string out;
  for (const char c : slug) {
    const bool separator = c == '.' || c == '_' || c == '-';
    if (separator && (out.empty() || out.back() == '.' || out.back() == '_' || out.back() == '-')) {
      continue;
    }
    out += c;
  }
  while (!out.empty() && (out.back() == '.' || out.back() == '_' || out.back() == '-')) {
    out.pop_back();
  }
  return out;
}

} // namespace fib
