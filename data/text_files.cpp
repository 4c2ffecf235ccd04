#include "tinygpt/data/text_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "tinygpt/data/input_file.h"
#include "tinygpt/data/utf8.h"

namespace tinygpt::data {

namespace {
// Where to end a block inside buf (which does not reach the end of the file); 0 = nowhere yet.
size_t cut_point(std::string_view buf, BlockCut cut) {
  // After a newline between two visible ASCII characters: GPT-2's pattern then makes the newline a
  // chunk of its own whether the text ends there or goes on. (After a run of whitespace it would
  // not: "\n\nX" is "\n", "\n", "X", but "\n\n" at the end of a block is one chunk.)
  auto visible = [](char c) { return static_cast<uint8_t>(c) > 0x20 && static_cast<uint8_t>(c) < 0x7F; };
  for (size_t p = buf.size() - 1; p > 1; --p)
    if (buf[p - 1] == '\n' && visible(buf[p]) && visible(buf[p - 2])) return p;
  if (cut != BlockCut::anywhere) return 0;
  for (size_t p = buf.size() - 1; p > 0; --p)  // any character boundary
    if ((static_cast<uint8_t>(buf[p]) & 0xC0) != 0x80) return p;
  return 0;
}
}  // namespace

void for_each_block(const std::string& path, BlockCut cut,
                    const std::function<void(std::string_view, int64_t, int64_t)>& block, size_t block_bytes) {
  InputFile in(path);
  std::string buf;
  int64_t offset = 0, lines = 0;
  bool eof = false, any = false;
  while (!eof || !buf.empty()) {
    if (!eof && (buf.size() < block_bytes || cut == BlockCut::whole_file)) {
      const size_t old = buf.size();
      buf.resize(old + block_bytes);
      const size_t got = in.read(buf.data() + old, block_bytes);
      buf.resize(old + got);
      eof = got < block_bytes;
      continue;
    }
    const size_t end = eof ? buf.size() : cut_point(buf, cut);
    if (end == 0) {  // no place to cut yet: read on
      block_bytes *= 2;
      continue;
    }
    const std::string_view text(buf.data(), end);
    if (size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
      throw std::runtime_error(fmt::format("'{}' is not valid UTF-8 at byte offset {}", path, offset + bad));
    block(text, offset, lines);
    any = any || end > 0;
    offset += static_cast<int64_t>(end);
    lines += std::count(text.begin(), text.end(), '\n');
    buf.erase(0, end);
  }
  if (!any) throw std::runtime_error(fmt::format("'{}' is empty", path));
}

std::string read_text_file(const std::string& path) {
  std::string all;
  for_each_block(path, BlockCut::whole_file, [&](std::string_view text, int64_t, int64_t) { all = text; });
  return all;
}

int64_t regular_file_bytes(const std::vector<std::string>& files) {
  int64_t bytes = 0;
  for (const std::string& f : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec)) continue;
    const auto size = std::filesystem::file_size(f, ec);
    if (!ec) bytes += static_cast<int64_t>(size);
  }
  return bytes;
}

}  // namespace tinygpt::data
