// SPDX-License-Identifier: Apache-2.0
// One setting applied by its dotted name ("billing.provider"): the config file, the environment
// and the flags all come through here, so a setting is read the same way whatever names it.
#pragma once

#include <boost/json/value.hpp>

#include <string>

#include "app/config.hpp"

namespace enact::app {

/// Applies `v` to the setting `key`; `what` names where it came from for the message.
[[nodiscard]] result<void> apply_setting(settings& s, const std::string& key, const boost::json::value& v,
                                         const std::string& what);

}  // namespace enact::app
