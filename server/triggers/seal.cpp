#include "triggers/seal.hpp"

#include "tee/tee.hpp"

namespace enact::triggers {

hash256 usage_key_seal_path() {
  static const hash256 path = keccak256(std::string_view("enact/triggers/usage-key-seal/v1"));
  return path;
}

result<bytes> seal_usage_key(const tee::tee& t, std::string_view usage_api_key) {
  return t.encrypt(usage_key_seal_path(), as_bytes(usage_api_key));
}

result<Secret> unseal_usage_key(const tee::tee& t, bytes_view sealed) {
  ENACT_TRY(bytes plain, t.decrypt(usage_key_seal_path(), sealed));
  Secret key(plain);
  detail::secure_wipe(plain.data(), plain.size());
  return key;
}

}  // namespace enact::triggers
