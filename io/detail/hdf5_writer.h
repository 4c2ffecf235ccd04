#pragma once
// Writing tinygpt's HDF5 files (checkpoints, saved modules and optimizers): attributes as our
// readers expect them, float tensors refused when not finite, and the whole file written beside
// its target, sealed (hdf5_seal.h), flushed and renamed over it, so that a crash never
// leaves a half-written file where a good one was.
#include <H5Cpp.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/autograd/tensor.h"

namespace tinygpt::io::hdf5 {

// A new group; it and every dataset below are written without modification times, so a file's
// bytes depend on its content alone.
H5::Group make_group(const H5::H5Location& at, const std::string& name);

// Fixed-length UTF-8 strings (no global heap: damaged heaps crash libhdf5), int64 and float64.
void put(H5::H5Object& at, const char* name, const std::string& value);
void put(H5::H5Object& at, const char* name, int64_t value);
void put(H5::H5Object& at, const char* name, double value);
void put(H5::H5Object& at, const char* name, const std::vector<std::string>& values);  // one per line
// A one-dimensional array of variable-length UTF-8 strings (as h5py writes a list of str).
void put_texts(H5::H5Object& at, const char* name, const std::vector<std::string>& values);
// Unsigned 64-bit words of the given dims (a generator's state: [4], or [ranks, 4]).
void put_words(H5::H5Object& at, const std::string& name, const uint64_t* words, const std::vector<hsize_t>& dims);
// The same as a dataset: an attribute holds at most 64 KiB (16 bytes a string), a dataset any number.
void put_text_dataset(H5::Group& g, const char* name, const std::vector<std::string>& values);

// A float32 dataset, refused (naming it) when it holds NaN or infinity, or a negative value where
// `non_negative`.
void put_floats(H5::Group& g, const std::string& name, const Tensor& t, bool non_negative = false);
void put_ints(H5::Group& g, const std::string& name, const std::vector<int32_t>& values, std::vector<hsize_t> dims);
void put_bytes(H5::Group& g, const std::string& name, const std::string& bytes);  // uint8 [n]

// Writes `path` through fill(file): a new file beside it, with the user block the seal goes in;
// refuses to replace a file that is not HDF5. Errors: "cannot write <what> '<path>': ...".
void write_sealed(const std::string& path, const std::string& what, const std::function<void(H5::H5File&)>& fill);

}  // namespace tinygpt::io::hdf5
