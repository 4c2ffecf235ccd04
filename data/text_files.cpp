#include "text_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "input_file.h"
#include "utf8.h"

namespace tinygpt::data {

namespace {
// Where to end a block inside buf (which does not reach the end of the file); 0 = nowhere yet.
size_t cut_point(std::string_view buf, BlockCut cut) {
  if (cut == BlockCut::before_space) {
    for (size_t p = buf.size() < 3 ? 0 : buf.size() - 2; p > 0; --p)
      if (space_cut_at(buf, p)) return p;
    return 0;
  }
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

TextBlocks::TextBlocks(const std::string& path, BlockCut cut, size_t block_bytes)
    : in_(path), path_(path), cut_(cut), block_bytes_(block_bytes) {}

bool TextBlocks::next(TextBlock& block) {
  while (!eof_ || !buf_.empty()) {
    if (!eof_ && (buf_.size() < block_bytes_ || cut_ == BlockCut::whole_file)) {
      const size_t old = buf_.size();
      buf_.resize(old + block_bytes_);
      const size_t got = in_.read(buf_.data() + old, block_bytes_);
      buf_.resize(old + got);
      eof_ = got < block_bytes_;
      continue;
    }
    const size_t end = eof_ ? buf_.size() : cut_point(buf_, cut_);
    if (end == 0) {  // no place to cut yet: read on
      block_bytes_ *= 2;
      continue;
    }
    const std::string_view text(buf_.data(), end);
    if (size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
      throw std::runtime_error(fmt::format("'{}' is not valid UTF-8 at byte offset {}", path_, offset_ + bad));
    block.text.assign(text);
    block.byte_offset = offset_, block.line_offset = lines_;
    offset_ += static_cast<int64_t>(end);
    lines_ += std::count(text.begin(), text.end(), '\n');
    buf_.erase(0, end);
    return true;
  }
  if (offset_ == 0) throw std::runtime_error(fmt::format("'{}' is empty", path_));
  return false;
}

void for_each_block(const std::string& path, BlockCut cut,
                    const std::function<void(std::string_view, int64_t, int64_t)>& block, size_t block_bytes) {
  TextBlocks blocks(path, cut, block_bytes);
  TextBlock b;
  while (blocks.next(b)) block(b.text, b.byte_offset, b.line_offset);
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
