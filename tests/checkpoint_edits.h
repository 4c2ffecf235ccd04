#pragma once
// Edits of a checkpoint as another tool (h5py) would make them, for tests of what reading refuses:
// the file is changed in place with libhdf5, then sealed again (a crafted file that passes the
// checksum, so the checks behind it are reached) or left without a seal (a file from elsewhere,
// which is read in a child process first).
#include <H5Cpp.h>

#include <fstream>
#include <functional>
#include <string>

#include "tinygpt/io/hdf5_seal.h"

namespace tinygpt::testing {

enum class Seal { again, none };

inline void strip_seal(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  const std::string zeros(static_cast<size_t>(io::hdf5::kUserBlockBytes), '\0');
  f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
}

inline void edit_checkpoint(const std::string& path, const std::function<void(H5::H5File&)>& edit,
                            Seal seal = Seal::again) {
  {
    H5::H5File file(path, H5F_ACC_RDWR);
    edit(file);
  }
  if (seal == Seal::again) io::hdf5::seal_checkpoint(path);
  else strip_seal(path);
}

// Replaces attribute `name` of `at` with a scalar of HDF5 type `type` holding *value.
template <class T>
void set_attribute(H5::H5Object& at, const std::string& name, const H5::PredType& type, const T& value) {
  if (at.attrExists(name)) at.removeAttr(name);
  at.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, &value);
}

// Replaces attribute `name` of the group at `path` with a variable-length UTF-8 string.
inline void set_text_attribute(H5::H5File& file, const std::string& path, const std::string& name,
                               const std::string& value) {
  H5::Group g = file.openGroup(path);
  if (g.attrExists(name)) g.removeAttr(name);
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  g.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value);
}

}  // namespace tinygpt::testing
