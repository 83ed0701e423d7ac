#pragma once
// Where the installed documentation is, for --help texts that point to a document.

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace fib::app {

// --- Interface ---

// The installed copy of docs/NAME beside this fib: the documentation directory relative to the
// executable, as `cmake --install` lays it out (so still right after the prefix was moved); ""
// when fib does not run from an installation (a build tree) or the copy is missing.
std::string installed_doc(std::string_view name);

// One line saying where the documents that `text` names (docs/NAME.md) are installed:
// "Installed documents: /usr/share/doc/fib/docs/cli.md, …", or "The docs/*.md files are installed
// under share/doc/fib/docs of fib's prefix." when they are not found beside fib; "" when `text`
// names none.
std::string installed_docs_line(std::string_view text);

// Appends installed_docs_line of its footer to the footer of `app` and of every subcommand below
// it that names a document.
void name_installed_docs(CLI::App& app);

} // namespace fib::app
