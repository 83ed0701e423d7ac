// CachedPythonFrontend (see cached_python_frontend.hpp). Values are small binary records
// (util/byte_codec.hpp): a tag byte, then the fields of the answer.

#include "fib/model/cached_python_frontend.hpp"

#include "util/byte_codec.hpp"

#include <fib/util/build_identity.hpp>

namespace fib {
namespace {

enum class AnswerTag : std::uint8_t { syntax_error = 1, no_run = 2, run = 3, parses = 4 };

void encode_syntax_error(const PythonSyntaxError& error, detail::ByteWriter& out) {
  out.str(error.text);
  out.str(error.message);
  out.u32(static_cast<std::uint32_t>(error.line));
  out.u32(static_cast<std::uint32_t>(error.column));
}

PythonSyntaxError decode_syntax_error(detail::ByteReader& in) {
  PythonSyntaxError error;
  error.text = in.str();
  error.message = in.str();
  error.line = static_cast<int>(in.u32());
  error.column = static_cast<int>(in.u32());
  return error;
}

std::string encode_reference(const ReferenceAnalysis& analysis) {
  detail::ByteWriter out;
  if (analysis.syntax_error) {
    out.u8(static_cast<std::uint8_t>(AnswerTag::syntax_error));
    encode_syntax_error(*analysis.syntax_error, out);
  } else if (!analysis.run) {
    out.u8(static_cast<std::uint8_t>(AnswerTag::no_run));
  } else {
    const RunSignature& run = *analysis.run;
    out.u8(static_cast<std::uint8_t>(AnswerTag::run));
    out.u32(static_cast<std::uint32_t>(run.positional_total));
    out.u32(static_cast<std::uint32_t>(run.positional_required));
    out.u8(run.has_var_positional ? 1 : 0);
    out.u32(static_cast<std::uint32_t>(run.keyword_only_required));
    out.u32(static_cast<std::uint32_t>(run.line));
    out.u32(static_cast<std::uint32_t>(run.positional_names.size()));
    for (const std::string& name : run.positional_names) {
      out.str(name);
    }
  }
  return out.take();
}

std::optional<ReferenceAnalysis> decode_reference(std::string_view bytes) {
  detail::ByteReader in(bytes);
  ReferenceAnalysis analysis;
  const auto tag = static_cast<AnswerTag>(in.u8());
  if (tag == AnswerTag::syntax_error) {
    analysis.syntax_error = decode_syntax_error(in);
  } else if (tag == AnswerTag::run) {
    RunSignature run;
    run.positional_total = static_cast<int>(in.u32());
    run.positional_required = static_cast<int>(in.u32());
    run.has_var_positional = in.u8() != 0;
    run.keyword_only_required = static_cast<int>(in.u32());
    run.line = static_cast<int>(in.u32());
    const std::uint32_t names = in.u32();
    for (std::uint32_t i = 0; in.ok() && i < names; ++i) {
      run.positional_names.emplace_back(in.str());
    }
    analysis.run = std::move(run);
  } else if (tag != AnswerTag::no_run) {
    return std::nullopt;
  }
  if (!in.finished()) {
    return std::nullopt;
  }
  return analysis;
}

std::string encode_expression(const std::optional<PythonSyntaxError>& error) {
  detail::ByteWriter out;
  out.u8(static_cast<std::uint8_t>(error ? AnswerTag::syntax_error : AnswerTag::parses));
  if (error) {
    encode_syntax_error(*error, out);
  }
  return out.take();
}

std::optional<std::optional<PythonSyntaxError>> decode_expression(std::string_view bytes) {
  detail::ByteReader in(bytes);
  const auto tag = static_cast<AnswerTag>(in.u8());
  std::optional<PythonSyntaxError> error;
  if (tag == AnswerTag::syntax_error) {
    error = decode_syntax_error(in);
  } else if (tag != AnswerTag::parses) {
    return std::nullopt;
  }
  if (!in.finished()) {
    return std::nullopt;
  }
  return error;
}

} // namespace

CachedPythonFrontend::CachedPythonFrontend(PythonFrontend& inner, ResultCache& cache)
    : m_inner(inner), m_cache(cache) {
  // The cache first: asking the identity may load the interpreter (python::LazyRuntime).
  if (!m_cache.enabled() || m_inner.identity().empty()) {
    return; // nothing is cached
  }
  detail::ByteWriter prefix;
  prefix.str("fib python answer v1");
  prefix.str(build_identity());
  prefix.str(m_inner.identity());
  m_key_prefix = prefix.take();
}

Sha256Digest CachedPythonFrontend::key(std::string_view question, std::string_view source) const {
  detail::ByteWriter head;
  head.str(question);
  head.u64(source.size());
  Sha256 hash;
  hash.update(m_key_prefix).update(head.bytes()).update(source);
  return hash.finish();
}

template <typename Answer, typename Ask>
Expected<Answer>
CachedPythonFrontend::cached_answer(std::string_view question, std::string_view source, Ask ask,
                                    std::string (*encode)(const Answer&),
                                    std::optional<Answer> (*decode)(std::string_view)) {
  if (m_key_prefix.empty()) {
    return ask();
  }
  const Sha256Digest k = key(question, source);
  if (const auto stored = m_cache.find(k)) {
    if (auto answer = decode(*stored)) {
      return std::move(*answer);
    }
  }
  Expected<Answer> answer = ask();
  if (answer) {
    m_cache.put(k, encode(*answer));
  }
  return answer;
}

Expected<ReferenceAnalysis> CachedPythonFrontend::analyze_reference(std::string_view source) {
  return cached_answer<ReferenceAnalysis>(
      "analyze_reference", source, [&] { return m_inner.analyze_reference(source); },
      encode_reference, decode_reference);
}

Expected<std::optional<PythonSyntaxError>>
CachedPythonFrontend::check_expression(std::string_view source) {
  return cached_answer<std::optional<PythonSyntaxError>>(
      "check_expression", source, [&] { return m_inner.check_expression(source); },
      encode_expression, decode_expression);
}

Expected<SourceStructure> CachedPythonFrontend::analyze_structure(std::string_view source) {
  return m_inner.analyze_structure(source);
}

Expected<HelperResolution> CachedPythonFrontend::resolve_helpers(const HelperQuery& query) {
  return m_inner.resolve_helpers(query);
}

std::string CachedPythonFrontend::identity() const {
  return m_inner.identity();
}

void CachedPythonFrontend::prepare_fork() {
  m_inner.prepare_fork();
}

void CachedPythonFrontend::after_fork(ForkSide side) {
  m_inner.after_fork(side);
}

} // namespace fib
