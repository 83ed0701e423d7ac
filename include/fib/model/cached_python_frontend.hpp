#pragma once
// CachedPythonFrontend: a Python front-end that keeps CPython's answers about references and
// constraints in the persistent result cache, so that a second run over unchanged text asks
// CPython nothing (and may not start it at all).

#include <fib/model/python_frontend.hpp>
#include <fib/util/result_cache.hpp>
#include <fib/util/sha256.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace fib {

// --- Interface ---

// The answers of analyze_reference and check_expression come from `cache` when it has them and
// go into it when it does not. Keys are the SHA-256 of the question, the source text,
// inner.identity() (which CPython parses) and fib's build_identity(), so that no other Python or
// fib build ever reads them. A failure of the inner front-end is passed on and never kept; an
// entry that does not decode is asked again and replaced. The other questions (structure, helper
// resolution) and the fork hooks go to `inner` unchanged, and so does everything when
// inner.identity() is empty or the cache is disabled. Both must outlive this object.
class CachedPythonFrontend final : public PythonFrontend {
public:
  CachedPythonFrontend(PythonFrontend& inner, ResultCache& cache);

  Expected<ReferenceAnalysis> analyze_reference(std::string_view source) override;
  Expected<std::optional<PythonSyntaxError>> check_expression(std::string_view source) override;
  Expected<SourceStructure> analyze_structure(std::string_view source) override;
  Expected<HelperResolution> resolve_helpers(const HelperQuery& query) override;
  std::string identity() const override;
  void prepare_fork() override;
  void after_fork(ForkSide side) override;

private:
  Sha256Digest key(std::string_view question, std::string_view source) const;

  // One cached question about `source`: the answer stored under key(question, source) when it
  // decodes with `decode` (which returns nullopt for bytes it cannot read); otherwise `ask()`, the
  // call to the wrapped front-end, whose answer is put into the cache with `encode` unless it is
  // a failure. With nothing cached (empty key prefix) it is just `ask()`.
  template <typename Answer, typename Ask>
  Expected<Answer> cached_answer(std::string_view question, std::string_view source, Ask ask,
                                 std::string (*encode)(const Answer&),
                                 std::optional<Answer> (*decode)(std::string_view));

  PythonFrontend& m_inner;
  ResultCache& m_cache;
  std::string m_key_prefix;
};

} // namespace fib
