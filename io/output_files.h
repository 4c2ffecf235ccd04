#pragma once
// Where a command may write: the paths its command line names (and the log and plot beside a
// named checkpoint), never over a file of another kind. An HDF5 file (a checkpoint, a saved module
// or optimizer) replaces only an HDF5 file, a log only a tinygpt log, an SVG only an SVG; an empty
// file may become any of them.
#include <string>
#include <vector>

#include "staged_folder.h"

namespace tinygpt::io {

// html: a page of `tinygpt explain`; llama2c: llama2.c's model.bin or tokenizer.bin.
enum class OutputKind { hdf5, log, metrics, settings, svg, html, llama2c };

// Throws a one-line error when `path` cannot take that output: its folder is missing or not
// writable, or it exists and is a directory, a FIFO or device, or a file of another kind.
void check_output_path(const std::string& path, OutputKind kind);
// Whether the file at `path` holds output of that kind (a llama2.c file: judged by its whole length).
bool holds_output(const std::string& path, OutputKind kind);
// The kind in words: "an SVG file", "a llama2.c model or tokenizer file", ...
std::string kind_description(OutputKind kind);

// Whether two paths name the same file (device and inode, through any links).
bool same_file(const std::string& a, const std::string& b);
// The files a command may read in the folder `dir`: its token shards and tokenizer.h5, and the
// files of a Hugging Face model (config.json, model.safetensors, the tokenizer's files), those that exist.
std::vector<std::string> files_read_in(const std::string& dir);
// Throws when `output` (given with `flag`) is one of the files `inputs` name (an input folder: the
// files a command reads in it), through any link or hard link: no command replaces its own input.
void refuse_own_input(const std::string& output, const std::vector<std::string>& inputs, const std::string& flag);

// A new file written beside `path` (".name.tmp-XXXXXX") and renamed over it by commit(), after its
// bytes are on disk: a crash, a full disk or an error leaves what was at `path` as it was. A
// symbolic link stays a link: the file it leads to is the one replaced. Errors name the path and
// the operating system's reason ("cannot write 'run.h5': No space left on device").
class AtomicFile {
 public:
  // what: the kind of file, for messages ("checkpoint"); empty for none.
  explicit AtomicFile(const std::string& path, const std::string& what = "");
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* data, size_t size);
  void write_at(int64_t offset, const void* data, size_t size);  // over bytes already written (a header)
  void commit();  // fsync, rename over the path, fsync its folder

 private:
  [[noreturn]] void fail(const std::string& doing, int error);
  std::string path_, what_, temporary_;
  int fd_ = -1;
};

// The staged new contents of an exporter's folder: a new folder, an empty one, or with `force` one
// whose `files` are all replaced at commit (none left stale; anything else in it stays). Until
// commit the folder is as it was; a folder made for an export that fails is not left behind.
StagedFolder export_folder(const std::string& dir, const std::vector<std::string>& files, bool force);

// Writes `bytes` to `path` through an AtomicFile (the caller has checked the path).
void write_file_atomically(const std::string& path, const std::string& bytes);

// Writes `text` to `path` (atomically) after check_output_path.
void write_output_file(const std::string& path, OutputKind kind, const std::string& text);

}  // namespace tinygpt::io
