#include "tinygpt/train/h5_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "tinygpt/train/checkpoint_file.h"
#include "tinygpt/train/output_files.h"

namespace tinygpt::train::h5 {

namespace {

H5::StrType string_type(const std::string& value) {
  H5::StrType t(H5::PredType::C_S1, std::max<size_t>(1, value.size()));
  t.setCset(H5T_CSET_UTF8);
  t.setStrpad(H5T_STR_NULLPAD);
  return t;
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A new, uniquely named file beside `target` (".run.h5.tmp-XXXXXX"): nothing that exists is reused.
std::string temporary_beside(const std::filesystem::path& target) {
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::string name = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw std::runtime_error(std::strerror(errno));
  const mode_t mask = ::umask(0);  // mkstemp makes it private; the file gets the usual mode
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  return name;
}

// Objects are created without modification times: the same content always makes the same bytes.
H5::DSetCreatPropList untimed_dataset() {
  H5::DSetCreatPropList plist;
  H5Pset_obj_track_times(plist.getId(), false);
  return plist;
}

}  // namespace

H5::Group make_group(const H5::H5Location& at, const std::string& name) {
  const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, false);
  const hid_t id = H5Gcreate2(at.getId(), name.c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  if (id < 0) throw H5::GroupIException("make_group", "cannot create group " + name);
  H5::Group group(id);  // holds its own reference
  H5Gclose(id);
  return group;
}

void put(H5::H5Object& at, const char* name, const std::string& value) {
  const H5::StrType type = string_type(value);
  std::string padded = value;
  padded.resize(type.getSize(), '\0');
  at.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, padded.data());
}
void put(H5::H5Object& at, const char* name, int64_t value) {
  at.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_INT64, &value);
}
void put(H5::H5Object& at, const char* name, double value) {
  at.createAttribute(name, H5::PredType::IEEE_F64LE, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_DOUBLE, &value);
}
void put(H5::H5Object& at, const char* name, const std::vector<std::string>& values) {
  std::string joined;
  for (const auto& v : values) joined += (joined.empty() ? "" : "\n") + v;
  put(at, name, joined);
}

void put_texts(H5::H5Object& at, const char* name, const std::vector<std::string>& values) {
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  std::vector<const char*> pointers;
  for (const auto& v : values) pointers.push_back(v.c_str());
  const hsize_t n = values.size();
  at.createAttribute(name, type, H5::DataSpace(1, &n)).write(type, pointers.data());
}

void put_floats(H5::Group& g, const std::string& name, const Tensor& t, bool non_negative) {
  const Tensor c = t.contiguous();
  const float* x = c.data();
  const int64_t n = c.numel();
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i]) || (non_negative && x[i] < 0))
      throw std::runtime_error(fmt::format("{} holds {} at element {}", name, x[i], i));
  std::vector<hsize_t> dims(t.shape().begin(), t.shape().end());
  H5::DataSet ds = g.createDataSet(name, H5::PredType::IEEE_F32LE, H5::DataSpace(static_cast<int>(dims.size()), dims.data()),
                                    untimed_dataset());
  ds.write(x, H5::PredType::NATIVE_FLOAT);
}

void put_ints(H5::Group& g, const std::string& name, const std::vector<int32_t>& values, std::vector<hsize_t> dims) {
  H5::DataSet ds = g.createDataSet(name, H5::PredType::STD_I32LE, H5::DataSpace(static_cast<int>(dims.size()), dims.data()),
                                    untimed_dataset());
  if (!values.empty()) ds.write(values.data(), H5::PredType::NATIVE_INT32);
}

void write_sealed(const std::string& path, const std::string& what, const std::function<void(H5::H5File&)>& fill) {
  H5::Exception::dontPrint();
  check_output_path(path, OutputKind::hdf5);
  const std::filesystem::path target(path);
  std::string tmp;
  auto fail = [&](const std::string& why) {
    if (!tmp.empty()) std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write {} '{}': {}", what, path, why));
  };
  try {
    tmp = temporary_beside(target);
    {
      H5::FileCreatPropList create;
      create.setUserblock(kUserBlockBytes);  // room for the seal
      H5Pset_obj_track_times(create.getId(), false);  // the root group
      H5::H5File file(tmp, H5F_ACC_TRUNC, create);
      fill(file);
      file.close();
    }
    seal_checkpoint(tmp);
  } catch (const H5::Exception& e) {
    fail(e.getDetailMsg());
  } catch (const std::exception& e) {
    fail(e.what());
  }
  fsync_path(tmp, O_RDONLY);  // the data is on disk before the name points at it
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) fail(ec.message());
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  fsync_path(dir.string(), O_RDONLY | O_DIRECTORY);  // and the rename itself is durable
}

}  // namespace tinygpt::train::h5
