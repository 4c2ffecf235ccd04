#pragma once
// SHA-256 (FIPS 180-4), the project's one hash: it seals a checkpoint's bytes (so that `sha256sum`
// can check one too), identifies a run's text files and a tokenizer. Feed bytes in any pieces; the
// digest is the same.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tinygpt::data {

class Sha256 {
 public:
  // hardware: the CPU's SHA instructions (x86 SHA-NI) when the build targets them; portable: plain
  // C++ on any CPU. Both give the same digest; hardware is several times faster.
  enum class Path { hardware, portable };
  explicit Sha256(Path path = Path::hardware);
  static bool has_hardware_path();
  void update(const void* data, size_t size);
  std::array<uint8_t, 32> digest();  // ends the message; the object is then spent
  std::string hex_digest();          // 64 lower-case hex digits

 private:
  void compress(const uint8_t* blocks, size_t count);  // 64-byte blocks into state_
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> pending_{};
  size_t pending_size_ = 0;
  uint64_t total_bytes_ = 0;
  bool hardware_;
};

}  // namespace tinygpt::data
