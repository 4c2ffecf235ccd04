#pragma once
// A folder's new contents, built beside it and swapped in whole: until commit() the folder is as it
// was, so an error, a full disk or a kill leaves the old contents (a staging folder a killed
// process left behind is removed by the next StagedFolder of the same folder).
//
// The new folder is made as ".<name>.staging-<pid>-XXXXXX" beside the folder (beside the folder a
// symbolic link leads to), marked as tinygpt's by a file ".tinygpt-staging" in it: only a marked
// folder of a dead process is ever removed by a later run. The working folder, or one that holds
// it, is refused (the swap would leave the shell in a removed folder). commit() carries every entry of the old folder that is not `ours` into
// the new one by hard link (so it is never out of the folder), then exchanges the two folders in
// one rename (renameat2 RENAME_EXCHANGE), and removes the old contents. A folder that did not
// exist is made by that rename; one made and then abandoned is never left behind, empty or not.
#include <functional>
#include <string>

namespace tinygpt::io {

class StagedFolder {
 public:
  // ours(name): whether an entry of the existing folder is replaced by the new contents (dropped at
  // commit) rather than carried over. Throws, naming the path and the OS's reason, when `dir` is
  // not a folder or its parent cannot take the staging folder, and when the folder holds a
  // subfolder that is not ours (a folder cannot be carried by hard link).
  StagedFolder(std::string dir, std::function<bool(const std::string& name)> ours);
  ~StagedFolder();  // removes the staging folder (the new contents, or after commit the old ones)
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  const std::string& path() const { return staging_; }  // where the new contents are written
  std::string file(const std::string& name) const;      // path() / name
  void commit();

 private:
  [[noreturn]] void fail(const std::string& doing, int error) const;
  std::string dir_, target_, staging_;
  std::function<bool(const std::string&)> ours_;
};

}  // namespace tinygpt::io
