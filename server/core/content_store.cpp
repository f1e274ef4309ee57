#include "core/content_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/errors.hpp"
#include "enact/crypto/random.hpp"
#include "enact/codec/hex.hpp"
#include "enact/ipfs/cid.hpp"

namespace enact::core {

result<content_store> content_store::open(const std::string& data_dir) {
  const std::string dir = data_dir + "/actions";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fail(api_errc::internal, "cannot create " + dir + ": " + std::strerror(errno));
  return content_store(dir);
}

result<std::string> content_store::put(bytes_view code) const {
  const std::string cid = ipfs::cid_of(code);
  const std::string final_path = dir_ + "/" + cid;
  struct stat st {};
  if (::stat(final_path.c_str(), &st) == 0)
    return cid;
  std::array<uint8_t, 8> suffix{};
  random_bytes(suffix);
  const std::string tmp = final_path + ".tmp-" + hex::encode(suffix);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(api_errc::unavailable, "content store: cannot create a file");
  size_t done = 0;
  while (done < code.size()) {
    const ssize_t n = ::write(fd, code.data() + done, code.size() - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == code.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return fail(api_errc::unavailable, "content store: write failed");
  }
  return cid;
}

result<std::optional<bytes>> content_store::get(std::string_view cid_text) const {
  ENACT_TRY(const auto wanted, ipfs::parse(cid_text));
  // Files are named by CIDv0; a v1 dag-pb CID names the same file.
  const ipfs::cid v0{0, ipfs::kCodecDagPb, wanted.multihash};
  if (!ipfs::same_content(wanted, v0))
    return std::optional<bytes>{};
  std::ifstream f(dir_ + "/" + v0.to_string(), std::ios::binary);
  if (!f)
    return std::optional<bytes>{};
  bytes code((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (ipfs::cid_v0_of(code) != v0)
    return fail(api_errc::internal, "content store: " + v0.to_string() + " does not match its CID");
  return std::optional<bytes>(std::move(code));
}

}  // namespace enact::core
