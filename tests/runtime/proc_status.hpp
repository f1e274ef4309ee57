// SPDX-License-Identifier: Apache-2.0
// /proc of a worker process, as the runtime tests read it (isolation_test.cpp, pool_test.cpp).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace enact::runtime::test {

/// The whole of /proc/<pid>/<what> ("" when the process is gone).
inline std::string read_proc(int pid, const char* what) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + what, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The value of the line "<key>:" of /proc/<pid>/status, without its leading blanks ("" when
/// there is none).
inline std::string status_field(int pid, const std::string& key) {
  std::istringstream in(read_proc(pid, "status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) == 0) {
      const size_t v = line.find_first_not_of(" \t", key.size() + 1);
      return v == std::string::npos ? "" : line.substr(v);
    }
  }
  return "";
}

}  // namespace enact::runtime::test
