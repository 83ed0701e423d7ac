// The red flags `fib run` warns about in solution sources: each kind at its first line, comments
// and python solutions' own torch calls left alone.

#include <fib/base/codes.hpp>
#include <fib/run/red_flags.hpp>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace fib {
namespace {

Solution solution_of(Language language, std::vector<SourceFile> sources) {
  // Built by construction: assigning short literals to the strings trips GCC 12's -Wrestrict
  // false positive at -O3.
  Solution s{std::string("k"), std::string("d"), std::string("a"), {}, std::move(sources), {}};
  s.spec.language = language;
  return s;
}

using Found = std::vector<std::pair<std::string, std::uint32_t>>; // file, line

Found where(const std::vector<Diagnostic>& flags) {
  Found out;
  for (const Diagnostic& d : flags) {
    EXPECT_EQ(d.code, codes::k_run_red_flag);
    EXPECT_EQ(d.severity, Severity::warning);
    out.emplace_back(d.file.string(), d.line);
  }
  return out;
}

TEST(RedFlags, EachKindOnceAtItsFirstLine) {
  const Solution triton =
      solution_of(Language::triton, {{"main.py", "import torch\n"
                                                 "# torch.matmul( in a comment is not read\n"
                                                 "s = torch.cuda.Stream()\n"
                                                 "def run(a, b):\n"
                                                 "    try:\n"
                                                 "        return kernel(a, b)\n"
                                                 "    except Exception:\n"
                                                 "        return torch.matmul(a, b)\n"
                                                 "def again(a, b):\n"
                                                 "    return torch.mm(a, b)\n"}});
  const auto flags = solution_red_flags(triton);
  EXPECT_EQ(where(flags), (Found{{"k/main.py", 3}, {"k/main.py", 5}, {"k/main.py", 8}}));
  ASSERT_EQ(flags.size(), 3u);
  EXPECT_EQ(flags[0].code, codes::k_run_red_flag);
  EXPECT_NE(flags[0].message.find("side work `torch.cuda.Stream(`"), std::string::npos)
      << flags[0].message;
  EXPECT_NE(flags[1].message.find("try/except"), std::string::npos) << flags[1].message;
  EXPECT_NE(flags[2].message.find("torch fallback `torch.matmul(`"), std::string::npos)
      << flags[2].message;
}

TEST(RedFlags, CompiledSourcesAndTheReference) {
  const Solution cuda = solution_of(
      Language::cuda, {{"kernel.cu", "__global__ void k() {}\n// std::thread in a comment\n"},
                       {"main.cpp", "#include <torch/extension.h>\n"
                                    "#include <thread>\n"
                                    "torch::Tensor run(torch::Tensor a) {\n"
                                    "  try {\n"
                                    "    return at::matmul(a, a);\n"
                                    "  } catch (...) { throw; }\n"
                                    "}\n"},
                       {"helper.py", "from d__reference import run\n"}});
  EXPECT_EQ(where(solution_red_flags(cuda)),
            (Found{{"k/main.cpp", 4}, {"k/main.cpp", 5}, {"k/helper.py", 1}}));
}

TEST(RedFlags, PlainTorchInAPythonSolutionIsNotAFlag) {
  const Solution python =
      solution_of(Language::python,
                  {{"main.py", "import torch\ndef run(a, b):\n    return torch.matmul(a, b)\n"}});
  EXPECT_TRUE(solution_red_flags(python).empty());
  const Solution clean = solution_of(
      Language::cpp, {{"main.cpp", "torch::Tensor run(torch::Tensor a) { return a * 2; }\n"}});
  EXPECT_TRUE(solution_red_flags(clean).empty());
}

} // namespace
} // namespace fib
