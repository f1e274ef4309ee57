// SPDX-License-Identifier: Apache-2.0
#include "triggers/seal.hpp"

#include "tee/tee.hpp"

namespace enact::triggers {

result<bytes> seal_usage_key(const tee::tee& t, std::string_view usage_api_key) {
  return t.server_seal(kUsageKeySealPurpose, as_bytes(usage_api_key));
}

result<Secret> unseal_usage_key(const tee::tee& t, bytes_view sealed) {
  ENACT_TRY(bytes plain, t.server_unseal(kUsageKeySealPurpose, sealed));
  Secret key(plain);
  detail::secure_wipe(plain.data(), plain.size());
  return key;
}

}  // namespace enact::triggers
