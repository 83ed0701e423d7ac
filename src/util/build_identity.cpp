// build_identity (see build_identity.hpp): the GNU build ID note of the main executable.

#include "fib/util/build_identity.hpp"

#include <fib/util/sha256.hpp>

#include <elf.h>
#include <link.h>

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace fib {
namespace {

constexpr std::size_t k_note_align = 4;

std::size_t align_up(std::size_t value) {
  return (value + k_note_align - 1) / k_note_align * k_note_align;
}

// The build ID of the first object dl_iterate_phdr reports (the main program), as hex.
int find_build_id(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* out = static_cast<std::string*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_NOTE) {
      continue;
    }
    const auto* notes = reinterpret_cast<const unsigned char*>(info->dlpi_addr + header.p_vaddr);
    std::size_t offset = 0;
    while (offset + sizeof(ElfW(Nhdr)) <= header.p_memsz) {
      ElfW(Nhdr) note;
      std::memcpy(&note, notes + offset, sizeof note);
      const std::size_t name_at = offset + sizeof note;
      const std::size_t desc_at = name_at + align_up(note.n_namesz);
      if (desc_at + note.n_descsz > header.p_memsz) {
        break;
      }
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(notes + name_at, "GNU", 4) == 0) {
        for (std::size_t b = 0; b < note.n_descsz; ++b) {
          *out += fmt::format("{:02x}", notes[desc_at + b]);
        }
        return 1;
      }
      offset = desc_at + align_up(note.n_descsz);
    }
  }
  return 1; // only the main program
}

std::string executable_digest() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  if (!in) {
    return {};
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return "sha256:" + to_hex(sha256(bytes.str()));
}

std::string compute_identity() {
  std::string id;
  dl_iterate_phdr(find_build_id, &id);
  if (id.empty()) {
    id = executable_digest();
  }
  return fmt::format("fib {} build {}", FIB_VERSION, id.empty() ? "unknown" : id);
}

} // namespace

const std::string& build_identity() {
  static const std::string identity = compute_identity();
  return identity;
}

} // namespace fib
