#pragma once
// A checkpoint's bytes, below HDF5. Its first 512 bytes are HDF5's user block, which libhdf5 and
// h5py skip; tinygpt keeps a seal there, the SHA-256 and length of the file:
//   "tinygpt checkpoint seal 1\nsha256 <64 hex digits of bytes 512..end>\nbytes <file length>\n",
//   then zero bytes up to offset 512.
// Checked by hand: `tail -c +513 run.h5 | sha256sum`. The seal tells damage from a whole file with
// a clear message; it is no defence against a hostile one (anyone can compute a SHA-256): that is
// hdf5_tree.h's child process, which every file goes through, sealed or not.
#include <cstdint>
#include <memory>
#include <string>

#include "../data/input_file.h"
#include "hdf5_tree.h"

namespace tinygpt::io::hdf5 {

constexpr int64_t kUserBlockBytes = 512;

// Writes the seal into the first 512 bytes of a whole file's bytes, which libhdf5 wrote with a
// 512-byte user block.
void seal_image(char* bytes, size_t size);
// The same for a file on disk (tests that edit a checkpoint seal it again).
void seal_checkpoint(const std::string& path);

struct CheckpointImage {
  data::FileBytes bytes;  // the whole file
  bool sealed = false;      // the seal matched; false: the file has none (an older tinygpt, h5py)
};

// Reads a whole checkpoint (a regular file that fits in memory) and checks its seal: one that
// does not match is a damaged file ("checkpoint 'x.h5' is damaged: checksum mismatch").
CheckpointImage read_checkpoint_image(const std::string& path);

// The tree of the bytes (hdf5_tree.h); errors name the file.
File open_checkpoint_image(CheckpointImage image, const std::string& path);

// A checkpoint whose datasets libhdf5 reads from disk when asked, so that reading part of it (a
// model's weights without its optimizer's moments) keeps only that part in memory. The seal is
// checked by streaming the file through SHA-256 a megabyte at a time. A file without a seal is
// read whole, as by read_checkpoint_image and open_checkpoint_image.
struct OpenedCheckpoint {
  std::unique_ptr<File> file;
  bool sealed = false;
};
OpenedCheckpoint open_checkpoint_streamed(const std::string& path);

}  // namespace tinygpt::io::hdf5
