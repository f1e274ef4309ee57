#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# examples.sign_typed_data: the version 2 envelope the example prints is signed by the key in the
# key file (checked with ethers.verifyTypedData, not with the SDK that made it), and a server
# accepts it.
#   test.sh SIGN_TYPED_DATA ENACT_SERVER|none REPO
set -euo pipefail
example=$1
server_bin=$2
repo=$3
# shellcheck source=../dev_server.sh
. "$(dirname "$0")/../dev_server.sh"

# The private key 1; its address is the well-known 0x7E5F…5Bdf.
(umask 077 && printf '0x%064x\n' 1 >"$work/wallet.key")
want=0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf

registry=0x5FbDB2315678afecb367f032d93F642f64180aa3
nonce=0x$(printf '11%.0s' {1..32})
"$example" --key-file "$work/wallet.key" --type CreateWallet --chain-id 8453 --contract "$registry" \
  --nonce "$nonce" --issued-at 1800000000 >"$work/envelope.json"
REPO=$repo WANT=$want REGISTRY=$registry NONCE=$nonce node -e '
  const { createRequire } = require("module");
  const ethers = createRequire(process.env.REPO + "/tests/vectors/package.json")("ethers");
  const env = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const td = env.typed_data;
  const types = Object.assign({}, td.types);
  delete types.EIP712Domain;  // ethers derives the domain type from the domain object
  const signer = ethers.verifyTypedData(td.domain, types, td.message, env.signature);
  if (signer !== process.env.WANT) throw new Error("recovered " + signer);
  if (td.message.address !== process.env.WANT) throw new Error("message.address " + td.message.address);
  if (td.primaryType !== "CreateWallet" || td.domain.chainId !== 8453 || td.message.issuedAt !== 1800000000 ||
      td.domain.version !== "2" || td.domain.verifyingContract !== process.env.REGISTRY || td.message.nonce !== process.env.NONCE)
    throw new Error("unexpected envelope " + JSON.stringify(td));
  console.log("envelope recovers to " + signer);
' "$work/envelope.json"

# A bad key file is refused with a message and exit 1, not a crash.
printf 'zz\n' >"$work/bad.key"
if "$example" --key-file "$work/bad.key" --chain-id 8453 --contract "$registry" 2>"$work/err"; then echo "bad key accepted"; exit 1; fi
grep -q 'expected a 32-byte hex private key' "$work/err" || { cat "$work/err"; exit 1; }

[ "$server_bin" = none ] && exit 0
start_dev_server "$server_bin"
"$example" --key-file "$work/wallet.key" --url "$base" >"$work/minted" || {
  cat "$work/minted"; tail -5 "$work/log"; exit 1; }
tail -1 "$work/minted" | grep -q '"pkp_id":"0x[0-9a-fA-F]\{40\}"' || { cat "$work/minted"; exit 1; }
echo "server minted $(tail -1 "$work/minted")"
