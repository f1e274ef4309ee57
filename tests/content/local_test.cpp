// SPDX-License-Identifier: Apache-2.0
// The local content store: files under <data_dir>/actions named by CID, the upload record in
// SQLite; a file changed on disk is refused when read.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cases.hpp"

namespace enact::core::test {
namespace {

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "enact-content-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

TEST_CASE("local content store: round trip, repeated uploads, quotas") {
  temp_dir dir;
  check_basics(enact::test::must_ok(content_store::open(dir.path.string())));
}

TEST_CASE("local content store: a file changed on disk never comes back") {
  temp_dir dir;
  const content_store store = enact::test::must_ok(content_store::open(dir.path.string()));
  const bytes code = code_of("export default () => 'intact';");
  const std::string cid = MUST(store.put(code));
  std::ofstream(dir.path / "actions" / cid, std::ios::binary | std::ios::trunc) << "export default () => 'changed';";
  CHECK_ERRC(store.get(cid), api_errc::internal);
  // A second store on the same directory sees what the first stored.
  const content_store again = enact::test::must_ok(content_store::open(dir.path.string()));
  CHECK_ERRC(again.get(cid), api_errc::internal);
}

}  // namespace
}  // namespace enact::core::test
